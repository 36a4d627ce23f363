#!/usr/bin/python3
"""Distributed data-parallel training on streamed patches, one pipeline per rank.

    torchrun --nproc_per_node=2 examples/train_ddp.py --slides sample-slides --steps 100
    # (or: python3 -m torch.distributed.run --nproc_per_node=2 ...)
    # Debian 12 (torch 1.13, Python 3.11): add "--redirects 2 --tee 2" after
    # --nproc_per_node, the default "--redirects 0" crashes torchrun there.

torchrun sets RANK / WORLD_SIZE / MASTER_ADDR; wsislidesrc reads RANK and
WORLD_SIZE itself, so rank r streams slides r, r+W, r+2W, ... of the sorted
collection (disjoint slides per rank).  Backend: NCCL on GPUs, gloo on CPU.

Two ways to stop without a rank waiting forever in an all-reduce:
- `--steps N`: an endless stream (cycle=true), every rank does N steps.
- `--epoch`: a finite stream with patchsampler rank-quota: every rank ends
  with EOS after exactly rank-slides-min x patches-per-slide patches, so all
  ranks run the same number of steps.
Each rank prints one `RESULT {json}` line at the end (steps, patches, slides).
"""
import argparse
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import gstwsi


def make_model():
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True),
                             nn.MaxPool2d(2))
    return nn.Sequential(block(3, 16), block(16, 32), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(32, 1))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--slides", required=True)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--steps", type=int, help="steps per rank, endless stream")
    group.add_argument("--epoch", action="store_true",
                       help="one finite pass: rank quota, same step count on every rank")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--patch-size", type=int, default=64)
    p.add_argument("--patches-per-slide", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=10)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    gstwsi.init(monitor=True)
    use_cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if use_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
    if use_cuda:
        torch.cuda.set_device(device)

    torch.manual_seed(args.seed)              # same initial weights everywhere
    model = make_model().to(device)
    ddp = DistributedDataParallel(model, device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)

    # rank/world_size left out: wsislidesrc takes them from the environment.
    description = gstwsi.standard_pipeline(
        args.slides, batch_size=args.batch_size, patch_size=args.patch_size,
        patches_per_slide=args.patches_per_slide, threads=args.threads,
        seed=args.seed, cycle=True, rank_quota=args.epoch)
    stream = gstwsi.BatchStream(description)
    monitor = gstwsi.Monitor(stream, log_every=args.log_every, prefix=f"rank{rank}/")

    steps, slides, cycles = 0, set(), set()
    for batch in stream:
        x = batch.images.to(device).permute(0, 3, 1, 2).float().div_(255.0)
        target = torch.from_numpy(batch.tissue_fraction.copy()).to(device).unsqueeze(1)
        loss = nn.functional.mse_loss(torch.sigmoid(ddp(x)), target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()                        # all-reduce across ranks
        optimizer.step()
        steps += 1
        slides.update(batch.paths)
        cycles.update(int(c) for c in batch.cycle)
        # loss.item() only when logging: every step it would wait for the GPU.
        logs = monitor.mark_step()
        if logs:
            logs[f"rank{rank}/loss"] = loss.item()
            if rank == 0:
                print(json.dumps(logs), flush=True)
        if args.steps is not None and steps >= args.steps:
            break

    result = {"rank": rank, "world_size": world, "steps": steps,
              "patches": stream.patches, "slides": sorted(slides),
              "cycles": sorted(cycles), "loss": loss.item() if steps else None}
    print("RESULT " + json.dumps(result), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
