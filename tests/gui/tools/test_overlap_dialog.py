"""The vocabulary overlap dialog on real vocabularies: its numbers are analysis.overlap's, its table
sorts, filters and exports, and closing it mid-comparison cancels cleanly."""

from __future__ import annotations

import csv
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

from tests.analysis.test_overlap import _train
from tests.gui.conftest import TIMEOUT_MS
from tokviz.analysis.overlap import ONLY_COLUMNS, overlap_of
from tokviz.core import catalog
from tokviz.gui.tools.menu import SHORTCUTS
from tokviz.gui.tools.overlap_dialog import OverlapDialog, open_overlap_dialog
from tokviz.gui.tools.vocab_browser import ContentDialog
from tokviz.gui.work.worker import live_workers

COLUMN = {name: k for k, (name, _) in enumerate(ONLY_COLUMNS)}


def _compared(qtbot, dialog: OverlapDialog) -> None:
    with qtbot.waitSignal(dialog.compared, timeout=TIMEOUT_MS) as blocker:
        blocker.connect(dialog.compare_failed)
        dialog.start()
    assert dialog.outcome is not None, blocker.args


def _cells(table, column: int) -> list[str]:
    return [table.item(r, column).text() for r in range(table.rowCount())]


def _shown(dialog: OverlapDialog, column: str) -> list[str]:
    model = dialog.model
    return [model.data(model.index(r, COLUMN[column])) for r in range(model.rowCount())]


def test_r50k_beside_p50k_from_the_tools_menu(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window(["r50k_base", "p50k_base"], "hello world")
    shortcut = QKeySequence(SHORTCUTS["overlap"])
    actions = [a for a in window.findChildren(QAction) if a.shortcut() == shortcut]
    assert [a.text() for a in actions] == ["Vocabulary &overlap…"]  # its shortcut clashes with nothing
    actions[0].trigger()
    dialog = window.tools.overlap
    assert dialog is not None and dialog.chosen() == ["r50k_base", "p50k_base"]
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=TIMEOUT_MS)

    expected = overlap_of([catalog.load("r50k_base"), catalog.load("p50k_base")])
    summary = dialog.summary.text()
    assert "50,256" in summary and "50,280" in summary and "0.9995" in summary  # 50256 / 50280
    (pair,) = dialog.outcome.pairs
    assert (pair.common, pair.same_ids, pair.jaccard) == (50256, 50256, expected.jaccard(0, 1))
    for by in ("script", "length"):
        rows = expected.breakdown(by)
        table = dialog.breakdowns[by]
        assert _cells(table, 0) == [label for label, *_ in rows]
        for k, (_, totals, shared, only) in enumerate(rows):
            assert [table.item(k, c).text() for c in range(1, 6)] == [f"{n:,}" for n in (*totals, shared, *only)]

    # the 24 runs of spaces only p50k has, in the panes' notation and p50k's own spelling
    assert dialog.model.rowCount() == 24 and dialog.count_label.text() == "24 of 24"
    assert _shown(dialog, "text")[:2] == ["··", "···"] and _shown(dialog, "piece")[:2] == ["ĠĠ", "ĠĠĠ"]
    dialog.view.sortByColumn(COLUMN["length"], Qt.SortOrder.DescendingOrder)
    assert _shown(dialog, "id")[:3] == ["50280", "50279", "50278"]
    dialog.search.setText("20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20")  # 24 spaces, hex
    dialog.apply_filter()
    assert _shown(dialog, "id") == ["50280", "50279"] and dialog.count_label.text() == "2 of 24"
    dialog.search.setText("")
    dialog.length_combo.setCurrentIndex(dialog.length_combo.findData("2"))
    dialog.apply_filter()
    assert _shown(dialog, "id") == ["50257"]
    dialog.length_combo.setCurrentIndex(0)
    dialog.vocab_combo.setCurrentIndex(dialog.vocab_combo.findData(0))  # only in r50k: none
    dialog.apply_filter()
    assert dialog.model.rowCount() == 0
    dialog.vocab_combo.setCurrentIndex(0)
    dialog.apply_filter()

    out = tmp_path / "only.csv"
    dialog.export_csv(out)
    with out.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 24 and rows[0] == {"vocabulary": "p50k_base", "id": "50280", "text": "·" * 25,
                                           "spelling": "Ġ" * 25, "bytes": " ".join(["20"] * 25),
                                           "length": "25", "script": "whitespace"}

    # p50k contains r50k: its new merges, each from two tokens
    merges = dialog.merges_model
    assert dialog.tabs.isTabEnabled(dialog.merges_index) and merges.rowCount() == 24
    assert [merges.data(merges.index(0, c)) for c in range(6)] == ["p50k_base", "50257", "··", "20 20", "· + ·",
                                                                    "220 + 220"]

    # double-click: the token in p50k's vocabulary browser
    with qtbot.waitSignal(dialog.open_token) as opened:
        dialog._on_double_click(dialog.model.index(0, 0))
    assert opened.args == ["p50k_base", 50280]
    (shown,) = [d for d in window.findChildren(ContentDialog) if d.browser.spec == "p50k_base"]
    browser = shown.browser
    qtbot.waitUntil(lambda: browser.selected_id() == 50280 or browser.error is not None, timeout=TIMEOUT_MS)
    assert browser.spec == "p50k_base" and browser.selected_id() == 50280


def test_a_trained_vocabulary_beside_its_base(qtbot, tmp_path: Path, capsys) -> None:
    small, big = str(_train(tmp_path, 300)), str(_train(tmp_path, 340))
    capsys.readouterr()
    dialog = OverlapDialog([big, small, big])  # a spec twice counts once
    qtbot.addWidget(dialog)
    assert dialog.chosen() == [big, small]
    assert [box.text() for box in dialog.choices] == [Path(big).name, Path(small).name]  # a path's file name
    assert dialog.choices[0].toolTip() == big
    _compared(qtbot, dialog)
    expected = overlap_of([catalog.load(big), catalog.load(small)])
    assert dialog.model.rowCount() == 40 and set(_shown(dialog, "vocabulary")) == {expected.names[0]}
    assert _shown(dialog, "id") == [str(i) for i in range(300, 340)]
    merges = dialog.merges_model
    assert merges.rowCount() == 40 and [merges.data(merges.index(r, 1)) for r in range(40)] == [
        str(i) for i in range(300, 340)]
    assert f"adds 40 tokens to {expected.names[1]}" in dialog.merges_note.text()
    # the new merges sort on a header click: by bytes, then by id again, both ways
    header = dialog.merges_view.horizontalHeader()
    ids = [merges.data(merges.index(r, 1)) for r in range(40)]
    header.setSortIndicator(3, Qt.SortOrder.AscendingOrder)
    by_bytes = [merges.rows[r][1].data for r in range(40)]
    assert by_bytes == sorted(by_bytes) and by_bytes != [m.data for _, m in sorted(merges.rows, key=lambda r: r[1].id)]
    header.setSortIndicator(1, Qt.SortOrder.DescendingOrder)
    assert [merges.data(merges.index(r, 1)) for r in range(40)] == ids[::-1]
    dialog.set_chosen([small])  # one alone cannot be compared
    assert not dialog.compare_button.isEnabled() and dialog.start() is None


def test_unrelated_vocabularies_filter_by_script_and_have_no_new_merges(qtbot) -> None:
    dialog = OverlapDialog(["cl100k_base", "mistral-7b-v0.1"])
    qtbot.addWidget(dialog)
    _compared(qtbot, dialog)
    expected = overlap_of([catalog.load("cl100k_base"), catalog.load("mistral-7b-v0.1")])
    assert dialog.model.rowCount() == len(expected.only[0]) + len(expected.only[1])
    assert not dialog.tabs.isTabEnabled(dialog.merges_index) and dialog.merges_model.rowCount() == 0
    only_hangul = next(only for label, _, _, only in expected.breakdown("script") if label == "hangul")
    dialog.script_combo.setCurrentIndex(dialog.script_combo.findData("hangul"))
    dialog.vocab_combo.setCurrentIndex(dialog.vocab_combo.findData(1))
    dialog.apply_filter()
    assert dialog.model.rowCount() == only_hangul[1] > 0
    assert set(_shown(dialog, "script")) == {"hangul"} and set(_shown(dialog, "vocabulary")) == {"mistral-7b-v0.1"}
    assert all(piece.startswith("▁") or not text.startswith("·")
               for piece, text in zip(_shown(dialog, "piece"), _shown(dialog, "text")))
    dialog.view.sortByColumn(COLUMN["text"], Qt.SortOrder.AscendingOrder)
    texts = _shown(dialog, "text")
    assert texts == sorted(texts)


def test_closing_mid_comparison_cancels_cleanly(qtbot) -> None:
    dialog = open_overlap_dialog(None, ["cl100k_base", "o200k_base"], start=False)
    qtbot.addWidget(dialog)
    steps: list[str] = []

    def close_on_the_first_comparing_step(step: str) -> None:  # on the GUI thread, as the step arrives
        steps.append(step)
        if step.startswith("comparing"):
            dialog.close()

    run = dialog.start()
    run.yielded.connect(close_on_the_first_comparing_step)
    with qtbot.waitSignal(run.finished, timeout=TIMEOUT_MS):
        pass
    assert steps[-1] == "comparing the token sets…" and steps[0].startswith("loading cl100k_base")
    assert run.outcome == "aborted" and dialog.outcome is None and dialog.model.table is None
    assert dialog.status.text() == "Cancelled." and not dialog.isVisible()
    assert live_workers() == 0


def test_the_overlap_option_opens_the_dialog_at_start(qtbot, tmp_path: Path) -> None:
    from tokviz.gui.app import parse_args, window_from_args

    args = parse_args(["-t", "r50k_base", "-t", "p50k_base", "--no-restore", "--settings", str(tmp_path / "s.ini"),
                       "--overlap"])
    window = window_from_args(args)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.tools.overlap is not None, timeout=TIMEOUT_MS)
    dialog = window.tools.overlap
    assert dialog.chosen() == ["r50k_base", "p50k_base"]
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=TIMEOUT_MS)
    assert dialog.model.rowCount() == 24
    window.close()


def test_many_vocabularies_are_chosen_from_rows_of_check_boxes(qtbot) -> None:
    specs = ["cl100k_base", "o200k_base", "p50k_base", "r50k_base", "gpt2", "qwen"]
    dialog = OverlapDialog(specs)
    qtbot.addWidget(dialog)
    dialog.resize(900, 600)
    dialog.show()
    qtbot.waitExposed(dialog)
    rows = sorted({box.geometry().top() for box in dialog.choices})
    assert len(rows) == 2  # four, then two: the dialog keeps its width
    assert dialog.minimumSizeHint().width() <= 900
    assert dialog.chosen() == specs
