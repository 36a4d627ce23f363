#!/usr/bin/python3
"""Distributed data-parallel training on streamed patches, one pipeline per rank.

    /usr/bin/python3 examples/train_ddp.py --nproc-per-node 2 --slides sample-slides --steps 100
    torchrun --nproc_per_node=2 examples/train_ddp.py --slides sample-slides --steps 100

Two launchers, same training:
- `--nproc-per-node N`: this script starts the N ranks of one machine itself
  (torch.multiprocessing, spawn), with torchrun's environment (RANK,
  WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) and USE_LIBUV=0.  Works
  with every torch from 1.13 to 2.6, including Debian 13's torch 2.6, which
  is built without libuv: there torchrun's own store (always libuv from
  torch 2.4 on) fails with "use_libuv was requested but PyTorch was build
  without libuv support" whatever the rendezvous backend, while the env://
  store of init_process_group follows USE_LIBUV=0.
- torchrun (torch builds with libuv; several machines).  Debian 12 (torch
  1.13, Python 3.11): add "--redirects 2 --tee 2" after --nproc_per_node,
  the default "--redirects 0" crashes torchrun there.

wsislidesrc reads RANK and WORLD_SIZE itself, so rank r streams slides r,
r+W, r+2W, ... of the sorted collection (disjoint slides per rank).
Backend: NCCL on GPUs, gloo on CPU.

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
import socket
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
    p.add_argument("--nproc-per-node", type=int, default=0,
                   help="start this many ranks here (without torchrun)")
    p.add_argument("--master-port", type=int, default=0,
                   help="with --nproc-per-node: the store's port (default: a free one)")
    return p.parse_args(argv)


def _spawned_rank(local_rank, world, port, argv):
    """One rank started by --nproc-per-node: torchrun's environment, then main()."""
    os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank),
                      WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      USE_LIBUV="0")          # torch >= 2.4 builds without libuv
    code = main(argv)
    if code:
        sys.exit(code)


def launch(args, argv):
    """Runs args.nproc_per_node ranks of this script on this machine."""
    import torch.multiprocessing as mp
    port = args.master_port
    if not port:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    # the ranks' argv without the launcher's options: main() then trains
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--nproc-per-node", "--master-port"):
            skip = True
        elif not a.startswith(("--nproc-per-node=", "--master-port=")):
            rest.append(a)
    # spawn, not fork: each rank starts its own GStreamer (see docs/python.md)
    mp.start_processes(_spawned_rank, args=(args.nproc_per_node, port, rest),
                       nprocs=args.nproc_per_node, start_method="spawn")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.nproc_per_node:
        return launch(args, argv)
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
