#!/usr/bin/env python3
"""MIL over a tissue grid, through a patch store (docs/recipes/mil.md).

1. Extract: every tissue cell of every slide, once, on a non-overlapping grid,
   slide by slide in raster order, into a jpeg patch store (the recipe's
   gst-launch line, run here in-process). An existing complete store is reused.
2. Features: the store served in its written order (one epoch), normalised
   float32 batches through a frozen encoder; each slide's features form its bag.
3. Train: an attention-MIL head (ABMIL: Ilse et al. 2018) on the bags, for a few
   epochs, without touching the slides or the store again.

The encoder here is a small frozen random convolution so that the example
runs anywhere; put your pathology encoder (UNI, CONCH, ...) in `encoder()`.
Labels come from --labels (a CSV "path,label" with 0/1 labels, path as
wsislidesrc reports it or the file name); without it every other slide is
labelled 1, which only shows the mechanics.

    python3 examples/mil_store.py --slides /data/slides --store /data/mil-store
"""
import argparse
import csv
import json
import pathlib
import sys

import numpy as np
import torch

import gstwsi
from gstwsi.stream import Gst


def extract_description(slides, store, patch_size, target_mpp, threads):
    """The recipe's extraction line (docs/recipes/mil.md), as a description."""
    return (f'wsislidesrc location="{slides}" ! tissuemask method=clam ! '
            "queue max-size-buffers=4 ! "
            f"patchsampler mode=grid patch-size={patch_size} target-mpp={target_mpp} "
            "patches-per-slide=-1 ! "
            "patchinterleave pool-size=1 patches-per-visit=64 ! "
            f"patchreader threads={threads} ! "
            f'patchstoresink location="{store}" encoding=jpeg quality=95')


def extract(slides, store, patch_size, target_mpp, threads):
    if (store / "manifest.json").is_file():
        print(f"store {store} is complete: extraction skipped")
        return
    pipeline = Gst.parse_launch(extract_description(slides, store, patch_size,
                                                    target_mpp, threads))
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    msg = bus.timed_pop_filtered(Gst.CLOCK_TIME_NONE,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if msg.type == Gst.MessageType.ERROR:
        err, _ = msg.parse_error()
        sys.exit(f"extraction failed: {err.message}")
    manifest = json.loads((store / "manifest.json").read_text())
    print(f"extracted {manifest['patches']} patches into {store}")


def encoder(dim=32, seed=0):
    """A frozen stand-in encoder: (B, 3, H, W) float32 -> (B, dim)."""
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, dim, kernel_size=7, stride=4), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    return net.eval().requires_grad_(False)


def features(store, batch_size, threads):
    """slide path -> (features (N, D), positions (N, 2)), slides in store order."""
    description = gstwsi.standard_pipeline(store, batch_size=batch_size, threads=threads,
                                           order="sequential", epochs=1,
                                           patchbatch_normalize=True)
    net, bags = encoder(), {}
    with gstwsi.BatchStream(description, torch=True) as stream:
        for batch in stream:
            with torch.no_grad():
                feats = net(batch.images).numpy()
            for i, path in enumerate(batch.paths):
                bag = bags.setdefault(path, ([], []))
                bag[0].append(feats[i])
                bag[1].append((int(batch.x[i]), int(batch.y[i])))
    return {path: (np.stack(f), np.array(p)) for path, (f, p) in bags.items()}


class ABMIL(torch.nn.Module):
    """Attention-based MIL pooling (gated attention off) and a linear classifier."""

    def __init__(self, dim, hidden=16):
        super().__init__()
        self.attention = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.Tanh(),
                                             torch.nn.Linear(hidden, 1))
        self.classifier = torch.nn.Linear(dim, 1)

    def forward(self, bag):
        weights = torch.softmax(self.attention(bag), dim=0)
        return self.classifier((weights * bag).sum(0)).squeeze(-1)


def labels_for(paths, labels_csv):
    if labels_csv is None:
        return {path: k % 2 for k, path in enumerate(paths)}
    table = {}
    with open(labels_csv, newline="") as f:
        for row in csv.DictReader(f):
            table[row["path"]] = int(row["label"])
    return {p: table.get(p, table.get(pathlib.Path(p).name)) for p in paths}


def train(bags, labels, epochs, seed=0):
    torch.manual_seed(seed)
    dim = next(iter(bags.values()))[0].shape[1]
    model = ABMIL(dim)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for epoch in range(epochs):
        total = 0.0
        for path, (feats, _) in bags.items():
            optimizer.zero_grad()
            loss = loss_fn(model(torch.from_numpy(feats)),
                           torch.tensor(float(labels[path])))
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(json.dumps({"epoch": epoch, "loss": round(total / len(bags), 5)}))
    return model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slides", required=True, help="slide folder, file or list")
    ap.add_argument("--store", required=True, type=pathlib.Path,
                    help="patch store directory (written once, then reused)")
    ap.add_argument("--labels", help="CSV path,label (0/1) per slide")
    ap.add_argument("--patch-size", type=int, default=224)
    ap.add_argument("--target-mpp", type=float, default=0.5)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5, help="epochs of the MIL head")
    args = ap.parse_args(argv)
    gstwsi.init()
    extract(args.slides, args.store, args.patch_size, args.target_mpp, args.threads)
    bags = features(args.store, args.batch_size, args.threads)
    if not bags:
        sys.exit(f"the store {args.store} holds no patches (no tissue found?)")
    labels = labels_for(list(bags), args.labels)
    missing = [p for p, label in labels.items() if label is None]
    if missing:
        sys.exit(f"no label in {args.labels} for {missing[0]}")
    train(bags, labels, args.epochs)
    print(f"done: {len(bags)} slides, {sum(len(f) for f, _ in bags.values())} patches "
          f"from {args.store}")


if __name__ == "__main__":
    main()
