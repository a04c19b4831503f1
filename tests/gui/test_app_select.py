"""`tokviz-gui --select-char N`: the first pane's token covering character N is selected once every
pane is drawn (what the screenshots in the README use)."""

from __future__ import annotations

from tokviz.gui.app import parse_args, window_from_args


def test_select_char_selects_the_covering_token_once_every_pane_is_laid_out(qtbot, tmp_path):
    text = "Hello world, tokens everywhere"
    args = parse_args(["-t", "cl100k_base", "-t", "o200k_base", "--no-restore", "--settings",
                       str(tmp_path / "s.ini"), "--text", text, "--select-char", "8"])
    window = window_from_args(args)
    qtbot.addWidget(window)
    window.show()
    first = window.panes[0]
    qtbot.waitUntil(lambda: window.editor.textCursor().hasSelection(), timeout=60_000)
    token = first.result.tokens[first.view.token_for_char(8)]
    assert token.start <= 8 < token.end and text[token.start:token.end] == " world"
    cursor = window.editor.textCursor()
    assert (cursor.selectionStart(), cursor.selectionEnd()) == (token.start, token.end)
    assert all(p.view.layout_done for p in window.panes)
    window.shutdown()
