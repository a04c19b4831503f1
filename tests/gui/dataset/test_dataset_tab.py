"""The Dataset tab: real files, real vocabularies and templates, the CLI's numbers, real widgets."""

from __future__ import annotations

import csv
import json
import multiprocessing
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.gui.conftest import TIMEOUT_MS
from tokviz.cli import main
from tokviz.core.resources import sample_text
from tokviz.gui.app import OptionError, build_window, parse_args, window_from_args
from tokviz.gui.dataset.panel import DatasetPanel

SPECS = ("cl100k_base", "qwen")


def _rows() -> list[dict]:
    korean, english, japanese = sample_text("korean.txt"), sample_text("english.txt"), sample_text("japanese.txt")
    return [
        {"text": english[:700]},
        {"messages": [{"role": "user", "content": "What is 2+2? <|im_end|> <|endoftext|>"},
                      {"role": "assistant", "content": "4"}]},
        {"text": korean[:300] + " 🙂"},
        {"conversations": [{"from": "human", "value": korean[:120]}, {"from": "gpt", "value": "네, 알겠습니다."}]},
        {"prompt": "Translate to French: cat ->", "completion": " chat"},
        {"text": japanese},
        {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": english[:400]},
                      {"role": "assistant", "content": "ok"}]},
        {"text": "   leading spaces\tand\ttabs\r\n"},
    ]


@pytest.fixture
def dataset_file(tmp_path: Path) -> Path:
    lines = [json.dumps(r, ensure_ascii=False) for r in _rows()]
    lines.insert(3, '{"text": "torn')  # a record that cannot be read: skipped, counted as such
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def window(make_window):
    w = make_window(SPECS, text="x")
    w.set_mode("dataset")
    return w


def run_panel(qtbot, panel: DatasetPanel, path: Path | str, jobs: int = 1) -> None:
    panel.jobs = jobs
    with qtbot.waitSignal(panel.finished, timeout=TIMEOUT_MS):
        panel.open_path(str(path))


def test_the_tab_counts_what_tokviz_dataset_counts(qtbot, window, dataset_file, tmp_path, capsys):
    panel = window.dataset_panel
    assert isinstance(panel, DatasetPanel) and panel.specs == SPECS
    panel.context.setValue(100)
    run_panel(qtbot, panel, dataset_file, jobs=2)  # worker processes, as the CLI's default
    assert panel.error is None and panel.result is not None
    per_example = tmp_path / "counts.csv"
    code = main(["dataset", str(dataset_file), "-t", SPECS[0], "-t", SPECS[1], "--context", "100",
                 "--json", "-", "--per-example", str(per_example), "--jobs", "1"])
    cli = json.loads(capsys.readouterr().out)
    assert code == 0
    # the summary table holds the CLI's figures, and shows them as the CLI formats them
    assert panel.summary_model.rows == cli["tokenizers"]
    assert [panel.summary_model.text(r, 0) for r in range(2)] == list(SPECS)
    assert panel.summary_model.text(0, 2) == f"{cli['tokenizers'][0]['tokens']:,}"
    # every example's counts, by its index in the input
    with per_example.open(encoding="utf-8") as f:
        rows = {int(r["example"]): (int(r[SPECS[0]]), int(r[SPECS[1]])) for r in csv.DictReader(f)}
    table = panel.result.table
    assert len(table) == len(rows) == cli["examples"] == 8
    assert {int(i): tuple(map(int, t)) for i, t in zip(table.index, table.tokens)} == rows
    # the torn line is skipped and said so in the tab
    assert cli["skipped"] == panel.result.summary.skipped == 1
    assert panel.skips.isVisible() and "line 4" in panel.skips.text() and "not JSON" in panel.skips.text()
    assert "8 examples (3 conversations, 1 skipped)" in panel.state.text()
    # the histogram holds every example once per tokenizer, the context marked
    hist = panel.histogram.data
    assert hist is not None and hist.counts.sum(axis=1).tolist() == [8, 8]
    assert hist.edges[-1] == table.tokens.max() and panel.histogram.limit == 100


def test_the_examples_sort_by_length_disagreement_and_findings(qtbot, window, dataset_file):
    panel = window.dataset_panel
    run_panel(qtbot, panel, dataset_file)
    model, table = panel.example_model, panel.result.table
    shown = [model.row_of(r) for r in range(model.rowCount())]
    assert panel.sort.currentText() == "longest first"
    assert table.tokens[shown, 0].tolist() == sorted(table.tokens[:, 0].tolist(), reverse=True)
    panel.sort.setCurrentText("most disagreement")
    shown = [model.row_of(r) for r in range(model.rowCount())]
    spread = table.tokens.max(axis=1) / table.tokens.min(axis=1)
    assert np.allclose(spread[shown], sorted(spread, reverse=True))
    panel.sort.setCurrentText("most findings")
    top = model.row_of(0)
    assert table.findings[top] > 0 and "<|im_end|>" in " ".join(table.notes[top])
    assert table.previews[top].startswith("[2 messages] user: What is 2+2?")
    panel.sort.setCurrentText("input order")
    assert [model.row_of(r) for r in range(model.rowCount())] == list(range(8))
    # a header click sorts too (qwen's counts, ascending)
    panel.examples.sortByColumn(4, Qt.SortOrder.AscendingOrder)
    shown = [model.row_of(r) for r in range(model.rowCount())]
    assert table.tokens[shown, 1].tolist() == sorted(table.tokens[:, 1].tolist())


def test_double_clicking_opens_a_text_in_the_text_tab_and_a_chat_in_the_chat_tab(qtbot, window, dataset_file):
    panel = window.dataset_panel
    run_panel(qtbot, panel, dataset_file)
    panel.sort.setCurrentText("input order")
    view = panel.examples
    rect = view.visualRect(panel.example_model.index(0, 2))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())  # Qt's test double
    with qtbot.waitSignal(panel.open_text, timeout=TIMEOUT_MS):  # click needs the press before it
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.mode == "text" and window.text() == _rows()[0]["text"]
    window.set_mode("dataset")
    chat_row = 6  # the conversation with a system message
    with qtbot.waitSignal(panel.open_chat, timeout=TIMEOUT_MS):
        panel.open_example(chat_row)
    assert window.mode == "chat"
    assert window.chat_panel.messages() == _rows()[6]["messages"]


def test_a_file_that_cannot_be_read_is_said_in_the_tab(qtbot, window, tmp_path):
    panel = window.dataset_panel
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is no parquet file")
    run_panel(qtbot, panel, bad)
    assert panel.result is None and panel.error_label.isVisible()
    assert panel.error.startswith(f"no examples to count: {bad}: not a readable Parquet file (")
    run_panel(qtbot, panel, tmp_path / "missing.jsonl")
    assert "no such file or folder" in panel.error
    assert panel.count_button.isEnabled() and not panel.cancel_button.isEnabled()


def test_cancel_stops_the_worker_processes_mid_shard(qtbot, window, tmp_path):
    """A small file, then one shard big enough to take far longer than the wait allows: cancelled
    while a worker process counts it, the run ends at once and its processes are gone."""
    folder = tmp_path / "data"
    folder.mkdir()
    english = sample_text("english.txt")
    (folder / "a.jsonl").write_text(json.dumps({"text": "small"}) + "\n", encoding="utf-8")
    row = json.dumps({"messages": [{"role": "user", "content": english}, {"role": "assistant", "content": "ok"}]})
    # ~60 MB in one shard: minutes of counting on any machine, so the cancel comes mid-shard
    (folder / "b.jsonl").write_text((row + "\n") * 30000, encoding="utf-8")
    others = set(multiprocessing.active_children())  # another test's (a session's Dask cluster)
    panel = window.dataset_panel
    panel.jobs = 2
    panel.shard_bytes = 1 << 30  # b.jsonl whole in one worker
    assert panel.start() is False  # no path yet
    panel.path.setText(str(folder))
    assert panel.start()
    with qtbot.waitSignal(panel.worker.yielded, timeout=TIMEOUT_MS):  # a.jsonl counted: the pool runs
        pass
    assert set(multiprocessing.active_children()) - others
    with qtbot.waitSignal(panel.finished, timeout=TIMEOUT_MS):
        panel.cancel()
    assert panel.result is None and panel.state.text().startswith("cancelled after 1 examples")
    assert panel.last_progress.done_bytes < panel.last_progress.total_bytes
    assert set(multiprocessing.active_children()) <= others


def test_the_path_context_and_sort_are_remembered(qtbot, settings, dataset_file):
    window = build_window(specs=list(SPECS), settings=settings, restore=False)
    qtbot.addWidget(window)
    window.set_mode("dataset")
    panel = window.dataset_panel
    panel.path.setText(str(dataset_file))
    panel.field.setText("messages")
    panel.context.setValue(4096)
    panel.sort.setCurrentText("most findings")
    window.save_settings()
    window.shutdown()
    again = build_window(specs=list(SPECS), settings=settings, restore=True)
    qtbot.addWidget(again)
    again.set_mode("dataset")
    restored = again.dataset_panel
    assert restored.path.text() == str(dataset_file) and restored.field.text() == "messages"
    assert restored.context.value() == 4096 and restored.histogram.limit == 4096
    assert restored.sort.currentText() == "most findings"
    assert str(dataset_file) in restored.state.text() and restored.result is None  # counted when asked
    again.shutdown()


def test_the_dataset_option_opens_the_tab_and_counts(qtbot, tmp_path, dataset_file):
    settings = str(tmp_path / "s.ini")
    args = parse_args(["-t", SPECS[0], "--no-restore", "--settings", settings, "--dataset", str(dataset_file)])
    window = window_from_args(args)
    qtbot.addWidget(window)
    panel = window.dataset_panel
    assert window.mode == "dataset" and window.modes.currentWidget() is panel and panel.busy
    with qtbot.waitSignal(panel.finished, timeout=TIMEOUT_MS):
        pass
    assert panel.result is not None and panel.result.table.names == [SPECS[0]]
    window.shutdown()
    missing = parse_args(["-t", SPECS[0], "--no-restore", "--settings", settings, "--dataset", str(tmp_path / "no")])
    with pytest.raises(OptionError, match="--dataset"):
        window_from_args(missing)


def test_a_model_without_a_chat_template_asks_for_one_and_counts_with_it(qtbot, make_window, dataset_file):
    """The trained vocabulary a fresh machine has carries no chat template: the tab says to choose
    one, and counts the conversations with the one chosen, as `--template chatml` does."""
    window = make_window(("tokviz-samples",), text="x")
    window.set_mode("dataset")
    panel = window.dataset_panel
    run_panel(qtbot, panel, dataset_file, jobs=2)
    assert panel.result is None and panel.error is not None
    assert panel.error.startswith("tokviz-samples carries no chat template: choose a template beside Count")
    panel.template.setCurrentText("chatml")
    run_panel(qtbot, panel, dataset_file)
    assert panel.error is None and not panel.error_label.isVisible()
    assert panel.result.summary.chats == 3 and panel.result.request.template == "chatml"


def test_a_big_jsonl_file_is_counted_in_byte_ranges_with_its_lines_named(qtbot, window, tmp_path, capsys):
    """Cut into 1 MB ranges (every worker counts, the progress moves), a file's counts are still the
    CLI's, and each example is named by its line, not by the byte its range starts at."""
    texts = [sample_text(n) for n in ("english.txt", "korean.txt", "japanese.txt", "python_code.py")]
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(1600):
            f.write(json.dumps({"text": texts[i % 4][: 200 + i % 1500]}, ensure_ascii=False) + "\n")
    assert path.stat().st_size > 2 << 20
    panel = window.dataset_panel
    reports = []
    panel.jobs = 2
    panel.path.setText(str(path))
    with qtbot.waitSignal(panel.finished, timeout=TIMEOUT_MS):
        panel.start()
        panel.worker.yielded.connect(reports.append)
    table = panel.result.table
    assert list(table.sources) == [f"{path}:line {i + 1}" for i in range(1600)]
    assert panel.example_model.one_file and panel.example_model.index(0, 1).data().startswith("line ")
    assert reports and reports[-1].done_bytes == reports[-1].total_bytes == path.stat().st_size
    per_example = tmp_path / "counts.csv"
    assert main(["dataset", str(path), "-t", SPECS[0], "-t", SPECS[1], "--per-example", str(per_example)]) == 0
    capsys.readouterr()
    with per_example.open(encoding="utf-8") as f:
        rows = [(int(r[SPECS[0]]), int(r[SPECS[1]])) for r in csv.DictReader(f)]
    assert [tuple(map(int, t)) for t in table.tokens] == rows


def test_a_folder_names_each_example_by_file_and_line(qtbot, window, tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.jsonl").write_text('{"text": "one"}\n{"text": "two two"}\n', encoding="utf-8")
    (folder / "sub" / "b.txt").write_text("a whole file is one example", encoding="utf-8")
    panel = window.dataset_panel
    run_panel(qtbot, panel, folder)
    panel.sort.setCurrentText("input order")
    model = panel.example_model
    assert not model.one_file
    assert [model.index(r, 1).data() for r in range(3)] == ["a.jsonl:line 1", "a.jsonl:line 2", "b.txt"]
    assert [model.index(r, 2).data() for r in range(3)] == ["one", "two two", "a whole file is one example"]
    assert list(panel.result.table.sources)[2] == str(folder / "sub" / "b.txt")
