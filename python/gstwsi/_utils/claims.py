"""Which slides this job does: the rank's share of the slide list, and claim
files in the output folder so that any number of jobs sharing it (one
machine or many over NFS or Lustre) split that share dynamically and never
do a slide twice.

Ranks: explicit arguments, else torchrun's RANK/WORLD_SIZE, else srun's
SLURM_PROCID/SLURM_NTASKS combined with a job array's
SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (task id counted from
SLURM_ARRAY_TASK_MIN); rank r of w takes slides r, r + w, r + 2w, ...

Claims: `<claims folder>/<name>.claim`, created with O_CREAT | O_EXCL (atomic
on local file systems and on NFS v3+), holding host, pid and a random
token.  Its holder touches it while it works (`Claim.refresh`); a claim not
touched for `stale_after` seconds, or one whose process on this host is
gone, belongs to a dead job and is taken over:
renamed away (only one renamer succeeds), checked to be the same file that
was judged stale (else put back), and created afresh.  A holder checks its
token before it commits, so a job whose claim was taken over drops the
slide instead of writing it a second time.  Plain files, no locks held
across calls; one Claim is used by one thread.
"""
import json
import os
import secrets
import socket
import time

__all__ = ["Claim", "drop_claim", "rank_and_world", "try_claim"]


def _env_int(name):
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else None
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def rank_and_world(rank=None, world_size=None):
    """(rank, world size) of this job and where they came from."""
    if rank is not None or world_size is not None:
        rank, world = int(rank or 0), int(world_size or 1)
        source = "arguments"
    elif _env_int("RANK") is not None and _env_int("WORLD_SIZE") is not None:
        rank, world, source = _env_int("RANK"), _env_int("WORLD_SIZE"), "RANK/WORLD_SIZE"
    else:
        rank, world, source = 0, 1, "single job"
        if _env_int("SLURM_NTASKS") is not None and _env_int("SLURM_PROCID") is not None:
            rank, world = _env_int("SLURM_PROCID"), _env_int("SLURM_NTASKS")
            source = "SLURM_PROCID/SLURM_NTASKS"
        task, count = _env_int("SLURM_ARRAY_TASK_ID"), _env_int("SLURM_ARRAY_TASK_COUNT")
        if task is not None and count is not None:
            task -= _env_int("SLURM_ARRAY_TASK_MIN") or 0
            rank, world = task * world + rank, count * world
            source = ("SLURM_ARRAY_TASK_ID/COUNT" if source == "single job"
                      else "SLURM_ARRAY_TASK_ID/COUNT x " + source)
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"rank {rank} of world size {world} ({source}): "
                         f"need world size >= 1 and 0 <= rank < world size")
    return rank, world, source


class Claim:
    """A slide this job holds; `refresh()` while working, `held()` before
    committing, `release()` when done (or failed)."""

    def __init__(self, path, token):
        self.path = path
        self.token = token
        self._touched = time.monotonic()

    def refresh(self, every=5.0):
        now = time.monotonic()
        if now - self._touched >= every:
            self._touched = now
            try:
                os.utime(self.path)
            except OSError:
                pass

    def held(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                return json.load(f).get("token") == self.token
        except (OSError, ValueError):
            return False

    def release(self):
        if self.held():
            try:
                os.unlink(self.path)
            except OSError:
                pass


def _running(pid):
    """Whether process `pid` of this host is alive (a claim of a job killed
    on this machine is taken over at once, not after the timeout)."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, TypeError, ValueError, OverflowError):
        return True
    return True


def _create(path):
    token = secrets.token_hex(8)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"host": socket.gethostname(), "pid": os.getpid(), "token": token,
                   "time": time.time()}, f)
    return Claim(path, token)


def try_claim(folder, name, stale_after):
    """A Claim on `name`, or None when a live job holds it.  Returns
    (claim, taken_over) where taken_over names the stale holder."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".claim")
    claim = _create(path)
    if claim is not None:
        return claim, None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _create(path), None          # released meanwhile
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
        holder = f"{info.get('host', '?')} pid {info.get('pid', '?')}"
    except (OSError, ValueError):
        info, holder = {}, "an unreadable claim"
    dead = info.get("host") == socket.gethostname() and not _running(info.get("pid"))
    if not dead and time.time() - st.st_mtime < stale_after:
        return None, None
    aside = f"{path}.stale-{secrets.token_hex(4)}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return None, None                   # another job took it over first
    moved = os.stat(aside)
    if (moved.st_ino, moved.st_dev) != (st.st_ino, st.st_dev):
        # Judged stale, but a fresh claim replaced it meanwhile: put it back.
        try:
            os.link(aside, path)
        except OSError:
            pass
        os.unlink(aside)
        return None, None
    os.unlink(aside)
    claim = _create(path)
    return claim, (holder if claim else None)


def drop_claim(folder, name):
    """Removes the claim on a slide whose outputs are complete (one left by
    a job killed between its last rename and its release)."""
    try:
        os.unlink(os.path.join(folder, name + ".claim"))
    except OSError:
        pass
