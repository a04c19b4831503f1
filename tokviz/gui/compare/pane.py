"""One tokenizer column: header (name, buttons), special-token policy, token view, details, stats."""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.stats import Counts
from tokviz.core.encoding import Encoding
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.gui.compare.cell_metrics import Fonts
from tokviz.gui.compare.cells import ViewOptions
from tokviz.gui.compare.pane_keys import moved_to
from tokviz.gui.compare.pane_result import PaneResult, prepare
from tokviz.gui.compare.service import preparer, tokenizer_service
from tokviz.gui.compare.stream_dialog import MAX_STREAM_TOKENS
from tokviz.gui.compare.token_view import TokenView
from tokviz.gui.widgets.labels import ElidedLabel
from tokviz.gui.widgets.theme import icon
from tokviz.model.compare import PaneModel
from tokviz.service import protocol as p
from tokviz.service.client import Died, Event
from tokviz.service.protocol import TokenizerInfo

POLICIES = ("none", "all", "raise")
MAX_OCCURRENCES_SHOWN = 8


class TokenPane(QFrame):
    """Shows how one tokenizer cuts the window's text. It renders a `PaneModel` (its spec, text,
    policy and "as the model sees it", sent there as intents from its controls; the last encoding
    received). Its vocabulary lives in the tokenizer service (`tokviz.gui.compare.service`): the
    pane sends requests and handles replies as events on the GUI thread; an encoding is prepared
    into cells off the GUI thread (`Preparer`)."""

    remove_requested = Signal(object)  # self
    move_requested = Signal(object, int)  # self, -1 left / +1 right
    stream_requested = Signal(object)
    hovered_chars = Signal(int, int)  # char span of the hovered token; -1, -1 when none
    token_clicked = Signal(object, int)  # self, token index
    scrolled = Signal(object, int)  # self, top character
    updated = Signal(object)  # a new result, an error or the tokenizer loaded
    message = Signal(str)  # for the status bar
    jump_requested = Signal(int, int)  # a character span of the text to show (a refused special token)
    stream_ready = Signal(object, object, object, object)  # self, ids, naive, buffered

    def __init__(self, model: PaneModel | str, *, options: ViewOptions, fonts: Fonts | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tokenPane")
        #: what this pane shows (a spec alone: a model of its own, with the default policy)
        self.model = PaneModel(model) if isinstance(model, str) else model
        self.options = options
        self.tokenizer: TokenizerInfo | None = None
        self.result: PaneResult | None = None
        self.error: str | None = None
        self.busy = False
        self._gen = 0
        self._asked: _Asked | None = None  # the request at hand
        self._stream: tuple[int, list[int]] = (0, [])  # the last stream asked for: its number, its ids
        self._load_retried = False
        self._refused_span = (0, 0)
        self._build_ui(fonts)
        self.model.events.policy.connect(self._on_policy)
        self.model.events.model_adds.connect(self._on_model_adds)
        self._key: int | None = tokenizer_service().attach(self.spec, self._on_event)
        self.destroyed.connect(partial(_release, self._key, self))

    @property
    def spec(self) -> str:
        return self.model.spec

    # -- UI --------------------------------------------------------------------------------
    def _build_ui(self, fonts: Fonts | None) -> None:
        # the name has the header row to itself but for four small buttons, and elides in the
        # middle when the pane is narrow (the whole name is its tooltip); the policy box has its own row
        self.title = ElidedLabel(self.spec, objectName="paneHeader")
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.setSpacing(0)
        header.addWidget(self.title, 1)
        for glyph, tip, slot in (
            (icon("play"), "Stream-decode this pane's tokens", lambda: self.stream_requested.emit(self)),
            ("◀", "Move left", lambda: self.move_requested.emit(self, -1)),
            ("▶", "Move right", lambda: self.move_requested.emit(self, 1)),
            (icon("remove"), "Remove this pane", lambda: self.remove_requested.emit(self)),
        ):
            button = QToolButton(toolTip=tip, autoRaise=True)
            if isinstance(glyph, str):
                button.setText(glyph)
            else:
                button.setIcon(glyph)
            button.clicked.connect(slot)
            header.addWidget(button)
        self.policy_combo = QComboBox(editable=True, minimumContentsLength=5)  # a narrow pane keeps its label
        self.policy_combo.addItems(POLICIES)
        self.policy_combo.setToolTip(
            "Special-token text in the input: none = plain text, all = control tokens,\n"
            "raise = error (tiktoken's default), or a comma-separated set to parse"
        )
        self.policy_combo.setCurrentText(self.model.policy_text)
        self.policy_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.policy_combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.policy_combo.lineEdit().editingFinished.connect(self._policy_edited)
        self.policy_combo.activated.connect(self._policy_edited)
        policy_label = QLabel("Special tokens:", objectName="paneSubheader", toolTip=self.policy_combo.toolTip())
        policy_label.setBuddy(self.policy_combo)
        policy_label.setMinimumWidth(policy_label.sizeHint().width())
        policy_row = QHBoxLayout()
        policy_row.setContentsMargins(6, 0, 0, 2)
        policy_row.addWidget(policy_label)
        policy_row.addWidget(self.policy_combo, 1)
        # "as the model sees it": the BOS/EOS the model's own tokenizer adds (shown once loaded,
        # for a model that adds any), so the count is the one Hugging Face's tokenizer reports
        self.model_adds_check = QCheckBox(checked=self.model.model_adds, visible=False)
        self.model_adds_check.toggled.connect(self.model.set_model_adds)
        self.subtitle = QLabel("loading…", objectName="paneSubheader")
        self.warning = QLabel(objectName="warningLabel", wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.warning.linkActivated.connect(self._on_warning_link)
        self.warning.hide()
        self.view = TokenView(fonts=fonts)
        # keyboard: arrows move the selected token; the pane's frame shows where the focus is
        self.view.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.view.installEventFilter(self)
        self.details = QLabel(objectName="paneSubheader", wordWrap=True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.hide()
        self.stats_label = QLabel("—", objectName="statsLabel")
        # labels whose text changes must not change the pane's width: every view would re-wrap
        for label in (self.subtitle, self.warning, self.details, self.stats_label):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        subtitle_row = QHBoxLayout()
        subtitle_row.setContentsMargins(0, 0, 4, 0)
        subtitle_row.addWidget(self.subtitle, 1)
        subtitle_row.addWidget(self.model_adds_check)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.setSpacing(2)
        for row in (header, subtitle_row, policy_row):
            box.addLayout(row)
        box.addWidget(self.warning)
        box.addWidget(self.view, 1)
        box.addWidget(self.details)
        box.addWidget(self.stats_label)
        self.view.hovered.connect(self._on_hover)
        self.view.clicked.connect(lambda i: self.token_clicked.emit(self, i))
        self.view.scrolled.connect(lambda c: self.scrolled.emit(self, c))

    # -- keyboard and focus ----------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Focus on the view marks the pane; arrow keys, Home and End move the selected token (as
        a click there would), other keys are the view's (Page Up/Down scroll)."""
        kind = event.type()
        if watched is self.view and kind in (QEvent.Type.FocusIn, QEvent.Type.FocusOut):
            for widget in (self, self.title):
                widget.setProperty("focused", kind == QEvent.Type.FocusIn)
                widget.style().unpolish(widget)
                widget.style().polish(widget)
        elif (watched is self.view and kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
              and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier and self.result is not None):
            target = moved_to(event.key(), self.view.selected, len(self.result.tokens), self.view.token_layout)
            if target is not None:
                self.token_clicked.emit(self, target)
                return True
        return super().eventFilter(watched, event)

    # -- the tokenizer service --------------------------------------------------------------
    @property
    def running(self) -> bool:
        """The pane is attached to the tokenizer service."""
        return self._key is not None

    def shutdown(self) -> None:
        """Let go of the service (the last pane to go stops its process), of any preparation, and
        of its model's events (the model would hold the pane, and the pane the model)."""
        key, self._key = self._key, None
        if key is not None:
            _release(key, self)
        self.model.events.policy.disconnect(self._on_policy)
        self.model.events.model_adds.disconnect(self._on_model_adds)

    def request_stream(self) -> bool:
        """Ask the tokenizer service for the naive and buffered decode of this pane's tokens;
        `stream_ready` follows. False when there is nothing to stream."""
        if self.result is None or self._key is None:
            return False
        self._stream = (self._stream[0] + 1, self.result.ids[:MAX_STREAM_TOKENS].tolist())
        tokenizer_service().client.stream(self._key, *self._stream)
        return True

    # -- requests --------------------------------------------------------------------------
    @property
    def policy(self) -> SpecialPolicy:
        return self.model.policy

    def set_text(self, text: str) -> None:
        """Tokenize `text` (not again while this very text is being tokenized or shown: a large
        paste is asked for as it begins and once more when the editor has it all)."""
        if self.model.set_text(text) or self.error is not None or not (self.busy or self.current):
            self._submit()

    def set_options(self, options: ViewOptions) -> None:
        self.options = options
        self.view.color_by_id = options.color_by_id
        self.view.viewport().update()
        if self.result is not None and self.result.options != options:
            self._submit()

    @property
    def model_adds(self) -> bool:
        """The pane shows the text as the model sees it, with the BOS/EOS its tokenizer adds (asked
        for, and this tokenizer adds some)."""
        return self.model.model_adds and self.tokenizer is not None and self.tokenizer.adds_specials

    def set_model_adds(self, on: bool) -> None:
        self.model.set_model_adds(on)

    def _on_model_adds(self, model: PaneModel) -> None:
        with QSignalBlocker(self.model_adds_check):
            self.model_adds_check.setChecked(model.model_adds)
        self._submit()

    def set_policy(self, spec: str) -> None:
        """Cut by the policy `spec` (asked for again even when it is the policy at hand)."""
        if not self.model.set_policy(spec):
            self._submit()

    def _policy_edited(self, *_args: object) -> None:
        if not self.model.set_policy(self.policy_combo.currentText()):
            self._on_policy(self.model)  # the same policy: asked again only after a failure

    def _on_policy(self, model: PaneModel) -> None:
        if self.policy_combo.currentText().strip() != model.policy_text:
            self.policy_combo.setCurrentText(model.policy_text)
        if self.result is None or self.result.policy != self.policy or self.error:
            self._submit()

    def _submit(self) -> None:
        if self.model.text is None or self.tokenizer is None or self._key is None:
            return
        self._gen += 1
        self.busy = True
        self.subtitle.setText(f"{self.tokenizer.describe()} · tokenizing…")
        asked = self._asked = _Asked(self._gen, self.model.text, self.policy, self.model_adds, self.options,
                                     time.perf_counter())
        last = self.model.encoding_for(asked.text, asked.policy, asked.model_adds)
        if last is not None:
            self._prepare(asked, last, [], received=False)  # only the view options changed: the last encoding serves
        else:
            self._send(self._key, asked)

    def _send(self, key: int, asked: _Asked) -> None:
        asked.generation = tokenizer_service().client.encode(key, asked.gen, asked.text, asked.policy,
                                                             asked.model_adds)

    # -- replies ---------------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        """A reply of the tokenizer service for this pane, or its process's death."""
        match event:
            case p.Loaded() if self.tokenizer is None:  # (again after a restart: nothing new)
                self._on_loaded(event.info)
            case p.LoadFailed() if self.tokenizer is None:
                self._on_load_failed(event.message)
            case p.Encoded() if self._asked is not None and event.gen == self._asked.gen:  # else superseded
                self._on_encoded(self._asked, event)
            case p.Failed():
                self._on_failed(event.gen, event.message)
            case p.Superseded() if event.gen == self._gen:
                self.busy = False
            case p.Streamed() if event.gen == self._stream[0]:
                self.stream_ready.emit(self, self._stream[1], list(event.naive), list(event.buffered))
            case Died():
                self._on_died(event)

    def _on_died(self, died: Died) -> None:
        """The service process died. A load or an encode it had is asked for once more (the next
        request starts a new process, and every pane's vocabulary is loaded there again); a
        second death is this pane's failure."""
        if self._key is None:
            return
        if self.tokenizer is None and self.error is None:
            if self._load_retried:
                self._on_load_failed(str(died.message))
            else:
                self._load_retried = True
                tokenizer_service().client.load_again(self._key)
            return
        asked = self._asked
        if asked is None or not self.busy or asked.generation != died.generation:
            return
        if asked.retried:
            self._on_failed(asked.gen, f"{died.message}; starting it again failed")
        else:
            asked.retried = True
            self._send(self._key, asked)

    def _on_encoded(self, asked: _Asked, reply: p.Encoded) -> None:
        received = time.perf_counter()
        stages = [*reply.encoding.extra.get("stages", ()), ("asked", asked.began, asked.began)]
        self._prepare(asked, reply.encoding, [*stages, ("received", received, received)], received=True)

    def _prepare(self, asked: _Asked, encoding: Encoding, stages: list, *, received: bool) -> None:
        """Turn `encoding` into cells off the GUI thread; `_on_finished` follows. A `received`
        encoding is compacted there first: its span columns that meet become views of one array,
        and the buffers it was received in go."""
        work = partial(_prepared, asked, encoding, self.view.fonts, stages, received)
        preparer().submit(self, work, self._on_finished, self._on_prepare_failed)

    def _on_prepare_failed(self, error: BaseException) -> None:
        if self._asked is not None:
            self._on_failed(self._asked.gen, f"{type(error).__name__}: {error}")

    def _on_loaded(self, tokenizer: TokenizerInfo) -> None:
        self.tokenizer = tokenizer
        self.title.setText(tokenizer.name)
        self.title.setToolTip(tokenizer.describe())
        if tokenizer.adds_specials:
            added = " … ".join(filter(None, (" ".join(tokenizer.added_before), " ".join(tokenizer.added_after))))
            self.model_adds_check.setText(f"+{added}" if len(added) <= 8 else "+BOS/EOS")
            self.model_adds_check.setToolTip(
                f"As the model sees it: add {added} as the model's own tokenizer does\n"
                "(Hugging Face encode, sentencepiece add_bos, the GGUF file's add_bos_token),\n"
                "so the count equals the model's"
            )
            self.model_adds_check.show()
        self.subtitle.setText(tokenizer.describe())
        specials = sorted(tokenizer.special_tokens, key=tokenizer.special_tokens.__getitem__)[:50]
        self.policy_combo.addItems([s for s in specials if self.policy_combo.findText(s) < 0])
        self._submit()
        self.updated.emit(self)

    def _on_load_failed(self, message: str) -> None:
        self._show_error(message)
        self.subtitle.setText("not loaded")
        self.updated.emit(self)

    def _on_finished(self, result: PaneResult) -> None:
        if result.gen != self._gen:
            return
        self.busy = False
        asked = self._asked
        if asked is not None and isinstance(result.tokens, Encoding):  # what a change of view options reuses
            self.model.receive(asked.text, asked.policy, asked.model_adds, result.tokens)
        self.error = None
        self.warning.hide()
        unknown = self.policy.unknown_to(self.tokenizer.special_tokens) if self.tokenizer else []
        if unknown:  # the policy names a token this vocabulary does not have: plain text here
            names = ", ".join(html.escape(repr(t), quote=False) for t in unknown)
            self.warning.setText(f"{names} {'is' if len(unknown) == 1 else 'are'} not a special token of "
                                 f"{html.escape(self.short_name)}: plain text here")
            self.warning.show()
        self.result = result
        self.view.color_by_id = result.options.color_by_id
        self.view.set_result(result)
        self.details.hide()
        self.subtitle.setText(f"{self.tokenizer.describe()} · {result.seconds * 1000:.0f} ms")  # type: ignore[union-attr]
        self.updated.emit(self)

    def _on_failed(self, gen: int, message: str) -> None:
        if gen != self._gen:
            return
        self.busy = False
        self.result = None
        self.model.fail()
        self.view.set_result(None)
        found = self.model.refused_special(self.tokenizer.special_tokens) if self.tokenizer else None
        if found is not None:
            self._show_refused(*found)
        else:
            self._show_error(message)
        note = "special-token text refused" if found else "failed"
        self.subtitle.setText(f"{self.tokenizer.describe()} · {note}" if self.tokenizer else note)
        self.updated.emit(self)

    def _show_refused(self, token: str, start: int) -> None:
        text = self.model.text or ""
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        self._refused_span = (start, start + len(token))
        self._show_error(
            f"{token} at line {line}, column {column} is special-token text, and the policy raise refuses it: "
            "switch this pane's policy to none (cut it as plain text) or all (cut it as the control token)",
            f"<b>{html.escape(token)}</b> at line {line}, column {column} (<a href='jump'>show it</a>) is "
            "special-token text, and the policy <i>raise</i> refuses it. Switch this pane's policy to "
            "<a href='none'>none</a> (cut it as plain text) or <a href='all'>all</a> (cut it as the control token).",
        )

    def _on_warning_link(self, link: str) -> None:
        if link == "jump":
            self.jump_requested.emit(*self._refused_span)
        elif link in ("none", "all"):
            self.set_policy(link)

    def _show_error(self, message: str, rich: str | None = None) -> None:
        """Say `message` in the warning label (as the rich text `rich`, when given) and the status bar."""
        self.error = message
        self.warning.setText(html.escape(message) if rich is None else rich)
        self.warning.show()
        self.stats_label.setText("—")
        self.message.emit(f"{self.short_name}: {message}")

    # -- stats, hover, details -------------------------------------------------------------
    @property
    def short_name(self) -> str:
        """The vocabulary's name, or the file name of a spec that did not load (never a long path)."""
        if self.tokenizer is not None:
            return self.tokenizer.name
        return Path(self.spec).name if ("/" in self.spec or "\\" in self.spec) else self.spec

    @property
    def current(self) -> bool:
        """The pane's result is for the text it was last given (not an older one while it works)."""
        r, text = self.result, self.model.text
        return not self.busy and r is not None and (r.text is text or r.text == text)

    @property
    def failed(self) -> bool:
        """The pane's last request failed, and no other is under way."""
        return bool(self.error) and not self.busy

    def stats(self) -> Counts | None:
        """The counts of the current result; None while the pane works or when it failed."""
        r = self.result
        return Counts(len(r.tokens), r.n_chars, r.n_bytes) if r is not None and self.current else None

    def show_stats(self, first: Counts | None) -> None:
        """Show the counts, compared with `first` (the first pane's; None for the first pane itself)."""
        stats = self.stats()
        if stats is None:
            self.stats_label.setText("tokenizing…" if self.busy or self.tokenizer is None and not self.error else "—")
            self.stats_label.setToolTip("")
        else:
            self.stats_label.setText(stats.summary(first))
            self.stats_label.setToolTip(
                f"{stats.tokens:,} tokens for {stats.chars:,} characters ({stats.bytes:,} UTF-8 bytes)\n"
                "chars/tok: characters per token · bytes/tok: bytes per token\n"
                "tok/100 chars: tokens per 100 characters (what 100 characters cost)"
            )

    def _on_hover(self, index: int) -> None:
        if index < 0 or self.result is None:
            self.hovered_chars.emit(-1, -1)
        else:
            token = self.result.tokens[index]
            self.hovered_chars.emit(token.start, token.end)

    def show_details(self, index: int | None) -> None:
        """Select token `index` and describe it with its occurrences (None clears)."""
        self.view.select(index)
        if index is None or self.result is None:
            self.details.hide()
            return
        where = np.flatnonzero(self.result.ids == self.result.tokens[index].id)
        shown = ", ".join(f"#{i}" for i in where[:MAX_OCCURRENCES_SHOWN])
        more = "…" if len(where) > MAX_OCCURRENCES_SHOWN else ""
        info = self.view.tooltip_for(index).replace("\n", " · ")
        self.details.setText(f"{info}\noccurs {len(where)}× in this text: {shown}{more}")
        self.details.show()


@dataclass
class _Asked:
    """A pane's request at hand."""

    gen: int
    text: str
    policy: SpecialPolicy
    model_adds: bool
    options: ViewOptions
    began: float
    generation: int = 0  # the service process it went to
    retried: bool = False  # sent once more after that process died


def _prepared(asked: _Asked, encoding: Encoding, fonts: Fonts, stages: list, received: bool) -> PaneResult:
    """The pane result of `encoding` (on the preparing thread)."""
    began = time.perf_counter()
    if received:
        encoding = encoding.compact()
    tokens, cells, widths, breaks = prepare(encoding, asked.options, fonts)
    done = time.perf_counter()
    return PaneResult(asked.gen, asked.text, asked.policy, asked.options, tokens, cells, widths, breaks,
                      encoding.starts, encoding.ends, encoding.n_bytes, done - asked.began,
                      extra={"stages": [*stages, ("prepare", began, done)]})


def _release(key: int, pane: QObject) -> None:
    """A pane is gone: its key leaves the service, its preparation the preparer."""
    tokenizer_service().detach(key)
    preparer().forget(pane)
