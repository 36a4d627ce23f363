#!/usr/bin/env bash
# Builds PyGObject (gi) and gst-python's Gst overrides for a CPython that
# Debian does not ship (the GPU device machines have python3 3.12 with torch
# but no PyGObject and no network), into one site folder that
# tests/gpu/pack.sh carries and run.sh puts on PYTHONPATH.
#
#   tests/gpu/build-pygi.sh PYGOBJECT_SRC PYTHON DEST
#     PYGOBJECT_SRC  a PyGObject 3.48.x source tree (3.48 is the newest that
#                    builds against Debian 12's gobject-introspection 1.74 /
#                    GLib 2.74; 3.50 needs GLib 2.80's girepository-2.0), e.g.
#                    `git archive 3.48.2` of GNOME's pygobject repository
#     PYTHON         the interpreter to build for, e.g.
#                    ~/.pyenv/versions/3.12.1/bin/python3
#     DEST           the site folder to write (gi/ with gi/overrides/Gst.py
#                    and _gi_gst), e.g. build/pygi-site
#
# Needs libgirepository1.0-dev, libffi-dev, meson, ninja and
# libgstreamer1.0-dev (scripts/install-deps.sh). gst-python 1.22's source
# (Gst.py and gstmodule.c, the overrides that give Gst.Buffer.map its
# context manager, which gstwsi uses) comes from Debian's source package
# through a private deb-src list, so the system's apt setup is untouched.
# About a minute on 2 cores. The site folder is about 2 MB.
set -euo pipefail
src=$(realpath "$1")
python=$2
dest=$(realpath -m "$3")
tag=$("$python" -c 'import sys; print("%d%d" % sys.version_info[:2])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# meson 1.0 (Debian 12) looks for distutils, which Python 3.12 dropped:
# setuptools' copy of it (from Debian's python3-setuptools) stands in.
shim=$work/distutils-shim
mkdir -p "$shim"
cp -r /usr/lib/python3/dist-packages/setuptools/_distutils "$shim/distutils"

rm -rf "$dest"
PYTHONPATH=$shim meson setup "$work/build" "$src" -Dpython="$python" \
  -Dpycairo=disabled -Dtests=false --prefix="$work/prefix" \
  -Dpython.platlibdir="$dest" -Dpython.purelibdir="$dest" > "$work/setup.log" 2>&1 \
  || { cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" -j2 install > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
rm -rf "$dest/pygtkcompat" "$dest"/PyGObject-*.egg-info

# gst-python 1.22's overrides, built for the same interpreter
lists=$work/apt-lists
mkdir -p "$lists/partial"
echo "deb-src http://deb.debian.org/debian bookworm main" > "$work/src.list"
apt_opts=(-o Dir::Etc::SourceList="$work/src.list" -o Dir::Etc::SourceParts=/dev/null
          -o Dir::State::Lists="$lists" -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq gst-python1.0)
tar -C "$work" -xf "$work"/gst-python1.0_*.orig.tar.xz
overrides=$(echo "$work"/gst-python-*/gi/overrides)
printf '#define PACKAGE "gst-python"\n#define VERSION "1.22"\n' > "$work/config.h"
pyinc=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
gcc -O2 -shared -fPIC -DHAVE_CONFIG_H -I"$work" -I"$src/gi" -I"$pyinc" \
  $(pkg-config --cflags gstreamer-1.0 gobject-introspection-1.0) \
  "$overrides/gstmodule.c" $(pkg-config --libs gstreamer-1.0) \
  -o "$dest/gi/overrides/_gi_gst$suffix"
cp "$overrides"/Gst*.py "$dest/gi/overrides/"
echo "PyGObject $(sed -n "s/^ *version : '\([0-9.]*\)'.*/\1/p" "$src/meson.build" | head -1) for CPython $tag in $dest"
