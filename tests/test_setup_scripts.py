"""The set-up script's choices (scripts/packages.sh) on each supported release's package names.

The script decides which GLib package and which Python to ask for; these tests run its own shell
functions with `apt_has` / `installed` answering from each release's package names, and with
stand-in Pythons of given versions on PATH. Debian 12's names were read off a Debian 12 machine
(`apt-cache policy`); Ubuntu's are those of its archive: 22.04 ships python3 3.10 with python3.11
in universe, 24.04 ships python3 3.12 and renamed GLib's library libglib2.0-0t64 (the 64-bit
time_t transition).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ROOT / "scripts" / "packages.sh"

RELEASES = {
    "debian-12": {"python3": "3.11", "apt": {"libglib2.0-0", "python3.11", "python3.11-venv", "python3-venv"}},
    "ubuntu-22.04": {"python3": "3.10", "apt": {"libglib2.0-0", "python3.10", "python3.10-venv", "python3.11",
                                                "python3.11-venv", "python3-venv"}},
    "ubuntu-24.04": {"python3": "3.12", "apt": {"libglib2.0-0t64", "python3.12", "python3.12-venv",
                                                "python3-venv"}},
}


def shell(script: str, *, apt: set[str], installed: set[str] = frozenset(), pythons: dict[str, str] | None = None,
          tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `script` after sourcing packages.sh, with the package names `apt` knows, the packages
    `installed`, and stand-in Pythons (name -> version) alone on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, version in (pythons or {}).items():  # `NAME -c CODE` runs CODE as Python `version` would
        major, minor = version.split(".")
        stub = bin_dir / name
        prelude = f"import sys; sys.version_info = ({major}, {minor}, 0, 'final', 0)"
        stub.write_text(f'#!/bin/sh\n[ "$1" = -c ] || exit 2\nexec "{sys.executable}" -c "{prelude}\n$2"\n')
        stub.chmod(0o755)
    fake = (f"apt_has() {{ case \" {' '.join(sorted(apt))} \" in *\" $1 \"*) return 0;; esac; return 1; }}\n"
            f"installed() {{ case \" {' '.join(sorted(installed))} \" in *\" $1 \"*) return 0;; esac; return 1; }}\n")
    full = f". '{PACKAGES}'\n{fake}{script}\n"
    run_env = {"PATH": str(bin_dir), **(env or {})}  # the stand-ins alone: no Python of this machine
    return subprocess.run([shutil.which("bash") or "/bin/bash", "-c", full], capture_output=True, text=True,
                          env=run_env, timeout=60)


@pytest.mark.parametrize("release, glib", [("debian-12", "libglib2.0-0"), ("ubuntu-22.04", "libglib2.0-0"),
                                           ("ubuntu-24.04", "libglib2.0-0t64")])
def test_the_glib_package_is_the_one_the_release_has(tmp_path, release, glib):
    done = shell("glib_package", apt=RELEASES[release]["apt"], tmp_path=tmp_path)
    assert done.stdout.strip() == glib
    installed = shell("glib_package", apt=set(), installed={glib}, tmp_path=tmp_path)  # no package lists yet
    assert installed.stdout.strip() == glib


@pytest.mark.parametrize("release, python, packages", [
    ("debian-12", "python3", ""),  # python3 is 3.11: nothing to install
    ("ubuntu-22.04", None, "python3.11 python3.11-venv"),  # python3 is 3.10: the distribution's 3.11
    ("ubuntu-24.04", "python3", ""),
])
def test_a_python_of_3_11_or_newer_is_found_or_installed(tmp_path, release, python, packages):
    facts = RELEASES[release]
    pythons = {"python3": facts["python3"]}
    found = shell("find_python", apt=facts["apt"], pythons=pythons, tmp_path=tmp_path)
    if python is not None:
        assert found.returncode == 0 and found.stdout.strip() == python
        return
    assert found.returncode != 0  # 3.10 is refused
    wanted = shell("python_packages", apt=facts["apt"], pythons=pythons, tmp_path=tmp_path)
    assert wanted.returncode == 0 and wanted.stdout.strip() == packages
    pythons["python3.11"] = "3.11"  # once installed, it is the one found
    after = shell("find_python", apt=facts["apt"], pythons=pythons, tmp_path=tmp_path)
    assert after.stdout.strip() == "python3.11"


def test_no_python_to_be_had_is_said_so(tmp_path):
    wanted = shell("python_packages", apt={"libglib2.0-0", "python3.10"}, pythons={"python3": "3.10"},
                   tmp_path=tmp_path)
    assert wanted.returncode != 0 and wanted.stdout.strip() == ""


def test_a_python_given_by_the_user_is_used_only_if_new_enough(tmp_path):
    pythons = {"python3": "3.12", "py310": "3.10"}
    bin_dir = tmp_path / "bin"
    old = shell("find_python", apt=set(), pythons=pythons, tmp_path=tmp_path, env={"PYTHON": str(bin_dir / "py310")})
    assert old.returncode != 0
    new = shell("find_python", apt=set(), pythons=pythons, tmp_path=tmp_path, env={"PYTHON": "python3"})
    assert new.stdout.strip() == "python3"


def test_the_venv_package_follows_the_python(tmp_path):
    done = shell('venv_package python3.11', apt=RELEASES["ubuntu-22.04"]["apt"], pythons={"python3.11": "3.11"},
                 tmp_path=tmp_path)
    assert done.stdout.strip() == "python3.11-venv"
