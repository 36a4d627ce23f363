#!/usr/bin/python3
"""Prints 'N passed, N failed, N skipped' from meson's testlog.json.

Counts individual test cases where a runner reports them (gst-check's
"Checks: N, Failures: F, Errors: E", pytest's summary), else one per test.
"""
import json
import re
import sys

CHECK_RE = re.compile(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)")
PYTEST_RE = re.compile(r"=+ (.*) in [\d.]+s")


def count_pytest(line):
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for number, word in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", line):
        key = "failed" if word.startswith("error") else word
        counts[key] += int(number)
    return counts


def main(path):
    passed = failed = skipped = 0
    with open(path) as log:
        for line in log:
            result = json.loads(line)
            out = result.get("stdout") or ""
            status = result["result"]
            checks = CHECK_RE.findall(out)
            pytest = PYTEST_RE.findall(out)
            if status == "SKIP":
                skipped += 1
            elif checks:
                for total, failures, errors in checks:
                    bad = int(failures) + int(errors)
                    passed += int(total) - bad
                    failed += bad
                if status != "OK" and not any(int(f) + int(e) for _, f, e in checks):
                    failed += 1  # crashed or timed out after its summary
            elif pytest:
                counts = count_pytest(pytest[-1])
                passed += counts["passed"]
                failed += counts["failed"]
                skipped += counts["skipped"]
                if status != "OK" and counts["failed"] == 0:
                    failed += 1
            elif status == "OK":
                passed += 1
            else:
                failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
