"""Launching the app from the command line: options reach the app; no display is a message, not an abort."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from PySide6.QtWidgets import QWidget

from tokviz.gui.app import display_problem, freeze_startup, run


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
    code = ("import sys, tokviz.gui.app, tokviz.core.encode_server, tokviz.core.catalog; "
            "print(sorted(m for m in ('_hashlib', 'hashlib', 'hmac', 'secrets', 'tiktoken') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"


def test_the_startup_objects_leave_the_collectors_rounds(qtbot):
    """What the imports made is frozen by `build_app`: a later full collection walks only what
    came after (it walked ~46k objects, 85-100 ms, on whichever thread allocated)."""
    widget = QWidget()
    qtbot.addWidget(widget)
    assert any(o is widget for o in gc.get_objects())
    try:
        freeze_startup()
        assert gc.get_freeze_count() > 0
        assert not any(o is widget for o in gc.get_objects())
        later = QWidget()
        qtbot.addWidget(later)
        assert any(o is later for o in gc.get_objects())
    finally:
        gc.unfreeze()  # the suite's later tests must collect normally
