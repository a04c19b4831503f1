"""The compare window's state: the text, its panes in order, and how they draw.

`CompareModel` holds the text every pane cuts, the panes (`PaneModel`), the view options, the
context limit, whether the panes scroll together and which pane shows the last trained vocabulary.
The window and its panes render it and send it intents (`set_text`, `add_pane`,
`PaneModel.set_policy`, ...); the model announces each change with an `Event` after making it. It
knows no Qt, no widgets and no service: which process encodes, and how a result is drawn, are the
GUI's business.

>>> model = CompareModel()
>>> seen = []
>>> _ = model.events.panes.connect(seen.append)
>>> a, b = model.add_pane("cl100k_base"), model.add_pane("qwen", policy="all")
>>> model.move_pane(b, -1), model.specs(), [p.policy.label for p in model.panes]
(True, ['qwen', 'cl100k_base'], ['all', 'none'])
>>> [(change.kind, change.pane.spec, change.index) for change in seen]
[('added', 'cl100k_base', 0), ('added', 'qwen', 1), ('moved', 'qwen', 0)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from tokviz.core.encoding import Encoding
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.model.events import Event

ViewMode = Literal["text", "ids", "both"]
VIEW_MODES: tuple[ViewMode, ...] = ("text", "ids", "both")


@dataclass(frozen=True)
class ViewOptions:
    """How every pane draws its tokens (one set of options for the whole window)."""

    mode: ViewMode = "text"
    visible_whitespace: bool = True
    color_by_id: bool = False


@dataclass(frozen=True)
class Received:
    """An encoding a pane received, and what it was asked for with."""

    text: str
    policy: SpecialPolicy
    model_adds: bool
    encoding: Encoding


class PaneEvents:
    def __init__(self) -> None:
        self.policy: Event[PaneModel] = Event()
        self.model_adds: Event[PaneModel] = Event()
        self.received: Event[PaneModel] = Event()


class PaneModel:
    """One pane: its vocabulary, the text it was given, what it asks the tokenizer for, and the
    last encoding received.

    >>> pane = PaneModel("cl100k_base")
    >>> pane.set_policy(" raise "), pane.policy.label, pane.set_policy("raise")
    (True, 'raise', False)
    """

    def __init__(self, spec: str, *, policy: str = "none", model_adds: bool = False) -> None:
        self.spec = spec
        self.events = PaneEvents()
        #: the text the pane cuts (None before it is given one)
        self.text: str | None = None
        self._policy_text = _policy_text(policy)
        self._model_adds = model_adds
        self._received: Received | None = None
        self._shown: Encoding | None = None

    def set_text(self, text: str) -> bool:
        """Cut `text`; False when it is the text the pane has already (identity first: a long text
        is compared only when it is another object)."""
        if self.text is not None and (text is self.text or text == self.text):
            return False
        self.text = text
        return True

    @property
    def policy_text(self) -> str:
        """The policy as the user wrote it (`none`, `all`, `raise` or a comma-separated set)."""
        return self._policy_text

    @property
    def policy(self) -> SpecialPolicy:
        return SpecialPolicy.parse(self._policy_text)

    def set_policy(self, text: str) -> bool:
        """Treat special-token text by `text`'s policy; True (and `events.policy`) when it changed."""
        text = _policy_text(text)
        if text == self._policy_text:
            return False
        self._policy_text = text
        self.events.policy.emit(self)
        return True

    @property
    def model_adds(self) -> bool:
        """Asked for the text as the model sees it (with the BOS/EOS its tokenizer adds, when it
        adds any: the pane knows whether it does)."""
        return self._model_adds

    def set_model_adds(self, on: bool) -> None:
        if on != self._model_adds:
            self._model_adds = on
            self.events.model_adds.emit(self)

    @property
    def received(self) -> Received | None:
        """The last encoding received (kept to draw the same text again with other options)."""
        return self._received

    def receive(self, text: str, policy: SpecialPolicy, model_adds: bool, encoding: Encoding) -> None:
        """The pane shows `encoding`, received for that request."""
        self._received = Received(text, policy, model_adds, encoding)
        self._shown = encoding
        self.events.received.emit(self)

    def fail(self) -> None:
        """The pane's last request failed: it shows no encoding (the last received is kept)."""
        self._shown = None

    @property
    def shown(self) -> Encoding | None:
        """The encoding the pane shows: None before its first and after a failed request."""
        return self._shown

    def refused_special(self, special_tokens: Iterable[str]) -> tuple[str, int] | None:
        """Under `raise`, the special token whose text the policy refuses first in the pane's text,
        and where it starts (what the pane points at); None under any other policy.

        >>> pane = PaneModel("cl100k_base", policy="raise")
        >>> pane.set_text("a <|fim_prefix|> b <|endoftext|>")
        True
        >>> pane.refused_special(["<|endoftext|>", "<|fim_prefix|>", "<|fim"])  # the first, the longest there
        ('<|fim_prefix|>', 2)
        """
        text = self.text
        if text is None or self.policy.disallowed_special != "all":
            return None
        found = [(i, -len(t), t) for t in special_tokens if t and (i := text.find(t)) >= 0]
        if not found:
            return None
        start, _, token = min(found)
        return token, start

    def encoding_for(self, text: str, policy: SpecialPolicy, model_adds: bool) -> Encoding | None:
        """The encoding received for exactly this request, if it is the last one received."""
        r = self._received
        if r is None or r.policy != policy or r.model_adds != model_adds:
            return None
        return r.encoding if r.text is text or r.text == text else None


@dataclass(frozen=True)
class PanesChanged:
    """A pane was added, removed or moved; `index` is where it is now (where it was, when removed)."""

    kind: Literal["added", "removed", "moved"]
    pane: PaneModel
    index: int


class CompareEvents:
    def __init__(self) -> None:
        self.text: Event[str] = Event()
        self.panes: Event[PanesChanged] = Event()
        self.options: Event[ViewOptions] = Event()
        self.context_limit: Event[int | None] = Event()


class CompareModel:
    """See the module docstring."""

    def __init__(self, text: str = "", options: ViewOptions | None = None) -> None:
        self.events = CompareEvents()
        #: scrolling one pane scrolls the others to the same character
        self.sync_scroll = True
        self._text = text
        self._panes: list[PaneModel] = []
        self._trained: PaneModel | None = None
        self._options = options or ViewOptions()
        self._context_limit: int | None = None

    # -- the text ---------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return self._text

    def set_text(self, text: str) -> None:
        """Cut `text` in every pane; `events.text` follows even for the same text (a large paste
        is asked for as it begins and again once the editor has it all: the panes tell apart)."""
        self._text = text
        self.events.text.emit(text)

    # -- the panes --------------------------------------------------------------------------------
    @property
    def panes(self) -> tuple[PaneModel, ...]:
        return tuple(self._panes)

    def specs(self) -> list[str]:
        return [pane.spec for pane in self._panes]

    def add_pane(self, spec: str, *, policy: str = "none", model_adds: bool = False) -> PaneModel:
        """A pane for vocabulary `spec`, after the others."""
        pane = PaneModel(spec, policy=policy, model_adds=model_adds)
        self._panes.append(pane)
        self.events.panes.emit(PanesChanged("added", pane, len(self._panes) - 1))
        return pane

    def add_trained_pane(self, spec: str) -> PaneModel:
        """A pane for a finished training run's vocabulary: it takes the place of the previous
        run's pane while that is still shown, so runs do not pile up panes."""
        previous = self._trained
        pane = self.add_pane(spec)
        if previous in self._panes:
            self.move_pane(pane, self._panes.index(previous) - self._panes.index(pane))
            self.remove_pane(previous)
        self._trained = pane
        return pane

    def remove_pane(self, pane: PaneModel) -> bool:
        """False when `pane` is not one of this model's (removed already)."""
        if pane not in self._panes:
            return False
        index = self._panes.index(pane)
        del self._panes[index]
        self.events.panes.emit(PanesChanged("removed", pane, index))
        return True

    def move_pane(self, pane: PaneModel, delta: int) -> bool:
        """Move `pane` `delta` places (left when negative), as far as the ends allow; False when
        it stays where it is."""
        i = self._panes.index(pane)
        j = min(max(i + delta, 0), len(self._panes) - 1)
        if i == j:
            return False
        self._panes.insert(j, self._panes.pop(i))
        self.events.panes.emit(PanesChanged("moved", pane, j))
        return True

    # -- how the panes draw -----------------------------------------------------------------------
    @property
    def options(self) -> ViewOptions:
        return self._options

    def set_options(self, options: ViewOptions) -> None:
        if options != self._options:
            self._options = options
            self.events.options.emit(options)

    def change_options(self, **changes: object) -> None:
        """`set_options` with some fields changed (`mode="ids"`)."""
        self.set_options(replace(self._options, **changes))  # type: ignore[arg-type]

    @property
    def context_limit(self) -> int | None:
        return self._context_limit

    def context_summary(self) -> str:
        """Where the context limit falls in each pane's encoding: the character it ends at and
        the share of the text that fits (a pane that shows no encoding is left out)."""
        limit = self._context_limit
        if limit is None:
            return "no context limit"
        parts = []
        for pane in self._panes:
            encoding = pane.shown
            if encoding is None:
                continue
            if len(encoding) <= limit:
                parts.append(f"{pane.spec}: all {len(encoding):,} tokens fit")
            else:
                char = int(encoding.starts[limit])
                share = char / len(self._text) if self._text else 1.0
                parts.append(f"{pane.spec}: ends at char {char:,} ({share:.0%} fits)")
        return f"limit {limit:,} tokens — " + "; ".join(parts)

    def set_context_limit(self, limit: int | None) -> None:
        """Mark where a context of `limit` tokens ends (None or 0: no mark); `events.context_limit`
        follows every call (the window says where the limit falls each time it is set)."""
        if limit is not None and limit < 0:
            raise ValueError(f"a context limit is a number of tokens, not {limit}")
        self._context_limit = limit or None
        self.events.context_limit.emit(self._context_limit)


def _policy_text(text: str) -> str:
    return text.strip() or "none"
