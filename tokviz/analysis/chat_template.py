"""Render a chat template exactly as transformers' `apply_chat_template` does, and remember which
characters of the prompt came from which message.

The environment is transformers' own (`utils/chat_template_utils.py`): jinja2's
`ImmutableSandboxedEnvironment` with `trim_blocks`, `lstrip_blocks`, the `loopcontrols` extension
and the `{% generation %}` tag, a `tojson` filter that keeps non-ASCII (`json.dumps` with
`ensure_ascii=False`), and the `raise_exception` and `strftime_now` globals. The sandbox is what
keeps a template from reading files or reaching Python internals (`__class__`, `__globals__`, ...).

Two things are added, neither of which changes the text a template renders:

- Provenance. Every string inside a message's content is passed in as `_Tracked`, a `str` that
  carries which message each of its characters came from, through slicing, `+`, `~`, `strip`,
  `split`, `replace`, macros and `{% set %}` blocks. The rendered prompt therefore knows, character
  by character, what the template wrote and what a message supplied. Text a template computes from
  content in other ways (`tojson`, `format`, `upper` that changes length) counts as template text.
- Limits. A runaway template is stopped deterministically: every loop iteration, function call
  and `range` item is charged to a step budget, output and string sizes are capped, deep recursion
  is caught, and a wall-clock deadline is checked at the same points.

It does not tokenize anything (see `tokviz.analysis.chat`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError, safe_range

from tokviz.analysis.template_guards import format_bound, guard_filters, method_bound, percent_bound

#: the origin of a character the template itself wrote
TEMPLATE = -1


class ChatTemplateError(Exception):
    """A template could not be compiled or rendered; `line` is the template line when known."""

    def __init__(self, message: str, *, line: int | None = None, template: str = "template") -> None:
        self.message = message
        self.line = line
        self.template = template
        where = f"{template} line {line}" if line is not None else template
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Limits:
    """How much work one render may do before it is stopped."""

    #: loop iterations + function calls + `range` items
    steps: int = 2_000_000
    #: characters in the prompt and in any one string the template builds
    chars: int = 4_000_000
    #: wall-clock seconds, checked at the same points as the steps
    seconds: float = 10.0


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Run:
    """`text[start:end]` of the rendered prompt came from message `message`'s content."""

    start: int
    end: int
    message: int


@dataclass(frozen=True)
class Rendered:
    """A rendered prompt and which of its characters came from which message."""

    text: str
    runs: tuple[Run, ...] = ()

    def origin_at(self, index: int) -> int:
        """The message a character came from, or `TEMPLATE`."""
        for run in self.runs:
            if run.start <= index < run.end:
                return run.message
        return TEMPLATE

    def template_spans(self) -> list[tuple[int, int]]:
        """The maximal ranges of text the template wrote."""
        spans, pos = [], 0
        for run in self.runs:
            if run.start > pos:
                spans.append((pos, run.start))
            pos = run.end
        if pos < len(self.text):
            spans.append((pos, len(self.text)))
        return spans


# -- provenance ---------------------------------------------------------------------------------


class _Tracked(str):
    """A `str` whose characters know the message they came from (`_runs`: (start, end, message)).

    It behaves exactly like the plain string to a template; only the operations that keep
    characters (slices, joins, strips, splits, replacements) keep the runs as well.
    """

    _runs: tuple[tuple[int, int, int], ...]  # underscored: the sandbox hides it from templates

    def __str__(self) -> str:
        return self  # so jinja's `str(value)` on output keeps the runs

    def __add__(self, other: object) -> str:
        if not isinstance(other, str):
            return NotImplemented
        return _join((self, other))

    def __radd__(self, other: object) -> str:
        if not isinstance(other, str):
            return NotImplemented
        return _join((other, self))

    def __getitem__(self, key: Any) -> str:
        plain = str.__getitem__(self, key)
        if isinstance(key, int):
            index = key + len(self) if key < 0 else key
            return _slice(self, index, index + 1)
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step == 1:
                return _slice(self, start, max(start, stop))
        return plain

    def strip(self, chars: str | None = None) -> str:
        return self.lstrip(chars).rstrip(chars)

    def lstrip(self, chars: str | None = None) -> str:
        kept = str.lstrip(self, chars)
        return _slice(self, len(self) - len(kept), len(self))

    def rstrip(self, chars: str | None = None) -> str:
        return _slice(self, 0, len(str.rstrip(self, chars)))

    def split(self, sep: str | None = None, maxsplit: int = -1) -> list[str]:  # type: ignore[override]
        return _locate_parts(self, str.split(self, sep, maxsplit), sep)

    def rsplit(self, sep: str | None = None, maxsplit: int = -1) -> list[str]:  # type: ignore[override]
        return _locate_parts(self, str.rsplit(self, sep, maxsplit), sep)

    def partition(self, sep: str) -> tuple[str, str, str]:
        head, found, _ = str.partition(self, sep)
        cut = len(head) + len(found)
        return _slice(self, 0, len(head)), _slice(self, len(head), cut), _slice(self, cut, len(self))

    def rpartition(self, sep: str) -> tuple[str, str, str]:
        head, found, _ = str.rpartition(self, sep)
        cut = len(head) + len(found)
        return _slice(self, 0, len(head)), _slice(self, len(head), cut), _slice(self, cut, len(self))

    def replace(self, old: str, new: str, count: int = -1) -> str:  # type: ignore[override]
        if not old:
            return str.replace(self, old, new, count)
        pieces: list[str] = []
        pos = 0
        while count != 0 and (hit := str.find(self, old, pos)) >= 0:
            pieces += [_slice(self, pos, hit), str(new)]  # the replacement is the template's text
            pos = hit + len(old)
            count -= 1
        pieces.append(_slice(self, pos, len(self)))
        return _join(pieces)

    def join(self, iterable: Iterable[str]) -> str:
        items = list(iterable)
        pieces: list[str] = []
        for i, item in enumerate(items):
            if i:
                pieces.append(self)
            pieces.append(item)
        return _join(pieces) if items else ""


def _tracked(text: str, runs: Sequence[tuple[int, int, int]]) -> str:
    if not runs:
        return str.__str__(text) if type(text) is not str else text
    value = _Tracked(text)
    value._runs = tuple(runs)
    return value


def _slice(value: _Tracked, start: int, end: int) -> str:
    runs = [
        (max(s, start) - start, min(e, end) - start, m)
        for s, e, m in value._runs
        if s < end and e > start
    ]
    return _tracked(str.__getitem__(value, slice(start, end)), runs)


def _join(pieces: Iterable[Any]) -> str:
    texts: list[str] = []
    runs: list[tuple[int, int, int]] = []
    pos = 0
    for piece in pieces:
        if isinstance(piece, _Tracked):
            for s, e, m in piece._runs:
                if runs and runs[-1][1] == pos + s and runs[-1][2] == m:
                    runs[-1] = (runs[-1][0], pos + e, m)
                else:
                    runs.append((pos + s, pos + e, m))
        text = str.__str__(piece) if isinstance(piece, str) else str(piece)
        texts.append(text)
        pos += len(text)
    return _tracked("".join(texts), runs)


def _locate_parts(value: _Tracked, parts: list[str], sep: str | None) -> list[str]:
    located, pos = [], 0
    for part in parts:
        start = str.find(value, part, pos) if sep is None else pos
        located.append(_slice(value, start, start + len(part)))
        pos = start + len(part) + (len(sep) if sep is not None else 0)
    return located


def track(value: Any, message: int) -> Any:
    """`value` with every string inside it marked as coming from message `message`."""
    if isinstance(value, str):
        return _tracked(value, [(0, len(value), message)] if value else [])
    if isinstance(value, Mapping):
        return {k: track(v, message) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [track(v, message) for v in value]
    return value


#: message fields whose strings are the message's own text; every other field (role, name, type)
#: is structure the template switches on
CONTENT_FIELDS = ("content", "reasoning_content", "thinking", "tool_calls")


def tracked_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The messages with their content fields tracked, everything else as given."""
    out = []
    for i, message in enumerate(messages):
        out.append({k: track(v, i) if k in CONTENT_FIELDS else v for k, v in message.items()})
    return out


def runs_of(value: str) -> tuple[Run, ...]:
    if not isinstance(value, _Tracked):
        return ()
    return tuple(Run(s, e, m) for s, e, m in value._runs if e > s)


# -- the environment ----------------------------------------------------------------------------


class _Generator(CodeGenerator):
    """jinja's code generator with `~` joined by the environment, so runs survive it."""

    def visit_Concat(self, node: jinja2.nodes.Concat, frame: Any) -> None:
        self.write("environment.concat(map(str, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write(")))")


class _Hooks(jinja2.ext.Extension):
    """transformers' `{% generation %}...{% endgeneration %}` tag, which renders its body unchanged
    (transformers uses it only to find assistant tokens), and the loop charge."""

    tags = {"generation"}

    def parse(self, parser: Any) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _body(self, caller: Callable[[], str]) -> str:
        return caller()

    def charged(self, iterable: Any) -> Iterator[Any]:
        return self.environment.charged(iterable)  # type: ignore[attr-defined]


def _charge_loops(tree: jinja2.nodes.Template) -> jinja2.nodes.Template:
    """Wrap every `for` loop's iterable so each item is charged to the step budget (jinja has no
    custom node types, so the wrapper is a call of the `_Hooks` extension)."""
    for loop in tree.find_all(jinja2.nodes.For):
        hook = jinja2.nodes.ExtensionAttribute(_Hooks.identifier, "charged", lineno=loop.iter.lineno)
        loop.iter = jinja2.nodes.Call(hook, [loop.iter], [], None, None, lineno=loop.iter.lineno)
    return tree


class _Stop(Exception):
    """A limit was hit; carries the message shown to the user."""


class _Environment(ImmutableSandboxedEnvironment):
    code_generator_class = _Generator
    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(self) -> None:
        super().__init__(
            trim_blocks=True, lstrip_blocks=True, extensions=[_Hooks, jinja2.ext.loopcontrols]
        )
        self.limits = DEFAULT_LIMITS
        self.steps = 0
        self.deadline = math.inf
        self.globals["range"] = self._range
        self.globals["lipsum"] = self._lipsum
        # a size known before the call: one call must not build gigabytes before it is stopped
        guard_filters(self.filters, self.check_bound, self.stop)

    def start(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = 0
        self.deadline = time.monotonic() + limits.seconds

    def charge(self, steps: int = 1) -> None:
        self.steps += steps
        if self.steps > self.limits.steps:
            raise _Stop(f"stopped after {self.limits.steps:,} steps (loop iterations and calls): "
                        f"the template does not finish")
        if self.steps % 4096 < steps and time.monotonic() > self.deadline:
            raise _Stop(f"stopped after {self.limits.seconds:g} s: the template does not finish")

    def charged(self, iterable: Any) -> Iterator[Any]:
        for item in iterable:
            self.charge()
            yield item

    def _range(self, *args: int) -> range:
        rng = safe_range(*args)  # the sandbox's own range, capped at 100,000 items
        self.charge(len(rng) + 1)
        return rng

    def _lipsum(self, n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
        self.check_bound(n * max * 16 if isinstance(n, int) and isinstance(max, int) else 0)
        return str(jinja2.utils.generate_lorem_ipsum(n=n, html=html, min=min, max=max))

    def stop(self, message: str) -> None:
        raise _Stop(message)

    def check_bound(self, length: int) -> None:
        """Stop before an operation that would make a value of `length` characters or items."""
        if length > self.limits.chars:
            raise _Stop(f"stopped: the template asks for a value of more than {self.limits.chars:,} "
                        f"characters or items")

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt, is_map = value.__self__, value.__name__ == "format_map"

        def guarded(*args: Any, **kwargs: Any) -> str:
            given = [*args, *kwargs.values()]
            if is_map and args and isinstance(args[0], Mapping):
                given.extend(args[0].values())
            self.check_bound(format_bound(fmt, given))
            return wrapped(*args, **kwargs)
        return guarded

    def check_size(self, value: Any) -> Any:
        if isinstance(value, (str, list, tuple)):
            self.check_length(len(value))
        return value

    def check_length(self, length: int) -> None:
        if length > self.limits.chars:
            raise _Stop(f"stopped: the template built a value of more than {self.limits.chars:,} "
                        f"characters or items")

    def concat(self, pieces: Iterable[Any]) -> str:
        collected, size = [], 0
        for piece in pieces:
            collected.append(piece)
            size += len(piece)
            if size > self.limits.chars:
                raise _Stop(f"stopped: the output passed {self.limits.chars:,} characters")
        return _join(collected)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
                    self.check_length(len(seq) * max(n, 0))
        if operator == "%" and isinstance(left, str):
            self.check_bound(percent_bound(left, right))
        if (operator == "**" and isinstance(left, (int, float)) and isinstance(right, (int, float))
                and abs(left) > 1 and right * math.log2(abs(left)) > 4096):
            raise _Stop("stopped: the template computes a number too large to print")
        return self.check_size(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        __self.charge()
        if isinstance(getattr(__obj, "__self__", None), str):
            widths = [a for a in (*args, *kwargs.values()) if isinstance(a, int)]
            if any(w > __self.limits.chars for w in widths):
                raise _Stop(f"stopped: a string wider than {__self.limits.chars:,} characters")
        __self.check_bound(method_bound(__obj, args, kwargs))
        return __self.check_size(super().call(__context, __obj, *args, **kwargs))


def _raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


#: the widest indent tojson takes (each nested line repeats it: a huge one is gigabytes)
MAX_JSON_INDENT = 1000


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    width = indent if isinstance(indent, int) else len(indent) if isinstance(indent, str) else 0
    if width > MAX_JSON_INDENT:
        raise _Stop(f"stopped: tojson with an indent of {width:,} (more than {MAX_JSON_INDENT:,})")
    # transformers' own override: jinja's built-in tojson escapes HTML characters
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _template_line(error: BaseException) -> int | None:
    """The template line jinja put into the rewritten traceback (its frames say `<template>`)."""
    line = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


@dataclass
class ChatTemplate:
    """A chat template: its source, a name, where it came from, and the special token strings it
    may use as variables (`bos_token`, `eos_token`, ...).

    One render at a time per instance: the step budget lives on its environment, so a view that
    renders on a worker thread gives that worker its own `ChatTemplate(t.source, ...)`.

    >>> t = ChatTemplate("{% for m in messages %}<{{ m.role }}>{{ m.content }}\\n{% endfor %}")
    >>> r = t.render([{"role": "user", "content": "hi"}])
    >>> r.text, [(run.start, run.end, run.message) for run in r.runs]
    ('<user>hi\\n', [(6, 8, 0)])
    """

    source: str
    name: str = "template"
    origin: str = "given"
    special_strings: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._env = _Environment()
        self._env.filters["tojson"] = _tojson
        self._env.globals["raise_exception"] = _raise_exception
        self._env.globals["strftime_now"] = self._strftime_now
        self._now: datetime | None = None
        try:
            self._compiled = self._env.from_string(_charge_loops(self._env.parse(self.source)))
        except jinja2.TemplateSyntaxError as e:
            raise ChatTemplateError(e.message or str(e), line=e.lineno, template=self.name) from None

    def _strftime_now(self, format: str) -> str:
        return (self._now or datetime.now()).strftime(format)

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        add_generation_prompt: bool = False,
        tools: Sequence[Mapping[str, Any]] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        now: datetime | None = None,
        **kwargs: Any,
    ) -> Rendered:
        """Render as `apply_chat_template(messages, tokenize=False, ...)` does.

        `kwargs` are the template's own switches (`enable_thinking=False`); `now` fixes what
        `strftime_now` returns. Raises `ChatTemplateError` with the template line.
        """
        variables = {**self.special_strings, **kwargs}
        self._env.start(limits)
        self._now = now
        try:
            text = self._compiled.render(
                messages=tracked_messages(messages),
                tools=list(tools) if tools is not None else None,
                documents=list(documents) if documents is not None else None,
                add_generation_prompt=add_generation_prompt,
                **variables,
            )
        except _Stop as e:
            raise ChatTemplateError(str(e), line=_template_line(e), template=self.name) from None
        except SecurityError as e:
            raise ChatTemplateError(f"refused by the sandbox: {e}", line=_template_line(e),
                                    template=self.name) from None
        except RecursionError as e:
            raise ChatTemplateError("stopped: the template recurses without end", line=None,
                                    template=self.name) from e
        except jinja2.TemplateError as e:
            raise ChatTemplateError(e.message or type(e).__name__, line=_template_line(e),
                                    template=self.name) from None
        except Exception as e:  # a template error surfacing as Python's: 1 / 0, "a" - 1, ...
            raise ChatTemplateError(f"{type(e).__name__}: {e}", line=_template_line(e),
                                    template=self.name) from None
        finally:
            self._now = None
        return Rendered(str.__str__(text) if isinstance(text, str) else text, runs_of(text))
