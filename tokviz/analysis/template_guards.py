"""Size checks made *before* a chat template's string operation runs, so that a hostile template
cannot make one huge string (or list) and only then be stopped.

`ChatTemplate`'s environment checks every value's size after each call and operator, which stops a
template that grows its output step by step; a single call can still build gigabytes first, or
run for minutes: `'{:>1000000000}'.format(x)`, `'%1000000000s' % x`, `x|center(1000000000)`,
`('\\t' * 3000000).expandtabs(1000)`, `'a\\nb'|indent(1000000000)`. Each
function here estimates the size an operation would produce from its arguments (a bound that is
exact or above the real size) and raises through `check(size)` when it is too large; it never
changes what an operation returns.

It does not render templates (see `tokviz.analysis.chat_template`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from functools import wraps
from typing import Any

_NUMBER = re.compile(r"\d+")
#: a printf-style conversion: flags, width, precision, type
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?[a-zA-Z%]")


def format_bound(fmt: str, values: Iterable[Any]) -> int:
    """An upper bound on the widths and precisions a `str.format` string asks for: the largest
    number in any format spec, or in `values` when a spec takes its width from an argument.

    >>> format_bound("{:>10}{:.3f}", []), format_bound("{:>{w}}", [7, 1000])
    (10, 1000)
    """
    largest = 0
    for spec in _specs(fmt):
        largest = max([largest, *(int(n) for n in _NUMBER.findall(spec))])
        if "{" in spec:
            largest = max([largest, *(v for v in values if isinstance(v, int) and not isinstance(v, bool))])
    return largest


def _specs(fmt: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:  # the call itself will say what is wrong with it
        return []
    specs = []
    for _, field, spec, _ in parsed:
        if field is not None and spec:
            specs.append(spec)
            specs.extend(_specs(spec))
    return specs


def percent_bound(fmt: str, values: Any) -> int:
    """An upper bound on the widths and precisions of a `%` format (`*` takes them from `values`).

    >>> percent_bound("%5s and %.20f", ("a", 1.0)), percent_bound("%*d", (99, 1))
    (20, 99)
    """
    largest = 0
    for width, precision in _PERCENT.findall(fmt):
        for part in (width, precision):
            if part == "*":
                items = values if isinstance(values, tuple) else (values,)
                largest = max([largest, *(v for v in items if isinstance(v, int) and not isinstance(v, bool))])
            elif part:
                largest = max(largest, int(part))
    return largest


def method_bound(obj: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    """An upper bound on what a call of a `str` method makes, for the methods whose result can be
    far larger than their string and arguments (0 for every other call)."""
    owner, name = getattr(obj, "__self__", None), getattr(obj, "__name__", "")
    if not isinstance(owner, str):
        return 0
    given = [*args, *kwargs.values()]
    if name == "expandtabs":
        size = next((a for a in given if isinstance(a, int)), 8)
        return len(owner) + owner.count("\t") * max(size, 0)
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        return replace_bound(owner, args[0], args[1])
    if name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        return len(owner) * max(longest, 1)
    return 0


def replace_bound(text: str, old: str, new: str) -> int:
    """The length of `text.replace(old, new)`, without making it."""
    count = len(text) + 1 if old == "" else text.count(old)
    return len(text) + count * (len(new) - len(old))


#: the most characters `wordwrap` may copy: Python's textwrap cuts a long word by slicing off one
#: line at a time, quadratic in the word's length
MAX_WRAP_WORK = 200_000_000


def guard_filters(filters: dict[str, Callable[..., Any]], check: Callable[[int], None],
                  stop: Callable[[str], None]) -> None:
    """Wrap the jinja filters that can make a result far larger than their input (`check` the
    size they would make), or take far longer than it (`stop` with a message)."""

    def before(name: str, bound: Callable[..., int]) -> None:
        original = filters[name]
        skip = 1 if getattr(original, "jinja_pass_arg", None) is not None else 0  # its environment or context

        @wraps(original)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            check(bound(*args[skip:], **kwargs))
            return original(*args, **kwargs)

        filters[name] = guarded

    def width_of(value: Any, width: Any = 80, *rest: Any, **kwargs: Any) -> int:
        return width if isinstance(width, int) else 0

    def indent_of(value: Any, width: Any = 4, *rest: Any, **kwargs: Any) -> int:
        width = kwargs.get("width", width)
        each = width if isinstance(width, int) else len(str(width))
        return len(str(value)) + (str(value).count("\n") + 1) * each

    def wordwrap_of(value: Any, width: Any = 79, *rest: Any, **kwargs: Any) -> int:
        wrap = kwargs.get("wrapstring") or (rest[1] if len(rest) > 1 else None) or "\n"
        text = str(value)
        width = max(kwargs.get("width", width) if isinstance(kwargs.get("width", width), int) else 1, 1)
        longest = max(map(len, text.split()), default=0)
        if longest * (longest // width) > MAX_WRAP_WORK:
            stop(f"stopped: wordwrap would cut a word of {longest:,} characters into lines of {width}")
        return len(text) + (len(text) // width + text.count(" ") + 1) * len(str(wrap))

    def format_of(value: Any, *args: Any, **kwargs: Any) -> int:
        return percent_bound(str(value), args)

    def replace_of(value: Any, old: Any = "", new: Any = "", *rest: Any, **kwargs: Any) -> int:
        return replace_bound(str(value), str(old), str(new))

    def count_of(value: Any, count: Any = 0, *rest: Any, **kwargs: Any) -> int:
        return count if isinstance(count, int) else 0

    for name, bound in (("center", width_of), ("indent", indent_of), ("wordwrap", wordwrap_of),
                        ("format", format_of), ("replace", replace_of), ("batch", count_of),
                        ("slice", count_of)):
        if name in filters:
            before(name, bound)


__all__ = ["format_bound", "guard_filters", "method_bound", "percent_bound", "replace_bound"]
