"""The Chat mode: real vocabularies, the real templates in the GGUF files, real widgets."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QLabel

from tests.analysis.chat_helpers import CONVERSATION
from tests.gui.conftest import TIMEOUT_MS
from tokviz.analysis.chat import TEMPLATE, analyze_chat
from tokviz.analysis.chat_sources import builtin, gguf_templates
from tokviz.analysis.chat_template import Limits
from tokviz.core import catalog
from tokviz.gui.app import open_chat, parse_args, read_messages, window_from_args
from tokviz.gui.chat.chat_pane import ChatPane
from tokviz.gui.chat.panel import ChatPanel, parse_template_kwargs
from tokviz.gui.chat.styles import FINDING_COLOR, TEMPLATE_FILLS, message_color

QWEN2 = "ggml-vocab-qwen2"
PHI3 = "ggml-vocab-phi-3"


def wait_rendered(qtbot, panel: ChatPanel) -> None:
    def ready() -> bool:
        return bool(panel.panes) and all(
            not p.busy and (p.error is not None or (p.loaded is not None and p.analysis is not None))
            for p in panel.panes
        )

    qtbot.waitUntil(ready, timeout=TIMEOUT_MS)


@pytest.fixture
def make_panel(qtbot):
    def make(specs=(QWEN2,), messages=CONVERSATION) -> ChatPanel:
        panel = ChatPanel()
        qtbot.addWidget(panel)
        panel.resize(1300, 800)
        panel.show()
        panel.set_messages(messages)
        panel.set_specs(list(specs))
        wait_rendered(qtbot, panel)
        return panel

    return make


def pane_of(panel: ChatPanel, spec: str) -> ChatPane:
    return next(p for p in panel.panes if p.spec == spec)


def test_each_pane_renders_with_the_models_own_template_and_cuts_like_the_analysis(make_panel):
    panel = make_panel((QWEN2, PHI3))
    for spec in (QWEN2, PHI3):
        pane = pane_of(panel, spec)
        assert pane.error is None
        assert pane.choice.label == "own: default"
        path = catalog.find(spec).path
        template = gguf_templates(path)["default"]
        assert pane.choice.source == template.source
        expected = analyze_chat(catalog.load(spec), template, CONVERSATION)
        assert [t.token.id for t in pane.analysis.tokens] == [t.token.id for t in expected.tokens]
        assert [t.origin for t in pane.analysis.tokens] == [t.origin for t in expected.tokens]
        assert pane.view.result.ids.tolist() == [t.token.id for t in expected.tokens]
        counts = pane.counts.text()
        assert f"{expected.total:,} tokens = {expected.overhead:,} template" in counts
        for i, n in enumerate(expected.per_message()):
            assert f"#{i} {CONVERSATION[i]['role']} {n:,}" in counts
    # Phi-3's template renders no system message: the count says so
    assert "#0 system 0 (left out by the template)" in pane_of(panel, PHI3).counts.text()
    assert "left out" not in pane_of(panel, QWEN2).counts.text()
    # the two models' own templates differ, and so do what the same chat costs in each
    assert pane_of(panel, QWEN2).choice.source != pane_of(panel, PHI3).choice.source


def test_template_tokens_and_content_tokens_are_drawn_differently(make_panel):
    panel = make_panel()
    pane = panel.panes[0]
    styles = pane.view.token_styles
    assert styles is not None and len(styles) == len(pane.analysis.tokens)
    flagged = [(f.start, f.end) for f in pane.analysis.findings if f.message is not None]
    seen_template = seen_content = False
    for i, (chat_token, style) in enumerate(zip(pane.analysis.tokens, styles)):
        token = chat_token.token
        if any(s < token.end and token.start < e for s, e in flagged):
            assert style.underline == FINDING_COLOR
        elif chat_token.origin == TEMPLATE and token.kind.value != "special":
            assert style.fill == TEMPLATE_FILLS[i % 2] and style.underline is None
            seen_template = True
        elif chat_token.origin != TEMPLATE:
            assert style.underline == message_color(chat_token.origin) and style.fill is None
            seen_content = True
    assert seen_template and seen_content
    pane.view.grab()  # paints every visible line with the styles


def test_injected_control_tokens_are_listed_plainly(make_panel):
    panel = make_panel()
    pane = panel.panes[0]
    text = pane.findings.text()
    assert pane.findings_box.isVisible()
    for marker in ("<|im_start|>", "<|im_end|>", "<|endoftext|>"):
        assert f"message 3 contains `{marker}`: a naive pipeline (every special token parsed) turns it " \
               "into a control token here" in text
    # in the trusted cut the content's marker text stays plain text: no control token from message 3
    assert all(t.token.kind.value != "special" for t in pane.analysis.tokens if t.origin == 3)
    assert "naive pipeline:" in pane.counts.text() and "different" in pane.counts.text()


def test_a_template_that_writes_inst_flags_inst_in_the_content(make_panel, qtbot):
    """Mistral's markers are plain text in Qwen 2's vocabulary: the content's `[INST]` is flagged."""
    panel = make_panel(messages=[CONVERSATION[3]])
    pane = panel.panes[0]
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        pane.choose("built-in: mistral")
    assert pane.error is None
    assert "message 0 contains `[INST]`, a marker the template writes; it is plain text" in pane.findings.text()
    assert panel.template_edit.toPlainText() == builtin("mistral").source  # the editor follows the pane


def test_a_broken_template_shows_its_line_and_message(make_panel, qtbot):
    panel = make_panel()
    pane = panel.panes[0]
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.template_edit.setPlainText("{% for m in messages %}\n{{ m.content }\n{% endfor %}")
        panel.apply_template_edit()
    assert pane.analysis is None and pane.template_error is not None
    assert pane.template_error.line == 2
    assert "line 2" in panel.template_error.text() and panel.template_error.isVisible()
    assert "line 2" in pane.warning.text()
    (selection,) = panel.template_edit.extraSelections()
    assert selection.cursor.blockNumber() == 1
    assert pane.choice.label == "edited"
    # fixing it renders again, and the error goes away
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.template_edit.setPlainText("{% for m in messages %}[{{ m.role }}]{{ m.content }}\n{% endfor %}")
        panel.apply_template_edit()
    assert pane.error is None and pane.analysis.text.startswith("[system]")
    assert not panel.template_error.isVisible() and panel.template_edit.extraSelections() == []


def test_a_looping_template_is_stopped_with_the_analysis_message(make_panel, qtbot):
    panel = make_panel()
    panel.limits = Limits(steps=50_000)
    panel.flush()
    pane = panel.panes[0]
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.template_edit.setPlainText(
            "{% for i in range(100000) %}\n{% for j in range(100000) %}{% endfor %}{% endfor %}"
        )
        panel.apply_template_edit()
    assert pane.analysis is None
    assert "stopped after 50,000 steps" in pane.warning.text()
    assert "stopped after 50,000 steps" in panel.template_error.text()


def test_generation_prompt_and_template_variables_reach_the_template(make_panel, qtbot):
    panel = make_panel(messages=[{"role": "user", "content": "hi"}])
    pane = panel.panes[0]
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.generation.setChecked(True)
        panel.flush()
    assert pane.analysis.text.endswith("<|im_start|>assistant\n")
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.template_edit.setPlainText("{{ greeting }}{% if enable_thinking %}<think>{% endif %}"
                                         "{% for m in messages %}{{ m.content }}{% endfor %}")
        panel.apply_template_edit()
    assert pane.analysis.text == "hi"
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.variables.setText('greeting="hello there " enable_thinking=true')
        panel.flush()
    assert pane.analysis.text == "hello there <think>hi"


TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
TOOL_CHAT = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None,
     "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "name": "get_weather", "content": "18 C, sunny"},
]


def test_tools_tool_calls_and_enable_thinking_reach_gemma_4s_own_template(qtbot):
    spec = "ggml-vocab-gemma-4"
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.set_messages(TOOL_CHAT, tools=TOOLS)
    panel.generation.setChecked(True)
    panel.variables.setText("enable_thinking=true")
    panel.set_specs([spec])
    wait_rendered(qtbot, panel)
    assert panel.messages() == TOOL_CHAT  # tool_calls, name and the null content kept as they came
    assert "tool_calls" in panel.editor.rows[1].findChildren(QLabel)[-1].text()
    pane = panel.panes[0]
    assert pane.error is None, pane.error
    template = gguf_templates(catalog.find(spec).path)["default"]
    expected = analyze_chat(catalog.load(spec), template, TOOL_CHAT, tools=TOOLS, add_generation_prompt=True,
                            template_kwargs={"enable_thinking": True})
    assert pane.analysis.text == expected.text
    assert "<|think|>" in pane.analysis.text and "call:get_weather" in pane.analysis.text
    assert [t.token.id for t in pane.analysis.tokens] == [t.token.id for t in expected.tokens]


def test_bad_template_variables_are_reported_not_rendered(make_panel):
    panel = make_panel()
    panel.variables.setText("enable_thinking")
    panel.flush()
    assert not panel.input_error.isHidden() and "KEY=VALUE" in panel.input_error.text()
    assert parse_template_kwargs("a=1 b=x") == {"a": 1, "b": "x"}


def test_context_limit_shows_the_room_left(make_panel, qtbot):
    panel = make_panel()
    pane = panel.panes[0]
    total = pane.analysis.total
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.set_context_limit(total + 10)
        panel.flush()
    assert f"room 10 of {total + 10:,}" in pane.counts.text()
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.set_context_limit(total - 5)
        panel.flush()
    assert f"5 over the limit of {total - 5:,}" in pane.counts.text()
    assert pane.view.limit == total - 5


def test_hovering_a_message_highlights_its_tokens_in_every_pane(make_panel):
    panel = make_panel((QWEN2, PHI3))
    row = panel.editor.rows[1]
    QApplication.sendEvent(row, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    for pane in panel.panes:
        indices = pane.analysis.tokens_of(1)
        assert indices and pane.view.highlighted == range(indices[0], indices[-1] + 1)
    panel.editor.hover_message(-1)
    assert all(not p.view.highlighted for p in panel.panes)


def test_hovering_a_token_marks_its_message_and_highlights_it_everywhere(make_panel, qtbot):
    panel = make_panel((QWEN2, PHI3))
    qwen, phi = pane_of(panel, QWEN2), pane_of(panel, PHI3)
    qtbot.waitUntil(lambda: qwen.view.layout_done, timeout=TIMEOUT_MS)
    index = qwen.analysis.tokens_of(3)[2]
    rect = qwen.view.cell_rect(index)
    with qtbot.waitSignal(qwen.message_hovered, check_params_cb=lambda i: i == 3, timeout=TIMEOUT_MS):
        qtbot.mouseMove(qwen.view.viewport(), rect.center().toPoint())
    assert [row.marked for row in panel.editor.rows] == [False, False, False, True]
    for pane in (qwen, phi):
        indices = pane.analysis.tokens_of(3)
        assert pane.view.highlighted == range(indices[0], indices[-1] + 1)
    # a token the template wrote belongs to no message
    template_index = next(i for i, t in enumerate(qwen.analysis.tokens) if t.origin == TEMPLATE)
    rect = qwen.view.cell_rect(template_index)
    with qtbot.waitSignal(qwen.message_hovered, check_params_cb=lambda i: i == -1, timeout=TIMEOUT_MS):
        qtbot.mouseMove(qwen.view.viewport(), rect.center().toPoint())
    assert not any(row.marked for row in panel.editor.rows)
    assert not phi.view.highlighted


def test_messages_are_added_removed_and_reordered(make_panel, qtbot):
    panel = make_panel(messages=[{"role": "user", "content": "one"}])
    pane = panel.panes[0]
    editor = panel.editor
    row = editor.add_message()
    assert row.role.currentText() == "assistant"  # the turn after a user's
    row.content.setPlainText("two")
    row.role.setCurrentText("tool")
    assert editor.messages() == [{"role": "user", "content": "one"}, {"role": "tool", "content": "two"}]
    row.buttons["up"].click()
    assert [m["content"] for m in editor.messages()] == ["two", "one"]
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.flush()
    assert pane.analysis.text.index("two") < pane.analysis.text.index("one")
    assert pane.analysis.message_count == 2
    editor.rows[0].buttons["remove"].click()
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        panel.flush()
    assert editor.messages() == [{"role": "user", "content": "one"}]
    assert pane.analysis.message_count == 1 and "two" not in pane.analysis.text


def test_a_template_file_can_be_picked(make_panel, qtbot, tmp_path):
    path = tmp_path / "mine.jinja"
    path.write_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", encoding="utf-8")
    panel = make_panel()
    pane = panel.panes[0]
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        pane.open_template_file(str(path))
    assert pane.choice.label == "mine.jinja" and pane.analysis.text.startswith("<system>")
    pane.open_template_file(str(tmp_path / "missing.jinja"))
    assert "missing.jinja" in pane.warning.text()


def test_the_window_switches_to_chat_mode_with_its_panes(make_window, qtbot, tmp_path):
    window = make_window(specs=[QWEN2, "cl100k_base"], text="plain text")
    assert window.mode == "text" and window.chat_panel is None
    window.set_mode("chat")
    panel = window.chat_panel
    assert window.mode == "chat" and window.modes.currentWidget() is panel
    assert [p.spec for p in panel.panes] == [QWEN2, "cl100k_base"]
    wait_rendered(qtbot, panel)
    assert window.statusBar().currentMessage().startswith("chat of 3 messages · ")
    assert pane_of(panel, "cl100k_base").choice.label == "default: chatml"  # the catalog's built-in ChatML
    window.remove_pane(window.panes[1])
    assert [p.spec for p in panel.panes] == [QWEN2]
    window.set_mode("text")
    assert window.modes.currentWidget() is window.splitter
    assert window.statusBar().currentMessage().startswith("10 characters · ")  # the text's counts again
    with pytest.raises(ValueError, match="text, chat or dataset"):
        window.set_mode("diff")


def test_gui_chat_option_opens_a_messages_file(qtbot, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": CONVERSATION}), encoding="utf-8")
    args = parse_args(["-t", QWEN2, "--no-restore", "--settings", str(tmp_path / "s.ini"), "--chat", str(path)])
    window = window_from_args(args)
    qtbot.addWidget(window)
    assert window.mode == "chat" and window.chat_panel.messages() == CONVERSATION
    assert window.chat_panel.tools is None
    wait_rendered(qtbot, window.chat_panel)
    assert window.chat_panel.panes[0].analysis.message_count == len(CONVERSATION)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"content": "no role"}]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.json: message 0 must be an object with a string \"role\""):
        read_messages(str(bad))
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a JSON file"):
        open_chat(window, str(bad))
    bad.write_text(json.dumps({"messages": TOOL_CHAT, "tools": TOOLS}), encoding="utf-8")
    assert read_messages(str(bad)) == (TOOL_CHAT, TOOLS)
    bad.write_text(json.dumps({"messages": TOOL_CHAT, "tools": "get_weather"}), encoding="utf-8")
    with pytest.raises(ValueError, match='"tools" must be a list of objects'):
        read_messages(str(bad))
    window.shutdown()
