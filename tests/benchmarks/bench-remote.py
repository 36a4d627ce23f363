#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""Local disk against HTTP at 0/10/50 ms added latency, same slides, same
seeded stream, 2 decode threads, side by side in one run (issue 19).

    meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/bench-remote.py

Writes synthetic slides (wsi-make-test-slides; a DICOM copy of the first with
wsi-make-test-dicom) and serves them with one nginx on 127.0.0.1: one port per
latency, the delay added by nginx itself before each response (`echo_sleep`
of the echo module Debian's nginx-light ships), so the server costs no CPU
while it waits, as object storage does not cost the client's CPU. (The
project's Python faultproxy, which the tests use for faults, is not used
here: on 2 busy cores it served ~150 requests/s and measured itself.)

Every source runs the same patchreader settings: `read-ahead=256`, the
automatic depth for slides at URLs, also for local disk (its automatic
depth, 8 patches at 2 threads, starved the decoders on the busy machine:
half the rate); `--reader-extra ''` compares the automatic depths instead.

Cases, each streamed in its own process (the range cache is per process, so
no case finds another's bytes), in rounds alternating the sources so that
machine load hits them alike; the median round is printed:

- several slides (a list file) and one slide, local vs HTTP +0/+10/+50 ms;
- one DICOM instance, local vs HTTP +50 ms.

Per case: patches/s in steady state (from the batch that completes 20 % of
the stream to the last: warm-up excluded) and over the whole stream after
the first batch, the ratio to local disk in the same round, time to first
batch, requests and bytes fetched per patch (patchreader remote-stats: the
whole process, wsislidesrc's opens and overviews included), and whether the
stream's bytes equal the local stream's. Against the bytes: the TIFF tile
byte counts of the tiles the local stream touched (its pread calls under
strace, matched against every IFD's TileOffsets/TileByteCounts), per patch.
Slide open: wsislidesrc's first slide (header, directories, overview) alone,
time and requests, cold and with its index in the on-disk index cache
(streams run with WSI_INDEX_CACHE_DIR=none: every case opens cold). The goal
lines compare with issue 19's goals.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import Gst, GstApp  # noqa: E402,F401

ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
STEADY_FROM = 0.20      # steady state starts when this share was delivered


# ---- servers ---------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_nginx(root, workdir, delays_ms):
    """One nginx, one port per delay; returns (process, {delay: port})."""
    ports = {d: free_port() for d in delays_ms}
    servers = ""
    for delay, port in ports.items():
        if delay > 0:
            where = ("location / { echo_sleep %.3f; echo_exec @file; }\n"
                     "   location @file { }" % (delay / 1000.0))
        else:
            where = "location / { }"
        servers += (" server { listen 127.0.0.1:%d; root %s;\n   %s }\n"
                    % (port, root, where))
    conf = os.path.join(workdir, "nginx.conf")
    with open(conf, "w") as f:
        f.write("daemon off;\nmaster_process off;\nworker_processes 1;\n"
                "load_module %s;\n"
                "pid %s/nginx.pid;\nerror_log %s/error.log;\n"
                "events { worker_connections 4096; }\n"
                "http { access_log off; client_body_temp_path %s;\n"
                " proxy_temp_path %s; fastcgi_temp_path %s; uwsgi_temp_path %s;\n"
                " scgi_temp_path %s; keepalive_requests 1000000;\n%s}\n"
                % ((ECHO_MODULE,) + (workdir,) * 7 + (servers,)))
    proc = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-c",
                             conf, "-e", os.path.join(workdir, "error.log"),
                             "-p", workdir])
    for port in ports.values():
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            proc.terminate()
            raise RuntimeError("nginx did not start (see %s/error.log)"
                               % workdir)
    return proc, ports


# ---- one stream (run in a child process) -----------------------------------

def remote_counts():
    reader = Gst.ElementFactory.make("patchreader", None)
    s = reader.get_property("remote-stats")
    return s.get_value("requests"), s.get_value("bytes")


def run_stream(args):
    desc = ("wsislidesrc location=\"%s\" seed=1 ! tissuemask ! queue ! "
            "patchsampler patch-size=%d target-mpp=0.5 patches-per-slide=%d ! "
            "patchinterleave ! patchreader threads=2 %s ! "
            "queue max-size-buffers=256 max-size-bytes=0 max-size-time=0 ! "
            "patchbatch batch-size=%d ! appsink name=sink sync=false"
            % (args.location, args.patch_size, args.patches_per_slide,
               args.reader_extra, args.batch_size))
    pipeline = Gst.parse_launch(desc)
    sink = pipeline.get_by_name("sink")
    req0, bytes0 = remote_counts()
    digest = hashlib.sha256()
    patches = 0
    marks = []                  # (seconds, patches so far) per batch
    t0 = time.monotonic()
    pipeline.set_state(Gst.State.PLAYING)
    while True:
        sample = sink.try_pull_sample(120 * Gst.SECOND)
        if sample is None:
            break
        buf = sample.get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        digest.update(info.data)
        buf.unmap(info)
        patches += buf.get_size() // (args.patch_size * args.patch_size * 3)
        marks.append((time.monotonic() - t0, patches))
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    req1, bytes1 = remote_counts()
    pipeline.set_state(Gst.State.NULL)
    if msg is not None:
        raise RuntimeError(msg.parse_error()[0].message)
    return {"marks": marks, "patches": patches, "requests": req1 - req0,
            "bytes": bytes1 - bytes0, "digest": digest.hexdigest()}


def run_open(args):
    """wsislidesrc's first slide alone: open (header, directories) and
    overview, until its buffer is out."""
    pipeline = Gst.parse_launch("wsislidesrc location=\"%s\" num-buffers=1 ! "
                                "appsink name=sink sync=false" % args.location)
    sink = pipeline.get_by_name("sink")
    req0, _ = remote_counts()
    t0 = time.monotonic()
    pipeline.set_state(Gst.State.PLAYING)
    sample = sink.try_pull_sample(60 * Gst.SECOND)
    t = time.monotonic() - t0
    req1, _ = remote_counts()
    pipeline.set_state(Gst.State.NULL)
    return {"open_s": t if sample is not None else None,
            "open_requests": req1 - req0}


def child(args, location, mode, extra_env=None, strace_to=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode,
           "--location", location, "--patch-size", str(args.patch_size),
           "--batch-size", str(args.batch_size),
           "--patches-per-slide", str(args.patches_per_slide),
           "--reader-extra", args.reader_extra]
    if strace_to:
        cmd = ["strace", "-f", "-qq", "-s", "0", "--seccomp-bpf",
               "-e", "trace=pread64", "-o", strace_to] + cmd
    # No on-disk index cache unless asked: every case opens cold.
    env = dict(os.environ, WSI_INDEX_CACHE_DIR="none")
    env.update(extra_env or {})
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                         env=env).stdout
    return json.loads(out.decode().strip().splitlines()[-1])


# ---- the bytes the stream's tiles occupy -----------------------------------

def tiff_tiles(path):
    """{offset: byte count} of every tile of every IFD (TIFF and BigTIFF)."""
    tiles = {}
    with open(path, "rb") as f:
        data = f.read()
    bo = "<" if data[:2] == b"II" else ">"
    big = struct.unpack(bo + "H", data[2:4])[0] == 43
    off = struct.unpack(bo + ("Q" if big else "I"),
                        data[8:16] if big else data[4:8])[0]
    sizes = {3: "H", 4: "I", 16: "Q"}
    seen = set()
    while off and off not in seen:
        seen.add(off)
        if big:
            n = struct.unpack(bo + "Q", data[off:off + 8])[0]
            pos, esize = off + 8, 20
        else:
            n = struct.unpack(bo + "H", data[off:off + 2])[0]
            pos, esize = off + 2, 12
        arrays = {}
        for i in range(n):
            e = data[pos + i * esize:pos + (i + 1) * esize]
            if big:
                tag, typ, count = struct.unpack(bo + "HHQ", e[:12])
                val = e[12:20]
            else:
                tag, typ, count = struct.unpack(bo + "HHI", e[:8])
                val = e[8:12]
            if tag not in (324, 325) or typ not in sizes:
                continue
            fmt = sizes[typ]
            nbytes = struct.calcsize(fmt) * count
            if nbytes > len(val):
                at = struct.unpack(bo + ("Q" if big else "I"), val)[0]
                raw = data[at:at + nbytes]
            else:
                raw = val[:nbytes]
            arrays[tag] = struct.unpack(bo + fmt * count, raw)
        for o, c in zip(arrays.get(324, ()), arrays.get(325, ())):
            if c:
                tiles[o] = c
        npos = pos + n * esize
        off = struct.unpack(bo + ("Q" if big else "I"),
                            data[npos:npos + (8 if big else 4)])[0]
    return tiles


# "PID pread64(FD, BUF, COUNT, OFFSET) = N", or, when another thread's
# call came between, "PID <... pread64 resumed>BUF, COUNT, OFFSET) = N".
PREAD = re.compile(r"pread64(\(\d+| resumed>).*, (\d+), (\d+)\) = (\d+)")


def touched_tile_bytes(strace_log, slide_paths):
    """Sum of the byte counts of distinct tiles read (any slide)."""
    tables = [tiff_tiles(p) for p in slide_paths]
    reads = set()
    with open(strace_log) as f:
        for line in f:
            m = PREAD.search(line)
            if m:
                reads.add((int(m.group(3)), int(m.group(2))))
    total = 0
    for table in tables:
        total += sum(c for o, c in table.items() if (o, c) in reads)
    return total


# ---- the table ---------------------------------------------------------------

def steady_rate(marks, total):
    """Patches/s from the batch completing STEADY_FROM of the stream to the
    last one."""
    start = next((m for m in marks if m[1] >= STEADY_FROM * total), None)
    if start is None or marks[-1][0] <= start[0]:
        return 0.0
    return (marks[-1][1] - start[1]) / (marks[-1][0] - start[0])


def after_first_rate(marks):
    if len(marks) < 2 or marks[-1][0] <= marks[0][0]:
        return 0.0
    return (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])


def summarize(runs, local_runs):
    """Median over rounds; each round's ratio is against local disk in the
    same round."""
    steady = [steady_rate(r["marks"], r["patches"]) for r in runs]
    ratios = [steady_rate(r["marks"], r["patches"])
              / max(steady_rate(lr["marks"], lr["patches"]), 1e-9)
              for r, lr in zip(runs, local_runs)]
    r0 = runs[0]
    n = max(r0["patches"], 1)
    return {
        "steady": statistics.median(steady),
        "ratio": statistics.median(ratios),
        "after_first": statistics.median(after_first_rate(r["marks"])
                                         for r in runs),
        "first": statistics.median(r["marks"][0][0] for r in runs),
        "patches": r0["patches"],
        "req_per_patch": r0["requests"] / n,
        "bytes_per_patch": r0["bytes"] / n,
        "digest": r0["digest"],
        "same_digest": all(r["digest"] == r0["digest"] for r in runs),
    }


def open_cell(o):
    """"cold s (requests)", and the same with the index on disk."""
    if not o or o["open_s"] is None:
        return "-"
    cell = "%.2f (%d)" % (o["open_s"], o["open_requests"])
    i = o.get("indexed")
    if i and i["open_s"] is not None:
        cell += "; indexed %.2f (%d)" % (i["open_s"], i["open_requests"])
    return cell


def print_table(title, rows, tile_bytes, opens):
    local = rows[0][1]
    print("\n### %s (%d patches)\n" % (title, local["patches"]))
    print("| source | patches/s steady | vs local | patches/s after 1st "
          "batch | first batch s | requests/patch | KB fetched/patch | "
          "fetched / tile bytes | slide open s (requests) | same bytes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, s in rows:
        remote = name != "local disk"
        o = opens.get(name)
        print("| %s | %.0f | %.0f %% | %.0f | %.2f | %s | %s | %s | %s | %s |"
              % (name, s["steady"], 100 * s["ratio"], s["after_first"],
                 s["first"],
                 "%.2f" % s["req_per_patch"] if remote else "-",
                 "%.1f" % (s["bytes_per_patch"] / 1e3) if remote else "-",
                 "%.2f" % (s["bytes_per_patch"] * s["patches"] / tile_bytes)
                 if remote and tile_bytes else "-",
                 open_cell(o),
                 "yes" if s["digest"] == local["digest"]
                 and s["same_digest"] else "NO"))
    if tile_bytes:
        print("\nTiles the local stream touched: %.1f KB per patch."
              % (tile_bytes / local["patches"] / 1e3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--slides", type=int, default=3)
    ap.add_argument("--patches-per-slide", type=int, default=1000)
    ap.add_argument("--single-patches", type=int, default=2000,
                    help="patches of the one-slide case")
    ap.add_argument("--patch-size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--delays", default="0,10,50")
    ap.add_argument("--reader-extra", default="read-ahead=256",
                    help="patchreader properties of every source (default: "
                    "the automatic depth for URLs, so local disk gets the "
                    "same queue; '' for each side's automatic one)")
    ap.add_argument("--no-dicom", action="store_true")
    ap.add_argument("--cases", default="multi,single,dicom",
                    help="which of multi,single,dicom to run")
    ap.add_argument("--child", choices=("stream", "open"))
    ap.add_argument("--location")
    args = ap.parse_args()

    Gst.init(None)
    if args.child:
        result = run_stream(args) if args.child == "stream" else run_open(args)
        print(json.dumps(result))
        return 0
    if not os.path.exists(ECHO_MODULE):
        print("SKIP: nginx's echo module (%s, Debian libnginx-mod-http-echo) "
              "is missing" % ECHO_MODULE)
        return 77

    delays = [int(d) for d in args.delays.split(",")]
    work = tempfile.mkdtemp(prefix="bench-remote-")
    www = os.path.join(work, "www")
    subprocess.check_call(["wsi-make-test-slides", "-n", str(args.slides),
                           "-j", "2", www], stdout=subprocess.DEVNULL)
    slides = sorted(f for f in os.listdir(www)
                    if f.endswith(".svs") or f.endswith(".tiff"))
    paths = [os.path.join(www, s) for s in slides]
    with open(os.path.join(www, "local.lst"), "w") as f:
        f.write("".join(p + "\n" for p in paths))
    with open(os.path.join(www, "remote.lst"), "w") as f:
        f.write("".join(s + "\n" for s in slides))
    dicom = None
    if not args.no_dicom:
        # A DICOM instance at a URL is read alone (a series is not listed
        # over HTTP), so its overview decodes the whole level: a one-level
        # 4096 x 3072 slide keeps that short. Local: the same instance.
        src = os.path.join(work, "dicomsrc")
        subprocess.check_call(["wsi-make-test-slides", "-n", "1", "-l", "1",
                               "-W", "4096", "-H", "3072",
                               "--layout", "generic", src],
                              stdout=subprocess.DEVNULL)
        subprocess.check_call(["wsi-make-test-dicom", "--mpp=0.25",
                               "--prefix=dcm",
                               os.path.join(src, "slide-00.tiff"),
                               os.path.join(www, "dicom")],
                              stdout=subprocess.DEVNULL)
        dicom = "dicom/dcm-level0.dcm"
    nginx, ports = start_nginx(www, work, delays)
    url = "http://127.0.0.1:%d/%s"
    load = os.getloadavg()
    cases = []      # (title, patches per slide, [(name, location)], paths)
    multi = [("local disk", os.path.join(www, "local.lst"))] + [
        ("HTTP +%d ms" % d, url % (ports[d], "remote.lst")) for d in delays]
    cases.append(("%d slides" % len(slides), args.patches_per_slide, multi,
                  paths, [(n, (paths[0] if n == "local disk"
                               else l.replace("remote.lst", slides[0])))
                          for n, l in multi]))
    single = [("local disk", paths[0])] + [
        ("HTTP +%d ms" % d, url % (ports[d], slides[0])) for d in delays]
    cases.append(("1 slide (%s)" % slides[0], args.single_patches, single,
                  paths[:1], []))
    if dicom:
        d = max(delays)
        cases.append(("DICOM, one-level 4096 x 3072 instance (%s)" % dicom,
                      args.single_patches,
                      [("local disk", os.path.join(www, dicom)),
                       ("HTTP +%d ms" % d, url % (ports[d], dicom))],
                      None, []))
    wanted = {"%d slides" % len(slides): "multi"}
    cases = [c for c in cases
             if wanted.get(c[0], "dicom" if c[0].startswith("DICOM")
                           else "single") in args.cases.split(",")]
    ok = True
    t_start = time.monotonic()
    try:
        for title, pps, sources, tile_paths, open_cases in cases:
            args.patches_per_slide = pps
            runs = {name: [] for name, _ in sources}
            for r in range(args.rounds):
                for name, loc in sources:
                    print("[%3.0f s] %s, round %d: %s" % (
                        time.monotonic() - t_start, title, r + 1, name),
                        file=sys.stderr, flush=True)
                    runs[name].append(child(args, loc, "stream"))
            local_runs = runs["local disk"]
            rows = [(name, summarize(runs[name], local_runs))
                    for name, _ in sources]
            tile_bytes = 0
            if tile_paths and shutil.which("strace"):
                log = os.path.join(work, "strace.log")
                child(args, sources[0][1], "stream", strace_to=log)
                tile_bytes = touched_tile_bytes(log, tile_paths)
            opens = {name: child(args, loc, "open")
                     for name, loc in open_cases}
            # The same open with the slide's index on disk (issue 19's
            # index cache): filled by a first open, then measured.
            index_dir = os.path.join(work, "index")
            for name, loc in open_cases:
                if name != "local disk":
                    env = {"WSI_INDEX_CACHE_DIR": index_dir}
                    child(args, loc, "open", extra_env=env)
                    opens[name]["indexed"] = child(args, loc, "open",
                                                   extra_env=env)
            print_table(title, rows, tile_bytes, opens)
            ok &= all(s["digest"] == rows[0][1]["digest"] and s["same_digest"]
                      for _, s in rows)
            for name, s in rows[1:]:
                if name.endswith("+%d ms" % max(delays)):
                    print("\nGoal (issue 19), %s at +%d ms: steady rate >= 80 %% "
                          "of local: %.0f %% (%s)" % (
                              title, max(delays), 100 * s["ratio"],
                              "met" if s["ratio"] >= 0.8 else "NOT met"))
                    if tile_paths and tile_bytes:
                        b = s["bytes_per_patch"] * s["patches"] / tile_bytes
                        print("Goal: fetched <= 1.3 x tile bytes: %.2f x (%s)"
                              % (b, "met" if b <= 1.3 else "NOT met"))
                    o = opens.get(name)
                    if o and o["open_s"] is not None:
                        print("Goal: slide open <= 0.5 s: %.2f s without "
                              "the index on disk (%s)" % (
                                  o["open_s"], "met" if o["open_s"] <= 0.5
                                  else "NOT met"))
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work)
    print("\n%d rounds, medians; patchreader threads=2 %s; %d px patches at "
          "0.5 mpp, batches of %d; load average at start %.1f %.1f %.1f, "
          "at end %.1f %.1f %.1f; %.0f s" % (
              args.rounds, args.reader_extra or "(defaults)", args.patch_size,
              args.batch_size, *load, *os.getloadavg(),
              time.monotonic() - t_start))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
