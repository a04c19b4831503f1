"""The Chat mode's panel: the conversation and the template on the left, one `ChatPane` per
tokenizer on the right, each rendering the same conversation with its own template.

Edits wait a moment (`DEBOUNCE_MS`) before every pane renders again; `flush()` renders at once.
The template editor shows the template of one pane (picked above it); typing in it makes that
pane render the edited text, and the pane's template error comes back here with its line marked.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.chat import template_variables
from tokviz.analysis.chat_template import Limits
from tokviz.gui.chat.chat_pane import ChatPane
from tokviz.gui.chat.messages import DEFAULT_CONVERSATION, MessageEditor
from tokviz.gui.chat.remember import ChatState, EditedTemplate, conversation_path, load_state, save_state
from tokviz.gui.chat.work import Conversation
from tokviz.gui.compare.cells import ViewOptions

DEBOUNCE_MS = 300
#: a render cannot be interrupted between the template's budget checks, so closing the window while
#: a runaway template renders waits for it: the GUI stops templates sooner than the CLI does (a
#: budget check can come late in a quadratic string-building loop, well past the budget)
GUI_LIMITS = Limits(seconds=3.0)
ERROR_LINE_COLOR = QColor(220, 38, 38, 60)


def parse_template_kwargs(text: str) -> dict[str, Any]:
    """`KEY=VALUE` pairs separated by spaces (shell quoting), VALUE as JSON where it parses, else a string.

    >>> parse_template_kwargs('enable_thinking=false effort="high low" n=3')
    {'enable_thinking': False, 'effort': 'high low', 'n': 3}
    """
    try:  # shlex's unbalanced quotes and a pair that is not KEY=VALUE both say where
        return template_variables(shlex.split(text))
    except ValueError as e:
        raise ValueError(f"template variables: {e}") from None


class ChatPanel(QWidget):
    """The conversation editor, the template editor and the chat panes."""

    message = Signal(str)  # for the status bar
    pane_updated = Signal(object)  # a ChatPane: loaded, rendered or failed

    def __init__(self, *, options: ViewOptions | None = None, context_limit: int | None = None,
                 remember: str | Path | None = None, restore: bool = True, parent: QWidget | None = None) -> None:
        """`remember`: the settings file beside which the conversation is kept between runs
        (`remember.py`; None keeps nothing); `restore`: show the one kept there."""
        super().__init__(parent)
        self.remember_path = conversation_path(remember) if remember else None
        self.options = options or ViewOptions()
        self.limits: Limits = GUI_LIMITS
        self.tools: list[Mapping[str, Any]] | None = None
        self.panes: list[ChatPane] = []
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.flush)
        self._template_debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._template_debounce.timeout.connect(self.apply_template_edit)
        self._build_ui(context_limit)
        self.set_messages(DEFAULT_CONVERSATION)
        self.restore_note: str | None = None  # why the remembered conversation is not shown
        self._edits: dict[str, EditedTemplate] = {}  # spec -> its remembered template edit
        if restore and self.remember_path is not None:
            self.restore()

    # -- remembered between runs ------------------------------------------------------------------
    def state(self) -> ChatState:
        # the panes' edits now; a remembered edit of a vocabulary with no pane this run stays
        edits = dict(self._edits)
        for pane in self.panes:
            if pane.loaded is None and pane.pending_edit is not None:
                continue  # not loaded yet: its remembered edit stands
            edit = pane.edited_template()
            if edit is None:
                edits.pop(pane.spec, None)
            else:
                edits[pane.spec] = edit
        return ChatState(self.messages(), [dict(t) for t in self.tools] if self.tools is not None else None,
                         self.generation.isChecked(), self.variables.text(), edits)

    def restore(self) -> bool:
        """Show the remembered conversation, whole; a file that is not whole is not used at all
        (the example stays, and `restore_note` and the status bar say why)."""
        if self.remember_path is None:
            return False
        try:
            state = load_state(self.remember_path)
        except ValueError as e:
            self.restore_note = f"the remembered conversation is not shown: {e}"
            self.message.emit(self.restore_note)
            return False
        if state is None:
            return False
        with QSignalBlocker(self.generation), QSignalBlocker(self.variables):
            self.generation.setChecked(state.generation_prompt)
            self.variables.setText(state.variables)
        self.set_messages(state.messages, tools=state.tools)
        self._edits = dict(state.templates)
        for pane in self.panes:
            if pane.spec in self._edits:
                pane.restore_edit(self._edits[pane.spec])
        return True

    def save(self) -> bool:
        """Keep the conversation for the next run (atomically); False, with the reason in the status
        bar, when it cannot be written."""
        if self.remember_path is None:
            return False
        try:
            save_state(self.remember_path, self.state())
        except OSError as e:
            self.message.emit(f"the conversation could not be kept in {self.remember_path}: {e.strerror or e}")
            return False
        return True

    def _build_ui(self, context_limit: int | None) -> None:
        self.editor = MessageEditor()
        self.editor.changed.connect(self._debounce.start)
        self.editor.hovered.connect(self.highlight_message)
        self.generation = QCheckBox("add_generation_prompt")
        self.generation.setToolTip("End the prompt with the assistant's turn opened, as for generating a reply")
        self.generation.toggled.connect(self._debounce.start)
        self.variables = QLineEdit(placeholderText="enable_thinking=false …")
        self.variables.setToolTip("Template keyword arguments: KEY=VALUE separated by spaces, VALUE as JSON")
        self.variables.textChanged.connect(self._debounce.start)
        self.context = QSpinBox(minimum=0, maximum=10_000_000, singleStep=1024, specialValueText="none")
        self.context.setValue(context_limit or 0)
        self.context.setToolTip("Context limit in tokens: the room each pane has left (0: none)")
        self.context.valueChanged.connect(self._debounce.start)
        self.input_error = QLabel(objectName="warningLabel", wordWrap=True)
        self.input_error.hide()
        self.tools_label = QLabel(objectName="paneSubheader")
        self.tools_label.hide()
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow(self.generation)
        form.addRow("variables", self.variables)
        form.addRow("context", self.context)

        self.template_pane = QComboBox()
        self.template_pane.setToolTip("Whose template the editor shows; typing renders that pane with the edit")
        self.template_pane.currentIndexChanged.connect(self._show_template_of_current)
        self.template_edit = QPlainTextEdit()
        self.template_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.template_edit.setPlaceholderText("the chosen pane's chat template (Jinja)")
        self.template_edit.textChanged.connect(self._template_debounce.start)
        self.template_error = QLabel(objectName="warningLabel", wordWrap=True)
        self.template_error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.template_error.hide()
        template_head = QHBoxLayout()
        template_head.addWidget(QLabel("Template of"))
        template_head.addWidget(self.template_pane, 1)
        template_box = QWidget()
        tbox = QVBoxLayout(template_box)
        tbox.setContentsMargins(0, 0, 0, 0)
        tbox.addLayout(template_head)
        tbox.addWidget(self.template_edit, 1)
        tbox.addWidget(self.template_error)

        conversation = QWidget()
        cbox = QVBoxLayout(conversation)
        cbox.setContentsMargins(0, 0, 0, 0)
        cbox.addWidget(QLabel("<b>Conversation</b>"))
        cbox.addWidget(self.editor, 1)
        cbox.addLayout(form)
        cbox.addWidget(self.tools_label)
        cbox.addWidget(self.input_error)
        left = QSplitter(Qt.Orientation.Vertical)
        left.setMinimumWidth(280)
        left.setChildrenCollapsible(False)
        left.addWidget(conversation)
        left.addWidget(template_box)
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 1)
        left.setSizes([3000, 1000])  # the template editor a quarter: the messages come first
        self.pane_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.pane_splitter.setChildrenCollapsible(False)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(left)
        splitter.addWidget(self.pane_splitter)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([340, 1000])
        self.splitter = splitter
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(splitter)

    # -- panes -----------------------------------------------------------------------------
    def set_specs(self, specs: Sequence[str]) -> None:
        """One pane per spec, in order; panes for specs already shown are kept."""
        if [p.spec for p in self.panes] == list(specs):
            return
        keep = {p.spec: p for p in self.panes}
        panes = []
        for spec in specs:
            pane = keep.pop(spec, None) or self._new_pane(spec)
            panes.append(pane)
        for pane in keep.values():
            pane.shutdown()
            pane.hide()
            pane.setParent(None)
            pane.deleteLater()
        self.panes = panes
        for i, pane in enumerate(panes):
            self.pane_splitter.insertWidget(i, pane)
        current = self.edited_pane()
        with QSignalBlocker(self.template_pane):
            self.template_pane.clear()
            self.template_pane.addItems([p.spec for p in panes])
            if current in panes:
                self.template_pane.setCurrentIndex(panes.index(current))
        self._show_template_of_current()
        self.flush()

    def _new_pane(self, spec: str) -> ChatPane:
        pane = ChatPane(spec, options=self.options)
        if spec in self._edits:
            pane.restore_edit(self._edits[spec])
        pane.updated.connect(self._on_pane_updated)
        pane.choice_changed.connect(self._on_choice_changed)
        pane.message_hovered.connect(self._on_pane_message_hover)
        return pane

    def edited_pane(self) -> ChatPane | None:
        i = self.template_pane.currentIndex()
        return self.panes[i] if 0 <= i < len(self.panes) else None

    def set_options(self, options: ViewOptions) -> None:
        self.options = options
        for pane in self.panes:
            pane.set_options(options)

    def set_context_limit(self, limit: int | None) -> None:
        self.context.setValue(limit or 0)

    # -- the conversation ----------------------------------------------------------------------
    def set_messages(self, messages: Sequence[Mapping[str, Any]], *,
                     tools: Sequence[Mapping[str, Any]] | None = None) -> None:
        """A new conversation; `tools` are the tool definitions the template gets (`tools=`)."""
        self.tools = list(tools) if tools is not None else None
        self.tools_label.setText(f"tools: {len(self.tools)} (from the file)" if self.tools else "")
        self.tools_label.setVisible(bool(self.tools))
        self.editor.set_messages(messages)
        self.flush()

    def messages(self) -> list[dict[str, Any]]:
        return self.editor.messages()

    def conversation(self) -> Conversation | None:
        """What every pane renders now (None, with the reason shown, when the variables do not parse)."""
        try:
            variables = parse_template_kwargs(self.variables.text())
        except ValueError as e:
            self.input_error.setText(str(e))
            self.input_error.show()
            return None
        self.input_error.hide()
        return Conversation(self.messages(), self.generation.isChecked(), self.tools, variables,
                            self.context.value() or None, self.limits)

    def flush(self) -> None:
        """Render the conversation in every pane now."""
        self._debounce.stop()
        conversation = self.conversation()
        if conversation is None:
            return
        for pane in self.panes:
            pane.set_conversation(conversation)

    def highlight_message(self, index: int) -> None:
        """Highlight message `index`'s tokens in every pane (-1: none)."""
        for pane in self.panes:
            pane.highlight_message(index)

    def _on_pane_message_hover(self, index: int) -> None:
        """A token of message `index` hovered in a pane: that message's row and tokens everywhere."""
        self.editor.mark(index)
        self.highlight_message(index)

    # -- the template editor ---------------------------------------------------------------------
    def _show_template_of_current(self, *_args: object) -> None:
        pane = self.edited_pane()
        source = pane.choice.source if pane is not None and pane.choice is not None else ""
        if source != self.template_edit.toPlainText():
            with QSignalBlocker(self.template_edit):
                self.template_edit.setPlainText(source)
        self._template_debounce.stop()
        self._show_template_error(pane)

    def apply_template_edit(self) -> None:
        """Make the edited pane render the editor's text."""
        self._template_debounce.stop()
        pane = self.edited_pane()
        if pane is not None:
            pane.set_template_source(self.template_edit.toPlainText())

    def _on_choice_changed(self, pane: ChatPane) -> None:
        if pane is self.edited_pane():
            self._show_template_of_current()

    def _on_pane_updated(self, pane: ChatPane) -> None:
        if pane is self.edited_pane():
            if pane.choice is not None and not self.template_edit.toPlainText():
                self._show_template_of_current()
            self._show_template_error(pane)
        self.pane_updated.emit(pane)
        if all(p.analysis is not None or p.error for p in self.panes):
            self.message.emit(f"chat of {len(self.editor.rows)} messages · " + " · ".join(
                f"{p.title.text()}: {p.analysis.total:,} tokens" if p.analysis else f"{p.spec}: {p.error}"
                for p in self.panes))

    def _show_template_error(self, pane: ChatPane | None) -> None:
        error = pane.template_error if pane is not None else None
        selections = []
        if error is None:
            self.template_error.hide()
        else:
            self.template_error.setText(str(error))
            self.template_error.show()
            if error.line is not None and 1 <= error.line <= self.template_edit.blockCount():
                selection = QTextEdit.ExtraSelection()
                fmt = QTextCharFormat()
                fmt.setBackground(ERROR_LINE_COLOR)
                fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
                selection.format = fmt
                cursor = QTextCursor(self.template_edit.document().findBlockByNumber(error.line - 1))
                selection.cursor = cursor
                selections.append(selection)
        self.template_edit.setExtraSelections(selections)

    def shutdown(self) -> None:
        for pane in self.panes:
            pane.shutdown()
