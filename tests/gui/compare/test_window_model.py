"""The compare window renders its CompareModel: intents sent to the model show in the widgets."""

from __future__ import annotations

from tests.gui.conftest import wait_ready
from tokviz.core.tokens import TokenKind


def test_panes_added_moved_and_removed_in_the_model_are_the_windows(qtbot, make_window, vocab) -> None:
    text = "a <|endoftext|> b"
    window = make_window(["cl100k_base"], text)
    model = window.model
    assert model.text == text and model.specs() == ["cl100k_base"]
    qwen_model = model.add_pane("qwen", policy="all")  # to the model, not through the window
    wait_ready(qtbot, window)
    qwen = window.panes[1]
    assert [p.spec for p in window.panes] == ["cl100k_base", "qwen"] and qwen.model is qwen_model
    assert qwen.policy_combo.currentText() == "all"
    assert qwen.result.tokens == vocab("qwen").encode(text, allowed_special="all")
    assert model.move_pane(qwen_model, -1)
    assert [p.spec for p in window.panes] == ["qwen", "cl100k_base"]
    assert window.pane_splitter.indexOf(qwen) == 0
    cl100k = window.panes[1]
    assert model.remove_pane(cl100k.model)
    assert window.panes == [qwen] and cl100k.parent() is None and not cl100k.running


def test_a_pane_renders_its_model_and_sends_it_its_controls(qtbot, make_window) -> None:
    text = "a <|endoftext|> b"
    window = make_window(["cl100k_base"], text)
    pane = window.panes[0]
    pane.model.set_policy("all")
    wait_ready(qtbot, window)
    assert pane.policy_combo.currentText() == "all"
    assert [t.piece for t in pane.result.tokens if t.kind is TokenKind.SPECIAL] == ["<|endoftext|>"]
    pane.policy_combo.setCurrentText("none")
    pane.policy_combo.lineEdit().editingFinished.emit()  # the box's edit, as an intent
    wait_ready(qtbot, window)
    assert pane.model.policy.label == "none"
    assert not any(t.kind is TokenKind.SPECIAL for t in pane.result.tokens)
    received = pane.model.received
    assert received is not None and received.text == text and received.encoding is pane.result.tokens


def test_the_models_text_and_options_reach_the_editor_and_every_pane(qtbot, make_window, vocab) -> None:
    window = make_window(["cl100k_base", "qwen"], "hello")
    window.model.set_text("héllo wörld")
    wait_ready(qtbot, window)
    assert window.text() == "héllo wörld"
    for pane in window.panes:
        assert pane.result.tokens == vocab(pane.spec).encode("héllo wörld")
    window.model.change_options(mode="ids")
    qtbot.waitUntil(lambda: all(p.result is not None and p.result.options.mode == "ids" for p in window.panes))
    assert window.options.mode == "ids"
    window.model.set_context_limit(2)
    assert all(p.view.limit == 2 for p in window.panes)


def test_a_removed_pane_no_longer_listens_to_its_model(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "qwen"], "hello")
    pane = window.panes[1]
    model = pane.model
    window.remove_pane(pane)
    model.set_policy("all")  # nothing renders it any more: no call into the removed widget
    model.set_model_adds(True)
    assert pane.policy_combo.currentText() == "none" and not pane.model_adds_check.isChecked()
