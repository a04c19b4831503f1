"""`tokviz encode` for inputs of any size: the text is read in blocks, encoded window by window
(`tokviz.core.stream`) and written as it goes, byte for byte what the whole-text output is.

The output starts with the token count, so each tokenizer's output is written to a temporary file
first and copied out once every tokenizer has encoded the text (a disallowed special token still
stops the command before it prints anything). Per-token strings are built per distinct token and
gathered with `map` over the window's index arrays, never as one object per token.
"""

from __future__ import annotations

import codecs
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import IO, BinaryIO

import numpy as np

from tokviz.cli.errors import not_utf8
from tokviz.core.encoding import Encoding
from tokviz.core.tokens import Token, TokenKind, display_text, hex_bytes

# Backgrounds from the 256-colour cube: light, distinct neighbours; fragments and specials apart.
_BACKGROUNDS = (153, 187, 224, 194, 230, 189, 223, 157, 217, 195, 229, 183)
_KIND_STYLE = {
    TokenKind.SPECIAL: "\x1b[48;5;97;38;5;231;1m",
    TokenKind.FRAGMENT: "\x1b[48;5;209;38;5;16;4m",
    TokenKind.BYTE_FALLBACK: "\x1b[48;5;215;38;5;16;4m",
    TokenKind.UNKNOWN: "\x1b[48;5;196;38;5;231m",
}
_RESET = "\x1b[0m"

#: bytes read at a time from a file or stdin
BLOCK_BYTES = 1 << 20


def decoded_blocks(f: BinaryIO, where: str, *, block_bytes: int | None = None) -> Iterator[str]:
    """The UTF-8 text of `f` in blocks; a bad byte raises the CliError `decode_input` raises."""
    block_bytes = block_bytes or BLOCK_BYTES
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # bytes of `f` before the current block
    while True:
        block = f.read(block_bytes)
        final = not block
        try:
            text = decoder.decode(block, final=final)
        except UnicodeDecodeError as e:
            # e.object is the decoder's held-back bytes followed by this block
            raise not_utf8(where, e.object, e.start, offset + len(block) - len(e.object)) from None
        offset += len(block)
        if text:
            yield text
        if final:
            return


class InputText:
    """The text to encode, readable as blocks as many times as there are tokenizers.

    stdin is copied to a temporary file first (it can be read only once); the whole input is
    checked to be UTF-8 before any tokenizer loads, as the whole-text command did.
    """

    def __init__(self, *, text: str | None = None, path: str | None = None, stdin: BinaryIO | None = None,
                 block_bytes: int | None = None) -> None:
        self._text = text
        self._path = path
        self._spool: IO[bytes] | None = None
        self._block_bytes = block_bytes
        self.where = path or "stdin"
        if stdin is not None:
            self._spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
            shutil.copyfileobj(stdin, self._spool, block_bytes or BLOCK_BYTES)
        self.chars = len(text) if text is not None else sum(map(len, self.blocks()))

    def blocks(self) -> Iterator[str]:
        if self._text is not None:
            yield self._text
            return
        if self._spool is not None:
            self._spool.seek(0)
            yield from decoded_blocks(self._spool, self.where, block_bytes=self._block_bytes)  # type: ignore[arg-type]
        elif self._path is not None:
            with open(self._path, "rb") as f:
                yield from decoded_blocks(f, self.where, block_bytes=self._block_bytes)

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()


def shown_token(t: Token, *, visible_whitespace: bool = True) -> str:
    """A token as the terminal shows it: its text (whitespace visible), a fragment's bytes in hex
    after it, a special token by its name."""
    if t.kind == TokenKind.SPECIAL:
        return t.piece
    shown = display_text(t.bytes, visible_whitespace=visible_whitespace)
    if t.kind in (TokenKind.FRAGMENT, TokenKind.BYTE_FALLBACK):
        shown = f"{shown}⟨{hex_bytes(t.bytes)}⟩"
    return shown


class _Trimmed:
    """Writes text with its trailing newlines held back: what `"".join(parts).rstrip("\\n")` keeps."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.held = ""

    def write(self, s: str) -> None:
        kept = s.rstrip("\n")
        if kept:
            self.out.write(self.held)
            self.out.write(kept)
            self.held = s[len(kept):]
        else:
            self.held += s


def text_tables(cols: Encoding, *, color: bool, visible_whitespace: bool) -> list[str]:
    """Per distinct token, the string the terminal output shows for it; with colour, 12 per token
    (the background follows the token's position modulo 12)."""
    table: list[str] = []
    for token_id, data, kind, piece in cols.table.rows():
        shown = shown_token(Token(token_id, data, 0, 0, 0, 0, kind, piece), visible_whitespace=visible_whitespace)
        newline = "\n" if data.endswith(b"\n") and kind != TokenKind.SPECIAL else ""
        if not color:
            table.append(f"[{shown}]{newline}")
            continue
        style = _KIND_STYLE.get(kind)
        for background in _BACKGROUNDS:
            table.append(f"{style or _background(background)}{shown}{_RESET}{newline}")
    return table


def _background(colour: int) -> str:
    return f"\x1b[48;5;{colour};38;5;16m"


def gaps_line(gaps: Sequence[tuple[int, int]]) -> str:
    """The line that says which characters no token stands for (a normalizing model drops them
    whole), '' when every character is in a token.

    >>> gaps_line([(0, 1), (16, 18)])
    'in no token (the model drops them): chars 0-1, 16-18\\n'
    """
    if not gaps:
        return ""
    shown = ", ".join(f"{a}-{b}" for a, b in gaps[:8]) + (f" and {len(gaps) - 8} more" if len(gaps) > 8 else "")
    return f"in no token (the model drops them): chars {shown}\n"


class TextEncoding:
    """One tokenizer's terminal output, spooled: tokens and ids written part by part."""

    def __init__(self) -> None:
        # closed by close(), once the command has copied them out
        self.body = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115
        self.ids = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115
        self._trimmed = _Trimmed(self.body)
        self.count = 0
        self._end = 0  # where the tokens so far end, in characters
        self.gaps: list[tuple[int, int]] = []  # text no token stands for (dropped by the model)

    def add(self, cols: Encoding, *, color: bool, visible_whitespace: bool) -> None:
        n = len(cols)
        if not n:
            return
        table = text_tables(cols, color=color, visible_whitespace=visible_whitespace)
        index = cols.key_index.astype(np.int64)
        if color:
            index = index * 12 + (np.arange(self.count, self.count + n) % 12)
        self._trimmed.write("".join(map(table.__getitem__, index.tolist())))
        self.ids.write((" " if self.count else "") + " ".join(map(str, cols.ids.tolist())))
        self.count += n
        reached = np.maximum.accumulate(np.concatenate([[self._end], cols.ends]))
        apart = np.flatnonzero(cols.starts > reached[:-1])
        self.gaps.extend(zip(reached[apart].tolist(), cols.starts[apart].tolist()))
        self._end = int(reached[-1])

    def write_to(self, out: IO[str], describe: str, chars: int) -> None:
        ratio = f"{chars / self.count:.2f} chars/token" if self.count else "no tokens"
        out.write(f"── {describe}: {self.count} tokens, {chars} chars, {ratio}\n")
        _copy(self.body, out)
        out.write("\n")
        out.write("ids: ")
        _copy(self.ids, out)
        out.write("\n")
        out.write(gaps_line(self.gaps + ([(self._end, chars)] if self._end < chars else [])))

    def close(self) -> None:
        self.body.close()
        self.ids.close()


class JsonEncoding:
    """One tokenizer's JSON object, spooled: `json.dump`'s own spelling, token by token."""

    def __init__(self) -> None:
        self.tokens = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115 (see close)
        self.count = 0

    def add(self, cols: Encoding) -> None:
        n = len(cols)
        if not n:
            return
        dumps = _dumps()
        heads, tails = [], []
        for token_id, data, kind, piece in cols.table.rows():
            heads.append(f'{{"id": {token_id}, "bytes": {dumps(data.hex())}, "start": ')
            text = data.decode("utf-8", errors="replace")
            tails.append(f', "kind": {dumps(kind.value)}, "text": {dumps(text)}, "piece": {dumps(piece)}}}')
        keys = cols.key_index.tolist()
        objects = map('{}{}, "end": {}{}'.format, map(heads.__getitem__, keys), cols.starts.tolist(),
                      cols.ends.tolist(), map(tails.__getitem__, keys))
        self.tokens.write((", " if self.count else "") + ", ".join(objects))
        self.count += n

    def write_to(self, out: IO[str], name: str, family: str) -> None:
        dumps = _dumps()
        out.write(f'{{"tokenizer": {dumps(name)}, "family": {dumps(family)}, "count": {self.count}, "tokens": [')
        _copy(self.tokens, out)
        out.write("]}")

    def close(self) -> None:
        self.tokens.close()


def _dumps() -> Callable[[object], str]:
    return json.JSONEncoder(ensure_ascii=False).encode


def _copy(spool: IO[str], out: IO[str]) -> None:
    spool.flush()
    spool.seek(0)
    shutil.copyfileobj(spool, out, 1 << 20)
