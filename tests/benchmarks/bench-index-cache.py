#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""A remote slide's open with and without its index on disk (issue 19).

    meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/bench-index-cache.py

Serves slides with nginx on 127.0.0.1 behind tests/check/pipelines/faultproxy.py
(--delay-ms, default 50 ms added to every request) and times, each in a fresh
process as the next run of a training job would, wsislidesrc's first slide
(open: header, TIFF directories, tile tables; then the overview it reads for
tissuemask) with the index cache empty ("cold": the TIFF is walked) and with
the index written by an earlier run ("warm": wsiindexcache.h). Requests are
counted by the proxy. Slides: a generated 16384x12288 Aperio slide
(tools/wsi-make-test-slides) and the real Aperio CMU-1-Small-Region from
../shared/slides when it is there. Prints medians of --repeats runs and the
warm/cold ratios, and the open against the issue's goal (<= 0.5 s at 50 ms).
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROXY = os.path.join(ROOT, "tests", "check", "pipelines", "faultproxy.py")
SHARED_CMU = os.path.join(ROOT, "..", "shared", "slides", "Aperio-CMU-1-Small-Region.svs")

# One measurement, in a child process: seconds to wsislidesrc's first slide,
# and the requests this process made (the read layer's process-wide totals,
# read through a patchreader's remote-stats).
CHILD = r"""
import sys, time, gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
Gst.init(None)
p = Gst.parse_launch('wsislidesrc location="%s" num-buffers=1 ! appsink name=sink '
                     'sync=false' % sys.argv[1])
sink = p.get_by_name("sink")
t0 = time.monotonic()
p.set_state(Gst.State.PLAYING)
sample = sink.emit("try-pull-sample", 60 * Gst.SECOND)
t = time.monotonic() - t0
p.set_state(Gst.State.NULL)
stats = Gst.ElementFactory.make("patchreader").get_property("remote-stats")
print(t if sample is not None else "nan", stats.get_value("requests"))
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, what):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("bench-index-cache: %s did not start" % what)


def start_nginx(root, work):
    port = free_port()
    conf = os.path.join(work, "nginx.conf")
    temp = " ".join("%s_temp_path %s;" % (k, work)
                    for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    with open(conf, "w") as f:
        f.write("daemon off; master_process off; worker_processes 1;\n"
                "pid %s/nginx.pid; error_log %s/error.log;\n"
                "events { worker_connections 256; }\n"
                "http { access_log off; %s keepalive_requests 100000;\n"
                " server { listen 127.0.0.1:%d; root %s; } }\n"
                % (work, work, temp, port, root))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        sys.exit("bench-index-cache: nginx is not installed (Debian nginx-light)")
    proc = subprocess.Popen([nginx, "-c", conf, "-e", os.path.join(work, "error.log"),
                             "-p", work], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_port(port, "nginx")
    return proc, port


def measure(url, cache_dir):
    """(seconds, requests) of one open in a fresh process."""
    env = dict(os.environ, WSI_INDEX_CACHE_DIR=cache_dir)
    out = subprocess.run(["/usr/bin/python3", "-c", CHILD, url], env=env,
                         capture_output=True, text=True, check=True).stdout
    seconds, requests = out.strip().splitlines()[-1].split()
    return float(seconds), int(requests)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delay-ms", type=float, default=50)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--make-slides", default="wsi-make-test-slides")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="bench-index-cache-")
    www = os.path.join(work, "www")
    os.makedirs(www)
    try:
        subprocess.check_call([args.make_slides, "-n", "1", "--layout", "aperio",
                               os.path.join(work, "gen")], stdout=subprocess.DEVNULL)
        shutil.copy(os.path.join(work, "gen", "slide-00.svs"),
                    os.path.join(www, "generated-16384x12288.svs"))
        if os.path.exists(SHARED_CMU):
            shutil.copy(SHARED_CMU, os.path.join(www, "CMU-1-Small-Region.svs"))
        nginx, upstream = start_nginx(www, work)
        # one proxy for the whole run: a slide's URL (the index's key) stays
        proxy = subprocess.Popen(["/usr/bin/python3", PROXY, str(upstream),
                                  "--delay-ms", str(args.delay_ms)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        port = int(proxy.stdout.readline())
        print("wsislidesrc's first slide (open + overview) over HTTP, %g ms added per "
              "request, each run a fresh process; median of %d (busy shared machine: "
              "compare within a row)" % (args.delay_ms, args.repeats))
        print("| slide | cold s | cold requests | warm s | warm requests | warm/cold time |"
              " goal open <= 0.5 s |")
        print("|---|---|---|---|---|---|---|")
        for name in sorted(os.listdir(www)):
            url = "http://127.0.0.1:%d/%s" % (port, name)
            cold, warm = [], []
            warm_dir = os.path.join(work, "index-" + name)
            measure(url, warm_dir)                  # writes the index
            for i in range(args.repeats):
                cold.append(measure(url, os.path.join(work, "cold-%s-%d" % (name, i))))
                warm.append(measure(url, warm_dir))
            ct = statistics.median(t for t, _ in cold)
            wt = statistics.median(t for t, _ in warm)
            cr = statistics.median(r for _, r in cold)
            wr = statistics.median(r for _, r in warm)
            print("| %s | %.3f | %d | %.3f | %d | %.2f | %s |"
                  % (name, ct, cr, wt, wr, wt / ct if ct else float("nan"),
                     "met (warm %.2f s)" % wt if wt <= 0.5 else "not met (warm %.2f s)" % wt))
            sys.stdout.flush()
        proxy.stdin.close()
        proxy.wait()
        nginx.terminate()
        nginx.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
