"""The status bar at 1024x700: every pane's count readable with four panes, the legend out of the
bar (beside the Text | Chat tabs, a View menu toggle), long messages on two lines with the whole
message as the tooltip."""

from __future__ import annotations

from tokviz.gui.compare.legend import TokenLegend
from tokviz.gui.compare.status_line import StatusLine, wrap_message

SPECS = ["cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1"]


def test_four_panes_counts_readable_at_1024(make_window) -> None:
    window = make_window(SPECS, "Hello! 안녕하세요, 오늘 날씨가 정말 좋네요. 你好，我是一只猫。")
    window.resize(1024, 700)
    window.show()
    assert window.statusBar().findChildren(TokenLegend) == []  # it took half of the bar
    line = window.status_line
    window._show_summary()
    summary = window.statusBar().currentMessage()
    assert line.message() == summary
    shown = "\n".join(line.lines())
    assert line.width() > 900
    for pane in window.panes:
        assert f"{pane.short_name}: {len(pane.result.tokens):,}" in shown
    assert "…" not in shown


def test_a_long_message_takes_two_lines_and_keeps_the_rest_in_the_tooltip(make_window) -> None:
    window = make_window(SPECS[:1], "hi")
    window.resize(1024, 700)
    notes = [f"ggml-vocab-{i} differs from cl100k_base in {i} tokens" for i in range(12)]
    message = " · ".join(["351 characters", *notes])
    window.show_message(message)
    line = window.status_line
    assert len(line.lines()) == 2
    assert line.lines()[1].endswith("…")
    assert line.toolTip() == message
    metrics = line.fontMetrics()
    assert line.height() >= 2 * metrics.height()
    tall = line.height()
    window.show_message("short")  # the panes do not jump back up for a short message
    assert line.lines() == ["short"] and line.height() == tall


def test_legend_is_a_view_toggle_that_is_remembered(make_window, settings) -> None:
    window = make_window(SPECS[:1], "hi")
    assert window.legend.isVisible()
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert window.legend_action in view.actions()
    window.legend_action.trigger()
    assert not window.legend.isVisible()
    window.save_settings()
    assert settings.value("view/legend") in (False, "false")


def test_wrap_never_exceeds_the_width(qtbot) -> None:
    line = StatusLine()
    qtbot.addWidget(line)
    advance = line.fontMetrics().horizontalAdvance
    message = " · ".join(f"part number {i} of a status message" for i in range(30))
    for width in (40, 200, 600):
        lines, elided = wrap_message(message, width, advance)
        assert elided and len(lines) == 2
        assert all(advance(row) <= width for row in lines)
