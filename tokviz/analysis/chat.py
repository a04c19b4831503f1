"""A conversation as the model sees it: the rendered prompt cut into tokens, each token's origin
(the template, or message N), the counts, and what a naive pipeline would get wrong.

The prompt is encoded once, as a whole (`Tokenizer.encode_trusted`), with special tokens parsed
only where the template wrote them; special-token text inside a message stays plain text,
whatever it spells. The naive cut is the same string encoded with every special token parsed
(`allowed_special="all"`, what `apply_chat_template(tokenize=False)` followed by a plain encode
gives); where the two differ, a message has injected a control token.

A token whose characters come from more than one origin (BPE merged the template's newline with
the first word of a message) belongs to the origin holding most of its characters, and is
marked `shared`. A view draws `ChatToken.origin` and highlights `ChatAnalysis.tokens_of(i)`.

This module renders nothing itself (see `chat_template`) and draws nothing (no Qt).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import regex

from tokviz.analysis.chat_template import DEFAULT_LIMITS, TEMPLATE, ChatTemplate, Limits, Rendered
from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import Token, TokenKind

FindingKind = Literal["injected-special", "control-in-content", "content-marker", "template-marker-not-special"]

#: text that looks like a template's structural marker: `<|im_start|>`, `<｜User｜>`, `[INST]`,
#: `<start_of_turn>`, `</think>`, `<|START_OF_TURN_TOKEN|>`, Gemma 4's `<|turn>` and `<turn|>`
MARKER = regex.compile(
    r"<\|[^\s|<>]{1,48}\|?>"
    r"|<[^\s|<>]{1,48}\|>"
    r"|<｜[^\s｜]{1,48}｜>"
    r"|\[/?[A-Z][A-Z_]{1,31}\]"
    r"|</?[A-Za-z][\w-]{0,31}>"
)


@dataclass(frozen=True)
class ChatToken:
    token: Token
    #: `TEMPLATE` (-1) or the index of the message whose content the token holds (most of)
    origin: int
    #: the token's characters come from more than one origin
    shared: bool = False


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    #: the message the text sits in; None for a finding about the template itself
    message: int | None
    text: str
    start: int  # character span in the rendered prompt
    end: int

    def describe(self, tokenizer_name: str) -> str:
        where = f"message {self.message}" if self.message is not None else "the template"
        if self.kind == "injected-special":
            return (f"{where} contains `{self.text}`: a naive pipeline (every special token parsed) "
                    f"turns it into a control token here (characters {self.start}:{self.end})")
        if self.kind == "control-in-content":
            return (f"{where} contains `{self.text}`, which {tokenizer_name} matches as a control token even "
                    f"in plain text (an added token not marked special): the model gets the control token "
                    f"whatever the pipeline (characters {self.start}:{self.end})")
        if self.kind == "content-marker":
            return (f"{where} contains `{self.text}`, a marker the template writes; it is plain "
                    f"text in {tokenizer_name}, not a control token, but it can still steer the "
                    f"model (characters {self.start}:{self.end})")
        return (f"the template writes `{self.text}`, which {tokenizer_name} does not know as a "
                f"special token: it is cut as ordinary text")


@dataclass(frozen=True)
class ChatAnalysis:
    tokenizer_name: str
    template: ChatTemplate
    rendered: Rendered
    tokens: tuple[ChatToken, ...]
    naive: tuple[Token, ...]
    findings: tuple[Finding, ...]
    message_count: int
    context_limit: int | None = None

    @property
    def text(self) -> str:
        return self.rendered.text

    @property
    def total(self) -> int:
        return len(self.tokens)

    @property
    def overhead(self) -> int:
        """Tokens the template wrote: the chat format's cost on top of the messages."""
        return sum(1 for t in self.tokens if t.origin == TEMPLATE)

    def per_message(self) -> list[int]:
        counts = Counter(t.origin for t in self.tokens)
        return [counts.get(i, 0) for i in range(self.message_count)]

    def tokens_of(self, message: int) -> list[int]:
        """Indices into `tokens` of the tokens holding message `message`'s text (for highlighting)."""
        return [i for i, t in enumerate(self.tokens) if t.origin == message]

    @property
    def room(self) -> int | None:
        """Tokens left in the context limit (negative: over it), or None without a limit."""
        return None if self.context_limit is None else self.context_limit - self.total

    @property
    def naive_differs(self) -> bool:
        return [t.id for t in self.naive] != [t.token.id for t in self.tokens]

    def to_json(self) -> dict[str, Any]:
        return {
            "tokenizer": self.tokenizer_name,
            "template": {"name": self.template.name, "origin": self.template.origin},
            "text": self.text,
            "tokens": [
                {"id": t.token.id, "piece": t.token.piece, "start": t.token.start, "end": t.token.end,
                 "kind": str(t.token.kind), "origin": "template" if t.origin == TEMPLATE else t.origin,
                 **({"shared": True} if t.shared else {})}
                for t in self.tokens
            ],
            "counts": {"total": self.total, "template": self.overhead, "messages": self.per_message(),
                       "context_limit": self.context_limit, "room": self.room},
            "naive": {"total": len(self.naive), "differs": self.naive_differs},
            "findings": [
                {"kind": f.kind, "message": f.message, "text": f.text, "start": f.start, "end": f.end,
                 "note": f.describe(self.tokenizer_name)}
                for f in self.findings
            ],
        }


def template_variables(items: Sequence[str]) -> dict[str, Any]:
    """Template keyword arguments from `KEY=VALUE` items: VALUE as JSON where it parses, else the
    string itself. Raises ValueError naming an item that is not KEY=VALUE.

    >>> template_variables(["enable_thinking=false", "effort=high low", "n=3"])
    {'enable_thinking': False, 'effort': 'high low', 'n': 3}
    """
    variables: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"{item!r} is not KEY=VALUE (e.g. enable_thinking=false)")
        try:
            variables[key] = json.loads(raw)
        except json.JSONDecodeError:
            variables[key] = raw  # a bare string
    return variables


def check_messages(messages: Any) -> list[dict[str, Any]]:
    """Messages in the OpenAI / transformers shape, or a ValueError saying which one is wrong."""
    if not isinstance(messages, list):
        raise ValueError("messages must be a JSON list of {\"role\": ..., \"content\": ...} objects")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"message {i} must be an object with a string \"role\"")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise ValueError(f"message {i}: \"content\" must be a string, a list of parts or null")
    return messages


def analyze_chat(
    tokenizer: Tokenizer,
    template: ChatTemplate,
    messages: Sequence[Mapping[str, Any]],
    *,
    add_generation_prompt: bool = False,
    tools: Sequence[Mapping[str, Any]] | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
    context_limit: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ChatAnalysis:
    """Render `messages` with `template`, cut the prompt with `tokenizer`, and compare with the naive cut.

    Raises `ChatTemplateError` when the template fails (with its line).
    """
    rendered = template.render(
        messages, add_generation_prompt=add_generation_prompt, tools=tools, limits=limits,
        **dict(template_kwargs or {}),
    )
    text = rendered.text
    trusted = trusted_special_spans(tokenizer, rendered)
    tokens = tokenizer.encode_trusted(text, trusted)
    naive = tokenizer.encode(text, allowed_special="all")
    owner = _owners(rendered)
    chat_tokens = tuple(_with_origin(t, owner) for t in tokens)
    findings = _findings(tokenizer, rendered, set(trusted), tokens, naive, owner)
    return ChatAnalysis(
        tokenizer.name, template, rendered, chat_tokens, tuple(naive), tuple(findings),
        len(messages), context_limit,
    )


def trusted_special_spans(tokenizer: Tokenizer, rendered: Rendered) -> list[tuple[int, int]]:
    """Where the template itself wrote a special token: matches inside the template's own text."""
    spans = []
    for start, end in rendered.template_spans():
        segment = rendered.text[start:end]
        for s, e, special_id in tokenizer.split_special(segment, "all", ()):
            if special_id is not None:
                spans.append((start + s, start + e))
    return spans


def _owners(rendered: Rendered) -> list[int]:
    owner = [TEMPLATE] * len(rendered.text)
    for run in rendered.runs:
        owner[run.start:run.end] = [run.message] * (run.end - run.start)
    return owner


def _with_origin(token: Token, owner: list[int]) -> ChatToken:
    origins = owner[token.start:token.end]
    if not origins:
        return ChatToken(token, TEMPLATE)
    if len(set(origins)) == 1:  # (nearly every token: inside one message or the template)
        return ChatToken(token, origins[0])
    counts = Counter(origins)
    origin = max(counts, key=lambda o: (counts[o], o != TEMPLATE))
    return ChatToken(token, origin, len(counts) > 1)


def _message_at(owner: list[int], start: int, end: int) -> int | None:
    inside = [o for o in owner[start:end] if o != TEMPLATE]
    return Counter(inside).most_common(1)[0][0] if inside else None


def _findings(
    tokenizer: Tokenizer, rendered: Rendered, trusted: set[tuple[int, int]], tokens: list[Token],
    naive: list[Token], owner: list[int],
) -> list[Finding]:
    text = rendered.text
    findings = []
    # control tokens inside content that even the trusted cut makes: added tokens a vocabulary
    # matches in any text (a Hugging Face added token with "special": false)
    controls = {text[t.start:t.end] for t in tokens if t.kind is TokenKind.SPECIAL}
    for token in tokens:
        if token.kind is TokenKind.SPECIAL and (message := _message_at(owner, token.start, token.end)) is not None:
            findings.append(Finding("control-in-content", message, text[token.start:token.end], token.start, token.end))
    made = {(t.start, t.end) for t in tokens if t.kind is TokenKind.SPECIAL} | trusted
    for token in naive:
        if token.kind is TokenKind.SPECIAL and (token.start, token.end) not in made:
            message = _message_at(owner, token.start, token.end)
            if message is not None:
                findings.append(
                    Finding("injected-special", message, text[token.start:token.end], token.start, token.end)
                )
    markers: dict[str, None] = {}
    for start, end in rendered.template_spans():
        for match in MARKER.finditer(text, start, end):
            markers.setdefault(match.group())
    plain_markers = [m for m in markers if m not in tokenizer.special_tokens and m not in controls]
    for marker in plain_markers:
        findings.append(Finding("template-marker-not-special", None, marker, -1, -1))
    if plain_markers:
        pattern = regex.compile("|".join(regex.escape(m) for m in sorted(plain_markers, key=len, reverse=True)))
        for run in rendered.runs:
            for match in pattern.finditer(text, run.start, run.end):
                findings.append(Finding("content-marker", run.message, match.group(), match.start(), match.end()))
    return sorted(findings, key=lambda f: (f.kind == "template-marker-not-special", f.start))
