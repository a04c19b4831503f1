"""The tokenizer service's messages, and the one way each side sends and receives them.

Every request the window sends and every reply the service sends back is a frozen dataclass of
this module; `send` puts one on a `multiprocessing` connection and `receive_request` /
`receive_reply` take one off, checking that it is what that side may receive. Nothing else
crosses the pipe.

    window -> service                     service -> window
    Load(key, spec)                       Loaded(key, info) | LoadFailed(key, message)
    Text(number, data)                    (none: the text `TextRef(number)` stands for)
    Encode(key, gen, text, policy, ...)   Encoded(key, gen, encoding) | Failed(key, gen, message)
                                            | Superseded(key, gen)
    Stream(key, gen, ids)                 Streamed(key, gen, naive, buffered)
    Cancel(key)                           (none: the encode at hand for `key` is not wanted)
    Drop(key)                             (none: the pane is gone; its vocabulary goes with the last)
    Stop()                                (none: the service ends; so does the pipe closing)

`key` names a pane (one service serves every pane of a window), `gen` one of its requests.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from tokviz.core.encoding import Encoding
from tokviz.core.messages import not_a
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer


@dataclass(frozen=True)
class TokenizerInfo:
    """What the window needs to know about a tokenizer that lives in the service."""

    name: str
    family: str
    vocab_size: int
    special_tokens: Mapping[str, int]
    description: str
    #: the pieces the model's own tokenizer adds before and after a text (`<s>`), if any
    added_before: tuple[str, ...] = ()
    added_after: tuple[str, ...] = ()

    def describe(self) -> str:
        return self.description

    @property
    def adds_specials(self) -> bool:
        return bool(self.added_before or self.added_after)

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> TokenizerInfo:
        before, after = tokenizer.added_tokens("a")
        return cls(tokenizer.name, tokenizer.family, tokenizer.vocab_size, dict(tokenizer.special_tokens),
                   tokenizer.describe(), tuple(t.piece for t in before), tuple(t.piece for t in after))


@dataclass(frozen=True)
class Load:
    key: int
    spec: str


@dataclass(frozen=True)
class Text:
    """The text later encodes name by `TextRef(number)`, sent once for every pane. As UTF-8 bytes
    (surrogates passed): pickling a non-ASCII str caches a UTF-8 copy on it for the str's life."""

    number: int
    data: bytes

    @classmethod
    def of(cls, number: int, text: str) -> Text:
        return cls(number, text.encode("utf-8", "surrogatepass"))

    def text(self) -> str:
        return self.data.decode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class TextRef:
    """An encode's text by reference: the text of the last `Text`, when `number` is its number."""

    number: int


@dataclass(frozen=True)
class Encode:
    key: int
    gen: int
    text: str | TextRef
    policy: SpecialPolicy
    #: "as the model sees it": with the BOS/EOS the model's own tokenizer adds
    model_adds: bool = False


@dataclass(frozen=True)
class Stream:
    """Decode `ids` one at a time, naively and buffered (what a streaming client shows)."""

    key: int
    gen: int
    ids: tuple[int, ...]


@dataclass(frozen=True)
class Cancel:
    key: int


@dataclass(frozen=True)
class Drop:
    key: int


@dataclass(frozen=True)
class Stop:
    pass


Request = Load | Text | Encode | Stream | Cancel | Drop | Stop
#: the requests that name a pane
KeyedRequest = Load | Encode | Stream | Cancel | Drop

@dataclass(frozen=True)
class Loaded:
    key: int
    info: TokenizerInfo


@dataclass(frozen=True)
class LoadFailed:
    key: int
    message: str


@dataclass(frozen=True)
class Encoded:
    key: int
    gen: int
    encoding: Encoding


@dataclass(frozen=True)
class Failed:
    key: int
    gen: int
    message: str


@dataclass(frozen=True)
class Superseded:
    """A newer encode or a cancel of the same pane came first: this one was not done (or its
    result is not sent)."""

    key: int
    gen: int


@dataclass(frozen=True)
class Streamed:
    key: int
    gen: int
    naive: tuple[str, ...]
    buffered: tuple[str, ...]


Reply = Loaded | LoadFailed | Encoded | Failed | Superseded | Streamed


def send(conn: Connection, message: Request | Reply) -> None:
    """Send one message. Its numpy arrays go out of band (pickle protocol 5): each goes down the
    pipe as a message of its own, straight from its memory."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    conn.send_bytes(len(buffers).to_bytes(4, "little") + head)
    for buffer in buffers:
        conn.send_bytes(buffer.raw())


def _receive(conn: Connection, kind: Any, what: str) -> Any:
    """One message `send` sent, which must be of `kind`. Its arrays are read-only views of the
    received bytes: copying a long text's columns while holding the GIL would stall the window
    when a result lands."""
    head = conn.recv_bytes()
    count = int.from_bytes(head[:4], "little")
    buffers = [conn.recv_bytes() for _ in range(count)]
    message = pickle.loads(memoryview(head)[4:], buffers=buffers)
    if not isinstance(message, kind):
        raise not_a(message, what)
    return message


def receive_request(conn: Connection) -> Request:
    """The next request (the service's side). EOFError when the pipe is closed."""
    return _receive(conn, Request, "a request of the tokenizer service")


def receive_reply(conn: Connection) -> Reply:
    """The next reply (the window's side). EOFError when the pipe is closed."""
    return _receive(conn, Reply, "a reply of the tokenizer service")
