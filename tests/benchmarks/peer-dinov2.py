#!/usr/bin/python3
"""The Python peer's (RamonKaspar/wsistream) DINOv2 multi-crop pipeline, timed.

The peer is not vendored: set WSISTREAM_SRC to the src/ folder of a checkout
(see ../shared/peers/README.md). Equivalent of gst-wsi's
`patchviews preset=dinov2 ! patchaugment` as bench-dinov2.sh runs it: random
256 px level-0 patches on tissue (Otsu), 2 global 224 px crops at scale
0.32-1 and 8 local 96 px crops at 0.05-0.32, each view flipped/rotated and
HED-jittered (sigma 0.05), batches of 64 locations from a torch DataLoader
with N workers. Prints one JSON line: locations/s after a warm-up.
"""
import argparse
import json
import os
import sys
import time

if "WSISTREAM_SRC" not in os.environ:
    sys.exit("set WSISTREAM_SRC to the src/ folder of a RamonKaspar/wsistream checkout")
sys.path.insert(0, os.environ["WSISTREAM_SRC"])


def make_dataset(slides, mpp0, mask_cache):
    from wsistream.backends import OpenSlideBackend
    from wsistream.sampling import RandomSampler
    from wsistream.tissue import OtsuTissueDetector
    from wsistream.torch import WsiStreamDataset
    from wsistream.transforms import ComposeTransforms, HEDColorAugmentation, RandomFlipRotate
    from wsistream.views import RandomResizedCrop, ViewConfig

    def aug():
        return ComposeTransforms([RandomFlipRotate(), HEDColorAugmentation(sigma=0.05)])

    views = [
        ViewConfig("global", crop=RandomResizedCrop(224, scale=(0.32, 1.0)), transforms=aug(), count=2),
        ViewConfig("local", crop=RandomResizedCrop(96, scale=(0.05, 0.32)), transforms=aug(), count=8),
    ]
    return WsiStreamDataset(
        slide_paths=slides, backend=OpenSlideBackend(), tissue_detector=OtsuTissueDetector(),
        sampler=RandomSampler(patch_size=256, num_patches=-1, target_mpp=mpp0),
        pool_size=8, patches_per_slide=64, patches_per_visit=4, cycle=True, seed=42,
        views=views, tissue_mask_cache_size=mask_cache)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--slides", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--mpp0", type=float, default=0.25)
    ap.add_argument("--mask-cache", type=int, default=64)
    a = ap.parse_args()

    import glob
    import torch

    slides = sorted(glob.glob(os.path.join(a.slides, "*.svs")) + glob.glob(os.path.join(a.slides, "*.tif")) + glob.glob(os.path.join(a.slides, "*.tiff")))
    ds = make_dataset(slides, a.mpp0, a.mask_cache)
    loader = torch.utils.data.DataLoader(ds, batch_size=a.batch, num_workers=a.workers)
    it = iter(loader)
    for _ in range(a.warmup):
        batch = next(it)
    t0 = time.perf_counter()
    for _ in range(a.batches):
        batch = next(it)
    dt = time.perf_counter() - t0
    keys = sorted(k for k in batch if k.startswith(("global", "local")))
    print(json.dumps({"what": "wsistream-dinov2", "workers": a.workers,
                      "locations_per_s": round(a.batches * a.batch / dt, 1),
                      "views": {k: list(batch[k].shape) for k in keys}}))
    os._exit(0)


if __name__ == "__main__":
    main()
