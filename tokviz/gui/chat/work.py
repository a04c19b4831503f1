"""What a chat pane runs on its `Worker`: load a tokenizer with its templates, and render + cut one
conversation. Plain functions (no widgets): the analysis is `tokviz.analysis.chat`'s, this module
only packs its tokens into what the token view draws.

Each render compiles its own `ChatTemplate` from the source: a template's step budget lives on its
environment, so one instance must not serve two renders at once (a superseded render may still be
running when the next starts).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokviz.analysis.chat import ChatAnalysis, analyze_chat
from tokviz.analysis.chat_sources import templates_for
from tokviz.analysis.chat_template import DEFAULT_LIMITS, ChatTemplate, Limits
from tokviz.core import catalog
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import Cell, ViewOptions, cells_for
from tokviz.gui.compare.pane_result import PaneResult
from tokviz.gui.compare.token_layout import LineBreaks, TokenWidths
from tokviz.gui.work.worker import Job


@dataclass(frozen=True)
class TemplateChoice:
    """A template as the picker offers it: its source and what it may use as variables."""

    label: str  # "own: default", "built-in: chatml", a file name, "edited"
    source: str
    name: str
    origin: str
    special_strings: Mapping[str, str]

    @classmethod
    def of(cls, label: str, template: ChatTemplate) -> TemplateChoice:
        return cls(label, template.source, template.name, template.origin, dict(template.special_strings))

    def edited(self, source: str) -> TemplateChoice:
        """This template with `source` typed over it (an edit of an edit keeps the first's name)."""
        if self.label == "edited":
            return dataclasses.replace(self, source=source)
        return TemplateChoice("edited", source, f"{self.name} (edited)", "edited here", self.special_strings)


@dataclass(frozen=True)
class LoadedChat:
    tokenizer: Tokenizer
    own: dict[str, ChatTemplate]


@dataclass(frozen=True)
class Conversation:
    """What every pane renders: the messages and the template's inputs (each pane picks its template)."""

    messages: Sequence[Mapping[str, Any]]
    add_generation_prompt: bool = False
    tools: Sequence[Mapping[str, Any]] | None = None
    template_kwargs: Mapping[str, Any] | None = None
    context_limit: int | None = None
    limits: Limits = DEFAULT_LIMITS


@dataclass(frozen=True)
class ChatRequest:
    conversation: Conversation
    choice: TemplateChoice


@dataclass(frozen=True)
class ChatResult:
    request: ChatRequest
    analysis: ChatAnalysis
    pane_result: PaneResult


def load_chat_tokenizer(job: Job, *, spec: str) -> LoadedChat:
    """The tokenizer (in this process: `analyze_chat` needs `encode_trusted`) and its own templates."""
    tokenizer = catalog.load(spec)
    job.check()
    return LoadedChat(tokenizer, templates_for(spec))


def render_chat(job: Job, *, tokenizer: Tokenizer, request: ChatRequest, options: ViewOptions,
                fonts: Fonts) -> ChatResult:
    """Render the conversation, cut it, and lay out its cells (raises `ChatTemplateError`)."""
    t0 = time.perf_counter()
    choice, chat = request.choice, request.conversation
    template = ChatTemplate(choice.source, name=choice.name, origin=choice.origin,
                            special_strings=choice.special_strings)
    analysis = analyze_chat(
        tokenizer, template, chat.messages, add_generation_prompt=chat.add_generation_prompt,
        tools=chat.tools, template_kwargs=chat.template_kwargs, context_limit=chat.context_limit, limits=chat.limits,
    )
    job.check()
    return ChatResult(request, analysis, pane_result(analysis, options, fonts, time.perf_counter() - t0))


def pane_result(analysis: ChatAnalysis, options: ViewOptions, fonts: Fonts, seconds: float = 0.0) -> PaneResult:
    """The analysis' trusted tokens as the token view's `PaneResult`."""
    tokens = [t.token for t in analysis.tokens]
    cells = cells_for(tokens, options)
    table: list[Cell] = []  # each distinct Cell object once (tokens of one id and bytes share one)
    place: dict[int, int] = {}
    keys: list[int] = []
    for cell in cells:
        k = place.get(id(cell))
        if k is None:
            k = place[id(cell)] = len(table)
            table.append(cell)
        keys.append(k)
    index = np.array(keys, dtype=np.int64)
    text = analysis.text
    return PaneResult(
        0, text, SpecialPolicy.parse("none"), options, tokens, cells,
        TokenWidths.measured_later(table, index, lambda: CellMeasurer(fonts).width),  # by the thread that draws
        LineBreaks.from_counts(np.array([c.newlines for c in cells], dtype=np.int32)),
        np.array([t.start for t in tokens], dtype=np.int64),
        np.array([t.end for t in tokens], dtype=np.int64),
        len(text.encode("utf-8", "surrogatepass")), seconds,
    )
