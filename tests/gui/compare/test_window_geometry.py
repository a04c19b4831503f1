"""Many panes and small screens: readable pane names, a window that stays on its screen, and
trained panes that replace each other."""

from __future__ import annotations

from tests.gui.conftest import wait_ready
from tokviz.gui.compare.window import MIN_PANE_WIDTH
from tokviz.gui.widgets.labels import ElidedLabel

# more panes than fit the test screen (800 px wide) at MIN_PANE_WIDTH, in few processes' worth of load
MANY = ["cl100k_base", "r50k_base", "p50k_base", "mistral-7b-v0.1"]


def test_elided_label_keeps_both_ends_and_the_whole_name(qtbot) -> None:
    label = ElidedLabel("ggml-vocab-deepseek-coder")
    qtbot.addWidget(label)
    label.show()
    label.resize(80, 20)
    qtbot.waitUntil(lambda: "…" in label.shown_text())
    shown = label.shown_text()
    assert "…" in shown and shown.startswith("gg") and shown.endswith("er")
    assert label.text() == "ggml-vocab-deepseek-coder" and label.toolTip() == label.text()
    label.resize(600, 20)
    qtbot.waitUntil(lambda: label.shown_text() == label.text())
    assert label.shown_text() == label.text()
    label.setToolTip("ggml-vocab-deepseek-coder (GGUF)")
    assert label.toolTip() == "ggml-vocab-deepseek-coder (GGUF)"


def test_many_panes_scroll_sideways_instead_of_widening_the_window(qtbot, make_window) -> None:
    window = make_window(MANY, "hello world")
    assert len(MANY) * MIN_PANE_WIDTH > window.width()
    screen = window.screen().availableGeometry()
    assert window.minimumSizeHint().width() < screen.width()
    assert window.frameGeometry().width() <= screen.width()
    for pane in window.panes:  # every pane keeps room for its name
        assert pane.width() >= MIN_PANE_WIDTH - 1
        assert pane.title.text() == pane.tokenizer.name
    assert window.pane_scroll.horizontalScrollBar().maximum() > 0
    for pane in window.panes[2:]:
        window.remove_pane(pane)
    qtbot.waitUntil(lambda: window.pane_scroll.horizontalScrollBar().maximum() == 0)


def test_window_fits_its_screen_when_shown_too_large(qtbot, settings) -> None:
    from tokviz.gui.app import build_window

    window = build_window(specs=["cl100k_base"], text="hi", settings=settings, restore=False)
    qtbot.addWidget(window)
    window.resize(5000, 4000)
    window.move(-300, -200)
    window.show()
    qtbot.waitExposed(window)
    area = window.screen().availableGeometry()
    assert area.contains(window.frameGeometry())


def test_policy_box_shows_a_whole_special_token(make_window, qtbot) -> None:
    window = make_window(["cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1"], "hi")
    window.resize(1024, 700)
    pane = window.panes[2]
    pane.policy_combo.setCurrentText("<|im_end|>")
    qtbot.waitUntil(lambda: pane.policy_combo.width() > 0)
    edit = pane.policy_combo.lineEdit()
    assert edit.fontMetrics().horizontalAdvance("<|im_end|>") < edit.width()


def test_a_trained_pane_replaces_the_previous_trained_pane(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base"], "hello")
    first = window.add_trained_pane("r50k_base")
    window.move_pane(first, -1)  # the user moved it: the next run's pane takes its place
    second = window.add_trained_pane("p50k_base")
    assert [p.spec for p in window.panes] == ["cl100k_base", "p50k_base", "o200k_base"]
    assert first not in window.panes and second in window.panes
    window.remove_pane(second)
    window.add_trained_pane("r50k_base")  # the previous one is gone: just added
    assert [p.spec for p in window.panes] == ["cl100k_base", "o200k_base", "r50k_base"]
    wait_ready(qtbot, window)


def test_closing_ends_every_tokenizer_process(qtbot, make_window) -> None:
    from tokviz.gui.compare.service import tokenizer_service

    window = make_window(["cl100k_base", "o200k_base", "mistral-7b-v0.1"], "hello")
    children = {tokenizer_service().client.process}  # the panes share one tokenizer process
    assert None not in children
    window.close()
    # every process has ended when close() returns (by its goodbye, or terminated when a loaded
    # machine made it miss the grace period: how fast is bench/bench_close.py's to say)
    assert all(not p.is_alive() and p.exitcode is not None for p in children)
    assert not any(p.running for p in window.panes)


def test_tool_dialogs_open_inside_the_screen(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "hello")
    trainer = window.tools.open_trainer()
    qtbot.waitExposed(trainer)
    assert window.screen().availableGeometry().contains(trainer.frameGeometry()) or (
        trainer.width() <= trainer.minimumWidth() and trainer.height() <= trainer.minimumHeight())
    trainer.close()
