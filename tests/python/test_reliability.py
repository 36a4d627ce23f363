"""Nothing hangs, nothing is lost in silence.

Paths that used to hang a run (symbolic link loops under a slide folder, a
FIFO named in a list or in mask-cache-dir, a source stuck in start()), a
precise reason for each unreadable path (checked as a non-root user), a
damaged store shard header (its warning used to hold raw bytes and kill the
Python stream), patchstoresink resume=true with other settings, and the
arguments BatchStream and standard_pipeline used to take unchecked.

Every run that could hang on a broken build runs in a child process with a
time limit, so a regression fails the test instead of hanging the suite.
"""
import json
import os
import pathlib
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import zlib

import pytest

import gstwsi
from gstwsi.stream import Gst

from conftest import run_process_group

LIMIT = 60          # seconds a child run may take before it counts as hung


def _make_slides(out, count=2):
    generator = os.environ.get("WSI_MAKE_TEST_SLIDES") or shutil.which("wsi-make-test-slides")
    if not generator:
        pytest.skip("wsi-make-test-slides not found (set WSI_MAKE_TEST_SLIDES)")
    subprocess.run([generator, "-n", str(count), "-W", "1024", "-H", "768", "-l", "2",
                    "-t", "256", "--layout", "aperio", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return sorted(pathlib.Path(out).glob("*.svs"))


def _pipeline(location, sink="fakesink sync=false", mask_cache_dir=None):
    mask = f' mask-cache-dir="{mask_cache_dir}"' if mask_cache_dir else ""
    return (f'wsislidesrc location="{location}" ! tissuemask{mask} ! queue ! '
            "patchsampler patch-size=64 target-mpp=2 patches-per-slide=4 min-tissue=0 ! "
            "patchinterleave ! patchreader threads=2 ! queue ! "
            f"patchbatch batch-size=4 ! {sink}")


def _launch(description, env=None, prefix=()):
    """gst-launch-1.0 DESCRIPTION in a child; fails the test if it hangs."""
    launcher = shutil.which("gst-launch-1.0")
    if launcher is None:
        pytest.skip("gst-launch-1.0 not found")
    argv = list(prefix) + [launcher] + _split(description)
    try:
        return run_process_group(argv, LIMIT, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {LIMIT} s (hung): {description}")


def _split(description):
    import shlex
    return shlex.split(description)


def _child(code, timeout=LIMIT):
    """Runs Python `code` in a child (this interpreter, this environment)."""
    try:
        return run_process_group([sys.executable, "-c", textwrap.dedent(code)], timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish within {timeout} s (hung)")


# ---- hangs -----------------------------------------------------------------

def test_folder_with_two_symlink_loops_is_walked_once(tmp_path):
    """DIR/loopdir -> . and DIR/sub/up -> .. together made the folder walk
    recurse for ever (each loop alone was cut by the depth limit)."""
    folder = tmp_path / "loops"
    _make_slides(folder, 2)
    (folder / "sub").mkdir()
    os.symlink(".", folder / "loopdir")
    os.symlink("..", folder / "sub" / "up")
    child = _child(f"""
        import sys; sys.path.insert(0, {str(gstwsi.__path__[0] + '/..')!r})
        import gstwsi
        from gstwsi.stream import Gst
        gstwsi.init()
        p = Gst.parse_launch({_pipeline(folder)!r})
        src = p.get_by_name("wsislidesrc0")
        p.set_state(Gst.State.PLAYING)
        msg = p.get_bus().timed_pop_filtered(50 * Gst.SECOND,
            Gst.MessageType.EOS | Gst.MessageType.ERROR)
        eos = msg is not None and msg.type == Gst.MessageType.EOS
        print("END", "EOS" if eos else msg, src.get_property("slides-total"))
        p.set_state(Gst.State.NULL)
        """)
    assert "END EOS" in child.stdout, child.stdout + child.stderr
    # every slide once, however many links lead to its folder
    assert child.stdout.strip().endswith(" 2"), child.stdout


def test_fifo_in_a_slide_list_is_refused(tmp_path):
    slides = _make_slides(tmp_path / "s", 1)
    fifo = tmp_path / "fifo.svs"
    os.mkfifo(fifo)
    listing = tmp_path / "list.txt"
    listing.write_text(f"{fifo}\n{slides[0]}\n")
    run = _launch(_pipeline(listing))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "fifo.svs: not a regular file (a FIFO)" in run.stdout + run.stderr


def test_fifo_in_mask_cache_dir_is_refused(tmp_path):
    slides = _make_slides(tmp_path / "s", 1)
    cache = tmp_path / "masks"
    first = _launch(_pipeline(slides[0], mask_cache_dir=cache))
    assert first.returncode == 0, first.stdout + first.stderr
    masks = list(cache.glob("*.mask"))
    assert masks, "the first run stored no mask"
    for mask in masks:
        mask.unlink()
        os.mkfifo(mask)
    second = _launch(_pipeline(slides[0], mask_cache_dir=cache))
    assert second.returncode == 0, second.stdout + second.stderr
    assert "not a regular file (a FIFO)" in second.stdout + second.stderr


@pytest.mark.parametrize("timeout, error", [("x", TypeError), (0, ValueError),
                                            (-1, ValueError), (float("nan"), ValueError),
                                            (True, TypeError)])
def test_timeout_is_checked(slides, timeout, error):
    description = gstwsi.standard_pipeline(slides, batch_size=4, cycle=False)
    with pytest.raises(error, match="timeout"):
        gstwsi.BatchStream(description, timeout=timeout)


def test_timeout_fires_while_the_source_starts(tmp_path):
    """A server that accepts and never answers: wsislidesrc's start() (the
    first slide's open) blocks inside set_state(PLAYING), where the timeout
    used to be out of reach (a 120 s timeout waited 200 s and more)."""
    if gstwsi.stream.Gst.ElementFactory.find("wsislidesrc") is None:
        pytest.skip("no wsislidesrc")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])   # kept open, never answered
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    try:
        child = _child(f"""
            import os, sys, time
            sys.path.insert(0, {str(gstwsi.__path__[0] + '/..')!r})
            import gstwsi
            d = gstwsi.standard_pipeline("http://127.0.0.1:{port}/a.svs", batch_size=4,
                                         cycle=False)
            began = time.monotonic()
            try:
                for batch in gstwsi.BatchStream(d, timeout=2):
                    pass
                print("NO-TIMEOUT")
            except TimeoutError as exc:
                print("TIMEOUT", round(time.monotonic() - began), exc)
            except Exception as exc:
                print("OTHER", type(exc).__name__, exc)
            sys.stdout.flush()
            os._exit(0)
            """, timeout=40)
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()
    out = child.stdout
    if out.startswith("OTHER"):
        pytest.skip(f"the remote open failed before the timeout: {out.strip()}")
    assert out.startswith("TIMEOUT"), out + child.stderr
    assert int(out.split()[1]) < 15, out


# ---- precise reasons, as a user without privileges ---------------------------

def _unprivileged_prefix():
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is missing: cannot test permissions")
    return (setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups")


def test_each_unreadable_path_has_its_reason():
    prefix = _unprivileged_prefix()
    root = pathlib.Path(tempfile.mkdtemp(prefix="gstwsi-perm-"))
    try:
        root.chmod(0o755)
        folder = root / "folder"
        (folder / "open").mkdir(parents=True)
        (folder / "locked").mkdir()
        good = _make_slides(folder / "open", 1)[0]
        shutil.copy(good, folder / "locked" / "hidden.svs")
        shutil.copy(good, folder / "open" / "denied.svs")
        (root / "shut").mkdir()
        shutil.copy(good, root / "shut" / "inside.svs")
        (root / "dir.svs").mkdir()
        os.symlink("b.svs", root / "a.svs")
        os.symlink("a.svs", root / "b.svs")
        for path in [root, folder, folder / "open", root / "dir.svs"]:
            path.chmod(0o755)
        good.chmod(0o644)
        (folder / "open" / "denied.svs").chmod(0)
        (folder / "locked").chmod(0)
        (root / "shut").chmod(0)
        listing = root / "list.txt"
        listing.write_text("\n".join([str(folder / "open" / "denied.svs"),
                                      str(root / "shut" / "inside.svs"),
                                      str(root / "dir.svs"), "/dev/zero",
                                      str(root / "a.svs"), str(good)]) + "\n")
        listing.chmod(0o644)
        env = dict(os.environ, GST_REGISTRY=str(root / "registry.bin"), HOME=str(root))
        if prefix:
            root.chmod(0o777)     # the registry is written by the unprivileged user
        by_folder = _launch(_pipeline(folder), env=env, prefix=prefix)
        by_list = _launch(_pipeline(listing), env=env, prefix=prefix)
    finally:
        for path in [folder / "locked", root / "shut"]:
            path.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)
    out = by_folder.stdout + by_folder.stderr
    assert by_folder.returncode == 0, out
    assert f"The folder {folder / 'locked'} cannot be read (permission denied)" in out
    assert "denied.svs: permission denied" in out
    out = by_list.stdout + by_list.stderr
    assert by_list.returncode == 0, out
    assert "denied.svs: permission denied" in out
    assert "inside.svs: permission denied" in out
    assert "dir.svs: not a regular file (a directory)" in out
    assert "/dev/zero: not a regular file (a device)" in out
    assert "a.svs: symbolic link loop" in out


# ---- patch stores ----------------------------------------------------------

def _write_store(slides, out, seed=2, patch_size=64, resume=False):
    description = (f'wsislidesrc location="{slides}" seed={seed} ! tissuemask ! queue ! '
                   f"patchsampler patch-size={patch_size} max-patches=40 ! patchinterleave ! "
                   f'patchreader threads=2 ! patchstoresink location="{out}" '
                   f"patches-per-shard=16{' resume=true' if resume else ''}")
    pipeline = Gst.parse_launch(description)
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    msg = bus.timed_pop_filtered(120 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg is not None
    if msg.type == Gst.MessageType.ERROR:
        return msg.parse_error()[0].message
    return None


def test_damaged_shard_header_leaves_the_good_patches(slides, tmp_path):
    """A shard whose header holds raw bytes for its pixel format: its
    warning used to carry those bytes, PyGObject raised UnicodeDecodeError
    and the stream delivered none of the good patches."""
    store = tmp_path / "store"
    assert _write_store(slides, store) is None
    shard = store / "shard-00001.wsis"
    data = bytearray(shard.read_bytes())
    data[16:32] = b"R\xad\xff" + bytes(13)          # WsiShardHeader.video_format
    # the checksums made to match (footer, manifest): the header itself is
    # what must be refused, as when the writer put those bytes there
    crc = zlib.crc32(bytes(data[:-64]))
    data[-64 + 40:-64 + 44] = struct.pack("<I", crc)
    shard.write_bytes(bytes(data))
    manifest = json.loads((store / "manifest.json").read_text())
    for listed in manifest["shards"]:
        if listed["name"] == shard.name:
            listed["crc32"] = f"{crc:08x}"
    (store / "manifest.json").write_text(json.dumps(manifest))
    description = gstwsi.standard_pipeline(store, batch_size=8, cycle=False,
                                           order="sequential")
    patches = 0
    with gstwsi.BatchStream(description, torch=False) as stream:
        for batch in stream:
            patches += len(batch.records)
        warnings = list(stream.warnings)
    assert patches == 40 - 16
    assert any("shard-00001.wsis" in w and "\\xAD\\xFF" in w for w in warnings), warnings


@pytest.mark.parametrize("interrupted", [False, True])
def test_resume_refuses_other_settings(slides, tmp_path, interrupted):
    store = tmp_path / "store"
    assert _write_store(slides, store, seed=2) is None
    if interrupted:                   # a store cut short has no manifest
        (store / "manifest.json").unlink()
    error = _write_store(slides, store, seed=3, resume=True)
    assert error is not None and "seed: 2 in the store, 3 now" in error, error
    error = _write_store(slides, store, seed=2, patch_size=32, resume=True)
    assert error is not None and "patch-size: 64 in the store, 32 now" in error, error
    # the same settings still resume
    assert _write_store(slides, store, seed=2, resume=True) is None


# ---- arguments -------------------------------------------------------------

def test_batchstream_arguments_are_checked(slides, tmp_path, monkeypatch):
    with pytest.raises(TypeError, match="pipeline description"):
        gstwsi.BatchStream(12345)
    description = gstwsi.standard_pipeline(slides, batch_size=8, cycle=False)
    with pytest.raises(ValueError, match="start_batch must be >= 0, not -5"):
        gstwsi.BatchStream(description, start_batch=-5)
    with pytest.raises(TypeError, match="start_batch"):
        gstwsi.BatchStream(description, start_batch=1.5)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match="mask_cache_dir"):
        gstwsi.standard_pipeline(slides, mask_cache_dir=5)
    assert not (tmp_path / "5").exists()


def test_start_batch_past_the_end_raises(slides):
    description = gstwsi.standard_pipeline(slides, batch_size=8, cycle=False)
    with gstwsi.BatchStream(description, torch=False, start_batch=10**12) as stream:
        with pytest.raises(gstwsi.PipelineError, match="past the end of the stream"):
            for _ in stream:
                pass


# ---- FIFOs where a store or an annotation file is read -----------------------

def _stream_child(description, timeout=LIMIT):
    """Streams @description to its end in a child: prints the patches
    delivered, then each warning and the error (if any), one per line."""
    return _child(f"""
        import sys; sys.path.insert(0, {str(gstwsi.__path__[0] + '/..')!r})
        import gstwsi
        patches, error = 0, None
        stream = gstwsi.BatchStream({description!r}, torch=False, timeout=50)
        try:
            for batch in stream:
                patches += len(batch.records)
        except Exception as exc:
            error = f"{{type(exc).__name__}}: {{exc}}"
        print("PATCHES", patches)
        for w in stream.warnings:
            print("WARNING", w)
        print("ERROR", error)
        """, timeout)


@pytest.mark.parametrize("replaced", ["shard-00001.wsis", "manifest.json"])
def test_fifo_in_a_store_is_refused(slides, tmp_path, replaced):
    """A FIFO where a store's shard or manifest should be: refused with its
    reason, never waited on (an open() of a FIFO blocks until a writer
    comes)."""
    store = tmp_path / "store"
    assert _write_store(slides, store) is None
    (store / replaced).unlink()
    os.mkfifo(store / replaced)
    description = gstwsi.standard_pipeline(store, batch_size=8, cycle=False,
                                           order="sequential")
    child = _stream_child(description)
    out = child.stdout + child.stderr
    assert "not a regular file (a FIFO)" in out, out
    assert replaced in out, out
    if replaced.startswith("shard"):
        # the other shards are served
        assert "PATCHES 24" in child.stdout, out


@pytest.mark.parametrize("how", ["manifest column", "named like the slide"])
def test_fifo_as_annotation_file_is_refused(tmp_path, how):
    """A FIFO as a slide's annotation file, named in a manifest's
    `annotations` column or found by name next to the slide: the slide is
    warned about with the reason and has no regions (before, the column's
    FIFO blocked the run in open(), and one found by name was passed over
    as if there were no file)."""
    slides = _make_slides(tmp_path / "s", 1)
    fifo = slides[0].with_suffix(".geojson")
    os.mkfifo(fifo)
    if how == "manifest column":
        fifo = fifo.rename(tmp_path / "notes.geojson")
        location = tmp_path / "manifest.csv"
        location.write_text(f"path,annotations\n{slides[0]},{fifo}\n")
    else:
        location = slides[0].parent
    description = gstwsi.standard_pipeline(
        location, batch_size=4, patch_size=64, target_mpp=0, patches_per_slide=4,
        cycle=False, seed=3, tissue=False, annotation_mode="replace-tissue")
    child = _stream_child(description)
    out = child.stdout + child.stderr
    assert f"{fifo}: not a regular file (a FIFO)" in out, out


# ---- NaN -------------------------------------------------------------------

def test_nan_is_refused(slides):
    """NaN compares false with both ends of a range, so the range check let
    it through; GLib then refused it with a warning and kept 0.0, and the
    patches came out at level 0."""
    with pytest.raises(gstwsi.SettingsError, match="target-mpp=nan is not a number"):
        gstwsi.standard_pipeline(slides, target_mpp=float("nan"))
    description = gstwsi.standard_pipeline(slides, batch_size=4, cycle=False)
    assert "target-mpp=0.5" in description
    with pytest.raises(gstwsi.SettingsError, match="target-mpp=nan is not a number"):
        gstwsi.BatchStream(description.replace("target-mpp=0.5", "target-mpp=nan"))
    # gst-launch: GLib's refusal, made fatal as the README says
    run = _launch(_pipeline(slides).replace("target-mpp=2", "target-mpp=nan"),
                  env=dict(os.environ, G_DEBUG="fatal-warnings"))
    assert run.returncode != 0, run.stdout + run.stderr
    assert "target-mpp" in run.stdout + run.stderr


# ---- SIGKILL of the store writer at random points ----------------------------

def _store_contents(store):
    """Every patch of @store in order: its pixels and its record without
    created_ns (the time it was written)."""
    import numpy as np
    description = gstwsi.standard_pipeline(store, batch_size=8, cycle=False,
                                           order="sequential")
    images, records = [], []
    with gstwsi.BatchStream(description, torch=False) as stream:
        for batch in stream:
            images.append(np.array(batch.images, copy=True))
            rec = np.array(batch.records, copy=True)
            rec["created_ns"] = 0
            records.append(rec)
    return np.concatenate(images), np.concatenate(records)


def test_sigkill_at_random_points_then_resume(slides, tmp_path):
    """gst-launch writing a store is SIGKILLed at random moments (seeded),
    and resumed, killed again, ..., then resumed to the end: the store
    serves the same patches, byte for byte, as one written at once."""
    import random
    import time
    launcher = shutil.which("gst-launch-1.0")
    if launcher is None:
        pytest.skip("gst-launch-1.0 not found")
    reference, store = tmp_path / "reference", tmp_path / "store"

    def description(out, resume, slow):
        return (f'wsislidesrc location="{slides}" seed=5 ! tissuemask ! queue ! '
                "patchsampler patch-size=64 max-patches=48 ! patchinterleave ! "
                "patchreader threads=2 ! "
                + ("identity sleep-time=25000 ! " if slow else "")
                + f'patchstoresink location="{out}" patches-per-shard=8'
                + (" resume=true" if resume else ""))

    done = _launch(description(reference, False, False))
    assert done.returncode == 0, done.stdout + done.stderr
    want_images, want_records = _store_contents(reference)
    assert len(want_records) == 48
    rng = random.Random(20261206)
    cut = []                  # what each kill left: shards complete, one half-written

    def kill_at_random(resume):
        proc = subprocess.Popen([launcher, "-q"] + _split(description(store, resume, True)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        time.sleep(rng.uniform(0.05, 1.5))
        killed = proc.poll() is None
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=LIMIT)
        if killed:
            cut.append((len(list(store.glob("*.wsis"))), len(list(store.glob("*.tmp")))))

    # three stores killed once, one killed again while it resumes
    for trial in range(4):
        shutil.rmtree(store, ignore_errors=True)
        kill_at_random(False)
        if trial == 3:
            kill_at_random(True)
        done = _launch(description(store, True, False))
        assert done.returncode == 0, done.stdout + done.stderr
        assert not list(store.glob("*.tmp")), list(store.iterdir())
        got_images, got_records = _store_contents(store)
        assert got_records.tobytes() == want_records.tobytes(), f"trial {trial}: {cut}"
        assert got_images.tobytes() == want_images.tobytes(), f"trial {trial}: {cut}"
    print("kills left (complete shards, partial shard):", cut)
    assert len(cut) >= 3, f"the writer ended before most kills: nothing was tested ({cut})"


@pytest.mark.parametrize("kind, reason", [("fifo", "not a regular file (a FIFO)"),
                                          ("device", "not a regular file (a device)"),
                                          ("loop", "symbolic link loop"),
                                          ("dangling", "no such file")])
def test_odd_location_is_refused_with_its_reason(tmp_path, kind, reason):
    """The odd paths of the matrix given as the location itself: an error
    with the path and its own reason, at once (a FIFO used to block the
    run, a loop was "no such file")."""
    path = tmp_path / "odd.svs"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = pathlib.Path("/dev/zero")
    elif kind == "loop":
        os.symlink("other.svs", path)
        os.symlink("odd.svs", tmp_path / "other.svs")
    else:
        os.symlink("missing.svs", path)
    run = _launch(_pipeline(path))
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert f"{path}: {reason}" in out, out
