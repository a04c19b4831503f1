"""Token cost and context analysis (issue 8): what the same text or folder costs in each tokenizer.

`open_analysis(parent, specs, text)` shows an `AnalysisDialog` and starts analysing `text`. The
dialog loads the tokenizers and runs `analyze` on a `Worker` (`dialog.run`); each run ends in
exactly one of the worker's `returned`, `errored` or `aborted` signals (re-emitted by the dialog as
`analysis_finished`, `analysis_failed`, `analysis_cancelled`). A new run aborts the one under way,
whose result can then no longer arrive.

Prices, the characters-per-token rule and the baseline are applied to the last result at once
(`restyle`, no re-encoding); a new context limit N re-runs the analysis, since where the limit
falls depends on the tokens. Truncation to N tokens runs in the worker too.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.budget import truncate_to_tokens
from tokviz.analysis.export import to_csv, to_json
from tokviz.analysis.inflation import InflationRow, format_inflation
from tokviz.analysis.stats import (
    DEFAULT_CHARS_PER_TOKEN,
    Analysis,
    StatsOptions,
    analyze_paths,
    analyze_text,
    stats_rows,
)
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.gui.tools.tokenizers import load_tokenizer
from tokviz.gui.widgets.charts import BarChart, scripts_model, tokens_model
from tokviz.gui.widgets.dialogs import WorkDialog
from tokviz.gui.widgets.theme import icon
from tokviz.gui.work.worker import Job, Worker, message_of

# -- the worker ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnalysisJob:
    """Analyse `text`, or the files under `paths` when given, with the tokenizers of `specs`."""

    specs: tuple[str, ...]
    limit: int | None
    text: str | None = None
    paths: tuple[str, ...] = ()
    policy: SpecialPolicy = SpecialPolicy()


@dataclass(frozen=True)
class TruncateJob:
    spec: str
    text: str
    limit: int


@dataclass
class AnalysisOutcome:
    job: AnalysisJob
    analysis: Analysis  # prices, rule and baseline as the core's defaults; the dialog restyles
    inflation: list[InflationRow]
    specs: dict[str, str]  # tokenizer name -> spec
    load_errors: list[str]


@dataclass
class TruncateOutcome:
    job: TruncateJob
    name: str
    text: str
    tokens: int


def analyze(work: Job, job: AnalysisJob) -> AnalysisOutcome:
    """The analysis, on a `Worker`'s thread; reports (files done, files in total) for a folder."""
    tokenizers: list[Tokenizer] = []
    specs: dict[str, str] = {}
    errors: list[str] = []
    for spec in job.specs:
        work.check()
        try:
            tok = load_tokenizer(spec)
        except Exception as e:
            errors.append(f"{spec}: {e}")
            continue
        if tok.name not in specs:  # two panes of one tokenizer count once
            tokenizers.append(tok)
            specs[tok.name] = spec
    if not tokenizers:
        raise ValueError("no tokenizer could be loaded:\n" + "\n".join(errors))
    options = StatsOptions(limit=job.limit, policy=job.policy)
    if job.paths:
        analysis = analyze_paths(job.paths, tokenizers, options=options, cancel=work.abort,
                                 progress=lambda done, total: work.report((done, total)))
        inflation: list[InflationRow] = []
    else:
        analysis = analyze_text(job.text or "", tokenizers, options=options, cancel=work.abort)
        work.check()
        inflation = format_inflation(job.text, tokenizers, policy=job.policy) if job.text else []
    return AnalysisOutcome(job, analysis, inflation, specs, errors)


def truncate(work: Job, job: TruncateJob) -> TruncateOutcome:
    tok = load_tokenizer(job.spec)
    text = truncate_to_tokens(tok, job.text, job.limit)
    return TruncateOutcome(job, tok.name, text, len(tok.encode_ids(text)))


# -- the dialog -------------------------------------------------------------------------------------

COLUMNS = (
    "Tokenizer", "Tokens", "Chars/token", "Bytes/token", "Tokens/100 chars", "× baseline",
    "Estimate", "Estimate error", "$ / 1M tokens", "Cost", "Fits in N", "Limit at char",
)
(COL_NAME, COL_TOKENS, COL_CPT, COL_BPT, COL_T100, COL_RATIO, COL_EST, COL_ERR, COL_PRICE, COL_COST,
 COL_FIT, COL_AT) = range(len(COLUMNS))
TIPS = {
    COL_EST: "Tokens by the characters rule: characters ÷ the rule",
    COL_ERR: "(estimate − real) ÷ real: negative when the rule under-counts",
    COL_RATIO: "Tokens ÷ the baseline tokenizer's tokens",
    COL_FIT: "How much of the text (in characters) fits within N tokens",
    COL_AT: "The first character past the limit",
}
INFLATION_TITLE = "<b>Format inflation</b>: the same content written differently, in tokens"
BAD = QColor("#c62828")
WARN = QColor("#b26a00")


def _num(value: float | None, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


class AnalysisDialog(WorkDialog):
    """Tables, bar charts, context budget, format inflation and export for one text or folder."""

    analysis_finished = Signal(object)  # Analysis, restyled with the dialog's prices/rule/baseline
    analysis_failed = Signal(str)
    analysis_cancelled = Signal()
    truncated = Signal(str)  # the truncated text, also on the clipboard
    limit_marks = Signal(object)  # {tokenizer name: character where the limit falls} (text only)

    def __init__(self, specs: list[str], text: str = "", parent: QWidget | None = None, *,
                 policies: Sequence[SpecialPolicy] = ()) -> None:
        super().__init__(parent)
        self.policy, self.policy_note = counting_policy(specs, policies)
        self.setWindowTitle("tokviz — token cost and context analysis")
        self.setWindowIcon(icon("tokviz"))
        self.specs = list(dict.fromkeys(specs))
        self.text = text
        self.folder: str | None = None
        self.prices: dict[str, float] = {}
        self.outcome: AnalysisOutcome | None = None
        self.analysis: Analysis | None = None
        self.run: Worker | None = None  # the analysis under way (or the last one)
        self._truncations: list[Worker] = []
        self._build_ui()
        self.resize(1280, 860)

    # -- layout ----------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.source_label = QLabel()
        self.text_button = QPushButton("Use the text")
        self.text_button.clicked.connect(self.analyze_text_source)
        self.folder_button = QPushButton(icon("open"), "Folder…")
        self.folder_button.clicked.connect(self.choose_folder)
        self.analyze_button = QPushButton("Analyse")
        self.analyze_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setFixedWidth(220)
        self.progress.setFormat("%v / %m files")
        top = QHBoxLayout()
        for w in (self.source_label, None, self.text_button, self.folder_button, self.analyze_button,
                  self.progress, self.cancel_button):
            top.addStretch(1) if w is None else top.addWidget(w)

        self.baseline_box = QComboBox()
        self.baseline_box.setToolTip("The tokenizer the others are compared with")
        self.baseline_box.currentIndexChanged.connect(self.restyle)
        self.rule_box = QDoubleSpinBox(decimals=2, minimum=0.25, maximum=100.0, singleStep=0.25)
        self.rule_box.setValue(DEFAULT_CHARS_PER_TOKEN)
        self.rule_box.setToolTip("The characters-per-token rule people estimate with")
        self.rule_box.valueChanged.connect(self.restyle)
        self.limit_box = QSpinBox(minimum=0, maximum=100_000_000, singleStep=1000)
        self.limit_box.setSpecialValueText("off")
        self.limit_box.setGroupSeparatorShown(True)
        self.limit_box.setToolTip("Context budget N in tokens (0: off)")
        self._limit_timer = QTimer(self, singleShot=True, interval=300)
        self._limit_timer.timeout.connect(self.start)
        self.limit_box.valueChanged.connect(self._limit_timer.start)
        self.truncate_box = QComboBox()
        for box in (self.baseline_box, self.truncate_box):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            box.setMinimumContentsLength(12)
        self.truncate_button = QPushButton("Truncate to N tokens")
        self.truncate_button.setToolTip("Copy the longest start of the text that fits in N tokens")
        self.truncate_button.clicked.connect(self.truncate)
        self.csv_button = QPushButton("Export CSV…")
        self.csv_button.clicked.connect(lambda: self._choose_export("csv"))
        self.json_button = QPushButton("Export JSON…")
        self.json_button.clicked.connect(lambda: self._choose_export("json"))
        second = QHBoxLayout()
        for caption, field in (("Baseline", self.baseline_box), ("Chars per token rule", self.rule_box),
                               ("Context budget N", self.limit_box), ("for", self.truncate_box)):
            second.addWidget(QLabel(caption))
            second.addWidget(field)
        second.addWidget(self.truncate_button)
        second.addStretch(1)
        second.addWidget(self.csv_button)
        second.addWidget(self.json_button)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        for col, tip in TIPS.items():
            self.table.horizontalHeaderItem(col).setToolTip(tip)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.tokens_chart = BarChart()
        self.scripts_chart = BarChart()
        self.stacked_box = QCheckBox("Stack scripts per tokenizer")
        self.stacked_box.toggled.connect(self._fill_charts)
        scripts_side = QWidget()
        scripts_column = QVBoxLayout(scripts_side)
        scripts_column.setContentsMargins(0, 0, 0, 0)
        scripts_column.addWidget(self.scripts_chart, 1)
        scripts_column.addWidget(self.stacked_box)
        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.tokens_chart)
        charts.addWidget(scripts_side)
        charts.setSizes([500, 700])
        self.inflation_table = QTableWidget(0, 0)
        self.inflation_table.verticalHeader().hide()
        self.inflation_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.inflation_table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.skipped_list = QListWidget()
        self.skipped_label = QLabel("Skipped files")
        bottom = QSplitter(Qt.Orientation.Horizontal)
        left, right = QWidget(), QWidget()
        self.inflation_label = QLabel(INFLATION_TITLE)
        self.inflation_label.setWordWrap(True)
        for side, title, content in ((left, self.inflation_label, self.inflation_table),
                                     (right, self.skipped_label, self.skipped_list)):
            lay = QVBoxLayout(side)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(title)
            lay.addWidget(content)
        bottom.addWidget(left)
        bottom.addWidget(right)
        self.skipped_side = right
        bottom.setSizes([800, 400])
        split = QSplitter(Qt.Orientation.Vertical)
        for part in (self.table, charts, bottom):
            split.addWidget(part)
        split.setSizes([160, 360, 240])
        self.status = QLabel()
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(second)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        self._set_busy(False)
        self._show_source()

    # -- running ---------------------------------------------------------------------------
    def set_text(self, text: str) -> None:
        """Analyse a new text (the main window's input changed)."""
        self.text = text
        self.analyze_text_source()

    def analyze_text_source(self) -> None:
        self.folder = None
        self._show_source()
        self.start()

    def choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Analyse a folder")
        if path:
            self.analyze_folder(path)

    def analyze_folder(self, path: str) -> None:
        self.folder = str(path)
        self._show_source()
        self.start()

    def start(self) -> Worker:
        """Run the analysis (cancelling one under way); returns its worker."""
        self._cancel_analysis()
        limit = self.limit_box.value() or None
        paths = (self.folder,) if self.folder else ()
        job = AnalysisJob(tuple(self.specs), limit, None if paths else self.text, paths, self.policy)
        self.run = Worker(partial(analyze, job=job), owner=self, name="tokviz-analysis")
        self.run.yielded.connect(self._on_progress)
        self.run.returned.connect(self._on_finished)
        self.run.errored.connect(self._on_failed)
        self.run.aborted.connect(self._on_cancelled)
        self.progress.setRange(0, 0)  # busy until the first file is done
        self._set_busy(True)
        self.status.setText("Loading tokenizers and counting…")
        self.run.start()
        return self.run

    def cancel(self) -> None:
        self._cancel_analysis()

    def _cancel_analysis(self) -> None:
        if self.run is not None:
            self.run.abort()

    def truncate(self) -> Worker | None:
        """Cut the text to N tokens of the chosen tokenizer in the worker; `truncated` brings it."""
        limit = self.limit_box.value()
        spec = self.truncate_box.currentData()
        if self.folder or not limit or spec is None:
            self.status.setText("Set a context budget N and analyse a text to truncate it.")
            return None
        worker = Worker(partial(truncate, job=TruncateJob(spec, self.text, limit)), owner=self,
                        name="tokviz-truncate")
        worker.returned.connect(self._on_truncated)
        worker.errored.connect(self._on_truncate_failed)
        worker.finished.connect(self._forget_truncations)
        self._truncations.append(worker)
        return worker.start()

    def _forget_truncations(self) -> None:
        self._truncations = [w for w in self._truncations if w.is_running]

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setEnabled(busy)

    def _show_source(self) -> None:
        if self.folder:
            self.source_label.setText(f"<b>Folder:</b> {self.folder}")
        else:
            self.source_label.setText(f"<b>Text:</b> {len(self.text):,} characters from the window · "
                                      f"<b>special tokens:</b> {html.escape(self.policy_note)}")
        self.text_button.setVisible(bool(self.folder))
        self.skipped_side.setVisible(bool(self.folder))
        self.inflation_table.setVisible(not self.folder)
        self.truncate_button.setEnabled(not self.folder)

    # -- results ---------------------------------------------------------------------------
    def _on_progress(self, files: tuple[int, int]) -> None:
        done, total = files
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _on_truncated(self, outcome: TruncateOutcome) -> None:
        QGuiApplication.clipboard().setText(outcome.text)
        self.status.setText(
            f"Copied the first {len(outcome.text):,} of {len(self.text):,} characters "
            f"({outcome.tokens:,} tokens in {outcome.name}, limit {outcome.job.limit:,})."
        )
        self.truncated.emit(outcome.text)

    def _on_truncate_failed(self, error: Exception) -> None:
        self._show_error(message_of(error))

    def _on_finished(self, outcome: AnalysisOutcome) -> None:
        self._set_busy(False)
        self.outcome = outcome
        self._fill_choices(outcome)
        self.restyle()
        self._fill_inflation(outcome.inflation)
        self._fill_skipped(outcome.analysis)
        a = outcome.analysis
        files = f"{a.text.files:,} files, " if outcome.job.paths else ""
        note = "" if not outcome.load_errors else " Not loaded: " + "; ".join(outcome.load_errors)
        self.status.setText(
            f"{files}{a.text.chars:,} characters, {a.text.bytes:,} bytes, {a.text.words:,} words.{note}"
        )
        if outcome.job.limit is not None and not outcome.job.paths:
            self.limit_marks.emit({r.name: r.budget.fit_chars for r in a.results if r.budget})
        self.analysis_finished.emit(self.analysis)

    def _on_failed(self, error: Exception) -> None:
        message = message_of(error)
        self._set_busy(False)
        self.analysis_failed.emit(message)
        self._show_error(message)

    def _show_error(self, message: str) -> None:
        self.status.setText(f"<span style='color:#c62828'>{message}</span>")

    def _on_cancelled(self) -> None:
        self._set_busy(False)
        self.status.setText("Cancelled.")
        self.analysis_cancelled.emit()

    def _fill_choices(self, outcome: AnalysisOutcome) -> None:
        names = [r.name for r in outcome.analysis.results]
        for box, data in ((self.baseline_box, None), (self.truncate_box, outcome.specs)):
            current = box.currentText()
            box.blockSignals(True)
            box.clear()
            for name in names:
                box.addItem(name, data[name] if data else name)
            box.setCurrentIndex(max(box.findText(current), 0))
            box.blockSignals(False)

    def set_price(self, name: str, price: float) -> None:
        """USD per million tokens for one tokenizer (0: no price)."""
        self.prices[name] = price
        self.restyle()

    def restyle(self) -> None:
        """Apply prices, the characters rule and the baseline to the last result; refill the views."""
        if self.outcome is None:
            return
        a = self.outcome.analysis
        names = [r.name for r in a.results]
        baseline = self.baseline_box.currentText() if self.baseline_box.currentText() in names else names[0]
        base_tokens = a.by_name(baseline).tokens
        rule = self.rule_box.value()
        prices = {n: p for n, p in self.prices.items() if n in names and p > 0}
        options = dataclasses.replace(a.options, chars_per_token=rule, prices=prices, baseline=baseline)
        results = [
            dataclasses.replace(r, chars_per_token_rule=rule, baseline_tokens=base_tokens,
                                price_per_mtok=prices.get(r.name))
            for r in a.results
        ]
        self.analysis = dataclasses.replace(a, results=results, baseline=baseline, options=options)
        self._fill_table()
        self._fill_charts()

    def _fill_table(self) -> None:
        a = self.analysis
        assert a is not None
        self.table.setRowCount(len(a.results))
        for row, r in enumerate(a.results):
            t100 = None if r.tokens_per_char is None else 100 * r.tokens_per_char
            ratio = "baseline" if r.name == a.baseline else _num(r.ratio_to_baseline, ".3f") + "×"
            err = r.estimate_error_pct
            b = r.budget
            fit = at = "—"
            if b is not None:
                fit = f"{100 * b.fraction:.1f} %"
                if self.folder:
                    fit += f" ({b.files_fitting}/{b.files} files whole)"
                at = "whole text fits" if b.fits else f"{b.fit_chars:,}"
                if self.folder and not b.fits:
                    at = f"Σ {b.fit_chars:,} chars"
            cells = {
                COL_NAME: (r.name, r.name), COL_TOKENS: (f"{r.tokens:,}", r.tokens),
                COL_CPT: (_num(r.chars_per_token, ".2f"), r.chars_per_token),
                COL_BPT: (_num(r.bytes_per_token, ".2f"), r.bytes_per_token),
                COL_T100: (_num(t100, ".1f"), t100), COL_RATIO: (ratio, r.ratio_to_baseline),
                COL_EST: (f"{r.estimate:,.0f}", r.estimate), COL_ERR: (_num(err, "+.1f") + " %", err),
                COL_COST: ("—" if r.cost is None else f"${r.cost:,.6f}", r.cost),
                COL_FIT: (fit, None if b is None else b.fraction), COL_AT: (at, None if b is None else b.fit_chars),
            }
            for col, (label, value) in cells.items():
                item = QTableWidgetItem(label)
                item.setData(Qt.ItemDataRole.UserRole, value)
                if col != COL_NAME:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == COL_ERR and err is not None and abs(err) >= 10:
                    item.setForeground(BAD if abs(err) >= 25 else WARN)
                if col == COL_AT and b is not None and not b.fits:
                    item.setToolTip("Characters that fit, summed over the files (each file cut on its own)"
                                    if self.folder else self._context_at(b.fit_chars))
                self.table.setItem(row, col, item)
            self._price_box(row, r.name)

    def _price_box(self, row: int, name: str) -> None:
        box = self.table.cellWidget(row, COL_PRICE)
        if not isinstance(box, QDoubleSpinBox) or box.property("tokenizer") != name:
            box = QDoubleSpinBox(decimals=3, minimum=0.0, maximum=100_000.0, singleStep=0.1)
            box.setPrefix("$")
            box.setSpecialValueText("not set")
            box.setFrame(False)
            box.setProperty("tokenizer", name)
            box.setValue(self.prices.get(name, 0.0))
            box.valueChanged.connect(lambda value, n=name: self.set_price(n, value))
            self.table.setCellWidget(row, COL_PRICE, box)
        elif box.value() != self.prices.get(name, 0.0):
            box.blockSignals(True)
            box.setValue(self.prices.get(name, 0.0))
            box.blockSignals(False)

    def price_box(self, name: str) -> QDoubleSpinBox:
        for row in range(self.table.rowCount()):
            box = self.table.cellWidget(row, COL_PRICE)
            if isinstance(box, QDoubleSpinBox) and box.property("tokenizer") == name:
                return box
        raise KeyError(name)

    def row_of(self, name: str) -> int:
        for row in range(self.table.rowCount()):
            if self.table.item(row, COL_NAME).text() == name:
                return row
        raise KeyError(name)

    def cell(self, name: str, col: int) -> QTableWidgetItem:
        item = self.table.item(self.row_of(name), col)
        if item is None:
            raise KeyError(f"no cell {col} for {name}")
        return item

    def _context_at(self, offset: int) -> str:
        before, after = self.text[max(offset - 40, 0):offset], self.text[offset:offset + 40]
        return f"…{before}⟦limit⟧{after}…".replace("\n", "⏎")

    def _fill_charts(self) -> None:
        if self.analysis is None:
            return
        self.tokens_chart.set_model(tokens_model(self.analysis))
        self.scripts_chart.set_model(scripts_model(self.analysis, stacked=self.stacked_box.isChecked()))

    def _fill_inflation(self, rows: list[InflationRow]) -> None:
        names = list(rows[0].tokens) if rows else []
        t = self.inflation_table
        t.clear()
        t.setColumnCount(3 + len(names))
        t.setHorizontalHeaderLabels(["Variant", "Chars", "Bytes", *names])
        t.setRowCount(len(rows))
        for i, row in enumerate(rows):
            values = [row.variant, f"{row.chars:,}", f"{row.bytes:,}"]
            for n in names:
                base = rows[0].tokens[n]
                delta = f" ({100 * (row.tokens[n] - base) / base:+.0f} %)" if base and i else ""
                delta = delta.replace("+0 %", "±0 %").replace("-0 %", "±0 %")
                values.append(f"{row.tokens[n]:,}{delta}")
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(Qt.ItemDataRole.UserRole, row.tokens[names[col - 3]] if col >= 3 else None)
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                t.setItem(i, col, item)
        t.resizeColumnsToContents()
        same = len(rows) > 1 and all(r.tokens == rows[0].tokens for r in rows)
        if self.folder:
            note = " (for a text, not a folder)"
        elif same:
            note = " — this text has no JSON and no indentation to rewrite, so every variant costs the same"
        else:
            note = ""
        self.inflation_label.setText(INFLATION_TITLE + note)

    def _fill_skipped(self, analysis: Analysis) -> None:
        self.skipped_list.clear()
        for s in analysis.skipped:
            self.skipped_list.addItem(f"{s.path}: {s.reason}")
        self.skipped_label.setText(f"Skipped files: {len(analysis.skipped)}")

    # -- export ----------------------------------------------------------------------------
    def _choose_export(self, kind: str) -> None:
        if self.analysis is None:
            return
        filters = {"csv": "CSV (*.csv)", "json": "JSON (*.json)"}
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", f"tokviz-stats.{kind}", filters[kind])
        if path:
            (self.export_csv if kind == "csv" else self.export_json)(path)

    def export_csv(self, path: str | Path) -> None:
        """One row per tokenizer (`stats_rows`), written atomically."""
        self._export(lambda a: to_csv(stats_rows(a), path), path)

    def export_json(self, path: str | Path) -> None:
        """`Analysis.to_dict()` plus the format inflation rows, written atomically."""
        def write(a: Analysis) -> None:
            data = a.to_dict()
            data["format_inflation"] = [dataclasses.asdict(r) for r in (self.outcome.inflation if self.outcome else [])]
            to_json(data, path)

        self._export(write, path)

    def _export(self, write, path: str | Path) -> None:  # noqa: ANN001
        if self.analysis is None:
            raise RuntimeError("nothing to export yet")
        try:
            write(self.analysis)
        except OSError as e:
            self.status.setText(f"<span style='color:#c62828'>Cannot write {path}: {e.strerror or e}</span>")
            raise
        self.status.setText(f"Exported to {path}")

    # -- closing ---------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop every run and wait for it (idempotent)."""
        for worker in [self.run, *self._truncations]:
            if worker is not None:
                worker.stop()
        self._set_busy(False)


def counting_policy(specs: Sequence[str], policies: Sequence[SpecialPolicy]) -> tuple[SpecialPolicy, str]:
    """The one special-token policy the counts use, and how to say it: the panes' own when they
    agree; plain text (none) when they differ or say raise (a count cannot refuse the text).

    >>> counting_policy(["qwen", "gpt2"], [SpecialPolicy.parse("all")] * 2)[1]
    'all, as in the panes'
    >>> counting_policy(["qwen", "gpt2"], [SpecialPolicy.parse("all"), SpecialPolicy()])[1]
    'none (plain text): the panes differ (qwen all, gpt2 none)'
    """
    labels = [p.label for p in policies]
    if not labels:
        return SpecialPolicy(), "none (plain text)"
    if len(set(labels)) > 1:
        which = ", ".join(f"{s} {label}" for s, label in zip(specs, labels, strict=False))
        return SpecialPolicy(), f"none (plain text): the panes differ ({which})"
    if labels[0] == "raise":
        return SpecialPolicy(), "none (plain text): the panes' raise refuses such text, a count cannot"
    return policies[0], f"{labels[0]}, as in the panes"


def open_analysis(parent: QWidget | None, specs: list[str], text: str, *,
                  policies: Sequence[SpecialPolicy] = ()) -> AnalysisDialog:
    """Show a non-modal analysis dialog for `text` with the tokenizers of `specs` and start it;
    `policies`, one per spec, are the panes' special-token policies (see `counting_policy`)."""
    dialog = AnalysisDialog(specs, text, parent, policies=policies)
    dialog.show()
    dialog.start()
    return dialog
