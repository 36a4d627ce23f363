#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""Local disk against HTTP at 0/10/50 ms added latency, same slides, same seeded
stream, 2 decode threads, side by side in one run (issue 19).

    meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/bench-remote.py

Generates synthetic Aperio slides (tools/wsi-make-test-slides), serves them with
nginx on 127.0.0.1 and puts tests/check/pipelines/faultproxy.py in front to add
latency. Per configuration: time to first batch, patches/s after it (steady
state), requests and bytes fetched per patch (patchreader remote-stats), the
time until wsislidesrc pushes its first slide (open + overview), and whether
the stream's bytes equal the local stream's.
"""

import argparse
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import Gst, GstApp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PROXY = os.path.join(HERE, "..", "check", "pipelines", "faultproxy.py")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_nginx(root, workdir):
    port = free_port()
    conf = os.path.join(workdir, "nginx.conf")
    with open(conf, "w") as f:
        f.write("daemon off;\nmaster_process off;\nworker_processes 1;\n"
                "pid %s/nginx.pid;\nerror_log %s/error.log;\n"
                "events { worker_connections 1024; }\n"
                "http { access_log off; client_body_temp_path %s;\n"
                " proxy_temp_path %s; fastcgi_temp_path %s; uwsgi_temp_path %s;\n"
                " scgi_temp_path %s; keepalive_requests 100000;\n"
                " server { listen 127.0.0.1:%d; root %s; } }\n"
                % ((workdir,) * 7 + (port, root)))
    proc = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-c",
                             conf, "-e", os.path.join(workdir, "error.log"),
                             "-p", workdir])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def start_proxy(upstream, delay_ms):
    proc = subprocess.Popen(["/usr/bin/python3", PROXY, str(upstream),
                             "--delay-ms", str(delay_ms)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    port = int(proc.stdout.readline())
    return proc, port


def remote_stats(reader):
    s = reader.get_property("remote-stats")
    return {k: s.get_value(k) for k in ("requests", "bytes")}


def run_stream(location, args):
    desc = ("wsislidesrc location=\"%s\" seed=1 ! tissuemask ! queue ! "
            "patchsampler patch-size=%d target-mpp=0.5 patches-per-slide=%d ! "
            "patchinterleave ! patchreader name=reader threads=2 read-ahead=%d ! "
            "queue max-size-buffers=256 max-size-bytes=0 max-size-time=0 ! "
            "patchbatch batch-size=%d ! appsink name=sink sync=false"
            % (location, args.patch_size, args.patches_per_slide,
               args.read_ahead, args.batch_size))
    pipeline = Gst.parse_launch(desc)
    sink = pipeline.get_by_name("sink")
    reader = pipeline.get_by_name("reader")
    before = remote_stats(reader)
    digest = hashlib.sha256()
    patches = 0
    t0 = time.monotonic()
    pipeline.set_state(Gst.State.PLAYING)
    first = None
    first_patches = 0
    while True:
        sample = sink.try_pull_sample(60 * Gst.SECOND)
        if sample is None:
            break
        buf = sample.get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        digest.update(info.data)
        buf.unmap(info)
        n = buf.get_size() // (args.patch_size * args.patch_size * 3)
        patches += n
        if first is None:
            first = time.monotonic()
            first_patches = n
    end = time.monotonic()
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    after = remote_stats(reader)
    pipeline.set_state(Gst.State.NULL)
    if msg is not None:
        raise RuntimeError(msg.parse_error()[0].message)
    steady = (patches - first_patches) / (end - first) if end > first else 0
    return {
        "first_batch_s": first - t0,
        "patches_per_s": steady,
        "patches": patches,
        "requests": after["requests"] - before["requests"],
        "bytes": after["bytes"] - before["bytes"],
        "digest": digest.hexdigest(),
    }


def slide_open_s(location):
    """wsislidesrc's first slide: open (header, directories) + overview."""
    pipeline = Gst.parse_launch("wsislidesrc location=\"%s\" num-buffers=1 ! "
                                "appsink name=sink sync=false" % location)
    sink = pipeline.get_by_name("sink")
    t0 = time.monotonic()
    pipeline.set_state(Gst.State.PLAYING)
    sample = sink.try_pull_sample(60 * Gst.SECOND)
    t = time.monotonic() - t0
    pipeline.set_state(Gst.State.NULL)
    return t if sample is not None else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--slides", type=int, default=2)
    ap.add_argument("--patches-per-slide", type=int, default=600)
    ap.add_argument("--patch-size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--read-ahead", type=int, default=64)
    ap.add_argument("--delays", default="0,10,50")
    ap.add_argument("--make-slides", default="wsi-make-test-slides")
    args = ap.parse_args()

    Gst.init(None)
    work = tempfile.mkdtemp(prefix="bench-remote-")
    www = os.path.join(work, "www")
    subprocess.check_call([args.make_slides, "-n", str(args.slides), www],
                          stdout=subprocess.DEVNULL)
    slides = sorted(f for f in os.listdir(www)
                    if f.endswith(".svs") or f.endswith(".tiff"))
    with open(os.path.join(www, "local.lst"), "w") as f:
        f.write("".join(os.path.join(www, s) + "\n" for s in slides))
    with open(os.path.join(www, "remote.lst"), "w") as f:
        f.write("".join(s + "\n" for s in slides))
    nginx, nginx_port = start_nginx(www, work)
    rows = []
    try:
        local = run_stream(os.path.join(www, "local.lst"), args)
        local["open_s"] = slide_open_s(os.path.join(www, slides[0]))
        rows.append(("local disk", local))
        for delay in [int(d) for d in args.delays.split(",")]:
            proxy, port = start_proxy(nginx_port, delay)
            try:
                r = run_stream("http://127.0.0.1:%d/remote.lst" % port, args)
                r["open_s"] = slide_open_s("http://127.0.0.1:%d/%s"
                                           % (port, slides[0]))
            finally:
                proxy.stdin.close()
                proxy.wait()
            rows.append(("HTTP +%d ms" % delay, r))
    finally:
        nginx.terminate()
        nginx.wait()
    tiles = sum(os.path.getsize(os.path.join(www, s)) for s in slides)
    print("%d slides (%.1f MB), %d patches of %d px at 0.5 mpp, 2 decode "
          "threads, read-ahead %d" % (len(slides), tiles / 1e6,
                                      rows[0][1]["patches"], args.patch_size,
                                      args.read_ahead))
    print("| source | patches/s (steady) | vs local | first batch s | "
          "slide open s | requests/patch | KB fetched/patch | same bytes |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        n = max(r["patches"], 1)
        print("| %s | %.0f | %.0f %% | %.2f | %.2f | %s | %s | %s |" % (
            name, r["patches_per_s"],
            100 * r["patches_per_s"] / rows[0][1]["patches_per_s"],
            r["first_batch_s"], r["open_s"],
            "%.2f" % (r["requests"] / n) if name != "local disk" else "-",
            "%.1f" % (r["bytes"] / n / 1e3) if name != "local disk" else "-",
            "yes" if r["digest"] == rows[0][1]["digest"] else "NO"))
    shutil.rmtree(work)
    return 0 if all(r["digest"] == rows[0][1]["digest"] for _, r in rows) \
        else 1


if __name__ == "__main__":
    sys.exit(main())
