"""Remembered state (QSettings), view options and the streaming-decode view."""

from __future__ import annotations

from tests.gui.conftest import TIMEOUT_MS, wait_ready
from tokviz.core.decoding import buffered_stream, naive_stream
from tokviz.gui.app import build_window, parse_args
from tokviz.gui.compare.stream_dialog import StreamDialog


def test_settings_restore_panes_text_and_options(qtbot, settings) -> None:
    first = build_window(specs=["qwen", "cl100k_base"], text="remember me 根", settings=settings, restore=False)
    qtbot.addWidget(first)
    first.set_options(mode="both", visible_whitespace=False)
    first.panes[1].set_policy("all")
    first.resize(700, 500)  # inside the offscreen screen (800x600)
    wait_ready(qtbot, first)
    first.close()  # saves the settings and stops the pane threads
    assert not any(p.running for p in first.panes)

    second = build_window(settings=settings)
    qtbot.addWidget(second)
    assert [p.spec for p in second.panes] == ["qwen", "cl100k_base"]
    assert [p.policy.label for p in second.panes] == ["none", "all"]
    assert second.text() == "remember me 根"
    assert second.options.mode == "both" and not second.options.visible_whitespace
    assert (second.width(), second.height()) == (700, 500)
    wait_ready(qtbot, second)
    assert second.panes[0].result.text == "remember me 根"


def test_view_modes_change_cells_not_tokens(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "hello world\n")
    pane = window.panes[0]
    tokens = pane.view.tokens
    window.set_options(mode="ids")
    wait_ready(qtbot, window)
    assert pane.view.tokens is tokens  # the worker reused the encode, only the cells changed
    assert [pane.view.cell(i).label for i in range(len(tokens))] == [str(t.id) for t in tokens]
    window.set_options(mode="both")
    wait_ready(qtbot, window)
    assert pane.view.cell(0).sub == str(tokens[0].id) and pane.view.cell(0).label == "hello"


def test_stream_naive_vs_buffered_qwen_example(qtbot, vocab) -> None:
    qwen = vocab("qwen")
    dialog = StreamDialog.from_tokenizer(qwen, [51461, 117])
    qtbot.addWidget(dialog)
    assert dialog.step()
    assert dialog.naive_edit.toPlainText() == " \ufffd"  # the seeds' `tokenizer.decode([51461])`
    assert dialog.buffered_edit.toPlainText() == " "  # the partial character is held back
    assert dialog.step() and not dialog.step()
    assert dialog.naive_edit.toPlainText() == "".join(naive_stream(qwen, [51461, 117])) == " \ufffd\ufffd"
    assert dialog.buffered_edit.toPlainText() == "".join(buffered_stream(qwen, [51461, 117])) == " 根"


def test_stream_plays_with_a_timer(qtbot, make_window) -> None:
    window = make_window(["qwen"], " 根根")
    window.open_stream(window.panes[0])
    qtbot.waitUntil(lambda: getattr(window, "_stream", None) is not None, timeout=TIMEOUT_MS)
    dialog = window._stream
    qtbot.addWidget(dialog)
    dialog.speed.setValue(500)
    dialog.toggle()
    qtbot.waitUntil(lambda: dialog.position == len(dialog.ids), timeout=TIMEOUT_MS)
    assert dialog.buffered_edit.toPlainText() == " 根根"


def test_run_reports_a_missing_file(capsys) -> None:
    from tokviz.gui.app import run

    assert run(["tokviz", "/nonexistent/tokviz-input.txt", "--no-restore"]) == 2
    assert "tokviz-input.txt" in capsys.readouterr().err


def test_command_line_options() -> None:
    args = parse_args(["--sample", "mixed", "-t", "cl100k_base", "-t", "qwen", "--policy", "all"])
    assert args.sample == "mixed" and args.tokenizers == ["cl100k_base", "qwen"] and args.policy == "all"


def test_a_first_start_shows_a_sample_and_a_remembered_empty_text_stays_empty(qtbot, settings):
    from tokviz.core.resources import sample_text
    from tokviz.gui.app import build_window

    first = build_window(specs=["tokviz-samples"], settings=settings)
    qtbot.addWidget(first)
    assert first.text() == sample_text("mixed.txt")
    first.set_text("")
    first.save_settings()
    again = build_window(specs=["tokviz-samples"], settings=settings)
    qtbot.addWidget(again)
    assert again.text() == ""
    for window in (first, again):
        window.shutdown()


def test_stream_steps_back_and_scrubs(qtbot, vocab) -> None:
    qwen = vocab("qwen")
    ids = qwen.encode_ids(" 根根 hello 👋🏽")
    dialog = StreamDialog.from_tokenizer(qwen, ids)
    qtbot.addWidget(dialog)
    whole_naive, whole_buffered = "".join(naive_stream(qwen, ids)), "".join(buffered_stream(qwen, ids))
    dialog.slider.setValue(len(ids))  # scrub to the end: the whole text, with the final flush
    assert dialog.position == len(ids) and dialog.buffered_edit.toPlainText() == whole_buffered
    assert dialog.naive_edit.toPlainText() == whole_naive
    dialog.slider.setValue(2)
    assert dialog.naive_edit.toPlainText() == "".join(naive_stream(qwen, ids[:2]))
    assert dialog.step() and dialog.position == 3 and dialog.slider.value() == 3
    assert dialog.step_back() and dialog.step_back() and dialog.position == 1
    assert dialog.naive_edit.toPlainText() == "".join(naive_stream(qwen, ids[:1]))
    assert dialog.step_back() and not dialog.step_back() and dialog.naive_edit.toPlainText() == ""
    assert not dialog.cap_note.isVisibleTo(dialog)


def test_a_stream_past_the_cap_says_so(qtbot, vocab, monkeypatch) -> None:
    from tokviz.gui.compare import stream_dialog

    monkeypatch.setattr(stream_dialog, "MAX_STREAM_TOKENS", 3)
    qwen = vocab("qwen")
    ids = qwen.encode_ids("one two three four five six")
    dialog = StreamDialog.from_tokenizer(qwen, ids)
    qtbot.addWidget(dialog)
    assert len(dialog.ids) == 3 and dialog.slider.maximum() == 3
    assert dialog.cap_note.isVisibleTo(dialog)
    assert dialog.cap_note.text() == f"Streams the first 3 of the text's {len(ids)} tokens."


def test_the_whole_remembered_text_comes_back(qtbot, settings, tmp_path) -> None:
    from tokviz.gui.app import build_window

    text = ("line\r\n" + "x" * 99 + "\xa0") * 3_000  # 321,000 characters, over the old 200,000 cut
    first = build_window(specs=["tokviz-samples"], text=text, settings=settings, restore=False)
    qtbot.addWidget(first)
    first.save_settings()
    first.shutdown()
    assert (tmp_path / "tokviz-test-input.txt").read_bytes() == text.encode()
    again = build_window(specs=["tokviz-samples"], settings=settings)
    qtbot.addWidget(again)
    assert again.text() == text
    again.shutdown()


def test_a_cut_remembered_text_says_so(qtbot, settings) -> None:
    from tokviz.gui.app import build_window

    settings.setValue("input/text", "kept part")  # what an older tokviz, or a failed write, left
    settings.setValue("input/length", 300_000)
    window = build_window(specs=["tokviz-samples"], settings=settings)
    qtbot.addWidget(window)
    assert window.text() == "kept part"
    assert "the remembered text was cut: its first 9 of 300,000 characters are shown" in \
        window.statusBar().currentMessage()
    window.shutdown()


def test_a_hand_edited_settings_file_still_opens(qtbot, tmp_path) -> None:
    """`input/length=abc` in the settings file was a ValueError out of the window's constructor:
    the app did not start until the file was deleted."""
    from PySide6.QtCore import QSettings

    ini = tmp_path / "edited.ini"
    ini.write_text("[input]\ntext=hello\nlength=abc\n[panes]\nspecs=tokviz-samples\n[view]\nmode=99\nlegend=perhaps\n")
    window = build_window(settings=QSettings(str(ini), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    assert window.text() == "hello" and [p.spec for p in window.panes] == ["tokviz-samples"]
    assert window.options.mode == "text"
