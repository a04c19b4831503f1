"""Launching the app from the command line: options reach the app; no display is a message, not an abort."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from tokviz.core import catalog
from tokviz.gui.app import display_problem, run


def test_no_display_is_a_clear_message_not_a_qt_abort():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    proc = subprocess.run([sys.executable, "-m", "tokviz", "--no-restore"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    assert "no display to open the window on" in proc.stderr and "Aborted" not in proc.stderr


def test_display_problem_rules():
    assert display_problem({"DISPLAY": ":1"}) is None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
    if sys.platform == "linux":
        assert "no display" in display_problem({})


def test_app_options_pass_through_tokviz_and_tokviz_gui():
    for argv in (["gui", "--help"], ["gui", "-h"]):
        proc = subprocess.run([sys.executable, "-m", "tokviz", *argv], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and "--sample" in proc.stdout and "--tokenizer" in proc.stdout


def test_installed_gui_script_opens_the_app():
    # `tokviz-gui` is the windowless launcher on Windows ([project.gui-scripts]); it takes the app's
    # options like `tokviz gui`. Run the script pip installed next to this interpreter.
    (entry,) = entry_points(group="gui_scripts", name="tokviz-gui")
    assert entry.load() is run
    script = shutil.which("tokviz-gui", path=str(Path(sys.executable).parent))
    assert script, "tokviz-gui is not installed: pip install -e ."
    proc = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "--sample" in proc.stdout and "--tokenizer" in proc.stdout


def test_the_window_and_the_tokenizer_process_do_not_load_openssl_or_tiktoken_to_start():
    """`hashlib` (and `secrets`, through `hmac`) load OpenSSL, ~3.4 MB resident: the window's
    modules and the tokenizer process's import them only where a file is verified; tiktoken
    (~2.5 MB) only where a tokenizer is built, which the window never does."""
    code = ("import sys, tokviz.gui.app, tokviz.service.server, tokviz.core.catalog; "
            "print(sorted(m for m in ('_hashlib', 'hashlib', 'hmac', 'secrets', 'tiktoken') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"


def test_the_tokenizer_process_verifies_what_it_loads_without_openssl(vocab):
    """Loading a catalog vocabulary checks its sha256 with the interpreter's own sha256, not
    hashlib's: the tokenizer process keeps no OpenSSL resident for a few MB of vocabulary."""
    vocab("cl100k_base")  # fetched for this session, if it was not
    code = ("import sys; from tokviz.core import catalog; t = catalog.load('cl100k_base'); "
            "print(t.vocab_size, catalog._HASHES and sorted(catalog._HASHES.values())[0][:12], "
            "sorted(m for m in ('_hashlib', 'hashlib') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    entry = catalog.find("cl100k_base")
    assert entry is not None
    assert proc.stdout.split() == [str(vocab("cl100k_base").vocab_size), entry.sha256[:12], "[]"]


def test_build_app_freezes_what_the_imports_made():
    """`build_app` puts the imports' objects out of the collector's rounds (a full collection
    walked ~46k of them, 85-100 ms, on whichever thread allocated). In a process of its own:
    frozen objects of this test session would never be collected."""
    code = ("import gc; from tokviz.gui.app import build_app; before = gc.get_freeze_count(); "
            "app = build_app([]); print(before, gc.get_freeze_count(), len(gc.get_objects()))")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    before, frozen, tracked = map(int, proc.stdout.split())
    assert before == 0 and frozen > 20_000 and tracked < frozen // 10


def test_build_app_lets_go_of_the_sources_pyside_read():
    """PySide6 reads the source of every module imported after it, which stays in `linecache`
    (11-13 MB for the app's imports); `build_app` clears it, `numpy.ma` (which `np.unique`
    imports on first use) already imported."""
    code = ("import linecache, sys; from tokviz.gui.app import build_app; import tokviz.gui.compare.window; "
            "print(len(linecache.cache)); app = build_app([]); "
            "print(len(linecache.cache), 'numpy.ma' in sys.modules)")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    read, left, ma = proc.stdout.split()
    assert int(read) > 100 and int(left) < 5 and ma == "True"
