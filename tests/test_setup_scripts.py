"""The set-up script's choices (scripts/packages.sh) on each supported release's package names.

The script decides which GLib package and which Python to ask for; these tests run its own shell
functions with `apt_has` / `installed` answering from each release's package names, and with
stand-in Pythons of given versions on PATH. Debian 12's names were read off a Debian 12 machine
(`apt-cache policy`); Ubuntu's are those of its archive: 22.04 ships python3 3.10 with python3.11
in universe, 24.04 ships python3 3.12 and renamed GLib's library libglib2.0-0t64 (the 64-bit
time_t transition). The last tests run setup.sh itself, on a copy, with apt, dpkg and the Pythons
faked, for the order of its steps.
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
    "debian-12": {"python3": "3.11", "apt": {"libglib2.0-0", "python3.11", "python3.11-venv", "python3-venv",
                                             "python3.11-dev", "python3-dev", "gcc", "libc6-dev"}},
    "ubuntu-22.04": {"python3": "3.10", "apt": {"libglib2.0-0", "python3.10", "python3.10-venv", "python3.11",
                                                "python3.11-venv", "python3-venv", "python3.10-dev",
                                                "python3.11-dev", "python3-dev", "gcc", "libc6-dev"}},
    "ubuntu-24.04": {"python3": "3.12", "apt": {"libglib2.0-0t64", "python3.12", "python3.12-venv",
                                                "python3-venv", "python3.12-dev", "python3-dev", "gcc", "libc6-dev"}},
}


def shell(script: str, *, apt: set[str], installed: set[str] = frozenset(), pythons: dict[str, str] | None = None,
          tmp_path: Path, env: dict[str, str] | None = None, headers: bool = True,
          compiler: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `script` after sourcing packages.sh, with the package names `apt` knows, the packages
    `installed`, and stand-in Pythons (name -> version) alone on PATH; with `headers` the Pythons
    have their C headers, with `compiler` a `cc` is on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if compiler:
        (bin_dir / "cc").write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / "cc").chmod(0o755)
    for name, version in (pythons or {}).items():  # `NAME -c CODE` runs CODE as Python `version` would
        major, minor = version.split(".")
        stub = bin_dir / name
        prelude = f"import sys; sys.version_info = ({major}, {minor}, 0, 'final', 0)"
        # its include folder: with Python.h, or empty (python3.X-dev not installed)
        include = tmp_path / ("headers" if headers else "no-headers")
        include.mkdir(exist_ok=True)
        if headers:
            (include / "Python.h").touch()
        prelude += f"; import sysconfig; sysconfig.get_paths = lambda: {{'include': '{include}'}}"
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



@pytest.mark.parametrize("release, python, packages", [
    ("debian-12", "python3", "python3.11-dev"),
    ("ubuntu-22.04", "python3.11", "python3.11-dev"),  # the 3.11 installed beside python3 3.10
    ("ubuntu-24.04", "python3", "python3.12-dev"),
])
def test_the_build_packages_follow_the_python(tmp_path, release, python, packages):
    facts = RELEASES[release]
    version = facts["python3"] if python == "python3" else python.removeprefix("python")
    pythons = {python: version}
    bare = shell(f"build_packages {python}", apt=facts["apt"], pythons=pythons, tmp_path=tmp_path, headers=False)
    assert bare.stdout.split() == ["gcc", "libc6-dev", *packages.split()]
    ready = shell(f"build_packages {python}", apt=facts["apt"], pythons=pythons, tmp_path=tmp_path,
                  compiler=True)
    assert ready.returncode == 0 and ready.stdout.strip() == ""
    no_headers = shell(f"has_headers {python}", apt=facts["apt"], pythons=pythons, tmp_path=tmp_path, headers=False)
    assert no_headers.returncode != 0


# setup.sh itself, run on a copy of the scripts with every command it calls faked: apt-cache knows
# a package only once `apt-get update` has filled the package lists, dpkg-query knows what apt-get
# installed, and a stand-in Python makes a venv with pip only when its python3.X-venv is installed.
FAKES = {
    "id": "print(0)",  # root: no sudo
    "apt-get": """
if ARGS[0] == "update":
    (STATE / "lists").touch()
elif "install" in ARGS:
    for name in ARGS[ARGS.index("install") + 1:]:
        if not name.startswith("-"):
            (STATE / "installed" / name).touch()
""",
    "apt-cache": """
known = (STATE / "lists").exists() and ARGS[-1] in os.environ["FAKE_APT"].split()
sys.exit(0 if known else 100)
""",
    "dpkg-query": """
if not (STATE / "installed" / ARGS[-1]).exists():
    sys.exit(1)
print("install ok installed")
""",
    "venv-python": """
if "pip" in " ".join(ARGS) and not (Path(sys.argv[0]).parent.parent / "has-pip").exists():
    sys.exit("No module named pip")
""",
}
FAKE_PYTHON = """
venv_ok = (STATE / "installed" / f"python{VERSION}-venv").exists()
if ARGS[0] == "-c":
    if "ensurepip" in ARGS[1]:  # Debian and Ubuntu ship ensurepip apart, in python3.X-venv
        sys.exit(0 if venv_ok else 1)
    sys.version_info = (*map(int, VERSION.split(".")), 0, "final", 0)
    exec(ARGS[1])
elif ARGS[:2] == ["-m", "venv"]:
    make_venv(Path(ARGS[-1]), pip=venv_ok)
    if not venv_ok:  # what a failed venv leaves: a python without pip
        sys.exit("The virtual environment was not created successfully because ensurepip is not available.")
else:
    sys.exit(2)
"""
PRELUDE = """import os, shutil, sys
from pathlib import Path
STATE = Path(os.environ["FAKE_STATE"])
ARGS = sys.argv[1:]
with open(STATE / "log", "a") as log:
    print(Path(sys.argv[0]).name, *ARGS, file=log)
def make_venv(target, *, pip):
    (target / "bin").mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(sys.argv[0]).parent / "venv-python", target / "bin" / "python")
    if pip:
        (target / "has-pip").touch()
"""


def fake(path: Path, body: str, **constants: str) -> None:
    lines = [f"#!{sys.executable}", PRELUDE, *(f"{k} = {v!r}" for k, v in constants.items()), body]
    path.write_text("\n".join(lines))
    path.chmod(0o755)


def run_setup(tmp_path: Path, *, release: str, pythons: dict[str, str], installed: set[str],
              lists: bool = False, venv_without_pip: bool = False,
              ) -> tuple[subprocess.CompletedProcess[str], list[str], set[str]]:
    """Run a copy of setup.sh (MODE=test) against the fakes; return the run, the commands it ran
    (a line each), and the packages installed at the end."""
    repo, state, bin_dir = tmp_path / "repo", tmp_path / "state", tmp_path / "bin"
    (repo / "scripts").mkdir(parents=True)
    for name in ("setup.sh", "packages.sh"):
        shutil.copy(ROOT / "scripts" / name, repo / "scripts" / name)
    (state / "installed").mkdir(parents=True)
    for name in installed:
        (state / "installed" / name).touch()
    if lists:
        (state / "lists").touch()
    bin_dir.mkdir()
    for tool in ("dirname", "grep"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    for name, body in FAKES.items():
        fake(bin_dir / name, body)
    for name, version in pythons.items():
        fake(bin_dir / name, FAKE_PYTHON, VERSION=version)
    if venv_without_pip:
        (repo / ".venv" / "bin").mkdir(parents=True)
        shutil.copy(bin_dir / "venv-python", repo / ".venv" / "bin" / "python")
    env = {"PATH": str(bin_dir), "FAKE_STATE": str(state), "FAKE_APT": " ".join(sorted(RELEASES[release]["apt"])),
           "MODE": "test"}
    done = subprocess.run([shutil.which("bash") or "/bin/bash", str(repo / "scripts" / "setup.sh")],
                          capture_output=True, text=True, env=env, timeout=120)
    log = (state / "log").read_text().splitlines() if (state / "log").exists() else []
    return done, log, {p.name for p in (state / "installed").iterdir()}


def installs_the_package(log: list[str]) -> bool:
    return any(line.startswith("python -m pip install") and line.endswith(" -e .[test,distributed]") for line in log)


def test_the_venv_package_is_asked_of_fresh_package_lists(tmp_path):
    # Ubuntu 22.04 with python3.11 from deadsnakes, in an image that cleared /var/lib/apt/lists:
    # before `apt-get update` apt-cache knows no python3.11-venv, and python3-venv is 3.10's.
    done, log, installed = run_setup(tmp_path, release="ubuntu-22.04", installed={"python3.11"},
                                     pythons={"python3": "3.10", "python3.11": "3.11"})
    assert done.returncode == 0, done.stderr
    assert "python3.11-venv" in installed and "python3-venv" not in installed
    assert log.index("apt-get update -qq") < log.index("apt-cache show python3.11-venv")
    assert installs_the_package(log)


def test_a_venv_left_without_pip_is_made_again(tmp_path):
    # Debian 12 without python3-venv, where an earlier `python3 -m venv .venv` failed half way
    done, log, installed = run_setup(tmp_path, release="debian-12", installed={"python3.11"}, lists=True,
                                     pythons={"python3": "3.11"}, venv_without_pip=True)
    assert done.returncode == 0, done.stderr
    assert "python3.11-venv" in installed
    assert any(line.startswith("python3 -m venv") for line in log)
    assert installs_the_package(log)


def test_a_c_compiler_is_installed_before_the_package_is_built(tmp_path):
    # a minimal Debian 12 image: no cc, so the compiled merge loop would not be built
    done, log, installed = run_setup(tmp_path, release="debian-12", installed={"python3.11", "python3.11-venv"},
                                     pythons={"python3": "3.11"})
    assert done.returncode == 0, done.stderr
    assert {"gcc", "libc6-dev"} <= installed
    build = next(i for i, line in enumerate(log) if line.startswith("apt-get") and " gcc " in f"{line} ")
    assert build < next(i for i, line in enumerate(log) if line.startswith("python -m pip install"))
