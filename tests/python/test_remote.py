"""Slides at URLs from Python: standard_pipeline over http:// and an s3:// prefix
gives the batches of the same slides on disk; wsi-preview and wsi-bench take URLs.

Real servers on loopback: nginx (Debian nginx-light) for http://, s3rver (npm,
tests/s3/node_modules, installed by scripts/install-deps.sh under CI=true) for
s3://.  Without them the tests are skipped with the reason (failed under CI=true,
where scripts/install-deps.sh installs them)."""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import gstwsi

from conftest import ROOT

BATCH, PATCH, PER_SLIDE = 8, 32, 8


def _skip_or_fail(reason):
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port, proc, what):
    for _ in range(200):
        if proc.poll() is not None:
            _skip_or_fail(f"{what} exited at start (status {proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    proc.kill()
    _skip_or_fail(f"{what} did not listen on port {port}")


@pytest.fixture(scope="module")
def www(tmp_root, slides):
    """A folder nginx serves: the session's slides under slides/ and a list of them."""
    root = tmp_root / "www"
    shutil.copytree(slides, root / "slides", dirs_exist_ok=True)
    names = sorted(p.name for p in slides.iterdir())
    (root / "train.lst").write_text("".join(f"slides/{n}\n" for n in names))
    return root


@pytest.fixture(scope="module")
def nginx(tmp_root, www):
    """The URL of nginx serving `www` (Range, ETag, If-Match as any web server)."""
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK)
                                       else None)
    if binary is None:
        _skip_or_fail("nginx is not installed (Debian package nginx-light)")
    work = tmp_root / "nginx"
    work.mkdir(exist_ok=True)
    port = _free_port()
    conf = work / "nginx.conf"
    temp = " ".join(f"{k}_temp_path {work};" for k in
                    ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf.write_text(f"daemon off; master_process off; worker_processes 1; "
                    f"pid {work}/nginx.pid; error_log {work}/error.log;\n"
                    f"events {{ worker_connections 256; }}\n"
                    f"http {{ access_log off; {temp} keepalive_requests 100000;\n"
                    f" server {{ listen 127.0.0.1:{port}; root {www}; }} }}\n")
    proc = subprocess.Popen([binary, "-c", str(conf), "-e", str(work / "error.log"),
                             "-p", str(work)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _wait_for(port, proc, "nginx")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait()


@pytest.fixture(scope="module")
def s3rver(tmp_root, slides):
    """The endpoint of s3rver with the session's slides as s3://bucket/train/*."""
    binary = os.environ.get("WSI_S3RVER") or str(ROOT / "tests" / "s3" / "node_modules" /
                                                 ".bin" / "s3rver")
    if not os.access(binary, os.X_OK) or shutil.which("node") is None:
        _skip_or_fail("s3rver (npm) is not installed: run WSI_INSTALL_S3RVER=1 "
                      "scripts/install-deps.sh or set WSI_S3RVER")
    if shutil.which("curl") is None:
        _skip_or_fail("the curl command (uploads to s3rver) is not installed")
    data = tmp_root / "s3rver"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    port = _free_port()
    # s3rver 3.7.1 makes continuation tokens with DES, refused by Node >= 17's
    # OpenSSL 3 without its legacy provider
    env = dict(os.environ, NODE_OPTIONS="--openssl-legacy-provider")
    # its default address, "localhost", is ::1 first where /etc/hosts says so
    proc = subprocess.Popen([binary, "-d", str(data), "-p", str(port),
                             "--address", "127.0.0.1",
                             "--configure-bucket", "bucket", "--silent"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for(port, proc, "s3rver")
    endpoint = f"http://127.0.0.1:{port}"
    for path in sorted(slides.iterdir()):
        subprocess.run(["curl", "-sSf", "-T", str(path), "--aws-sigv4",
                        "aws:amz:us-east-1:s3", "-u", "S3RVER:S3RVER", "-H",
                        "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-o", os.devnull,
                        f"{endpoint}/bucket/train/{path.name}"], check=True)
    yield endpoint
    proc.terminate()
    proc.wait()


def _batches(location):
    description = gstwsi.standard_pipeline(location, batch_size=BATCH, patch_size=PATCH,
                                           patches_per_slide=PER_SLIDE, threads=2,
                                           cycle=False, seed=5,
                                           patchreader_read_ahead=16)
    with gstwsi.BatchStream(description, torch=False) as stream:
        return list(stream)


def _assert_same_stream(local, remote, base):
    assert len(local) == len(remote) == 5 * PER_SLIDE // BATCH
    for a, b in zip(local, remote):
        assert a.images.tobytes() == b.images.tobytes()
        for field in ("slide_index", "x", "y", "level", "mpp", "cycle"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), field
        for pa, pb in zip(a.paths, b.paths):
            assert pb.startswith(base) and pb.endswith(os.path.basename(pa)), (pa, pb)


def test_standard_pipeline_http_list_equals_local(slides, nginx):
    local = _batches(str(slides))
    remote = _batches(f"{nginx}/train.lst")
    _assert_same_stream(local, remote, f"{nginx}/slides/")


def test_standard_pipeline_s3_prefix_equals_local(slides, s3rver, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3rver)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "S3RVER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
    local = _batches(str(slides))
    remote = _batches("s3://bucket/train/")
    _assert_same_stream(local, remote, "s3://bucket/train/")


def test_wsi_preview_takes_urls(nginx, slides, tmp_root, example_env):
    names = sorted(p.name for p in slides.iterdir())[:2]
    out = tmp_root / "preview-url"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "wsi-preview"), "-o",
                           str(out)] + [f"{nginx}/slides/{n}" for n in names] +
                          ["--set", f"patch_size={PATCH}", "--set", "patches_per_slide=4"],
                          env=example_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "preview.json").read_text())
    assert sorted(e["path"] for e in summary["slides"]) == \
        [f"{nginx}/slides/{n}" for n in names]
    assert all(len(e["patches"]) == 4 for e in summary["slides"])
    assert (out / "contact-sheet.png").stat().st_size > 0


def test_wsi_bench_takes_urls(nginx, tmp_root, example_env):
    prefix = tmp_root / "bench-url"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "wsi-bench"),
                           "--slides", f"{nginx}/train.lst", "--threads", "1",
                           "--patches-per-slide", "8", "--patches-per-visit", "4",
                           "--batch-size", "8", "--patch-size", "64", "--warmup", "1",
                           "--batches", "3", "--repeats", "1", "--timeout", "120",
                           "--out", str(prefix)],
                          env=example_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((prefix / "wsi-bench.json").read_text())
    assert report, "empty report"
    # a missing URL is the pipeline's error naming it, not "no such file"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "wsi-bench"),
                           "--slides", f"{nginx}/missing.svs", "--threads", "1",
                           "--warmup", "1", "--batches", "1", "--repeats", "1",
                           "--timeout", "60", "--out", str(prefix) + "-missing"],
                          env=example_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "no such file or folder" not in proc.stderr
    assert "missing.svs" in proc.stderr and "404" in proc.stderr, proc.stderr[-2000:]


def _extract_coords(location, out, **kw):
    """coords of each slide wsi-extract writes for `location` (no model)."""
    h5py = pytest.importorskip("h5py", reason="python3-h5py not installed")
    s = gstwsi.extract(location, out, mpp=0.5, patch_size=PATCH, progress=False,
                       read_pixels=True, **kw)
    assert not s["failed"], s["failed"]
    coords = {}
    for path in sorted((pathlib.Path(s["folder"]) / "patches").glob("*_patches.h5")):
        with h5py.File(path, "r") as f:
            coords[path.name] = f["coords"][:]
    return s, coords


def test_extract_http_list_and_urls_equal_local(slides, www, nginx, tmp_root):
    """wsi-extract over a list at an http:// URL (listed by wsislidesrc) and
    over single slide URLs: the same slides, names and coordinates as the
    files on disk, every patch read."""
    _, local = _extract_coords(str(slides), tmp_root / "x-local")
    s, listed = _extract_coords(f"{nginx}/train.lst", tmp_root / "x-http-list")
    assert s["patches_decoded"] == s["patches"] > 0
    assert listed.keys() == local.keys() and len(local) == 5
    assert all(np.array_equal(listed[k], local[k]) for k in local)
    names = sorted(p.name for p in slides.iterdir())[:2]
    _, one = _extract_coords([f"{nginx}/slides/{n}" for n in names], tmp_root / "x-http")
    assert sorted(one) == sorted(f"{os.path.splitext(n)[0]}_patches.h5" for n in names)
    assert all(np.array_equal(one[k], local[k]) for k in one)


def test_extract_s3_prefix_equals_local(slides, s3rver, tmp_root, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3rver)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "S3RVER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
    _, local = _extract_coords(str(slides), tmp_root / "x3-local")
    s, remote = _extract_coords("s3://bucket/train/", tmp_root / "x3-s3")
    assert s["patches_decoded"] == s["patches"] > 0
    assert remote.keys() == local.keys() and len(local) == 5
    assert all(np.array_equal(remote[k], local[k]) for k in local)


def test_extract_names_a_missing_prefix_once(s3rver, tmp_root, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3rver)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "S3RVER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
    with pytest.raises(ValueError) as err:
        gstwsi.extract("s3://bucket/nothing-here/", tmp_root / "x3-none", progress=False)
    assert str(err.value).count("s3://bucket/nothing-here/") == 1
    assert "S3RVER" not in str(err.value)


def test_server_going_silent_never_ends_quietly(www, nginx, tmp_root):
    """A server that stops answering after its Nth response, for every N
    before the last a clean run needs: the run either raises
    PipelineError naming the URL and the timeout, or delivers part of its
    patches with warnings; never 0 batches and no exception (before, a run
    whose every patch read stalled ended with EOS and yielded nothing)."""
    import textwrap
    from conftest import run_process_group
    name = sorted(p.name for p in (www / "slides").iterdir() if p.suffix == ".tiff")[0]
    proxy = ROOT / "tests" / "check" / "pipelines" / "faultproxy.py"
    code = textwrap.dedent(f"""
        import os, subprocess, sys
        import gstwsi

        def run(faults):
            report = {str(tmp_root / 'silent-report.txt')!r}
            args = [sys.executable, {str(proxy)!r}, {nginx.rsplit(':', 1)[1]!r},
                    "--report", report]
            for f in faults:
                args += ["--fault", f]
            p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            port = int(p.stdout.readline())
            d = gstwsi.standard_pipeline(f"http://127.0.0.1:{{port}}/slides/{name}",
                                         batch_size=4, patch_size=32, patches_per_slide=16,
                                         cycle=False, seed=5, threads=2)
            got, error, warnings = 0, None, []
            try:
                with gstwsi.BatchStream(d, torch=False, timeout=50) as s:
                    for b in s:
                        got += 1
                    warnings = list(s.warnings)
            except gstwsi.PipelineError as exc:
                error = str(exc).replace(chr(10), " ")
            p.stdin.close()
            p.wait()
            p.stdout.close()
            requests = int(open(report).read().split("requests")[1].split()[0])
            return got, error, len(warnings), requests

        full, error, _, needed = run([])
        assert error is None and full == 4, (full, error)
        print("CLEAN", full, needed)
        for n in range(needed):
            got, error, warned, _ = run([f"stall-after:{{n}}:1"])
            print("AFTER", n, got, warned, error)
        sys.stdout.flush()
        os._exit(0)
        """)
    env = dict(os.environ, WSI_HTTP_TIMEOUT_MS="300", WSI_HTTP_BACKOFF_MS="1")
    child = run_process_group([sys.executable, "-c", code], 120, env=env)
    lines = child.stdout.splitlines()
    assert lines and lines[0].startswith("CLEAN"), child.stdout + child.stderr
    runs = [line.split(" ", 4) for line in lines if line.startswith("AFTER")]
    assert len(runs) == int(lines[0].split()[2]), child.stdout + child.stderr
    for _, n, got, warned, error in runs:
        if error == "None":
            assert int(got) > 0 and int(warned) > 0, f"stall after {n}: {got} batches, " \
                f"{warned} warnings and no error"
        else:
            assert "timed out" in error and name in error, error
