"""After training: keep only the first k merges and see what that does to a text's token count.

A slider over the learned merges re-cuts the compare window's text (or a shipped sample while
there is none) with only the first k merges; beside it, the token count of that text against k,
so the flattening is visible: a bigger vocabulary is not free (a bigger embedding table), and each
added merge saves fewer tokens than the one before.

Encoding runs on a `Worker` (`serve_recut`: tiktoken releases the GIL; a long text takes a while);
the newest request of each kind wins.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from tokviz.gui.trainer.curve_chart import CurveChart
from tokviz.gui.trainer.worker import Counted, CurvePoints, RecutFailed, recut_inbox, serve_recut
from tokviz.gui.work.worker import Worker
from tokviz.training.trainer import TrainingResult

DEBOUNCE_MS = 40
FALLBACK_SAMPLE = "mixed.txt"


NO_CURVE = "the curve appears when training is done"


def fallback_text() -> str:
    try:
        from tokviz.core.resources import sample_text

        return sample_text(FALLBACK_SAMPLE)
    except Exception:  # a broken install must not break the panel
        return "The quick brown fox jumps over the lazy dog. 다람쥐 헌 쳇바퀴에 타고파."


class RecutBox(QWidget):
    """The k slider, the token count with k merges, and the text's curve over k."""

    counted = Signal(int, int)  # k, tokens (the newest answer for the current text)
    curve_ready = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: TrainingResult | None = None
        self._text = ""
        self._own_text = False
        self.k: int | None = None
        self.tokens: int | None = None
        self._gen = 0  # count requests
        self._curve_gen = 0
        self.header = QLabel(wordWrap=True)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._on_slider)
        self.count_label = QLabel("Train a vocabulary to re-cut the text with fewer merges.", wordWrap=True)
        self.count_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.curve = CurveChart("This text: tokens vs vocabulary size", color="#f28e2b")
        self.curve.placeholder = NO_CURVE
        left = QVBoxLayout()
        left.addWidget(self.header)
        left.addWidget(self.slider)
        left.addWidget(self.count_label)
        left.addStretch(1)
        row = QHBoxLayout(self)
        row.addLayout(left, 2)
        row.addWidget(self.curve, 3)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self._request_count)
        self._worker: Worker | None = None
        self._inbox = recut_inbox()
        self.set_text("")

    # -- inputs --------------------------------------------------------------------------------
    def set_text(self, text: str) -> None:
        """The text to re-cut; empty means a shipped sample."""
        self._own_text = bool(text)
        self._text = text or fallback_text()
        what = "the compare window's text" if self._own_text else f"the sample {FALLBACK_SAMPLE} (no compare text yet)"
        self.header.setText(f"Re-cut {what} ({len(self._text):,} characters) with only the first k merges:")
        self._refresh()

    @property
    def text(self) -> str:
        return self._text

    def set_result(self, result: TrainingResult | None) -> None:
        self.result = result
        n = len(result.merges) if result is not None else 0
        self.slider.blockSignals(True)
        self.slider.setRange(0, n)
        self.slider.setValue(n)
        self.slider.setPageStep(max(n // 20, 1))
        self.slider.blockSignals(False)
        self.slider.setEnabled(result is not None and n > 0)
        if result is None:  # a new run, or a cancelled one: no "counting…" left from the last
            self.curve.clear()
            self.curve.placeholder = NO_CURVE
            self.count_label.setText("Train a vocabulary to re-cut the text with fewer merges.")
        self._refresh()

    def set_k(self, k: int) -> None:
        """Keep only the first k merges (the slider's value); counts again even when unchanged."""
        if self.slider.value() == k:
            self._on_slider(k)
        else:
            self.slider.setValue(k)

    # -- requests ------------------------------------------------------------------------------
    def _ensure_worker(self) -> None:
        if self._worker is None:
            self._inbox = recut_inbox()
            self._worker = Worker(partial(serve_recut, inbox=self._inbox), owner=self, name="tokviz-recut")
            self._worker.yielded.connect(self._on_answer)
            self._worker.start()

    def _refresh(self) -> None:
        """A new text or result: redo the curve and the count."""
        self.curve.clear()
        self.tokens = None
        if self.result is None:
            return
        self._curve_gen += 1
        self.curve.placeholder = "counting…"
        self.curve.x_max = 256 + len(self.result.merges)
        self._ensure_worker()
        self._inbox.put("curve", (self._curve_gen, self.result, self._text))
        self._request_count()

    def _on_slider(self, k: int) -> None:
        self.curve.set_marker(256 + k)
        self.count_label.setText(f"k = {k:,} merges (vocabulary {256 + k:,}): counting…")
        self._debounce.start()

    def _request_count(self) -> None:
        if self.result is None:
            return
        self._gen += 1
        self._ensure_worker()
        self._inbox.put("count", (self._gen, self.result, self._text, self.slider.value()))

    # -- answers -------------------------------------------------------------------------------
    def _on_answer(self, answer: object) -> None:
        if isinstance(answer, Counted):
            self._on_counted(answer.gen, answer.k, answer.tokens)
        elif isinstance(answer, CurvePoints):
            self._on_curve(answer.gen, answer.ks, answer.counts)
        elif isinstance(answer, RecutFailed):
            self._on_failed(answer.gen, answer.message)

    def _on_counted(self, gen: int, k: int, tokens: int) -> None:
        if gen != self._gen or k != self.slider.value():
            return
        self.k, self.tokens = k, tokens
        self.curve.set_marker(256 + k, tokens)
        n_chars = max(len(self._text), 1)
        full = self.curve.ys[-1] if self.curve.ys else None
        text = (f"k = {k:,} merges (vocabulary {256 + k:,}): <b>{tokens:,} tokens</b> "
                f"({n_chars / max(tokens, 1):.2f} characters per token)")
        if full is not None and k < len(self.result.merges):
            text += f"<br>with all {len(self.result.merges):,} merges: {full:,.0f} tokens ({tokens - full:+,.0f} here)"
        self.count_label.setText(text)
        self.counted.emit(k, tokens)

    def _on_curve(self, gen: int, ks: list[int], counts: list[int]) -> None:
        if self.result is None or gen != self._curve_gen:  # a result or text newer than this curve
            return
        self.curve.set_points([256 + k for k in ks], counts)
        k = self.slider.value()
        self.curve.set_marker(256 + k, self.tokens if self.k == k else None)
        self.curve.note = _halves_note(ks, counts)
        self.curve_ready.emit()

    def _on_failed(self, gen: int, message: str) -> None:
        self.count_label.setText(f"cannot re-cut: {message}")

    def shutdown(self) -> None:
        """Stop counting and wait for the count at hand (on close); a later request starts a fresh worker."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()


def _halves_note(ks: list[int], counts: list[int]) -> str:
    """How much the first and the second half of the merges saved: the gains shrink.

    >>> _halves_note([0, 50, 100], [1000, 600, 500])
    'first half of the merges saved 400 tokens, the second half 100'
    """
    if len(ks) < 3 or ks[-1] == 0:
        return ""
    half = ks[-1] / 2
    mid = min(range(len(ks)), key=lambda i: abs(ks[i] - half))
    first, second = counts[0] - counts[mid], counts[mid] - counts[-1]
    return f"first half of the merges saved {first:,} tokens, the second half {second:,}"
