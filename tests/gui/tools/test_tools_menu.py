"""The Tools menu opens each insight/cost/extension dialog on the window's own panes and text."""

from __future__ import annotations

from tests.gui.conftest import TIMEOUT_MS


def _menu_titles(window) -> list[str]:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "T&ools")
    return [a.text() for a in menu.actions() if a.text()]


def test_the_tools_menu_lists_every_tool(make_window):
    window = make_window(["cl100k_base"], text="hello")
    titles = _menu_titles(window)
    for expected in ("&Vocabulary of…", "&Merge replay of the selection in…", "&Pipeline of the selection in…",
                     "Token &cost and context…", "&Extend a vocabulary with words…", "&Train a vocabulary…"):
        assert expected in titles


def test_the_kept_tool_windows_belong_to_the_window_tools(qtbot, make_window):
    window = make_window(["cl100k_base"], text="hello")
    trainer = window.tools.open_trainer()
    assert window.tools.open_trainer() is trainer is window.tools.trainer
    extend = window.tools.open_extend()
    assert window.tools.open_extend() is extend is window.tools.extend
    assert trainer.parent() is window and extend.parent() is window
    assert not any(name.endswith("_dialog") for name in vars(window))


def test_replay_and_pipeline_act_on_the_editor_selection(qtbot, make_window):
    window = make_window(["cl100k_base"], text="say hello world")
    cursor = window.editor.textCursor()
    cursor.setPosition(4)
    cursor.setPosition(15, cursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)
    assert window.selected_chars() == (4, 15)
    view = window.tools.open_replay(window.panes[0])
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: view.replay is not None, timeout=TIMEOUT_MS)
    assert view.replay.ids == [15339, 1917]  # "hello world" alone
    pipeline = window.tools.open_pipeline(window.panes[0])
    qtbot.addWidget(pipeline)
    qtbot.waitUntil(lambda: bool(pipeline.stages), timeout=TIMEOUT_MS)
    assert list(pipeline.stages[-1].ids) == [15339, 1917]


def test_vocabulary_jumps_highlight_the_window(qtbot, make_window):
    window = make_window(["cl100k_base"], text="hello world, hello again")
    dialog = window.tools.open_vocabulary(window.panes[0])
    qtbot.addWidget(dialog)
    browser = dialog.browser
    qtbot.waitUntil(lambda: not browser.busy, timeout=TIMEOUT_MS)
    assert browser.select_token(24748)
    browser.occurrence_list.itemClicked.emit(browser.occurrence_list.item(0))
    assert list(window.panes[0].view.highlighted) == [3]


def test_analysis_uses_every_pane(qtbot, make_window):
    window = make_window(["cl100k_base", "qwen"], text="토큰은 글자가 아니다. Tokens are not characters.")
    dialog = window.tools.open_analysis()
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.analysis_finished, timeout=TIMEOUT_MS) as blocker:
        pass
    analysis = blocker.args[0]
    assert [r.name for r in analysis.results] == ["cl100k_base", "qwen"]
    assert [r.tokens for r in analysis.results] == [len(p.result.tokens) for p in window.panes]


def test_a_saved_extension_joins_the_comparison(qtbot, make_window, tmp_path, vocab):
    from tests.gui.conftest import wait_ready
    from tokviz.core import catalog
    from tokviz.training.extend import learn_extension, save_extension

    window = make_window(["qwen"], text="我是一只猫")
    dialog = window.tools.open_extend()
    qtbot.addWidget(dialog)
    extension = learn_extension(vocab("qwen"), {"我是一只猫": 20, "一只猫": 100})
    qwen_sha = catalog.find("qwen").sha256
    out = save_extension(extension, tmp_path / "qwen_extra.tiktoken", base_spec="qwen", base_sha256=qwen_sha)
    dialog.extension_saved.emit(str(out))  # what Save emits; the dialog's own tests cover Save itself
    assert len(window.panes) == 2 and window.panes[1].spec == str(out)
    wait_ready(qtbot, window)
    assert window.panes[1].result.ids.tolist() == [extension.merges[-1].id]


def test_context_limit_marks_every_pane(qtbot, make_window):
    from tests.gui.conftest import wait_ready
    from tokviz.analysis.budget import context_budget

    text = "토큰은 글자가 아니다. " * 20 + "Tokens are not characters. " * 20
    window = make_window(["cl100k_base", "qwen"], text=text)
    window.set_context_limit(50)
    for pane in window.panes:
        assert pane.view.limit == 50
        budget = context_budget(text, pane.result.tokens, 50)
        assert f"{pane.spec}: ends at char {budget.fit_chars:,}" in window.context_summary()
    window.set_text("short")
    wait_ready(qtbot, window)
    assert all(p.view.limit == 50 for p in window.panes)
    assert "all 1 tokens fit" in window.context_summary() or "tokens fit" in window.context_summary()
    window.set_context_limit(0)
    assert all(p.view.limit is None for p in window.panes)


CHAT = "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\nhi<|im_end|>\n"


def test_analysis_counts_with_the_panes_special_token_policy(qtbot, make_window, vocab):
    from tests.gui.conftest import wait_ready

    window = make_window(["qwen", "cl100k_base"], text=CHAT)
    for pane in window.panes:
        pane.set_policy("all")
    wait_ready(qtbot, window)
    dialog = window.tools.open_analysis()
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.analysis_finished, timeout=TIMEOUT_MS) as blocker:
        pass
    counts = [r.tokens for r in blocker.args[0].results]
    assert counts == [len(p.result.tokens) for p in window.panes]
    assert counts[0] == len(vocab("qwen").encode(CHAT, allowed_special="all"))
    assert counts[0] != len(vocab("qwen").encode(CHAT))  # the policy matters for this text
    assert "special tokens:</b> all, as in the panes" in dialog.source_label.text()


def test_analysis_says_which_policy_when_the_panes_differ(qtbot, make_window, vocab):
    from tests.gui.conftest import wait_ready

    window = make_window(["qwen", "cl100k_base"], text=CHAT)
    window.panes[0].set_policy("all")
    wait_ready(qtbot, window)
    dialog = window.tools.open_analysis()
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.analysis_finished, timeout=TIMEOUT_MS) as blocker:
        pass
    assert blocker.args[0].results[0].tokens == len(vocab("qwen").encode(CHAT))
    assert "none (plain text): the panes differ (qwen all, cl100k_base none)" in dialog.source_label.text()
