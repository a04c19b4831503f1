"""The compare window with real tokenizers: counts, kinds, rendering, hover, panes, linking."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QTextCursor

from tests.gui.conftest import TIMEOUT_MS, wait_ready
from tokviz.core import catalog
from tokviz.core.resources import sample_text
from tokviz.core.tokens import TokenKind, hex_bytes
from tokviz.gui.app import build_window

KOREAN_EMOJI_CODE = "안녕하세요 👋🏽 세계!\ndef greet(name):\n    return f'{name} 🎉'\n"


def test_window_builds_with_default_panes(qtbot, settings) -> None:
    window = build_window(settings=settings, restore=False, text="hello")
    qtbot.addWidget(window)
    assert len(window.panes) >= 3
    assert [p.spec for p in window.panes] == catalog.default_specs()
    wait_ready(qtbot, window)
    assert all(p.result is not None for p in window.panes if p.error is None)


def test_panes_show_exactly_the_core_tokens(make_window, vocab) -> None:
    text = sample_text("mixed.txt")
    window = make_window(["cl100k_base", "qwen", "o200k_base"], text)
    for pane in window.panes:
        expected = vocab(pane.spec).encode(text)
        assert pane.result.tokens == expected
        assert [c.kind for c in pane.result.cells] == [t.kind for t in expected]
        assert pane.stats().tokens == len(expected)
        assert f"{len(expected):,} tokens" in pane.stats_label.text()
    assert dict(window.chart.rows)["qwen"] == len(vocab("qwen").encode(text))


def test_fragments_get_their_own_rendering(make_window) -> None:
    window = make_window(["cl100k_base"], KOREAN_EMOJI_CODE)
    view = window.panes[0].view
    fragments = [i for i, t in enumerate(view.tokens) if t.kind is TokenKind.FRAGMENT]
    assert fragments, "cl100k cuts Korean and emoji inside characters"
    for i in fragments:
        assert view.is_fragment_styled(i)
        assert view.cell(i).hex == hex_bytes(view.tokens[i].bytes)
        assert "\ufffd" not in view.cell(i).label  # read with its neighbours: whole characters
    normal = next(i for i, t in enumerate(view.tokens) if t.kind is TokenKind.NORMAL)
    assert view.cell(normal).hex == "" and not view.is_fragment_styled(normal)
    assert view.cell_rect(fragments[0]) is not None


def test_special_policy_switch_changes_the_cut(qtbot, make_window, vocab) -> None:
    text = 'print("<|endoftext|>")'
    window = make_window(["cl100k_base"], text)
    pane = window.panes[0]
    as_text = pane.view.tokens
    assert len(as_text) > 3 and all(t.kind is not TokenKind.SPECIAL for t in as_text)
    assert as_text == vocab("cl100k_base").encode(text)
    pane.set_policy("all")
    wait_ready(qtbot, window)
    special = [t for t in pane.view.tokens if t.kind is TokenKind.SPECIAL]
    assert [(t.id, t.piece) for t in special] == [(100257, "<|endoftext|>")]
    i = pane.view.tokens.index(special[0])
    assert pane.view.cell(i).pill and pane.view.cell(i).label == "<|endoftext|>"
    assert len(pane.view.tokens) < len(as_text)


def test_disallowed_special_token_says_where_and_the_ways_out(qtbot, make_window) -> None:
    text = "a\nb <|endoftext|> b"
    window = make_window(["cl100k_base", "qwen"], text, policy="raise")
    wait_ready(qtbot, window)
    for pane in window.panes:
        assert pane.error.startswith("<|endoftext|> at line 2, column 3 is special-token text")
        assert "policy to none" in pane.error and "or all" in pane.error
        assert pane.warning.isVisibleTo(pane) and "show it" in pane.warning.text()
        assert pane.result is None and pane.view.tokens == []
        assert not pane.busy and "tokenizing" not in pane.subtitle.text()
    window.panes[0]._on_warning_link("jump")  # the "show it" link selects the token's text
    assert window.selected_chars() == (4, 17)
    window.panes[0]._on_warning_link("none")  # a way out works and the app kept running
    wait_ready(qtbot, window)
    assert window.panes[0].error is None and window.panes[0].result is not None
    assert window.panes[0].policy.label == "none"


def test_bad_vocabulary_file_shows_a_message(qtbot, make_window, tmp_path) -> None:
    bad = tmp_path / "broken.tiktoken"
    bad.write_bytes(b"IQ== 0\nthis is not base64 !!! x\n")
    window = make_window(["cl100k_base"], "hello")
    pane = window.add_pane(str(bad))
    qtbot.waitUntil(lambda: pane.error is not None, timeout=TIMEOUT_MS)
    assert "broken.tiktoken" in pane.error and "line 2" in pane.error
    assert pane.warning.isVisibleTo(pane)
    assert "broken.tiktoken" in window.statusBar().currentMessage()
    window.set_text("still alive")
    wait_ready(qtbot, window)
    assert window.panes[0].result.text == "still alive"


def test_hover_shows_token_details(qtbot, make_window) -> None:
    window = make_window(["qwen"], " 根")
    view = window.panes[0].view
    assert [t.id for t in view.tokens] == [51461, 117]
    rect = view.cell_rect(0)
    assert view.token_at(rect.center()) == 0
    tip = view.tooltip_for(0)
    for part in ("id 51461", "fragment", "piece: Ġæł", "bytes: 20 e6 a0", "chars 0–2"):
        assert part in tip
    with qtbot.waitSignal(view.hovered, timeout=TIMEOUT_MS) as hovered:
        qtbot.mouseMove(view.viewport(), rect.center().toPoint())
    assert hovered.args == [0]
    # token 0 covers ' ' and the first two bytes of 根, so token 1 (the last byte) shares a character
    assert [list(p.view.highlighted) for p in window.panes] == [[0, 1]]
    selections = window.editor.extraSelections()
    marked = selections[0].cursor
    assert (marked.selectionStart(), marked.selectionEnd()) == (0, 2)


def test_click_selects_and_details_list_occurrences(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "the cat and the dog and the end")
    pane = window.panes[0]
    the = next(i for i, t in enumerate(pane.view.tokens) if t.bytes == b" the")
    window.select_token(pane, the)
    assert pane.view.selected == the and pane.details.isVisibleTo(pane)
    assert "occurs 2×" in pane.details.text()
    cursor = window.editor.textCursor()
    assert (cursor.selectionStart(), cursor.selectionEnd()) == (pane.view.tokens[the].start, pane.view.tokens[the].end)
    window.set_options(mode="both")  # a view change keeps the selection
    wait_ready(qtbot, window)
    assert pane.view.selected == the
    window.set_text("a new text")  # a new text drops it
    wait_ready(qtbot, window)
    assert pane.view.selected is None


def test_add_remove_and_reorder_panes(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "hello world")
    added = window.add_pane("qwen")
    wait_ready(qtbot, window)
    assert [p.spec for p in window.panes] == ["cl100k_base", "qwen"]
    assert added.result.text == "hello world"
    window.move_pane(added, -1)
    assert [p.spec for p in window.panes] == ["qwen", "cl100k_base"]
    assert window.pane_splitter.widget(0) is added
    window.remove_pane(added)
    assert [p.spec for p in window.panes] == ["cl100k_base"]
    assert window.pane_splitter.count() == 1 and not added.running


def test_editor_selection_highlights_covering_tokens_in_every_pane(make_window) -> None:
    text = sample_text("mixed.txt")
    window = make_window(["cl100k_base", "qwen", "o200k_base"], text)
    select(window, 10, 12)
    for pane in window.panes:
        expected = {i for i, t in enumerate(pane.result.tokens) if t.start < 12 and t.end > 10}
        assert expected and set(pane.view.highlighted) == expected


def test_highlight_maps_utf16_positions_after_emoji(make_window) -> None:
    text = "🎉🎉 abc 根"
    window = make_window(["qwen"], text)
    target = text.index("根")  # 8 code points in, 10 UTF-16 units
    select(window, target + 2, target + 3, utf16=True)
    pane = window.panes[0]
    expected = {i for i, t in enumerate(pane.result.tokens) if t.start <= target < t.end}
    assert set(pane.view.highlighted) == expected
    assert all(pane.result.tokens[i].kind is TokenKind.FRAGMENT for i in expected)


def test_synced_scrolling(qtbot, make_window) -> None:
    text = "\n".join(f"line {i}: 안녕하세요 世界 hello" for i in range(400))
    window = make_window(["cl100k_base", "qwen"], text)
    first, second = (p.view for p in window.panes)
    first.verticalScrollBar().setValue(first.verticalScrollBar().maximum() // 2)
    top = first.top_char()
    assert top and top > 0
    assert abs(second.top_char() - top) < 60


def select(window, start: int, end: int, *, utf16: bool = False) -> None:
    to16 = (lambda x: x) if utf16 else window.offsets.to_utf16
    cursor = window.editor.textCursor()
    cursor.setPosition(to16(start))
    cursor.setPosition(to16(end), QTextCursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)


def test_hovering_the_editor_highlights_in_every_pane(qtbot, make_window) -> None:
    text = "x 안녕 y"
    window = make_window(["cl100k_base", "qwen"], text)
    cursor = window.editor.textCursor()
    cursor.setPosition(2)
    rect = window.editor.cursorRect(cursor)  # the caret before "안": the mouse just right of it
    with qtbot.waitSignal(window.editor.hovered, timeout=TIMEOUT_MS) as hovered:
        qtbot.mouseMove(window.editor.viewport(), rect.center() + QPoint(3, 0))
    assert hovered.args == [2]
    for pane in window.panes:
        expected = {i for i, t in enumerate(pane.result.tokens) if t.start <= 2 < t.end}
        assert set(pane.view.highlighted) == expected
    window._on_editor_hover(-1)  # leaving: back to the editor's own selection
    assert all(len(p.view.highlighted) <= 1 for p in window.panes)


def test_a_chosen_set_of_special_tokens(qtbot, make_window, vocab) -> None:
    text = "<|endoftext|><|fim_prefix|>"
    window = make_window(["cl100k_base"], text)
    pane = window.panes[0]
    assert pane.policy_combo.findText("<|fim_prefix|>") >= 0  # offered in the combo
    pane.set_policy("<|fim_prefix|>")
    wait_ready(qtbot, window)
    expected = vocab("cl100k_base").encode(text, allowed_special={"<|fim_prefix|>"})
    assert pane.result.tokens == expected
    assert [t.kind for t in expected].count(TokenKind.SPECIAL) == 1


def test_scrolling_to_a_character_not_yet_laid_out_happens_once_it_is(qtbot, make_window) -> None:
    # long enough that one 6 ms layout slice cannot place it all, even on an idle fast machine
    text = "\n".join(f"row {i} 안녕하세요 hello world" for i in range(20000))
    window = make_window(["qwen"], text)
    view = window.panes[0].view
    target = text.index("row 17500 ")
    view.set_result(view.result)  # start the layout over: the target is not placed yet
    assert not view.layout_done
    view.scroll_to_char(target)
    qtbot.waitUntil(lambda: view.layout_done, timeout=TIMEOUT_MS)
    assert abs(view.top_char() - target) < 40


def test_an_empty_text_is_a_finished_cut_of_no_tokens(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "mistral-7b-v0.1"], "")  # waits until every pane is ready
    for pane in window.panes:
        assert pane.result is not None and pane.result.tokens == [] and pane.view.layout_done
    window.set_text("hi")
    qtbot.waitUntil(lambda: all(p.result is not None and p.result.text == "hi" and p.view.layout_done
                                for p in window.panes), timeout=TIMEOUT_MS)
    window.set_text("")
    qtbot.waitUntil(lambda: all(p.result is not None and p.result.text == "" and p.view.layout_done
                                for p in window.panes), timeout=TIMEOUT_MS)


def test_removing_a_pane_while_its_cells_are_prepared_leaves_the_others_working(qtbot, make_window,
                                                                                monkeypatch) -> None:
    """The preparation runs on, unseen; the window does not wait for it, and the next pane's
    preparation follows it (the panes share one preparer)."""
    import threading

    from shiboken6 import isValid

    from tokviz.gui.compare import pane as pane_module

    window = make_window(["cl100k_base"], "hi")
    real = pane_module.prepare
    started, release, ended = threading.Event(), threading.Event(), threading.Event()

    def held(*args, **kwargs):
        if started.is_set():
            return real(*args, **kwargs)
        started.set()  # the first preparation of the new text: the only pane's
        release.wait(TIMEOUT_MS / 1000)
        try:
            return real(*args, **kwargs)
        finally:
            ended.set()

    monkeypatch.setattr(pane_module, "prepare", held)
    window.set_text("a new text")
    qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
    first = window.panes[0]
    second = window.add_pane("o200k_base")  # its preparation waits behind the held one
    window.remove_pane(first)
    qtbot.waitUntil(lambda: not isValid(first), timeout=TIMEOUT_MS)
    assert not ended.is_set()  # the window did not wait for the removed pane's preparation
    release.set()
    wait_ready(qtbot, window)
    assert window.panes == [second] and second.result.text == "a new text"
