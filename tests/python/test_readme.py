"""README.md and docs/*.md as a newcomer pastes them: every code block runs
as pasted and ends by itself, or is marked as not runnable, with the reason.

The convention (README, "Examples in these pages"): a fence's first word is
the language, a second word a mark.

- ```sh: pasted into a shell at the checkout's root after scripts/demo.sh
  (which builds build/ and makes sample-slides/); here: the whole block,
  run by `bash -e`, in a folder laid out like a checkout (build/, examples/,
  scripts/, tools/, python/ linked to this checkout and build, and
  sample-slides/ with small generated slides).
- ```python: a whole script, run with
  `meson devenv -C build -w . /usr/bin/python3` in that folder.
- a mark (MARKS below) keeps a block from running; the test of such a
  block reports it as skipped with the mark's reason (a `fragment` is no
  program, so no test).
- ```text, ```json, ```csv: output and file samples, never run; every
  fence names its language.

The blocks of one page run in order in one folder, so that a page may use
what an earlier block of it wrote (a patch store, a trace). What the README
says a command writes, it writes where it says (`preview/`, `stats.jsonl`,
`trace.json` in the working folder)."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, _generator, run_process_group

PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
TIME_LIMIT = 300  # seconds per block, on a loaded machine
RUN = {"sh", "python"}
SAMPLES = {"text", "json", "csv", "c"}
MARKS = {
    "fragment": "part of a program: placeholders (`...`, names to fill in) or names "
                "defined around it",
    "gpu": "needs an NVIDIA GPU",
    "network": "needs a server on the network",
    "long": "runs for minutes (a benchmark or a soak)",
    "suite": "runs the test suite itself (CI runs it: .ci/run)",
    "setup": "configures a build folder of its own",
    "real-slides": "needs the real slides (../shared/slides)",
}
BUILD = pathlib.Path(os.environ.get("WSI_MAKE_TEST_SLIDES", ROOT / "build" / "tools" / "x")).parents[1]
LINKED = ("examples", "scripts", "tools", "python", "tests", "docs")


def blocks(page):
    """(line, language, mark, code) of every fenced block of @page."""
    text = page.read_text()
    found = []
    for match in FENCE.finditer(text):
        words = match.group(1).split()
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, words[0] if words else "", " ".join(words[1:]), match.group(2)))
    return found


def all_blocks():
    return [(page, *block) for page in PAGES for block in blocks(page)]


def block_id(page, line):
    return f"{page.relative_to(ROOT)}:{line}"


def test_every_block_names_its_language_and_a_known_mark():
    bad = []
    for page, line, language, mark, _ in all_blocks():
        if language not in RUN | SAMPLES:
            bad.append(f"{block_id(page, line)}: language {language!r} (one of {sorted(RUN | SAMPLES)})")
        elif mark and mark not in MARKS:
            bad.append(f"{block_id(page, line)}: mark {mark!r} (one of {sorted(MARKS)})")
        elif language == "c" and mark != "fragment":
            bad.append(f"{block_id(page, line)}: C is shown, never run: mark it fragment")
    assert not bad, "\n".join(bad)


def test_unmarked_blocks_hold_whole_commands():
    """A `...` or an unfilled placeholder in a block that runs is a
    fragment the convention says to mark."""
    bad = []
    for page, line, language, mark, code in all_blocks():
        if language in RUN and not mark:
            for word in ("...", "SLIDES", "/path/to", "PORT"):
                if re.search(r"(?<![\w.])" + re.escape(word) + r"(?![\w])", code):
                    bad.append(f"{block_id(page, line)}: {word!r} in a block that runs")
            commands = re.sub(r"(^|\s)#.*", "", code)      # comments may say what cycle=true does
            if "cycle=true" in commands or "cycle=True" in commands:
                bad.append(f"{block_id(page, line)}: cycle=true never ends")
    assert not bad, "\n".join(bad)


def test_the_readme_has_the_blocks_this_test_knows():
    codes = [(lang, mark, code) for _, lang, mark, code in blocks(ROOT / "README.md")]
    assert any(l == "sh" and not m and "scripts/demo.sh" in c for l, m, c in codes)
    assert any(m == "suite" and "scripts/test.sh" in c for _, m, c in codes)
    assert any(l == "sh" and not m and "gst-launch-1.0" in c for l, m, c in codes)
    assert any(l == "python" and not m and "WsiPatchMeta" in c for l, m, c in codes)
    # every installed tool has a command that runs
    for tool in ("wsi-preview", "wsi-timeline-png"):
        assert any(l == "sh" and not m and tool in c for l, m, c in codes), tool


@pytest.fixture(scope="module")
def doc_slides(tmp_root):
    """sample-slides/ as the pages name it (slide-00.tiff, slide-01.svs, ...),
    smaller than the demo's so that every block stays quick."""
    out = tmp_root / "doc-slides"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([_generator(), "--count", "3", "--width", "1536", "--height", "1152",
                    "--jobs", "2", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="module")
def checkouts(tmp_root, doc_slides):
    """One working folder per page, laid out like a checkout after
    scripts/demo.sh (build/ and sample-slides/ made)."""
    made = {}

    def folder(page):
        if page not in made:
            work = tmp_root / ("docs-" + re.sub(r"\W+", "-", str(page.relative_to(ROOT))))
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            (work / "build").symlink_to(BUILD.resolve())
            for name in LINKED:
                (work / name).symlink_to(ROOT / name)
            (work / "sample-slides").symlink_to(doc_slides)
            made[page] = work
        return made[page]
    return folder


def _env():
    """A newcomer's shell: the build's environment comes from `meson devenv`
    in the blocks, not from this suite."""
    env = dict(os.environ)
    for name in ("GST_PLUGIN_PATH", "PYTHONPATH", "GST_TRACERS"):
        env.pop(name, None)
    return env


# fragments are not programs: test_unmarked_blocks_hold_whole_commands checks
# that what runs is whole; a block that would run but cannot here is a test
# reported as skipped with its mark's reason
RUNNABLE = [pytest.param(page, line, language, mark, code, id=block_id(page, line))
            for page, line, language, mark, code in all_blocks()
            if language in RUN and mark != "fragment"]


@pytest.mark.parametrize("page,line,language,mark,code", RUNNABLE)
def test_block_runs_as_pasted_and_ends(page, line, language, mark, code, checkouts):
    if mark:
        pytest.skip(f"{block_id(page, line)}: {mark}: {MARKS[mark]}")
    if "examples/train_" in code or "torch" in code:
        pytest.importorskip("torch")
    if "scripts/demo.sh" in code and BUILD.resolve() != (ROOT / "build").resolve():
        pytest.skip(f"scripts/demo.sh builds in {ROOT / 'build'}; this suite's build is {BUILD}")
    work = checkouts(page)
    script = work / f"block-{line}.{'sh' if language == 'sh' else 'py'}"
    script.write_text(code)
    if language == "sh":
        argv = ["bash", "-e", script.name]
    else:
        argv = ["meson", "devenv", "-C", "build", "-w", ".", "/usr/bin/python3", script.name]
    try:
        done = run_process_group(argv, TIME_LIMIT, env=_env(), cwd=work)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block_id(page, line)} did not end within {TIME_LIMIT} s:\n{code}")
    assert done.returncode == 0, (f"{block_id(page, line)} exited {done.returncode}:\n{code}\n"
                                  + done.stdout[-2000:] + done.stderr[-3000:])
    # what the README says it writes, it writes where it says
    if "-o preview/" in code:
        assert (work / "preview" / "contact-sheet.png").is_file()
    if "file=stats.jsonl" in code:
        assert (work / "stats.jsonl").stat().st_size > 0
        assert (work / "trace.json").stat().st_size > 0
    if "wsi-timeline-png trace.json timeline.png" in code:
        assert (work / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_outputs_the_readme_writes_are_ignored_by_git():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = ["preview/contact-sheet.png", "stats.jsonl", "trace.json", "timeline.png", "store/manifest.json",
             "loop.json", "loop.png", "loop-window.png", "sample-slides/slide-00.svs"]
    done = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "--no-index"] + names,
                          capture_output=True, text=True)
    assert sorted(done.stdout.split()) == sorted(names), done.stdout + done.stderr
