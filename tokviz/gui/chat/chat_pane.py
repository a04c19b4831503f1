"""One tokenizer's column in Chat mode: its template picker, the templated tokens drawn by origin,
the counts per message and the injection findings.

The pane loads its tokenizer in this process on a `Worker` (the analysis needs `encode_trusted`,
which the compare panes' tokenizer processes do not offer) and renders each conversation on a new
`Worker`, aborting the one before: a superseded render never delivers (the Worker's guarantee).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.chat import ChatAnalysis
from tokviz.analysis.chat_sources import BUILTIN, TemplateSourceError, builtin, choose_template
from tokviz.analysis.chat_template import ChatTemplateError
from tokviz.gui.chat.remember import EditedTemplate
from tokviz.gui.chat.styles import token_styles
from tokviz.gui.chat.work import (
    ChatRequest,
    ChatResult,
    Conversation,
    LoadedChat,
    TemplateChoice,
    load_chat_tokenizer,
    render_chat,
)
from tokviz.gui.compare.cells import ViewOptions
from tokviz.gui.compare.token_view import TokenView
from tokviz.gui.work.worker import Worker, message_of

FILE_ITEM = "file…"
FINDINGS_MAX_HEIGHT = 150


class ChatPane(QFrame):
    """Renders the panel's conversation with this pane's template and shows the tokens by origin."""

    updated = Signal(object)  # self: loaded, a new analysis, or an error
    choice_changed = Signal(object)  # self: another template picked (the editor shows it)
    message_hovered = Signal(int)  # the message whose token the pointer is on; -1 for none / the template's

    def __init__(self, spec: str, *, options: ViewOptions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tokenPane")
        self.spec = spec
        self.options = options
        self.loaded: LoadedChat | None = None
        self.analysis: ChatAnalysis | None = None
        self.error: str | None = None
        self.template_error: ChatTemplateError | None = None
        self.busy = False
        self.choice: TemplateChoice | None = None
        self._choices: list[TemplateChoice] = []
        self.edited_from: str | None = None  # the label of the choice the "edited" one was typed over
        self.pending_edit: EditedTemplate | None = None  # a remembered edit, for when the pane has loaded
        self._conversation: Conversation | None = None
        self._render: Worker | None = None
        self._build_ui()
        self._loader: Worker | None = Worker(partial(load_chat_tokenizer, spec=spec), owner=self,
                                             name=f"tokviz-chat-load-{spec}")
        self._loader.returned.connect(self._on_loaded)
        self._loader.errored.connect(self._on_load_failed)
        self._loader.start()

    def _build_ui(self) -> None:
        self.title = QLabel(self.spec, objectName="paneHeader")
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.template_combo = QComboBox()
        self.template_combo.setToolTip("The chat template this pane renders with: the model's own, a built-in, "
                                       "a file, or the one edited in the template editor")
        self.template_combo.setMinimumContentsLength(12)
        self.template_combo.setEnabled(False)
        self.template_combo.activated.connect(self._on_combo)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.title, 1)
        header.addWidget(self.template_combo)
        self.subtitle = QLabel("loading…", objectName="paneSubheader", wordWrap=True)
        self.warning = QLabel(objectName="warningLabel", wordWrap=True)
        self.warning.hide()
        self.view = TokenView()
        self.counts = QLabel("—", objectName="statsLabel", wordWrap=True)
        self.findings = QLabel(objectName="warningLabel", wordWrap=True)
        self.findings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # many findings scroll instead of squeezing the tokens
        self.findings_box = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        self.findings_box.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.findings_box.setWidget(self.findings)
        self.findings_box.setMaximumHeight(FINDINGS_MAX_HEIGHT)
        self.findings_box.hide()
        for label in (self.subtitle, self.warning, self.counts, self.findings):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.setSpacing(2)
        box.addLayout(header)
        box.addWidget(self.subtitle)
        box.addWidget(self.warning)
        box.addWidget(self.view, 1)
        box.addWidget(self.counts)
        box.addWidget(self.findings_box)
        self.view.hovered.connect(self._on_token_hover)

    # -- templates ---------------------------------------------------------------------------
    def _on_loaded(self, loaded: LoadedChat) -> None:
        self.loaded = loaded
        self.title.setText(loaded.tokenizer.name)
        # a catalog vocabulary without a template of its own gets the built-in of its chat format
        self._choices = [TemplateChoice.of(f"default: {t.name}" if t.origin == "built-in" else f"own: {name}", t)
                         for name, t in sorted(loaded.own.items(), key=lambda item: item[0] != "default")]
        self._choices += [TemplateChoice.of(f"built-in: {name}", builtin(name)) for name in sorted(BUILTIN)]
        self._fill_combo()
        self.template_combo.setEnabled(True)
        self._select(0)
        pending, self.pending_edit = self.pending_edit, None
        if pending is not None and self._apply_edit(pending):
            self.updated.emit(self)  # the edit rendered it
            return
        self.subtitle.setText(self._describe())
        self.updated.emit(self)
        self._submit()

    def _on_load_failed(self, error: Exception) -> None:
        self._show_error(message_of(error))
        self.subtitle.setText("not loaded")
        self.updated.emit(self)

    def _fill_combo(self) -> None:
        self.template_combo.clear()
        self.template_combo.addItems([c.label for c in self._choices] + [FILE_ITEM])

    def _select(self, index: int) -> None:
        self.choice = self._choices[index]
        self.template_combo.setCurrentIndex(index)
        self.template_combo.setToolTip(f"{self.choice.name} · {self.choice.origin}")

    def _describe(self) -> str:
        if self.loaded is None or self.choice is None:
            return "loading…"
        own = "" if any(t.origin != "built-in" for t in self.loaded.own.values()) else " · no template of its own"
        return f"template {self.choice.name} ({self.choice.origin}){own}"

    def _on_combo(self, index: int) -> None:
        if index == len(self._choices):  # "file…"
            path, _ = QFileDialog.getOpenFileName(self, "Open chat template", "",
                                                  "Templates (*.jinja *.j2 *.json *.gguf);;All files (*)")
            if not path:
                self._select(self._choices.index(self.choice) if self.choice in self._choices else 0)
                return
            self.open_template_file(path)
            return
        self._select(index)
        self._changed()

    def open_template_file(self, path: str) -> None:
        """Render with the template in `path` (.jinja, tokenizer_config.json, .gguf)."""
        try:
            template = choose_template(self.spec, path)
        except (TemplateSourceError, ChatTemplateError, OSError) as e:
            self._show_error(f"{Path(path).name}: {e}")
            self._select(self._choices.index(self.choice) if self.choice in self._choices else 0)
            return
        self._add_choice(TemplateChoice.of(Path(path).name, template))

    def set_template_source(self, source: str) -> None:
        """Render with `source` (the template editor's text), based on the current choice."""
        if self.choice is None or source == self.choice.source:
            return
        self._edit(self.choice, source, announce=False)

    def edited_template(self) -> EditedTemplate | None:
        """The template as edited here, to remember (None when the pane renders an unedited one)."""
        if self.choice is None or self.choice.label != "edited" or self.edited_from is None:
            return None
        return EditedTemplate(self.edited_from, self.choice.source)

    def restore_edit(self, edit: EditedTemplate) -> None:
        """Render with a remembered edit: now if the pane has loaded, else once it has."""
        if self.loaded is None:
            self.pending_edit = edit
        else:
            self._apply_edit(edit)

    def _apply_edit(self, edit: EditedTemplate) -> bool:
        """Pick the choice the edit was typed over (the first one when it is gone, say a file not
        opened this run), then the edited text; False when the edit is that choice's own text."""
        labels = [c.label for c in self._choices]
        base = self._choices[labels.index(edit.based_on) if edit.based_on in labels else 0]
        if base.label == "edited" or edit.source == base.source:
            return False
        self._edit(base, edit.source)
        return True

    def _edit(self, base: TemplateChoice, source: str, *, announce: bool = True) -> None:
        """The one "edited" choice: `source` typed over `base` (over what `base` was typed over,
        when `base` is the edited one itself)."""
        if base.label != "edited":
            self.edited_from = base.label
        self._choices = [c for c in self._choices if c.label != "edited"]
        self._add_choice(base.edited(source), announce=announce)

    def _add_choice(self, choice: TemplateChoice, *, announce: bool = True) -> None:
        self._choices.append(choice)
        self._fill_combo()
        self._select(len(self._choices) - 1)
        self._changed(announce=announce)

    def choose(self, label: str) -> None:
        """Pick the template labelled `label` ("own: default", "built-in: chatml", ...)."""
        labels = [c.label for c in self._choices]
        if label not in labels:
            raise KeyError(f"{self.spec}: no template {label!r}; choose from {', '.join(labels)}")
        self._select(labels.index(label))
        self._changed()

    def template_labels(self) -> list[str]:
        return [c.label for c in self._choices]

    def _changed(self, *, announce: bool = True) -> None:
        self.subtitle.setText(self._describe())
        if announce:
            self.choice_changed.emit(self)
        self._submit()

    # -- rendering -----------------------------------------------------------------------------
    def set_conversation(self, conversation: Conversation) -> None:
        """Render this conversation with the pane's own template."""
        self._conversation = conversation
        self._submit()

    def set_options(self, options: ViewOptions) -> None:
        self.options = options
        self._submit()

    def _submit(self) -> None:
        if self.loaded is None or self._conversation is None or self.choice is None:
            return
        if self._render is not None:
            self._render.abort()
        request = ChatRequest(self._conversation, self.choice)
        self.busy = True
        self._render = Worker(partial(render_chat, tokenizer=self.loaded.tokenizer, request=request,
                                      options=self.options, fonts=self.view.fonts),
                              owner=self, name=f"tokviz-chat-{self.spec}")
        self._render.returned.connect(self._on_rendered)
        self._render.errored.connect(self._on_render_failed)
        self._render.start()

    def _on_rendered(self, result: ChatResult) -> None:
        self.busy = False
        self.error = self.template_error = None
        self.warning.hide()
        self.analysis = result.analysis
        self.view.set_result(result.pane_result)
        self.view.set_token_styles(token_styles(result.analysis))
        self.view.set_limit(result.request.conversation.context_limit)
        self._show_counts(result.analysis)
        self.updated.emit(self)

    def _on_render_failed(self, error: Exception) -> None:
        self.busy = False
        self.analysis = None
        self.template_error = error if isinstance(error, ChatTemplateError) else None
        self.view.set_result(None)
        self.counts.setText("—")
        self.findings_box.hide()
        self._show_error(message_of(error))
        self.updated.emit(self)

    def _show_error(self, message: str) -> None:
        self.error = message
        self.warning.setText(message)
        self.warning.show()

    def _show_counts(self, a: ChatAnalysis) -> None:
        messages = self._conversation.messages if self._conversation is not None else []
        room = ""
        if a.room is not None and a.context_limit is not None:
            room = (f" · room {a.room:,} of {a.context_limit:,}" if a.room >= 0
                    else f" · {-a.room:,} over the limit of {a.context_limit:,}")
        shown = {run.message for run in a.rendered.runs if run.end > run.start}
        per = " · ".join(
            f"#{i} {messages[i].get('role', '?') if i < len(messages) else '?'} {n:,}"
            + ("" if i in shown or not (messages[i].get("content") if i < len(messages) else "")
               else " (left out by the template)")
            for i, n in enumerate(a.per_message()))
        naive = "same tokens" if not a.naive_differs else f"{len(a.naive):,} tokens, different"
        self.counts.setText(
            f"{a.total:,} tokens = {a.overhead:,} template + {a.total - a.overhead:,} in "
            f"{a.message_count} messages{room}\n{per}\nnaive pipeline: {naive}"
        )
        if a.findings:
            self.findings.setText("\n".join(f"⚠ {f.describe(a.tokenizer_name)}" for f in a.findings))
            self.findings_box.show()
        else:
            self.findings_box.hide()

    # -- highlighting --------------------------------------------------------------------------
    def highlight_message(self, index: int) -> None:
        """Highlight the tokens holding message `index` (-1: none)."""
        tokens = self.analysis.tokens_of(index) if self.analysis is not None and index >= 0 else []
        if not tokens:
            self.view.clear_highlight()
            return
        first, last = self.analysis.tokens[tokens[0]].token, self.analysis.tokens[tokens[-1]].token  # type: ignore[union-attr]
        self.view.highlight_chars(first.start, last.end)

    def _on_token_hover(self, index: int) -> None:
        tokens = self.analysis.tokens if self.analysis is not None else ()
        self.message_hovered.emit(tokens[index].origin if 0 <= index < len(tokens) else -1)

    def shutdown(self) -> None:
        for worker in (self._loader, self._render):
            if worker is not None:
                worker.stop()

