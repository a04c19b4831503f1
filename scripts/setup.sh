#!/usr/bin/env bash
# Set tokviz up on a fresh Debian/Ubuntu machine: system libraries Qt needs, a virtualenv in .venv,
# the package, and the catalog vocabularies. Sourced by run.sh and test.sh; safe to run again.
#   MODE=app   also the X11/xcb libraries and fonts a real window needs
#   MODE=test  the test extras; offscreen Qt only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MODE=${MODE:-app}
. scripts/packages.sh
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
apt_updated=""
apt_update() {
  [ -n "$apt_updated" ] || { $sudo apt-get update -qq; apt_updated=1; }
}
apt_install() {
  apt_update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# A Python >= 3.11 (Debian 12: python3; Ubuntu 22.04: python3.11 beside its python3 3.10), with venv.
if ! python=$(find_python); then
  if [ -n "${PYTHON:-}" ]; then
    echo "PYTHON=$PYTHON is not a Python 3.11 or newer" >&2; exit 1
  fi
  apt_update
  if wanted_python=$(python_packages); then
    echo "installing $wanted_python (tokviz needs Python 3.11 or newer)" >&2
    apt_install $wanted_python
    python=$(find_python)
  else
    echo "tokviz needs Python 3.11 or newer, and this system has none, nor a package of one." >&2
    echo "Install one (python.org, or your distribution's backports), then run again with" >&2
    echo "PYTHON=/path/to/python3.11 bash $0" >&2
    exit 1
  fi
fi
# A failed `python3 -m venv .venv` (Debian without python3-venv) leaves a python without pip: made again.
venv_ready() {
  [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1
}
if ! venv_ready && ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  apt_update  # venv_package asks apt-cache, which knows the python3.X-venv of a newer Python only then
  apt_install "$(venv_package "$python")"
fi

# GLib: libglib2.0-0, renamed libglib2.0-0t64 in Ubuntu 24.04 (ask apt for names it knows)
installed libglib2.0-0 || installed libglib2.0-0t64 || apt_has libglib2.0-0 || apt_has libglib2.0-0t64 || apt_update
qt_libs="libegl1 libgl1 $(glib_package) libfontconfig1 libfreetype6 libxkbcommon0 libdbus-1-3 fonts-dejavu-core"
fonts="fonts-noto-cjk fonts-noto-color-emoji"
xcb_libs="libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0 libxcb-image0 \
libxcb-render-util0 libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libx11-xcb1"
wanted="$qt_libs $fonts"
[ "$MODE" = app ] && wanted="$wanted $xcb_libs"

missing=""
for pkg in $wanted; do
  installed "$pkg" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  echo "installing system packages:$missing" >&2
  apt_install $missing
fi

# the compiled merge loop: a C compiler and the Python's headers (apt-cache knows python3.X-dev
# of a newer Python only after an update)
if ! has_compiler || ! has_headers "$python"; then
  apt_update
  build=$(build_packages "$python")
  echo "installing $build (to build tokviz's compiled merge loop)" >&2
  apt_install $build
fi

venv_ready || "$python" -m venv --clear .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip "setuptools>=77" wheel
# the tests start a real Dask scheduler and workers on loopback: the [distributed] extra too
extras=""; [ "$MODE" = test ] && extras="[test,distributed]"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".$extras"
