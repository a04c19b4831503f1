"""Numbers are shown only for the text they belong to (issue 12): while panes re-tokenize, no
stats, chart bar or status-bar count mixes a new result with an old one; removed and failed panes."""

from __future__ import annotations

from tests.gui.conftest import wait_ready


def check_only_current_numbers(window, text: str, counts: dict[str, int]) -> None:
    rows = dict(window.chart.rows)
    status = window.statusBar().currentMessage()
    for pane in window.panes:
        if pane.current:
            assert pane.result.text == text
            assert rows[pane.short_name] == counts[pane.spec] == pane.stats().tokens
            assert pane.stats_label.text().startswith(f"{counts[pane.spec]:,} tokens")
        else:
            assert pane.busy
            assert rows[pane.short_name] == "tokenizing…"
            assert pane.stats_label.text() == "tokenizing…"
    first = window.panes[0]
    for pane in window.panes[1:]:
        if pane.current and not first.current:
            assert "vs first" not in pane.stats_label.text()
    if not all(p.current for p in window.panes):
        assert status.endswith("tokenizing…")
    else:
        for pane in window.panes:
            assert f"{pane.short_name}: {counts[pane.spec]:,}" in status


def test_while_panes_work_no_number_mixes_old_and_new(qtbot, make_window, vocab) -> None:
    old, new = "short", "a much longer text, with many more tokens than before. " * 20
    window = make_window(["cl100k_base", "qwen", "o200k_base"], old)
    counts = {p.spec: len(vocab(p.spec).encode(new)) for p in window.panes}
    seen: list[int] = []

    def on_updated(pane) -> None:
        check_only_current_numbers(window, new, counts)
        seen.append(sum(p.current for p in window.panes))

    for pane in window.panes:
        pane.updated.connect(on_updated)
    window.set_text(new)
    check_only_current_numbers(window, new, counts)  # at once: every pane works, none shows a number
    assert all(p.stats() is None for p in window.panes)
    wait_ready(qtbot, window)
    assert seen and seen[-1] == 3
    check_only_current_numbers(window, new, counts)


def test_a_removed_pane_leaves_the_status_bar(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "qwen"], "hello world")
    qtbot.waitUntil(lambda: "qwen" in window.statusBar().currentMessage().lower())
    window.remove_pane(window.panes[1])
    status = window.statusBar().currentMessage()
    assert "cl100k_base: 2" in status and "qwen" not in status.lower()


def test_a_failed_pane_has_a_short_name_in_the_chart(qtbot, make_window, tmp_path) -> None:
    folder = tmp_path / "a-rather-long-folder-name" / "and-another-one-below-it"
    folder.mkdir(parents=True)
    bad = folder / "broken.tiktoken"
    bad.write_text("this is not a rank file\n")
    window = make_window(["cl100k_base", str(bad)], "hello world")
    assert window.panes[1].error
    assert window.chart.rows == [("cl100k_base", 2), ("broken.tiktoken", "failed")]
    assert str(folder) not in window.statusBar().currentMessage()
    assert "broken.tiktoken: failed" in window.statusBar().currentMessage()
    window.chart.grab()


def test_a_policy_naming_an_unknown_token_says_so(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "a <|endoftext|> <|bogus|>")
    pane = window.panes[0]
    pane.set_policy("<|endoftext|>,<|bogus|>")
    wait_ready(qtbot, window)
    assert pane.result is not None and pane.warning.isVisibleTo(pane)
    assert "'&lt;|bogus|&gt;' is not a special token of cl100k_base" in pane.warning.text()
    pane.set_policy("all")
    wait_ready(qtbot, window)
    assert not pane.warning.isVisibleTo(pane)
