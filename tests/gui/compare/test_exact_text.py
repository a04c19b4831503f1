"""The panes cut exactly the text given: pasted, typed, opened or passed on the command line
(issue 12). QPlainTextEdit's own plain text would turn CRLF into LF, NBSP into a space and drop
a leading BOM; the window reads the editor's raw text instead."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from PySide6.QtCore import QMimeData

from tests.gui.conftest import wait_ready

CRLF = "ok\r\nwindows line\r\n"
NBSP = "café\xa0: prix\xa0100\xa0€"


def paste(window, text: str) -> None:
    """Paste over the whole text, as Ctrl+A, Ctrl+V does."""
    window.editor.selectAll()
    data = QMimeData()
    data.setText(text)
    window.editor.insertFromMimeData(data)
    window.flush_text()  # what the debounce timer does


def test_crlf_reaches_the_pane_as_crlf(qtbot, make_window, vocab) -> None:
    window = make_window(["cl100k_base"], CRLF)
    pane = window.panes[0]
    assert pane.error is None, pane.error
    assert window.text() == CRLF and pane.result.text == CRLF
    assert pane.result.ids.tolist() == [564, 319, 28176, 1584, 319] == vocab("cl100k_base").encode_ids(CRLF)


def test_a_pasted_nbsp_text_is_cut_as_it_is(qtbot, make_window, vocab) -> None:
    window = make_window(["cl100k_base"], "x")
    paste(window, NBSP)
    wait_ready(qtbot, window)
    pane = window.panes[0]
    assert pane.result.text == NBSP
    assert len(pane.result.tokens) == 9 == len(vocab("cl100k_base").encode(NBSP))
    assert "9 tokens" in pane.stats_label.text()
    assert window.chart.rows == [(pane.title.text(), 9)]


def test_a_pasted_crlf_text_stays_crlf_and_edits_keep_it(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "x")
    paste(window, "a\r\nb\rc")
    window.editor.textCursor().insertText("!")  # typing at the end
    window.flush_text()
    wait_ready(qtbot, window)
    assert window.panes[0].result.text == "a\r\nb\rc!"
    window.editor.undo()
    window.flush_text()
    assert window.text() == "a\r\nb\rc"


@pytest.mark.parametrize("text", [
    "\ufeffhead", "line\u2028sep\u2029para", "nul\x00 and \ufdd0\ufdd1 in it",
    "stand-ins \ufdd2\ufdd3\ufdd4\ufdd5\ufdd6 \r",
    "emoji 👋🏽\r\n",
])
def test_every_character_survives_the_editor(qtbot, make_window, text) -> None:
    window = make_window(["cl100k_base"], text)
    assert window.panes[0].result.text == text
    window.editor.selectAll()
    copied = window.editor.createMimeDataFromSelection()
    window.editor.insertFromMimeData(copied)  # copy and paste within the editor: exact
    assert window.text() == text


def test_positions_in_the_editor_are_positions_in_the_text(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "a\r\nwindows")
    cursor = window.editor.textCursor()
    cursor.setPosition(3)
    cursor.setPosition(10, cursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)
    assert window.selected_chars() == (3, 10)
    assert window.text()[3:10] == "windows"


def test_invisible_characters_are_marked_in_the_editor(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "\ufeffa\r\nb\xa0c")
    assert window.editor.marks_in_view() == [(0, "B"), (2, "␍"), (5, "⍽")]
    window.editor.grab()  # paints the marks


def test_open_reads_the_file_exactly(qtbot, make_window, tmp_path) -> None:
    path = tmp_path / "windows.txt"
    path.write_bytes(b"\xef\xbb\xbfok\r\nwindows line\r\n")
    window = make_window(["cl100k_base"], "x")
    window.open_text_file(str(path))
    wait_ready(qtbot, window)
    assert window.panes[0].result.text == "\ufeff" + CRLF


@pytest.mark.parametrize(("data", "said"), [
    (b"caf\xe9 cr\xe8me\n", "byte 0xe9 at offset 3 (line 1, column 4)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "looks binary, not text: a NUL byte at offset 8"),
])
def test_open_refuses_a_file_that_is_not_utf8(qtbot, make_window, tmp_path, data, said) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(data)
    window = make_window(["cl100k_base"], "kept")
    window.open_text_file(str(path))
    assert said in window.statusBar().currentMessage() and window.text() == "kept"


def run_gui(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "tokviz", "gui", "--no-restore", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_command_line_file_is_read_exactly(tmp_path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9\n")
    proc = run_gui(str(bad), "-t", "cl100k_base")
    assert proc.returncode == 2 and "byte 0xe9 at offset 3" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_window_from_args_keeps_crlf(qtbot, tmp_path, settings) -> None:
    from tokviz.gui.app import parse_args, window_from_args

    path = tmp_path / "windows.txt"
    path.write_bytes(CRLF.encode())
    window = window_from_args(parse_args([str(path), "-t", "cl100k_base", "--no-restore",
                                          "--settings", str(tmp_path / "s.ini")]))
    qtbot.addWidget(window)
    wait_ready(qtbot, window)
    assert window.panes[0].result.ids.tolist() == [564, 319, 28176, 1584, 319]
    window.shutdown()


@pytest.mark.parametrize(("args", "said"), [
    (["--size", "wide"], "argument --size: 'wide' is not WIDTHxHEIGHT"),
    (["--pane-policy", "5:all", "-t", "cl100k_base"], "--pane-policy: 5:all: there is 1 pane"),
    (["--pane-policy", "5:all"], "--pane-policy: 5:all: there are"),
    (["--pane-policy", "x:all"], "expected N:POLICY"),
    (["--context-limit", "-5"], "argument --context-limit: -5 is less than 1"),
    (["--select-char", "many"], "'many' is not a whole number"),
])
def test_bad_options_are_one_line_before_any_thread(args, said) -> None:
    proc = run_gui(*args)
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "QThread" not in proc.stderr and "Traceback" not in proc.stderr
