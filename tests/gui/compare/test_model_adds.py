"""A pane "as the model sees it": with the BOS the model's own tokenizer adds, the count is the
model's."""

from __future__ import annotations

from tests.gui.conftest import wait_ready
from tokviz.core.tokens import TokenKind

TEXT = "Hello world, 안녕하세요"


def test_a_pane_can_add_what_the_model_adds(qtbot, make_window, vocab) -> None:
    window = make_window(["mistral-7b-v0.1", "cl100k_base"], TEXT)
    mistral, cl100k = window.panes
    assert mistral.model_adds_check.isVisibleTo(mistral) and mistral.model_adds_check.text() == "+<s>"
    assert not cl100k.model_adds_check.isVisibleTo(cl100k) and not cl100k.model_adds  # tiktoken adds none
    plain = len(mistral.result.tokens)
    mistral.set_model_adds(True)
    wait_ready(qtbot, window)
    qtbot.waitUntil(lambda: len(mistral.result.tokens) == plain + 1)
    sp = vocab("mistral-7b-v0.1").sp
    assert mistral.result.ids.tolist() == sp.encode(TEXT, add_bos=True)
    bos = mistral.result.tokens[0]
    assert bos.kind is TokenKind.SPECIAL and bos.piece == "<s>" and (bos.start, bos.end) == (0, 0)
    assert mistral.stats().tokens == plain + 1 and f"{plain + 1:,} tokens" in mistral.stats_label.text()
    window.select_token(mistral, 1)  # the text's first token still links to the editor
    assert window.selected_chars()[0] == 0
    mistral.set_model_adds(False)
    qtbot.waitUntil(lambda: len(mistral.result.tokens) == plain)


def test_the_option_is_remembered(qtbot, settings) -> None:
    from tokviz.gui.app import build_window

    window = build_window(specs=["cl100k_base", "mistral-7b-v0.1"], text=TEXT, settings=settings, restore=False)
    qtbot.addWidget(window)
    wait_ready(qtbot, window)
    window.panes[1].set_model_adds(True)
    window.save_settings()
    window.shutdown()
    again = build_window(settings=settings, restore=True)
    qtbot.addWidget(again)
    wait_ready(qtbot, again)
    assert [p.spec for p in again.panes] == ["cl100k_base", "mistral-7b-v0.1"]
    assert [p.model_adds for p in again.panes] == [False, True]
    assert again.panes[1].result.tokens[0].piece == "<s>"
    again.shutdown()
