"""The Chat mode's conversation is remembered between runs: one file beside the settings, written
atomically, read back whole or not at all."""

from __future__ import annotations

import json

import pytest

from tests.gui.chat.test_chat import pane_of, wait_rendered
from tests.gui.conftest import TIMEOUT_MS
from tokviz.gui.app import build_window
from tokviz.gui.chat.messages import DEFAULT_CONVERSATION
from tokviz.gui.chat.panel import ChatPanel
from tokviz.gui.chat.remember import ChatState, EditedTemplate, conversation_path, load_state, save_state

MESSAGES = [
    {"role": "system", "content": "Be brief. 한국어도 됩니다 <|im_end|>"},
    {"role": "user", "content": "What is the weather?\nline two"},
    {"role": "assistant", "content": None, "tool_calls": [{"type": "function",
                                                            "function": {"name": "weather", "arguments": {}}}]},
    {"role": "tool", "content": "sunny", "name": "weather"},
]
TOOLS = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
STATE = ChatState(MESSAGES, TOOLS, True, "enable_thinking=false",
                  {"ggml-vocab-qwen2": EditedTemplate("built-in: chatml", "{{ messages[0].content }}")})


def test_state_round_trips_and_a_missing_file_is_none(tmp_path) -> None:
    path = conversation_path(tmp_path / "tokviz.ini")
    assert path == tmp_path / "tokviz-chat.json"
    assert load_state(path) is None
    save_state(path, STATE)
    assert load_state(path) == STATE
    assert [p.name for p in tmp_path.iterdir()] == ["tokviz-chat.json"]  # no temporary left


def test_a_first_run_saves_into_a_settings_folder_not_made_yet(tmp_path) -> None:
    path = conversation_path(tmp_path / "fresh" / "tokviz" / "tokviz.ini")
    save_state(path, STATE)
    assert load_state(path) == STATE


@pytest.mark.parametrize("damage", ["torn", "not json", "other format", "version 2", "bad messages", "bad tools",
                                    "bad templates"])
def test_a_file_that_is_not_a_whole_conversation_is_refused_whole(tmp_path, damage) -> None:
    path = tmp_path / "tokviz-chat.json"
    save_state(path, STATE)
    raw = path.read_bytes()
    data = json.loads(raw)
    if damage == "torn":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "not json":
        path.write_bytes(b"\xff\xfe junk")
    else:
        data |= {"other format": {"format": "something"}, "version 2": {"version": 2},
                 "bad messages": {"messages": [{"content": "no role"}]},
                 "bad tools": {"tools": "weather"},
                 "bad templates": {"templates": {"qwen": {"source": 3}}}}[damage]
        path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=str(path.name)):
        load_state(path)


def test_a_file_from_before_templates_were_kept_still_reads(tmp_path) -> None:
    path = tmp_path / "tokviz-chat.json"
    save_state(path, STATE)
    data = json.loads(path.read_bytes())
    del data["templates"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_state(path) == ChatState(MESSAGES, TOOLS, True, "enable_thinking=false")


def _panel(qtbot, settings_file, **kwargs) -> ChatPanel:
    panel = ChatPanel(remember=settings_file, **kwargs)
    qtbot.addWidget(panel)
    return panel


def test_the_panel_keeps_its_conversation_for_the_next_run(qtbot, tmp_path) -> None:
    ini = tmp_path / "tokviz.ini"
    first = _panel(qtbot, ini)
    assert first.messages() == DEFAULT_CONVERSATION  # nothing remembered yet: the example
    first.set_messages(MESSAGES, tools=TOOLS)
    first.generation.setChecked(True)
    first.variables.setText("enable_thinking=false")
    assert first.save()
    second = _panel(qtbot, ini)
    assert second.messages() == MESSAGES
    assert second.tools == TOOLS
    assert second.generation.isChecked() and second.variables.text() == "enable_thinking=false"
    assert second.restore_note is None
    fresh = _panel(qtbot, ini, restore=False)  # --no-restore
    assert fresh.messages() == DEFAULT_CONVERSATION


def test_a_torn_file_shows_the_example_says_why_and_is_left_alone(qtbot, tmp_path) -> None:
    ini = tmp_path / "tokviz.ini"
    path = conversation_path(ini)
    save_state(path, STATE)
    torn = path.read_bytes()[:100]
    path.write_bytes(torn)
    panel = _panel(qtbot, ini)
    assert panel.messages() == DEFAULT_CONVERSATION  # none of the torn file's messages
    assert "the remembered conversation is not shown" in panel.restore_note and path.name in panel.restore_note
    assert path.read_bytes() == torn


def test_a_save_that_cannot_be_written_says_so_and_keeps_nothing_half(qtbot, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    panel = _panel(qtbot, blocker / "tokviz.ini")
    with qtbot.waitSignal(panel.message) as said:
        assert not panel.save()
    assert "could not be kept" in said.args[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_the_window_remembers_the_conversation_across_runs(qtbot, settings) -> None:
    def window():
        w = build_window(specs=["cl100k_base"], text="hi", settings=settings)
        qtbot.addWidget(w)
        return w

    first = window()
    first.set_mode("chat")
    first.chat_panel.set_messages(MESSAGES[:2])
    first.close()  # saves the settings, the text and the conversation
    second = window()
    second.set_mode("chat")
    assert second.chat_panel.messages() == MESSAGES[:2]
    second.close()


def test_at_1024x700_the_message_column_shows_the_whole_example(qtbot, settings) -> None:
    """The message boxes are as tall as their content (2 to 6 lines), and the template editor takes
    a quarter of the column: every message of the example shows at 1024x700 (about two did)."""
    from PySide6.QtWidgets import QScrollArea

    window = build_window(specs=["cl100k_base"], text="hi", settings=settings, restore=False)
    qtbot.addWidget(window)
    window.resize(1024, 700)
    window.show()
    window.set_mode("chat")
    editor = window.chat_panel.editor
    editor.set_messages(DEFAULT_CONVERSATION + [{"role": "user", "content": "Thanks!"}])
    qtbot.waitExposed(window)
    port = editor.findChild(QScrollArea).viewport()
    short, long = editor.rows[3].content, editor.rows[1].content
    qtbot.waitUntil(lambda: short.height() < long.height())  # once laid out, the long one is taller
    for row in editor.rows:
        top = row.mapTo(port, row.rect().topLeft()).y()
        assert top >= 0 and top + row.height() <= port.height(), (top, row.height(), port.height())


def test_a_panes_edited_template_is_kept_for_the_next_run(qtbot, tmp_path) -> None:
    ini = tmp_path / "tokviz.ini"
    edited = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"
    first = _panel(qtbot, ini)
    first.set_specs(["ggml-vocab-qwen2", "cl100k_base"])
    wait_rendered(qtbot, first)
    pane = pane_of(first, "ggml-vocab-qwen2")
    with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
        pane.choose("built-in: chatml")
    for text in (edited[:-5], edited):  # typed in two steps: still one edit of chatml
        with qtbot.waitSignal(pane.updated, timeout=TIMEOUT_MS):
            first.template_edit.setPlainText(text)
            first.apply_template_edit()
    assert pane.choice.name == "chatml (edited)" and pane.analysis.text.startswith("<system>")
    assert first.save()
    assert load_state(conversation_path(ini)).templates == {
        "ggml-vocab-qwen2": EditedTemplate("built-in: chatml", edited)}

    second = _panel(qtbot, ini)
    second.set_specs(["cl100k_base", "ggml-vocab-qwen2"])
    wait_rendered(qtbot, second)
    again = pane_of(second, "ggml-vocab-qwen2")
    assert again.choice.label == "edited" and again.choice.source == edited
    assert again.choice.name == "chatml (edited)" and again.analysis.text.startswith("<system>")
    assert pane_of(second, "cl100k_base").choice.label != "edited"
    # a run without that pane keeps its edit; choosing its own template again forgets it
    third = _panel(qtbot, ini)
    third.set_specs(["cl100k_base"])
    wait_rendered(qtbot, third)
    assert third.save() and "ggml-vocab-qwen2" in load_state(conversation_path(ini)).templates
    with qtbot.waitSignal(again.updated, timeout=TIMEOUT_MS):
        again.choose(again.template_labels()[0])
    assert second.save() and load_state(conversation_path(ini)).templates == {}
