#!/usr/bin/python3
"""A training loop under the wsistats timeline, drawn as a PNG.

    meson devenv -C build -w . examples/timeline.py SLIDES OUT [--step-ms 30] \
        [--batches 30] [--threads 2]

writes OUT.json (Chrome trace-event format: open it in https://ui.perfetto.dev)
and OUT.png (tools/wsi-timeline-png).  `--step-ms` is the training step the
loop pretends to take (a sleep): 0 makes the loader the bottleneck, a step
longer than the loader needs per batch makes the trainer the bottleneck.
The loop is the usual one: `for batch in stream: ...; monitor.mark_step()`;
the stream draws its appsink pulls and mark_step its steps on the trace.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("slides")
    ap.add_argument("out", help="output prefix: OUT.json and OUT.png")
    ap.add_argument("--step-ms", type=float, default=0.0)
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10,
                    help="batches before the drawn window starts")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--patch-size", type=int, default=256)
    ap.add_argument("--prefetch", type=int, default=64, help="patches the queue holds")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    trace = os.path.abspath(args.out + ".json")
    # Tracers are read at Gst.init: set GST_TRACERS before importing gstwsi.
    os.environ["GST_TRACERS"] = f"wsistats(interval=0,summary=false,timeline={trace})"
    import gstwsi

    description = gstwsi.standard_pipeline(
        args.slides, batch_size=args.batch_size, patch_size=args.patch_size,
        threads=args.threads, prefetch=args.prefetch)
    stream = gstwsi.BatchStream(description, torch=False, monitor=True)
    monitor = gstwsi.Monitor(stream, log_every=10**6)
    window_start = None
    for i, batch in enumerate(stream):
        if i == args.warmup:
            window_start = time.monotonic()
        if args.step_ms:
            time.sleep(args.step_ms / 1e3)      # the forward and backward pass
        monitor.mark_step()
        if i + 1 >= args.warmup + args.batches:
            break
    window = time.monotonic() - window_start
    stream.close()
    gstwsi.find_tracer().emit("write-report")   # flushes the timeline file

    png = args.out + ".png"
    tool = pathlib.Path(__file__).resolve().parents[1] / "tools" / "wsi-timeline-png"
    # the window: from the end of the warm-up to the end of the loop
    with open(trace) as f:
        import json
        events = [e for e in json.load(f) if e.get("ph") == "X"]
    end = max(e["ts"] + e["dur"] for e in events) / 1e6
    first = min(e["ts"] for e in events) / 1e6
    start = max(0.0, end - window - first)
    title = args.title or (f"{args.threads} reader threads, batch {args.batch_size} x "
                           f"{args.patch_size} px, step {args.step_ms:g} ms")
    subprocess.run([sys.executable, str(tool), trace, png, "--start", f"{start:.3f}",
                    "--duration", f"{window:.3f}", "--title", title], check=True)
    print(f"{trace}\n{png}")


if __name__ == "__main__":
    main()
