"""Build tokviz's wheel from a clean copy of the checkout, for the tests of what it ships."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_wheel(tmp_path: Path, env: dict[str, str] | None = None) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Build the wheel into `tmp_path / "dist"` and unpack it into `tmp_path / "site"`.

    From a clean copy of what the wheel is made of, so a stale `build/` or an extension built in
    the checkout (or another build running there) cannot leak into or race with this one.
    Offline: no index. Returns the unpacked folder and the build's output."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ["pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "setup.cfg", "setup.py"]:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.so", "*.pyd")  # built here
    shutil.copytree(ROOT / "tokviz", src / "tokviz", ignore=ignore)
    out = tmp_path / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-v",
         "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = out.glob("tokviz-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    return site, result


def run_unpacked(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` with the unpacked wheel first on the path and this environment's packages after
    it. `-S` keeps the editable install's finder (a .pth in site-packages) out of the way."""
    import site as site_module

    paths = [str(site), *site_module.getsitepackages()]
    prelude = f"import sys; sys.path[:0] = {paths!r}\n"
    return subprocess.run([sys.executable, "-S", "-c", prelude + code], capture_output=True, text=True, timeout=120)
