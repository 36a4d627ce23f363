#!/usr/bin/python3
"""Prints what ran and what did not from meson's testlog.json.

Counts individual checks where a runner reports them (gst-check's
"Checks: N, Failures: F, Errors: E", pytest's summary), else one per test.
A check that did not run is counted as skipped, never as passed, and listed
with its reason:

- a meson test that exits 77 (meson's SKIP) is one skipped test, its reason
  the last "SKIP: ..." line it printed (else its last line of output);
- inside a gst-check test, each check that printed "SKIP: <check>: <reason>"
  (tests/check/wsitestutil.h, WSI_TEST_SKIP) moves from passed to skipped;
- inside pytest, the skipped count comes from pytest's own summary and the
  reasons from its "SKIPPED [n] file:line: reason" lines (pytest -rs);
- any other test that printed "SKIP: <part>: <reason>" ran, but that part
  did not: each such line adds one skipped part.

Every skipped check has one reason line (a gst-check check that printed
several SKIP lines, one per absent slide, gets one line joining them;
pytest's grouped "SKIPPED [n]" line says "(n tests)"), so the lines under
"Did not run here (N skipped):" add up to N. Before the closing line, the
meson tests themselves are counted as meson's own table counts them (a
meson test holds many checks: its "Ok" and "Skipped" are tests, not
checks). Ends with "N passed, N failed, N skipped"; exits 1 when anything
failed.
"""
import json
import re
import sys

CHECK_RE = re.compile(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)")
# pytest's last line: "=== 7 passed, 2 skipped in 1.2s ===", or with -q
# "150 passed, 1 warning in 68.79s (0:01:08)"
PYTEST_RE = re.compile(r"^=* ?(\d+ (?:passed|failed|skipped|errors?|deselected|"
                       r"xfailed|xpassed|warnings?)\b.*) in [\d.]+s", re.M)
SKIP_LINE_RE = re.compile(r"^SKIP: (.*)$", re.M)
PYTEST_SKIP_RE = re.compile(r"^SKIPPED \[(\d+)\] (.*)$", re.M)


def count_pytest(line):
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for number, word in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", line):
        key = "failed" if word.startswith("error") else word
        counts[key] += int(number)
    return counts


def skip_lines(out):
    """The distinct "SKIP: ..." lines, in order."""
    return list(dict.fromkeys(line.strip() for line in SKIP_LINE_RE.findall(out)))


class Summary:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.reasons = []  # (test name, what did not run and why)
        self.tests = {"ok": 0, "failed": 0, "skipped": 0}  # meson's own counts

    def add_test(self, result):
        name = result["name"].split(" / ", 1)[-1]
        out = (result.get("stdout") or "") + (result.get("stderr") or "")
        status = result["result"]
        self.tests["ok" if status in ("OK", "EXPECTEDFAIL") else
                   "skipped" if status == "SKIP" else "failed"] += 1
        checks = CHECK_RE.findall(out)
        pytest = PYTEST_RE.findall(out)
        if status == "SKIP":
            lines = skip_lines(out) or [l for l in out.strip().splitlines()[-1:]]
            self.skipped += 1
            self.reasons.append((name, lines[-1] if lines else "exited 77 (skip) without a reason"))
        elif checks:
            self.add_check(name, status, checks, skip_lines(out))
        elif pytest:
            self.add_pytest(name, status, count_pytest(pytest[-1]), out)
        else:
            self.passed += status == "OK"
            self.failed += status != "OK"
            for line in skip_lines(out):
                self.skipped += 1
                self.reasons.append((name, line))

    def add_check(self, name, status, checks, lines):
        passed = failed = 0
        for total, failures, errors in checks:
            bad = int(failures) + int(errors)
            passed += int(total) - bad
            failed += bad
        if status != "OK" and failed == 0:
            failed += 1  # crashed or timed out after its summary
        # one check may print several SKIP lines (one per absent slide):
        # one skipped check, one line
        by_check = {}
        for line in lines:
            check, _, reason = line.partition(": ")
            by_check.setdefault(check, []).append(reason)
        skipped = min(len(by_check), passed)
        self.passed += passed - skipped
        self.failed += failed
        self.skipped += skipped
        for check, reasons in list(by_check.items())[:skipped]:
            self.reasons.append((name, f"{check}: {'; '.join(reasons)}"))

    def add_pytest(self, name, status, counts, out):
        self.passed += counts["passed"]
        self.failed += counts["failed"]
        self.skipped += counts["skipped"]
        if status != "OK" and counts["failed"] == 0:
            self.failed += 1
        reasons = PYTEST_SKIP_RE.findall(out)
        for number, where in reasons:
            self.reasons.append((name, f"{where} ({number} test{'s' if number != '1' else ''})"))
        unexplained = counts["skipped"] - sum(int(number) for number, _ in reasons)
        if unexplained > 0:
            self.reasons.append((name, f"{unexplained} skipped without a reason line "
                                       f"(run pytest -rs for why) ({unexplained} test"
                                       f"{'s' if unexplained != 1 else ''})"))

    def print(self):
        if self.reasons:
            print(f"Did not run here ({self.skipped} skipped):")
            for name, reason in self.reasons:
                print(f"  {name}: {reason}")
        t = self.tests
        print(f"meson tests (meson's table): {t['ok']} ok, {t['failed']} failed, "
              f"{t['skipped']} skipped; the checks inside them:")
        print(f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped")


def main(path):
    summary = Summary()
    with open(path) as log:
        for number, line in enumerate(log, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as error:
                # A log written over while it was read (another `meson test`
                # on the same build folder): counted as a failure, said why.
                print(f"{path}:{number}: not a test result ({error})")
                summary.failed += 1
                continue
            summary.add_test(entry)
    summary.print()
    return 1 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
