#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""Soak of the HTTP pipeline through the fault-injecting proxy.

Serves a few synthetic slides with nginx on loopback and streams them by URL
through tests/check/pipelines/faultproxy.py, which spoils responses: TCP
resets and truncated bodies, 503 bursts, wrong Content-Ranges, stalls longer
than the request timeout, a wrong object size in the opening response and
malformed Content-Ranges. Each state cycle builds the pipeline, takes it to
PLAYING and then to NULL (at EOS, or mid-stream after a random number of
batches), with a fresh proxy whose fault periods are drawn anew, at 1, 2 or
4 reader threads in turn. After each cycle it checks:

  * the batches delivered equal, byte for byte, the first batches of the
    same pipeline reading the slides from local disk (all of them at EOS);
  * once settled, the process holds no more file descriptors, sockets and
    threads than before the first HTTP run (after one local warm-up run).

It runs at least --cycles cycles and at least --minutes minutes, prints one
line per cycle and a summary, and exits 1 at the first broken promise.

  meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/soak-http.py \\
      --minutes 30 --cycles 100

One core at most: the proxy and nginx are single processes, the pipeline's
patchreader uses 1 to 4 threads that wait on the network most of the time.
"""
import argparse
import gc
import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROXY = os.path.join(REPO, "tests", "check", "pipelines", "faultproxy.py")

# Faults are retried quickly; a stall past 1 s times the request out.
os.environ.setdefault("WSI_HTTP_BACKOFF_MS", "1")
os.environ.setdefault("WSI_HTTP_TIMEOUT_MS", "1000")

sys.path.insert(0, os.path.join(REPO, "python"))
import gi  # noqa: E402
gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def start_nginx(root, workdir):
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(binary, os.X_OK):
        sys.exit("nginx is not installed (Debian package nginx-light)")
    os.makedirs(workdir, exist_ok=True)
    port = free_port()
    log = os.path.join(workdir, "error.log")
    conf = os.path.join(workdir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off;
master_process off;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {log};
events {{ worker_connections 1024; }}
http {{
 access_log off;
 client_body_temp_path {workdir}; proxy_temp_path {workdir};
 fastcgi_temp_path {workdir}; uwsgi_temp_path {workdir}; scgi_temp_path {workdir};
 keepalive_requests 100000;
 server {{ listen 127.0.0.1:{port}; root {root}; }}
}}
""")
    proc = subprocess.Popen([binary, "-c", conf, "-e", log, "-p", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_port(port):
        proc.kill()
        sys.exit(f"nginx did not listen on {port}: {open(log).read()}")
    return proc, port


class Proxy:
    """faultproxy.py in front of nginx with @faults; stop() returns its
    report ({fault: times injected})."""

    def __init__(self, upstream, faults, report):
        args = [sys.executable, PROXY, str(upstream), "--report", report,
                "--max-seconds", "3600"]
        for fault in faults:
            args += ["--fault", fault]
        self.report = report
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def stop(self):
        self.proc.stdin.close()
        self.proc.stdout.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        counts = {}
        if os.path.exists(self.report):
            for line in open(self.report):
                parts = line.split()
                if len(parts) == 2 and parts[1].isdigit():
                    counts[parts[0]] = int(parts[1])
        return counts


def draw_faults(rng):
    """Fault periods for one cycle: every kind, at periods that a retry
    (the next request) does not hit again."""
    forms = ["no-total", "star", "unsatisfied", "unit"]
    return [f"reset:{rng.choice([7, 11, 13])}",
            f"truncate:{rng.choice([17, 19, 23])}",
            f"wrong-range:{rng.choice([29, 31])}",
            f"stall:{rng.choice([37, 41, 43])}:2",
            f"503:{(a := rng.randrange(5, 60))}-{a + rng.randrange(0, 3)}",
            f"wrong-total:{rng.choice([1, 2, 3])}",
            f"bad-range:{rng.choice(forms)}:{rng.randrange(4, 40)}"]


def description(location, threads, patches):
    return (f'wsislidesrc location="{location}" seed=11 ! tissuemask method=none ! queue ! '
            f"patchsampler patch-size=64 patches-per-slide={patches} min-tissue=0 ! "
            f"patchinterleave ! patchreader threads={threads} ! queue ! "
            "patchbatch batch-size=4 ! appsink name=sink sync=false max-buffers=4")


def run(desc, stop_after=None, limit_s=600):
    """Digests of the batches delivered (all, or the first @stop_after),
    the error text or None, and the warnings."""
    pipeline = Gst.parse_launch(desc)
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    digests, error, warnings = [], None, []
    pipeline.set_state(Gst.State.PLAYING)
    end = time.monotonic() + limit_s
    try:
        while stop_after is None or len(digests) < stop_after:
            if time.monotonic() > end:
                error = f"no EOS within {limit_s} s"
                break
            sample = sink.emit("try-pull-sample", Gst.SECOND // 2)
            if sample is not None:
                buf = sample.get_buffer()
                ok, info = buf.map(Gst.MapFlags.READ)
                digests.append(hashlib.sha256(bytes(info.data)).hexdigest())
                buf.unmap(info)
                continue
            msg = bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING)
            while msg is not None:
                if msg.type == Gst.MessageType.ERROR:
                    error = msg.parse_error()[0].message
                else:
                    warnings.append(msg.parse_warning()[0].message)
                msg = bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING)
            if error is not None or sink.get_property("eos"):
                break
    finally:
        pipeline.set_state(Gst.State.NULL)
        del sink, bus, pipeline
        gc.collect()
    return digests, error, warnings


def held():
    fds = sockets = 0
    for name in os.listdir("/proc/self/fd"):
        fds += 1
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                sockets += 1
        except OSError:
            pass
    return fds, sockets, len(os.listdir("/proc/self/task"))


def held_settled():
    """fds, sockets, threads once they stop changing (threads end a little
    after the state change returns)."""
    last, same = held(), 0
    for _ in range(100):
        if same >= 10:
            break
        time.sleep(0.1)
        now = held()
        same = same + 1 if now == last else 0
        last = now
    return last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--slides", type=int, default=4)
    ap.add_argument("--patches", type=int, default=96, help="patches per slide")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args()

    Gst.init(None)
    if Gst.ElementFactory.find("wsislidesrc") is None:
        sys.exit("wsislidesrc not found: run under `meson devenv -C build -w .`")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="gstwsi-soak-http-")
    www = os.path.join(work, "www")
    generator = os.environ.get("WSI_MAKE_TEST_SLIDES") or shutil.which("wsi-make-test-slides")
    subprocess.run([generator, "-n", str(args.slides), "-W", "2048", "-H", "1536",
                    "-l", "3", "--layout", "generic", www], check=True,
                   stdout=subprocess.DEVNULL)
    names = sorted(n for n in os.listdir(www) if n.endswith(".tiff"))
    with open(os.path.join(www, "soak.lst"), "w") as f:
        f.write("".join(n + "\n" for n in names))
    nginx, nginx_port = start_nginx(www, os.path.join(work, "nginx"))
    failures = []
    try:
        local = os.path.join(www, "soak.lst")
        reference, error, _ = run(description(local, 1, args.patches))
        if error or not reference:
            sys.exit(f"the local reference failed: {error}")
        run(description(local, 4, args.patches))      # one-time costs
        base = held_settled()
        print(f"# {len(names)} slides, {len(reference)} batches per pass; before the first "
              f"HTTP run: {base[0]} fds ({base[1]} sockets), {base[2]} threads", flush=True)
        print("cycle  s_at  threads  stop  batches  same  fds socks thr  faults injected",
              flush=True)
        began = time.monotonic()
        injected_total, batches_total, cycle = {}, 0, 0
        threads_cycle = [1, 2, 4]
        while cycle < args.cycles or time.monotonic() - began < args.minutes * 60:
            threads = threads_cycle[cycle % 3]
            stop = None if cycle % 3 != 1 else rng.randrange(1, len(reference))
            faults = draw_faults(rng)
            proxy = Proxy(nginx_port, faults, os.path.join(work, "report.txt"))
            url = f"http://127.0.0.1:{proxy.port}/soak.lst"
            t0 = time.monotonic()
            digests, error, warnings = run(description(url, threads, args.patches), stop)
            injected = proxy.stop()
            after = held_settled()
            want = reference if stop is None else reference[:stop]
            same = digests == want
            for k, v in injected.items():
                injected_total[k] = injected_total.get(k, 0) + v
            batches_total += len(digests)
            shown = " ".join(f"{k}={v}" for k, v in sorted(injected.items()) if k != "requests")
            print(f"{cycle + 1:5d} {t0 - began:5.0f} {threads:8d} {stop or 'EOS':>5} "
                  f"{len(digests):8d} {'yes' if same else 'NO':>5} {after[0]:4d} {after[1]:5d} "
                  f"{after[2]:3d}  requests={injected.get('requests', 0)} {shown}", flush=True)
            if error is not None:
                failures.append(f"cycle {cycle + 1} ({' '.join(faults)}): error: {error}")
            if not same:
                first = next((i for i, (a, b) in enumerate(zip(digests, want)) if a != b),
                             min(len(digests), len(want)))
                failures.append(f"cycle {cycle + 1} ({' '.join(faults)}): {len(digests)} batches "
                                f"of {len(want)}, first difference at batch {first}; "
                                f"warnings: {warnings[:3]}")
            for what, i in (("fds", 0), ("sockets", 1), ("threads", 2)):
                if after[i] > base[i]:
                    failures.append(f"cycle {cycle + 1}: {after[i]} {what} held after NULL "
                                    f"({base[i]} before the first HTTP run)")
            cycle += 1
            if failures:
                break
        minutes = (time.monotonic() - began) / 60
        print(f"# {cycle} cycles in {minutes:.1f} min, {batches_total} batches "
              f"({4 * batches_total} patches) compared with local disk", flush=True)
        print("# faults injected: " + ", ".join(f"{k} {v}" for k, v in sorted(injected_total.items())),
              flush=True)
    finally:
        nginx.send_signal(signal.SIGTERM)
        try:
            nginx.wait(10)
        except subprocess.TimeoutExpired:
            nginx.kill()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("FAIL: " + "\n      ".join(failures))
        return 1
    print("PASS: every cycle's stream equals local disk; fds, sockets and threads back "
          "to baseline after each NULL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
