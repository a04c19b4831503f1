#!/usr/bin/env bash
# Set tokviz up on a fresh Debian/Ubuntu machine: system libraries Qt needs, a virtualenv in .venv,
# the package, and the catalog vocabularies. Sourced by run.sh and test.sh; safe to run again.
#   MODE=app   also the X11/xcb libraries and fonts a real window needs
#   MODE=test  the test extras; offscreen Qt only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MODE=${MODE:-app}

qt_libs="libegl1 libgl1 libglib2.0-0 libfontconfig1 libfreetype6 libxkbcommon0 libdbus-1-3 fonts-dejavu-core"
fonts="fonts-noto-cjk fonts-noto-color-emoji"
xcb_libs="libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0 libxcb-image0 \
libxcb-render-util0 libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libx11-xcb1"
wanted="$qt_libs $fonts"
[ "$MODE" = app ] && wanted="$wanted $xcb_libs"

missing=""
for pkg in $wanted; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing system packages:$missing" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip "setuptools>=77" wheel
extras=""; [ "$MODE" = test ] && extras="[test]"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".$extras"
