"""The pipeline view: the stages a text goes through in one tokenizer, top to bottom.

`PipelineDialog` loads the tokenizer named by a spec on a worker thread and shows
`tokviz.analysis.pipeline.pipeline`'s stages as labelled boxes: the normalized text, the
pre-tokenization chunks, the model's pieces (with their ids), the special tokens added and the
final ids. For SentencePiece models two options apply: "Add BOS" and "ChatGLM-6B profile", which
wraps the model in `ChatGLMTokenizer` and adds its preprocessing steps (lower-casing, `<n>`,
`<|tab|>`, `<|blank_n|>`) and the appended `[gMASK]` `<sop>`.

This module does not decide what a stage holds (the core does) and never branches on the backend
beyond offering the SentencePiece-only options.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.pipeline import Stage, pipeline
from tokviz.core import catalog
from tokviz.core.backends.chatglm import ChatGLMTokenizer
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import TokenKind, display_text
from tokviz.gui.tools.replay_dialog import Chip, ChipFlow, scrolled
from tokviz.gui.widgets.dialogs import WorkDialog
from tokviz.gui.widgets.labels import busy_page, error_label, plain_text_labels
from tokviz.gui.widgets.theme import token_colors
from tokviz.gui.work.worker import Worker, message_of

MAX_CHARS = 20_000  # a longer text is cut, with a message
MAX_TEXT_SHOWN = 4_000  # characters of a text stage shown in its box


def is_sentencepiece(tokenizer: Tokenizer | None) -> bool:
    """A plain SentencePiece model (the ChatGLM-6B profile and BOS apply to it). The first ask
    reads the model's pieces: ask on a worker thread first (then it is remembered)."""
    return tokenizer is not None and tokenizer.sentencepiece is not None


def stages_for(
    base: Tokenizer, text: str, policy: SpecialPolicy, *, chatglm: bool, add_bos: bool
) -> list[Stage]:
    """The stages of `text` in `base`, or in its ChatGLM-6B profile (TokenizerError when `base`
    lacks ChatGLM's pieces)."""
    options: dict[str, Any] = {
        "allowed_special": policy.allowed_special, "disallowed_special": policy.disallowed_special,
    }
    if chatglm:
        return pipeline(ChatGLMTokenizer(base), text, **options)
    if is_sentencepiece(base):
        options["add_bos"] = add_bos
    return pipeline(base, text, **options)


def own_bos(tokenizer: Tokenizer, text: str) -> str:
    """The piece a vocabulary adds before `text` by its own rule (a GGUF's add_bos_token, a
    tokenizer.json's post-processor), or "" when it adds none (tiktoken)."""
    added = tokenizer.added_around(text)  # what it adds unasked
    return tokenizer.piece(added.before[0]) if added is not None and added.before else ""


class StageBox(QFrame):
    """One stage: its title, what happened there, and its text, chips or ids."""

    def __init__(self, stage: Stage, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="tokenPane")
        self.stage = stage
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 8)
        layout.setSpacing(4)
        self.title = QLabel(stage.title, objectName="paneHeader")
        layout.addWidget(self.title)
        if stage.note:
            note = QLabel(stage.note, objectName="paneSubheader", wordWrap=True)
            note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(note)
        self.text_label: QLabel | None = None
        self.chips: ChipFlow | None = None
        if stage.text is not None:
            shown = display_text(stage.text[:MAX_TEXT_SHOWN])
            if len(stage.text) > MAX_TEXT_SHOWN:
                shown += f" … ({len(stage.text) - MAX_TEXT_SHOWN:,} more characters)"
            self.text_label = QLabel(shown or "(empty)", wordWrap=True)
            self.text_label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.text_label.setStyleSheet("background: #f6f7f9; border-radius: 4px; padding: 4px;")
            layout.addWidget(self.text_label)
        chips = self._chips(stage)
        if chips:
            self.chips = ChipFlow()
            self.chips.set_chips(chips)
            layout.addWidget(self.chips)
        plain_text_labels(self)

    @staticmethod
    def _chips(stage: Stage) -> list[Chip]:
        colors = token_colors()
        n = len(colors.tokens)
        special = colors.kinds.get(TokenKind.SPECIAL, QColor("#b39ddb"))
        if stage.items:
            with_ids = len(stage.ids) == len(stage.items)
            color = special if stage.name == "special tokens" else None
            return [
                Chip(
                    display_text(item) or "∅", str(stage.ids[k]) if with_ids else "",
                    color or colors.tokens[k % n], f"{item!r}" + (f" · id {stage.ids[k]}" if with_ids else ""),
                )
                for k, item in enumerate(stage.items)
            ]
        return [Chip(str(i), color=QColor("#eef0f3")) for i in stage.ids]

    def labels(self) -> list[str]:
        return [c.label for c in self.chips.chips] if self.chips is not None else []


class PipelineDialog(WorkDialog):
    """The stages of `text` in the tokenizer `spec`, as a vertical list of stage boxes."""

    ready = Signal()  # stages (or a message saying why there are none) are shown

    def __init__(self, spec: str, text: str, *, policy: SpecialPolicy | str = "none",
                 tokenizer: Tokenizer | None = None, chatglm: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.cut = max(0, len(text) - MAX_CHARS)
        self.text = text[:MAX_CHARS]
        self.policy = policy if isinstance(policy, SpecialPolicy) else SpecialPolicy.parse(policy)
        self.tokenizer = tokenizer
        self.stages: list[Stage] = []
        self.boxes: list[StageBox] = []
        self.message = ""
        self._calls: list[Worker] = []
        self.setWindowTitle(f"Pipeline — {spec}")
        self._build_ui(chatglm)
        self.resize(900, 760)
        self.refresh()

    def _build_ui(self, chatglm: bool) -> None:
        self.header = QLabel(self.spec, objectName="paneHeader", wordWrap=True)
        self.chatglm_box = QCheckBox("ChatGLM-6B profile")
        self.chatglm_box.setToolTip(
            "Apply ChatGLM-6B's preprocessing around this SentencePiece model: lower-casing, \\n -> <n>,\n"
            "\\t -> <|tab|>, space runs -> <|blank_n|>, [gMASK] <sop> appended (needs ice_text.model\n"
            "or a model trained with ChatGLM's user-defined symbols)"
        )
        self.chatglm_box.setChecked(chatglm)
        self.bos_box = QCheckBox("Add BOS")
        self.bos_box.setToolTip("Prepend the model's BOS, as transformers' Llama/Mistral tokenizers do")
        for box in (self.chatglm_box, self.bos_box):
            box.setEnabled(False)  # until the tokenizer is known to be SentencePiece
            box.toggled.connect(self.refresh)
        options = QHBoxLayout()
        options.addWidget(self.chatglm_box)
        options.addWidget(self.bos_box)
        options.addStretch(1)
        self.cut_label = QLabel(
            f"The text has {self.cut + len(self.text):,} characters: the first {MAX_CHARS:,} are shown.",
            objectName="warningLabel", wordWrap=True,
        )
        self.cut_label.setVisible(self.cut > 0)
        self.stack = QStackedWidget()
        self.stack.addWidget(busy_page(f"Loading {self.spec}…"))
        self.message_label = error_label()
        message_page = QWidget()
        QVBoxLayout(message_page).addWidget(self.message_label, 0, Qt.AlignmentFlag.AlignTop)
        self.stack.addWidget(message_page)
        self.stages_widget = QWidget()
        self.stages_layout = QVBoxLayout(self.stages_widget)
        self.stages_layout.setSpacing(2)
        self.stack.addWidget(scrolled(self.stages_widget))
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addLayout(options)
        layout.addWidget(self.cut_label)
        layout.addWidget(self.stack, 1)
        plain_text_labels(self)

    # -- computing --------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute the stages for the current options (on a worker thread)."""
        for call in self._calls:
            call.abort()
        self._calls = [c for c in self._calls if c.is_running]
        spec, base, text, policy = self.spec, self.tokenizer, self.text, self.policy
        chatglm, add_bos = self.chatglm_box.isChecked(), self.bos_box.isChecked()

        def work(job: object) -> tuple[Tokenizer, list[Stage] | str, str | None]:
            tok = base if base is not None else catalog.load(spec)
            try:
                sentencepiece = is_sentencepiece(tok)  # asked here first, so _show's ask is cheap
                stages = stages_for(tok, text, policy, chatglm=sentencepiece and chatglm, add_bos=add_bos)
                return tok, stages, None if sentencepiece else own_bos(tok, text)
            except Exception as e:  # noqa: BLE001 (the tokenizer is loaded: keep it, say what went wrong)
                return tok, str(e) or type(e).__name__, None

        call = Worker(work, owner=self, name="tokviz-pipeline")
        call.returned.connect(self._show)
        call.errored.connect(self._on_error)
        self._calls.append(call)
        call.start()

    def _on_error(self, error: Exception) -> None:
        self._on_failed(message_of(error))

    def _on_failed(self, message: str) -> None:
        self._show_message(f"Cannot show the pipeline of {self.spec}: {message}")

    def _show_message(self, message: str) -> None:
        self.message = message
        self.message_label.setText(message)
        self.stack.setCurrentIndex(1)
        self.ready.emit()

    def _show(self, result: tuple[Tokenizer, list[Stage] | str, str | None]) -> None:
        self.tokenizer, stages, bos = result
        sentencepiece = is_sentencepiece(self.tokenizer)
        self.chatglm_box.setEnabled(sentencepiece)
        self.bos_box.setEnabled(sentencepiece and not self.chatglm_box.isChecked())
        if bos is not None:  # the vocabulary decides: the greyed box shows its rule, not a choice
            with QSignalBlocker(self.bos_box):
                self.bos_box.setChecked(bool(bos))
            self.bos_box.setToolTip(f"Set by the vocabulary itself: it adds {bos} before the text" if bos
                                    else "Set by the vocabulary itself: it adds no BOS")
        profile = " · ChatGLM-6B profile" if sentencepiece and self.chatglm_box.isChecked() else ""
        self.header.setText(f"{self.tokenizer.describe()}{profile} · {len(self.text):,} characters")
        if isinstance(stages, str):
            self._show_message(stages)
            return
        self.message = ""
        self.stages = stages
        self._set_boxes(stages)
        self.stack.setCurrentIndex(2)
        self.ready.emit()

    def _set_boxes(self, stages: Sequence[Stage]) -> None:
        while self.stages_layout.count():
            item = self.stages_layout.takeAt(0)
            if (widget := item.widget()) is not None:
                widget.deleteLater()
        self.boxes = []
        for k, stage in enumerate(stages):
            if k:
                arrow = QLabel("↓", alignment=Qt.AlignmentFlag.AlignHCenter, objectName="paneSubheader")
                self.stages_layout.addWidget(arrow)
            box = StageBox(stage)
            self.boxes.append(box)
            self.stages_layout.addWidget(box)
        self.stages_layout.addStretch(1)

    def box(self, name: str) -> StageBox:
        """The first stage box of a stage name (`normalization`, `model`, `ids`, ...)."""
        return next(b for b in self.boxes if b.stage.name == name)

    # -- closing ----------------------------------------------------------------------------------
    def shutdown(self) -> None:
        for call in self._calls:
            call.stop()


def open_pipeline_dialog(parent: QWidget | None, spec: str, text: str, *,
                       policy: SpecialPolicy | str = "none") -> PipelineDialog:
    """Open (show) a non-modal pipeline view of `text` in `spec`.

    >>> open_pipeline_dialog(window, pane.spec, window.text(), policy=pane.policy)  # doctest: +SKIP
    """
    view = PipelineDialog(spec, text, policy=policy, parent=parent)
    view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    view.show()
    return view
