"""README.md as a newcomer pastes it: every ```sh block line that is a whole
command (no `...`) runs, on generated slides, and must end by itself within
a time limit; what it writes lands where the README says (`preview/`,
`stats.jsonl`, `trace.json` in the working folder). Fragments (with `...`)
are not commands; `scripts/test.sh` is this suite itself (CI runs it).

The build, source and working folders are the only substitutions, plus the
slide locations (slides/, sample-slides, slide.svs) and torchrun's port."""
import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess

import pytest

from conftest import ROOT, _generator, run_process_group

README = ROOT / "README.md"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
TIME_LIMIT = 300  # seconds per command, on a loaded machine
NOT_RUN = {"scripts/test.sh": "this test suite itself (CI runs it: .ci/run)",
           "scripts/test-debian13.sh": "this test suite again, in a Debian 13 root (CI runs it: "
                                       ".ci/run)"}
BUILD = pathlib.Path(os.environ.get("WSI_MAKE_TEST_SLIDES", ROOT / "build" / "tools" / "x")).parents[1]


def commands():
    """Every whole command of the README's sh blocks, comments removed."""
    found = []
    for block in BLOCK.findall(README.read_text()):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#") and "..." not in line:
                found.append(re.sub(r"\s+", " ", line))
    return found


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def concrete(command, slides, workdir):
    """@command with this build's folders and generated slides."""
    slide = sorted(p for p in slides.iterdir() if p.suffix == ".svs")[0]
    line = command.replace("[SLIDES]", str(slides))
    line = re.sub(r"(?<![\w/.-])-C build\b", f"-C {BUILD}", line)
    line = re.sub(r"(?<![\w/.-])-w \.(?=\s)", f"-w {workdir}", line)
    line = re.sub(r"(?<![\w/.-])build/", f"{BUILD}/", line)
    line = re.sub(r"(?<![\w/.-])(examples|scripts)/", f"{ROOT}/\\1/", line)
    line = re.sub(r"(?<![\w/.-])(sample-slides|slides/)(?![\w.-])", str(slides), line)
    line = re.sub(r"(?<![\w/.-])slide\.svs\b", str(slide), line)
    argv = shlex.split(line)
    env = {}
    while argv and re.match(r"^[A-Z_]+=", argv[0]):
        key, value = argv.pop(0).split("=", 1)
        env[key] = value
    if argv[0] not in ("meson", "gst-launch-1.0", "torchrun") and not argv[0].startswith("/"):
        argv = ["gst-launch-1.0"] + argv        # a pipeline description
    if "torchrun" in argv:
        at = argv.index("torchrun") + 1
        argv[at:at] = [f"--master_port={_free_port()}"]
    return argv, env


def test_readme_has_the_commands_this_test_knows():
    found = commands()
    assert any(c.startswith("scripts/demo.sh") for c in found)
    assert "scripts/test.sh" in found
    assert any("gst-launch-1.0" in c for c in found)
    # a pipeline with cycle=true never ends: none may be a whole command
    assert not [c for c in found if "cycle=true" in c], found


@pytest.mark.parametrize("command", [c for c in commands() if c not in NOT_RUN])
def test_readme_command_ends(command, slides, tmp_root, example_env):
    if "torchrun" in command or "examples/train_" in command:
        pytest.importorskip("torch")
    if command.startswith("scripts/demo.sh") and BUILD.resolve() != (ROOT / "build").resolve():
        pytest.skip(f"scripts/demo.sh builds in {ROOT / 'build'}; this suite's build is {BUILD}")
    workdir = tmp_root / ("readme-" + re.sub(r"\W+", "-", command)[:60])
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    argv, extra_env = concrete(command, slides, workdir)
    env = dict(example_env, **extra_env)
    try:
        done = run_process_group(argv, TIME_LIMIT, env=env, cwd=workdir)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not end within {TIME_LIMIT} s: {command}")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # what the README says it writes, it writes where it says
    if "-o preview/" in command:
        assert (workdir / "preview" / "contact-sheet.png").is_file()
    if "file=stats.jsonl" in command:
        assert (workdir / "stats.jsonl").stat().st_size > 0
        assert (workdir / "trace.json").stat().st_size > 0


def test_outputs_the_readme_writes_are_ignored_by_git():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = ["preview/contact-sheet.png", "stats.jsonl", "trace.json", "sample-slides/slide-00.svs"]
    done = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "--no-index"] + names,
                          capture_output=True, text=True)
    assert sorted(done.stdout.split()) == sorted(names), done.stdout + done.stderr
