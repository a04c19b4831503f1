"""Rust panics as ordinary errors: the one place a backend's library panic is caught.

tiktoken and tokenizers are Rust; a panic in them reaches Python as `pyo3_runtime.PanicException`,
which derives from `BaseException`, so `except Exception` (every handler in tokviz, the CLI's and the
GUI's) lets it through and the process dies. Backends wrap their calls into the library in
`library_calls`; the input checks before them (`tiktoken_backend.check_ranks`) keep the known
panics from happening at all, this catches the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tokviz.core.tokenizer import TokenizerError


def is_panic(e: BaseException) -> bool:
    """True for pyo3's PanicException (its module, `pyo3_runtime`, cannot be imported by name)."""
    return type(e).__name__ == "PanicException"


@contextmanager
def library_calls(what: str) -> Iterator[None]:
    """Turn a Rust panic inside the block into a TokenizerError saying what failed.

    >>> with library_calls("tiny"):
    ...     raise ValueError("passes through")
    Traceback (most recent call last):
    ...
    ValueError: passes through
    """
    try:
        yield
    except BaseException as e:
        if not is_panic(e):
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else "no message"
        raise TokenizerError(
            f"{what}: the tokenizer library failed ({first}); the vocabulary file is not valid"
        ) from None
