# What setup.sh asks the system for, decided here so a test can run the decisions against each
# release's package names (tests/test_setup_scripts.py). POSIX shell functions; sourced, never run.
#
#   apt_has NAME       the distribution has a package NAME (apt-cache; tests replace it)
#   installed NAME     the package NAME is installed (dpkg; tests replace it)
#   python_ok PYTHON   PYTHON runs and is 3.11 or newer
#   glib_package       libglib2.0-0t64 where the release renamed it (Ubuntu 24.04), else libglib2.0-0
#   python_packages    the python3.X and python3.X-venv to install when no Python >= 3.11 is
#                      installed: the newest the distribution has, or nothing
#   build_packages PYTHON  what builds the compiled merge loop: gcc and libc6-dev without a C
#                      compiler, python3.X-dev when PYTHON has no headers; nothing when both are there

apt_has() {
  apt-cache show "$1" >/dev/null 2>&1
}

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

python_ok() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1
}

glib_package() {
  if installed libglib2.0-0t64 || apt_has libglib2.0-0t64; then echo libglib2.0-0t64; else echo libglib2.0-0; fi
}

# The Pythons tokviz runs on, newest first (the ones a release may have besides its python3).
PYTHON_VERSIONS="3.14 3.13 3.12 3.11"

python_packages() {
  for v in $PYTHON_VERSIONS; do
    if apt_has "python$v" && apt_has "python$v-venv"; then
      echo "python$v python$v-venv"
      return 0
    fi
  done
  return 1
}

# The installed Python to use: $PYTHON if given, else python3, else the newest python3.X found.
find_python() {
  if [ -n "${PYTHON:-}" ]; then
    python_ok "$PYTHON" && { echo "$PYTHON"; return 0; }
    return 1
  fi
  for candidate in python3 $(for v in $PYTHON_VERSIONS; do printf 'python%s ' "$v"; done); do
    if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# The venv package for an installed Python (Debian and Ubuntu ship venv's ensurepip apart).
venv_package() {
  version=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if apt_has "python$version-venv"; then echo "python$version-venv"; else echo python3-venv; fi
}

# What builds tokviz's compiled merge loop (setup.py, tokviz/training/_merge.c): a C compiler and
# the Python's headers. Debian and Ubuntu ship the headers apart (python3.X-dev); a Python built
# from source has them. Without either, tokviz still installs and runs its slower Python loop.
has_compiler() {
  command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1
}

has_headers() {
  "$1" -c 'import os, sys, sysconfig
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' >/dev/null 2>&1
}

# The packages to install for the build: nothing when PYTHON has both
build_packages() {
  wanted=""
  has_compiler || wanted="gcc libc6-dev"
  if ! has_headers "$1"; then
    version=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if apt_has "python$version-dev"; then wanted="$wanted python$version-dev"; else wanted="$wanted python3-dev"; fi
  fi
  echo $wanted
}
