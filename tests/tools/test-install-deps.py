#!/usr/bin/python3
"""scripts/install-deps.sh: two sets, one line per phase, no service start.

- `run` (the main command's set) holds the build tools, GStreamer and the
  slide libraries and none of the test toolchain (torch, nginx, valgrind,
  clang, pytest, OpenJPH); `test` holds all of `run` and those.
- Installing (apt-get and dpkg-query replaced by stubs on PATH, so nothing
  is installed): one line when each phase starts and one with its time when
  it ends, none of apt's output (it goes to the log); a failure names the
  log and shows its last lines; while packages install a policy-rc.d that
  refuses service starts is in place (nginx must not start on port 80), and
  it is gone afterwards.
- Every package name of both sets exists in this machine's Debian
  (apt-cache show; skipped with its reason where the package lists are
  absent).

Usage: test-install-deps.py INSTALL_DEPS_SCRIPT WORKDIR
"""
import os
import re
import shutil
import stat
import subprocess
import sys

SCRIPT, WORKDIR = sys.argv[1], sys.argv[2]
TEST_ONLY = {"python3-torch", "nginx-light", "valgrind", "clang", "python3-pytest",
             "openjph-tools", "libclang-rt-dev", "libclang-rt-14-dev"}
RUN_NEEDS = {"meson", "ninja-build", "gcc", "libgstreamer1.0-dev", "libopenslide-dev",
             "libopencv-dev", "gstreamer1.0-plugins-base", "gstreamer1.0-tools"}
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def listed(name):
    done = subprocess.run(["bash", SCRIPT, "--list", name], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [p for p in done.stdout.split() if p]


run_set, test_set = listed("run"), listed("test")
check(not TEST_ONLY & set(run_set), f"run set has no test tool: {sorted(TEST_ONLY & set(run_set))}")
check(RUN_NEEDS <= set(run_set), f"run set has what the build needs: missing {sorted(RUN_NEEDS - set(run_set))}")
check(set(run_set) <= set(test_set), "test set holds the run set")
check({"python3-torch", "nginx-light", "valgrind", "python3-pytest"} <= set(test_set),
      "test set holds the test tools")
check(subprocess.run(["bash", SCRIPT], capture_output=True).returncode == 2,
      "no set named: usage, exit 2")

# A run with stubs: dpkg-query says nothing is installed, apt-get records
# its calls (and whether a refusing policy-rc.d was there) and prints a wall
# of output that must not reach the terminal.
shutil.rmtree(WORKDIR, ignore_errors=True)
stubs = os.path.join(WORKDIR, "bin")
os.makedirs(stubs)
calls = os.path.join(WORKDIR, "calls")
policy = os.path.join(WORKDIR, "policy-rc.d")
for name, body in {
    "dpkg-query": "exit 1",
    "apt-get": f"""echo "apt-get $* policy=$(test -x {policy} && {policy} nginx start; echo $?)" >> {calls}
for i in $(seq 50); do echo "Unpacking libfoo$i (1.0) ..."; done
[ -n "${{FAIL_APT:-}}" ] && [ "$1" = install ] && {{ echo "E: Unable to locate package libnope"; exit 100; }}
exit 0""",
    "sudo": 'exec "$@"',
}.items():
    path = os.path.join(stubs, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
env = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"],
           WSI_INSTALL_LOG=os.path.join(WORKDIR, "install.log"),
           WSI_POLICY_RC_D=policy, CI="", WSI_INSTALL_S3RVER="0")
done = subprocess.run(["bash", SCRIPT, "run"], capture_output=True, text=True, env=env)
out = done.stdout + done.stderr
print(out)
check(done.returncode == 0, f"stubbed install exits 0 (got {done.returncode})")
check("Unpacking" not in out, "apt's output stays in the log")
check("Unpacking" in open(env["WSI_INSTALL_LOG"]).read(), "apt's output is in the log")
check(len(re.findall(r"done in \d+ s", out)) == 2, "a line with its time for update and install")
check(len(out.splitlines()) <= 6, f"a few lines, not a wall ({len(out.splitlines())})")
recorded = open(calls).read()
install_line = [l for l in recorded.splitlines() if l.startswith("apt-get install")][0]
check("python3-torch" not in install_line and "nginx-light" not in install_line,
      "the run set installs no test tool")
check(install_line.endswith("policy=101"), f"service starts refused during install: {install_line[-20:]}")
check(not os.path.exists(policy), "the policy-rc.d is removed afterwards")

done = subprocess.run(["bash", SCRIPT, "test"], capture_output=True, text=True,
                      env=dict(env, FAIL_APT="1"))
out = done.stdout + done.stderr
print(out)
check(done.returncode != 0, "a failed apt-get fails the command")
check(env["WSI_INSTALL_LOG"] in out and "Unable to locate package libnope" in out,
      "the failure names the log and shows its last lines")
check(not os.path.exists(policy), "the policy-rc.d is removed after a failure too")

# The names exist in this Debian (names are also kept valid for Debian 13 by
# hand: libclang-rt-14-dev is Debian 12's name). One apt-cache call.
if shutil.which("apt-cache") is None:
    print("SKIP: package names: apt-cache is not installed")
else:
    shown = subprocess.run(["apt-cache", "show", "--no-all-versions"] + test_set,
                           capture_output=True, text=True).stdout
    known = set(re.findall(r"^Package: (\S+)$", shown, re.M))
    if not known:
        print("SKIP: package names: apt-cache knows no package (no apt-get update yet)")
    else:
        unknown = [p for p in test_set if p not in known]
        check(not unknown, f"every package name exists here: unknown {unknown}")

sys.exit(1 if failures else 0)
