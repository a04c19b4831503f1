"""The analysis dialog on real vocabularies: counts, charts, prices, budget, truncation, folders, export."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tokviz.analysis.budget import context_budget
from tokviz.core.resources import sample_text
from tokviz.gui.tools.analysis_dialog import (
    COL_AT,
    COL_COST,
    COL_ERR,
    COL_EST,
    COL_FIT,
    COL_RATIO,
    COL_TOKENS,
    AnalysisDialog,
    open_analysis,
)

SPECS = ["cl100k_base", "qwen"]
TIMEOUT = 20_000
ROLE = Qt.ItemDataRole.UserRole


def finished(qtbot, dialog: AnalysisDialog, action=None):
    with qtbot.waitSignal(dialog.analysis_finished, timeout=TIMEOUT) as blocker:
        if action is not None:
            action()
    return blocker.args[0]


@pytest.fixture
def korean(qtbot) -> AnalysisDialog:
    dialog = open_analysis(None, SPECS, sample_text("korean.txt"))
    qtbot.addWidget(dialog)
    finished(qtbot, dialog)
    return dialog


@pytest.mark.parametrize("sample", ["korean.txt", "english.txt"])
def test_table_and_charts_show_the_real_counts(qtbot, vocab, sample) -> None:
    text = sample_text(sample)
    dialog = open_analysis(None, SPECS, text)
    qtbot.addWidget(dialog)
    analysis = finished(qtbot, dialog)
    expected = {spec: len(vocab(spec).encode(text)) for spec in SPECS}
    assert {r.name: r.tokens for r in analysis.results} == expected
    for name, n in expected.items():
        item = dialog.cell(name, COL_TOKENS)
        assert item.data(ROLE) == n and item.text() == f"{n:,}"
    assert dialog.cell("cl100k_base", COL_RATIO).text() == "baseline"
    ratio = dialog.cell("qwen", COL_RATIO).data(ROLE)
    assert ratio == pytest.approx(expected["qwen"] / expected["cl100k_base"])

    bars = dialog.tokens_chart.model.bars()
    assert [(b.category, b.value) for b in bars] == [(name, float(n)) for name, n in expected.items()]
    grouped = dialog.scripts_chart.model
    assert grouped.series == tuple(SPECS)
    main_script = "hangul" if sample == "korean.txt" else "latin"
    assert main_script in grouped.categories
    for name, n in expected.items():  # each tokenizer's script shares add up to its count
        assert sum(grouped.value(s, name) for s in grouped.categories) == pytest.approx(n)
    dialog.stacked_box.setChecked(True)
    stacked = dialog.scripts_chart.model
    assert stacked.stacked and stacked.categories == tuple(SPECS)
    assert [stacked.total(name) for name in SPECS] == pytest.approx([expected[s] for s in SPECS])


def test_price_updates_cost_and_baseline_changes_ratio(qtbot, korean, vocab) -> None:
    n = len(vocab("qwen").encode(sample_text("korean.txt")))
    assert korean.cell("qwen", COL_COST).text() == "—"
    korean.price_box("qwen").setValue(2.5)
    assert korean.cell("qwen", COL_COST).data(ROLE) == pytest.approx(n * 2.5 / 1e6)
    assert korean.cell("qwen", COL_COST).text() == f"${n * 2.5 / 1e6:,.6f}"
    assert korean.analysis.by_name("qwen").cost == pytest.approx(n * 2.5 / 1e6)
    korean.baseline_box.setCurrentText("qwen")
    assert korean.cell("qwen", COL_RATIO).text() == "baseline"
    assert korean.price_box("qwen").value() == 2.5  # the price survives the refill

    chars = len(sample_text("korean.txt"))
    korean.rule_box.setValue(2.0)  # the characters rule: estimate, its error and the chart marker
    assert korean.cell("qwen", COL_EST).data(ROLE) == pytest.approx(chars / 2)
    assert korean.cell("qwen", COL_ERR).data(ROLE) == pytest.approx(100 * (chars / 2 - n) / n)
    assert korean.tokens_chart.model.markers[0][1] == pytest.approx(chars / 2)


def test_context_budget_and_truncation(qtbot, korean, vocab) -> None:
    text = sample_text("korean.txt")
    analysis = finished(qtbot, korean, lambda: korean.limit_box.setValue(100))
    for spec in SPECS:
        budget = context_budget(text, vocab(spec).encode(text), 100)
        assert 0 < budget.fraction < 1
        assert analysis.by_name(spec).budget == budget
        assert korean.cell(spec, COL_FIT).text() == f"{100 * budget.fraction:.1f} %"
        assert korean.cell(spec, COL_AT).data(ROLE) == budget.fit_chars
    korean.truncate_box.setCurrentText("qwen")
    with qtbot.waitSignal(korean.truncated, timeout=TIMEOUT) as blocker:
        korean.truncate()
    cut = blocker.args[0]
    assert cut and text.startswith(cut) and len(cut) < len(text)
    assert len(vocab("qwen").encode(cut)) <= 100
    assert QGuiApplication.clipboard().text() == cut


def test_folder_reports_binary_and_latin1_files_as_skipped(qtbot, tmp_path: Path, vocab) -> None:
    text = sample_text("english.txt")
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "b.bin").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (tmp_path / "c.txt").write_bytes("café déjà vu".encode("latin-1"))
    dialog = AnalysisDialog(SPECS)
    qtbot.addWidget(dialog)
    dialog.show()
    analysis = finished(qtbot, dialog, lambda: dialog.analyze_folder(str(tmp_path)))
    assert analysis.text.files == 1
    assert analysis.by_name("qwen").tokens == len(vocab("qwen").encode(text))
    items = [dialog.skipped_list.item(i).text() for i in range(dialog.skipped_list.count())]
    assert len(items) == 2
    assert any("b.bin" in s and "binary" in s for s in items)
    assert any("c.txt" in s and "not UTF-8" in s for s in items)
    assert dialog.skipped_label.text() == "Skipped files: 2"
    assert not dialog.progress.isVisible()


def test_cancel_ends_in_the_cancelled_signal_only(qtbot, tmp_path: Path) -> None:
    text = sample_text("korean.txt")
    for i in range(400):
        (tmp_path / f"{i:03}.txt").write_text(text, encoding="utf-8")
    dialog = AnalysisDialog(SPECS)
    qtbot.addWidget(dialog)
    dialog.show()
    terminal: list[str] = []
    done: list[int] = []

    def on_progress(files: tuple[int, int]) -> None:
        done.append(files[0])
        dialog.cancel()

    dialog.analyze_folder(str(tmp_path))
    run = dialog.run  # its signals come through the event loop, which runs only in the wait below
    run.returned.connect(lambda _: terminal.append("returned"))
    run.errored.connect(lambda _: terminal.append("errored"))
    run.aborted.connect(lambda: terminal.append("aborted"))
    run.yielded.connect(on_progress)
    with qtbot.waitSignals([dialog.analysis_cancelled, run.finished], order="strict", timeout=TIMEOUT):
        pass
    assert terminal == ["aborted"]
    assert done and done[0] < 400
    assert dialog.analysis is None and dialog.status.text() == "Cancelled."


def test_export_csv_and_json_parse_back(qtbot, korean, tmp_path: Path, vocab) -> None:
    korean.set_price("cl100k_base", 1.0)
    n = {spec: len(vocab(spec).encode(sample_text("korean.txt"))) for spec in SPECS}
    korean.export_csv(tmp_path / "stats.csv")
    korean.export_json(tmp_path / "stats.json")
    with open(tmp_path / "stats.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["tokenizer"], int(r["tokens"])) for r in rows] == list(n.items())
    assert float(rows[0]["cost_usd"]) == pytest.approx(n["cl100k_base"] / 1e6)
    assert rows[1]["cost_usd"] == ""
    data = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    assert data["format"] == "tokviz-stats"
    assert {t["tokenizer"]: t["tokens"] for t in data["tokenizers"]} == n
    assert any(s["script"] == "hangul" for s in data["scripts"])
    assert data["format_inflation"][0]["variant"] == "as given"
    assert not list(tmp_path.glob("*.tmp*"))


def test_close_during_a_run_stops_the_thread(qtbot) -> None:
    dialog = open_analysis(None, SPECS, sample_text("english.txt") * 50)
    qtbot.addWidget(dialog)
    run = dialog.run
    dialog.close()
    assert not run.is_running and run.outcome == "aborted"


def test_a_parent_deleted_during_a_run_stops_the_thread(qtbot) -> None:
    import shiboken6
    from PySide6.QtWidgets import QWidget

    parent = QWidget()
    dialog = open_analysis(parent, SPECS, sample_text("english.txt") * 50)
    run = dialog.run
    shiboken6.delete(parent)  # the main window goes away without closing the dialog first
    assert not shiboken6.isValid(dialog)
    assert not run.is_running
