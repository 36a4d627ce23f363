#!/usr/bin/python3
"""Train a small CNN on patches streamed from whole-slide images (one process).

The task is self-supervised so that any slide collection works: regress the
tissue fraction that patchsampler measured for each patch from its pixels.
Runs on the GPU when there is one, on the CPU otherwise:

    meson devenv -C build -w . /usr/bin/python3 examples/train_single_gpu.py \
        --slides sample-slides --steps 200

Resume a stopped run at step k (the stream is deterministic for a given
--seed, so batch k is the batch the stopped run would have seen next):

    ... examples/train_single_gpu.py --slides sample-slides --steps 200 --resume-step 100

With --cuda-upload (a GPU and a build with ext/cuda), wsicudaupload copies each
batch into CUDA memory from a pinned pool and batch.images arrives as a torch
CUDA tensor over it (gstwsi_cuda on PYTHONPATH; docs/cuda.md): no host copy.
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn

import gstwsi


def make_model():
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True), nn.MaxPool2d(2))
    return nn.Sequential(block(3, 16), block(16, 32), block(32, 64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 1))


def to_input(images, device):
    # uint8 NHWC (shared with the GStreamer buffer) -> float NCHW on device:
    # the only copy of the pixels, done once per batch (with --cuda-upload the
    # images are already on the device and .to() is free).
    x = images.to(device, non_blocking=True).permute(0, 3, 1, 2).float()
    return x.div_(255.0).sub_(0.5)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--slides", required=True, help="slide directory or list file")
    p.add_argument("--steps", type=int, default=100, help="training steps (default 100)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--patch-size", type=int, default=64)
    p.add_argument("--target-mpp", type=float, default=0.5)
    p.add_argument("--patches-per-slide", type=int, default=32)
    p.add_argument("--threads", type=int, default=2, help="patchreader threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--resume-step", type=int, default=0,
                   help="continue the stream at this batch (needs patchinterleave skip-patches)")
    p.add_argument("--cuda-upload", action="store_true",
                   help="batches into CUDA memory through wsicudaupload (needs a GPU)")
    return p.parse_args(argv)


def report_skipped(monitor):
    """Names the slides behind the slides_failed/rejected/damaged counters,
    each once, with the reason its warning gave."""
    for slide, kind, why in monitor.new_skipped_slides():
        print(f"slide {kind}: {slide}: {why}", flush=True)


def main(argv=None):
    args = parse_args(argv)
    gstwsi.init(monitor=True)          # before the first stream plays
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(args.seed)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    description = gstwsi.standard_pipeline(
        args.slides, batch_size=args.batch_size, patch_size=args.patch_size,
        target_mpp=args.target_mpp, patches_per_slide=args.patches_per_slide,
        threads=args.threads, seed=args.seed, cycle=True, cuda_upload=args.cuda_upload)
    stream = gstwsi.BatchStream(description, start_batch=args.resume_step)
    monitor = gstwsi.Monitor(stream, log_every=args.log_every)

    step, started = args.resume_step, time.monotonic()
    # The loss stays on the device between logs: loss.item() every step
    # would wait for the GPU each step (a synchronisation, not free).
    loss_sum, loss_steps = None, 0
    for batch in stream:
        x = to_input(batch.images, device)
        target = torch.from_numpy(batch.tissue_fraction.copy()).to(device).unsqueeze(1)
        loss = nn.functional.mse_loss(torch.sigmoid(model(x)), target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        loss_sum = loss.detach() if loss_sum is None else loss_sum + loss.detach()
        loss_steps += 1
        logs = monitor.mark_step()
        if logs:
            logs.update({"train/loss": (loss_sum / loss_steps).item(),
                         "train/step": step, "train/cycle": int(batch.cycle.max())})
            loss_sum, loss_steps = None, 0
            print(json.dumps(logs), flush=True)       # or wandb.log(logs)
            report_skipped(monitor)
        if step >= args.steps:
            break                                     # closes the pipeline
    report_skipped(monitor)
    print(f"done: {step - args.resume_step} steps, {stream.patches} patches on {device} "
          f"in {time.monotonic() - started:.1f} s, last loss {loss.item():.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
