#!/usr/bin/env bash
# The test command on Debian 13 ("trixie": GStreamer 1.26, GLib 2.84,
# PyGObject 3.50, Python 3.13, torch 2.6, curl 8.14) from a Debian 12 (or
# any Debian) machine, as root: builds a Debian 13 root with mmdebstrap in a
# cache folder (reused when present: the packages scripts/install-deps.sh
# installs there stay for the next run), copies a clean checkout of HEAD
# (committed files only) and ../shared into it, and runs
# `CI=true scripts/test.sh` there with chroot. Ends with the closing line of
# that run, "N passed, N failed, N skipped"; exits non-zero when it fails.
#
#   scripts/test-debian13.sh              # the whole suite
#   scripts/test-debian13.sh -- <cmd>     # a command in the fresh checkout
#                                           (e.g. -- scripts/demo.sh)
#   scripts/test-debian13.sh <suites>     # arguments go to scripts/test.sh
#
# WSI_DEBIAN13_ROOT: the root (default /var/cache/gst-wsi/debian13); delete
# it to start from a new one. WSI_DEBIAN_MIRROR: the Debian mirror.
# Needs root (mmdebstrap, mount, chroot). One run at a time per root (a lock
# beside it); /proc, /dev and /sys are bind-mounted for the run and unmounted
# when it ends, however it ends.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
root="${WSI_DEBIAN13_ROOT:-/var/cache/gst-wsi/debian13}"
mirror="${WSI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
shared="$(cd "$repo/.." && pwd)/shared"

fail() {
  echo "test-debian13: $*" >&2
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "needs root (mmdebstrap, mount and chroot)"
command -v git >/dev/null || fail "git is not installed"

mkdir -p "$(dirname "$root")" || fail "cannot create $(dirname "$root")"
exec 9>"$root.lock"
flock 9 || fail "cannot lock $root.lock"

now() { date +%s; }
phase() {   # name, start time: one line per phase for the summary
  timings+=("$(printf '%-16s %4ds' "$1" $(( $(now) - $2 )))")
}
timings=()

# ---- the root (once) --------------------------------------------------------
t=$(now)
if [ ! -x "$root/usr/bin/apt-get" ]; then
  if ! command -v mmdebstrap >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      mmdebstrap >/dev/null || fail "cannot install mmdebstrap"
  fi
  rm -rf "$root.tmp"
  echo "test-debian13: creating the Debian 13 root in $root"
  mmdebstrap --variant=apt --include=ca-certificates trixie "$root.tmp" "$mirror" \
    || fail "mmdebstrap could not create the Debian 13 root"
  mv "$root.tmp" "$root" || fail "cannot move $root.tmp to $root"
fi
phase "root" "$t"

# ---- mounts, undone on exit -------------------------------------------------
mounted=()
cleanup() {
  local i
  for (( i=${#mounted[@]}-1; i>=0; i-- )); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -lR "${mounted[$i]}" 2>/dev/null \
      || echo "test-debian13: could not unmount ${mounted[$i]}" >&2
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for d in proc dev sys; do
  mkdir -p "$root/$d"
  if ! mountpoint -q "$root/$d"; then
    mount --rbind "/$d" "$root/$d" || fail "cannot bind-mount /$d into $root/$d"
    mount --make-rslave "$root/$d" 2>/dev/null || true
    mounted+=("$root/$d")
  fi
done

# ---- the machine's network settings and certificates ------------------------
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# Debian's default hosts file, IPv6 line first so that localhost resolves to
# ::1 before 127.0.0.1 whatever the address sorting: servers a test starts on
# "localhost" must be reachable the way a client there resolves it.
# The machine's name on 127.0.1.1 as Debian's installer writes it (gloo
# resolves it to pick its interface).
cat > "$root/etc/hosts" <<EOF
::1		localhost ip6-localhost ip6-loopback
127.0.0.1	localhost
127.0.1.1	$(hostname)
ff02::1		ip6-allnodes
ff02::2		ip6-allrouters
EOF
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive CI="${CI:-true}" "$@"
}
t=$(now)
# Locally added certificate authorities (a proxy's): npm inside the root
# fails with SELF_SIGNED_CERT_IN_CHAIN without them.
if [ ! -x "$root/usr/sbin/update-ca-certificates" ]; then
  in_root apt-get update -qq || fail "apt-get update failed in the root"
  in_root apt-get install -y -qq --no-install-recommends ca-certificates >/dev/null \
    || fail "cannot install ca-certificates in the root"
fi
mkdir -p "$root/usr/local/share/ca-certificates"
if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
  cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi
in_root update-ca-certificates >/dev/null || fail "update-ca-certificates failed in the root"
# git and ccache: not gst-wsi's needs, the runner's (ccache keeps a rerun's
# build short; its cache lives in the root)
for p in git ccache; do
  in_root dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || in_root apt-get install -y -qq --no-install-recommends "$p" >/dev/null \
    || { in_root apt-get update -qq && in_root apt-get install -y -qq --no-install-recommends "$p" >/dev/null; } \
    || fail "cannot install $p in the root"
done

# ---- a clean checkout and the shared slides ---------------------------------
work="$root/work"
rm -rf "$work/gst-wsi" "$work/shared"
mkdir -p "$work/gst-wsi"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$work/gst-wsi" \
  || fail "cannot copy HEAD of $repo into the root"
if [ -d "$shared" ]; then
  cp -a "$shared/." "$work/shared/" 2>/dev/null || { mkdir -p "$work/shared" && cp -a "$shared/." "$work/shared/"; } \
    || fail "cannot copy $shared into the root"
fi
echo "test-debian13: $(in_root sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), checkout of $(git -C "$repo" rev-parse --short HEAD)"

if [ "${1:-}" = "--" ]; then     # a command in the checkout, not the suite
  shift
  in_root bash -c 'cd /work/gst-wsi && scripts/install-deps.sh test >/dev/null && scripts/build.sh && "$@"' _ "$@"
  exit $?
fi

# ---- packages, build, tests (timed apart; test.sh then finds both done) -----
in_root bash -c 'cd /work/gst-wsi && scripts/install-deps.sh test' \
  || fail "scripts/install-deps.sh failed in the Debian 13 root"
phase "packages" "$t"
t=$(now)
in_root bash -c 'cd /work/gst-wsi && scripts/build.sh' \
  || fail "scripts/build.sh failed in the Debian 13 root"
phase "build" "$t"
t=$(now)
log="$(mktemp)"
in_root bash -c 'cd /work/gst-wsi && scripts/test.sh "$@"' _ "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
phase "tests" "$t"
closing=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
rm -f "$log"
echo "test-debian13: phases:"
printf '  %s\n' "${timings[@]}"
[ -n "$closing" ] || fail "scripts/test.sh in the Debian 13 root printed no closing line"
echo "$closing"
exit "$status"
