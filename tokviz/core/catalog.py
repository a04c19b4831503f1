"""The vocabulary catalog: well-known vocabularies, where their files live, and loading by name or path.

The built-in catalog (`catalog.json` beside this module) names each vocabulary's format, split
pattern, special tokens, sha256 and where to get the file. Users extend it with entries of the same
shape in `<data dir>/catalog.json`. Every file is checked against its sha256 before use.

This module never touches the network; `tokviz.core.fetch` provisions files when asked.
"""

from __future__ import annotations

import difflib
import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tokviz.core import discovery, sidecar
from tokviz.core.catalog_check import CatalogWarning, check_catalog
from tokviz.core.files import path_kind, sha256
from tokviz.core.paths import data_dir as data_dir  # re-exported: catalog.data_dir() is the public name
from tokviz.core.paths import vocab_dir as vocab_dir
from tokviz.core.patterns import CL100K_PATTERN
from tokviz.core.tokenizer import Tokenizer, TokenizerError


@dataclass(frozen=True)
class ExtraFile:
    """A file that comes with a vocabulary from the same archive (llama.cpp's test cases for its
    GGUF vocabularies): fetched, checked and kept beside it, never loaded as a vocabulary."""

    file: str  # relative to the vocabulary folder
    member: str  # inside the entry's source archive
    sha256: str
    size: int | None = None  # bytes; a fetch refuses a member that streams past it

    @property
    def path(self) -> Path:
        return vocab_dir() / self.file


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    title: str
    family: str  # tiktoken | sentencepiece | huggingface | trained | gguf
    format: str  # tiktoken | sentencepiece | tokenizer.json | gguf | trained (a .tiktoken with its sidecar)
    file: str
    sha256: str
    size: int | None = None  # bytes, when known: a fetch refuses a download or member past it
    pattern: str | None = None
    special_tokens: Mapping[str, int] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    url: str | None = None
    source: Mapping[str, str] | None = None
    bundled: bool = False  # shipped inside tokviz (resources/vocabs), always available
    user: bool = False
    extras: tuple[ExtraFile, ...] = ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, user: bool = False) -> CatalogEntry:
        specials = dict(data.get("special_tokens", {}))
        for rng in data.get("special_token_ranges", []):
            first_n = rng.get("first_n", 0)
            for k in range(rng["count"]):
                specials[rng["template"].format(n=first_n + k)] = rng["first_id"] + k
        return cls(
            name=data["name"],
            title=data.get("title", data["name"]),
            family=data.get("family", data["format"]),
            format=data["format"],
            file=data["file"],
            sha256=data["sha256"].lower(),
            size=data.get("size"),
            pattern=data.get("pattern"),
            special_tokens=specials,
            aliases=tuple(data.get("aliases", ())),
            url=data.get("url"),
            source=data.get("source"),
            bundled=bool(data.get("bundled", False)),
            user=user,
            extras=tuple(
                ExtraFile(x["file"], x["member"], x["sha256"].lower(), x.get("size"))
                for x in data.get("extras", ())
            ),
        )

    @property
    def path(self) -> Path:
        if self.bundled:
            return Path(str(resources.files("tokviz.resources").joinpath("vocabs", self.file)))
        file = Path(self.file).expanduser()
        return file if file.is_absolute() else vocab_dir() / file

    @property
    def available(self) -> bool:
        return self.path.is_file()

    def extra_path(self, suffix: str) -> Path:
        """The verified extra file whose name ends with `suffix` (`.inp`); raises TokenizerError
        saying how to provision it."""
        for extra in self.extras:
            if extra.file.endswith(suffix):
                path = extra.path
                if not path.is_file() or file_sha256(path) != extra.sha256:
                    state = "does not match its sha256" if path.is_file() else "is missing"
                    raise TokenizerError(
                        f"{path} {state} (it comes with {self.name}); run `tokviz vocabs fetch {self.name}`"
                    )
                return path
        raise TokenizerError(f"{self.name} has no extra file ending in {suffix!r}")

    def verified_path(self) -> Path:
        """The file, after checking its sha256; raises TokenizerError saying what to do."""
        path = self.path
        if not path.is_file():
            raise TokenizerError(
                f"{self.name} is not provisioned on this machine (no {path}); "
                f"run `tokviz vocabs fetch {self.name}`"
            )
        digest = file_sha256(path)
        if digest != self.sha256:
            raise TokenizerError(
                f"{path}: sha256 {digest} does not match the catalog's {self.sha256} for {self.name}; "
                f"the file is corrupt or a different version: delete it and run `tokviz vocabs fetch {self.name}`"
            )
        return path


_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, mtime) for this process."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        h = sha256(st.st_size)  # not hashlib's, for a vocabulary: see `files.sha256`
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


def builtin_entries() -> list[CatalogEntry]:
    file = resources.files("tokviz.core").joinpath("catalog.json")
    data = json.loads(file.read_text("utf-8"))
    return [CatalogEntry.from_json(e) for e in check_catalog(Path(str(file)), data, user=False)]


def user_catalog_path() -> Path:
    return data_dir() / "catalog.json"


def user_entries() -> list[CatalogEntry]:
    """Entries from the user's catalog file; a broken file is a TokenizerError naming the file,
    the entry and the field (`catalog_check`), not a crash."""
    path = user_catalog_path()
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise TokenizerError(f"{path}: not a valid tokviz catalog ({e})") from e
    return [CatalogEntry.from_json(e, user=True) for e in check_catalog(path, data, user=True)]


def entries() -> list[CatalogEntry]:
    """Built-in entries, then the user's (a user entry with a built-in name replaces it).

    A user catalog that cannot be used is skipped with a `CatalogWarning` saying what is wrong,
    so the built-in vocabularies (`encode -t cl100k_base`) still work.
    """
    merged = {e.name: e for e in builtin_entries()}
    try:
        user = user_entries()
    except TokenizerError as problem:
        warnings.warn(CatalogWarning(f"{problem}; its entries are skipped"), stacklevel=2)
        user = []
    for e in user:
        merged[e.name] = e
    return list(merged.values())


#: The vocabularies a first start compares, in this order (those that are provisioned).
PREFERRED = ("cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1")


def _entries_or_builtin() -> list[CatalogEntry]:
    try:
        return entries()
    except TokenizerError:  # a broken user catalog: fall back to the built-in one
        return builtin_entries()


def default_specs(minimum: int = 3) -> list[str]:
    """The preferred vocabularies that are provisioned here, topped up to `minimum` from the rest.

    Every catalog format's backend ships with tokviz, so "provisioned" is all it takes to load.
    """
    usable = [e.name for e in _entries_or_builtin() if e.available]
    specs = [name for name in PREFERRED if name in usable]
    specs += [name for name in usable if name not in specs][: max(minimum - len(specs), 0)]
    return specs


def missing_preferred() -> list[str]:
    """The preferred vocabularies that are not provisioned here (a fresh machine: all of them)."""
    available = {e.name for e in _entries_or_builtin() if e.available}
    return [name for name in PREFERRED if name not in available]


def find(name: str) -> CatalogEntry | None:
    """The entry named `name` (or one of its aliases), or the one an OpenAI model name cuts with,
    as tiktoken's `encoding_for_model` maps it (`gpt-4o`, `gpt-4o-2024-08-06` -> o200k_base).

    >>> find("gpt-4").name, find("GPT-4o").name, find("gpt2").name  # doctest: +SKIP
    ('cl100k_base', 'o200k_base', 'r50k_base')
    """
    key = name.lower()
    for e in entries():
        if key == e.name.lower() or key in (a.lower() for a in e.aliases):
            return e
    encoding = _openai_encoding_for(key)
    return find(encoding) if encoding is not None and encoding != key else None


def _openai_encoding_for(model: str) -> str | None:
    """tiktoken's encoding name for an OpenAI model name (its own table and prefixes), or None."""
    try:
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    try:
        return encoding_name_for_model(model)
    except KeyError:
        return None


def entry_for_file(path: Path) -> CatalogEntry | None:
    """The catalog entry whose sha256 matches a file the user opened (their own qwen.tiktoken)."""
    try:
        digest = file_sha256(path)
    except OSError:
        return None
    return next((e for e in entries() if e.sha256 == digest), None)


def load(spec: str, **options: Any) -> Tokenizer:
    """Load a tokenizer by catalog name or from a file path.

    >>> load("cl100k_base").encode_ids("hello world")  # doctest: +SKIP
    [15339, 1917]
    """
    entry = find(spec)
    if entry is not None:
        return load_entry(entry)
    if discovery.is_local_spec(spec):
        return load_local(spec)
    path = Path(spec).expanduser()
    if "+" in spec and not path.exists():
        base, extra = spec.rsplit("+", 1)
        return sidecar.load_extended(load(base), Path(extra).expanduser())
    if path.exists() or os.sep in spec or "." in Path(spec).name:
        return load_path(path, **options)
    raise TokenizerError(unknown_name("tokenizer", spec, "not a catalog name nor a file"))


def unknown_name(what: str, name: str, why: str) -> str:
    """The message for a name the catalog does not hold: the closest names (or names holding it)
    first, then them all.

    >>> unknown_name("tokenizer", "cl100k", "not a catalog name nor a file").split(" (")[0]
    "unknown tokenizer 'cl100k': not a catalog name nor a file; did you mean cl100k_base?"
    """
    names = [e.name for e in entries()]
    wanted = name.lower()
    close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.6)
    close += [n for n in names if len(wanted) > 2 and wanted in n and n not in close][: 3 - len(close)]
    guess = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"unknown {what} {name!r}: {why}{guess} (the catalog: {', '.join(names)})"


def load_local(spec: str) -> Tokenizer:
    """A model on this machine by its stable spec: `hf:ORG/NAME` (the snapshot with its own
    settings), `ollama:MODEL:TAG` or `lmstudio:PUBLISHER/MODEL/FILE` (their GGUF)."""
    found = discovery.resolve(spec)
    if found.format == "chatglm" and found.folder is not None:
        from tokviz.core.backends import glm

        return glm.load_snapshot(found.folder, name=found.name)
    if found.format == "tokenizer.json" and found.folder is not None:
        from tokviz.core.backends.hf_backend import HFTokenizer

        return HFTokenizer.from_snapshot(found.folder, name=found.name)
    return load_path(found.path, name=found.name)


def load_entry(entry: CatalogEntry) -> Tokenizer:
    path = entry.verified_path()
    return _load_file(
        path, entry.format, name=entry.name, pattern=entry.pattern, special_tokens=entry.special_tokens
    )


def load_path(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Tokenizer:
    """Load a vocabulary file, recognising its format from its content and name.

    A file whose sha256 is in the catalog gets that entry's pattern and special tokens; a trained
    `.tiktoken` gets them from its sidecar; otherwise the caller's, or cl100k's pattern.
    """
    path = Path(path).expanduser()
    chatglm = _chatglm(path, name)
    if chatglm is not None:
        return chatglm
    if path.is_dir():  # a model folder: its tokenizer.json with its tokenizer_config.json
        if not (path / "tokenizer.json").is_file():
            raise TokenizerError(f"{path} is a folder without a tokenizer.json")
        from tokviz.core.backends.hf_backend import HFTokenizer

        return HFTokenizer.from_snapshot(path, name=name or path_name(path))
    if not path.is_file():
        kind = path_kind(path)
        if kind == "missing":
            raise TokenizerError(f"no such file: {path}")
        raise TokenizerError(f"{path} is {kind}, not a vocabulary file")
    fmt = sniff_format(path)
    if fmt == "tokenizer.json" and path.suffix.lower() == ".json" and sidecar.is_sidecar(path):
        # the sidecar of a trained vocabulary or an extension: the vocabulary is its rank file
        ranks = path.with_suffix(".tiktoken")
        if not ranks.is_file():
            raise TokenizerError(f"{path} describes the rank file {ranks.name}, which is not beside it")
        return load_path(ranks, name=name)
    if fmt == "gguf":  # a GGUF names itself, and hashing a 5 GB model to find it in the catalog reads it all
        return _load_file(path, fmt, name=name, pattern=None, special_tokens=None)
    if pattern is None and special_tokens is None:
        if (entry := entry_for_file(path)) is not None:
            return _load_file(
                path, entry.format, name=name or entry.name, pattern=entry.pattern,
                special_tokens=entry.special_tokens,
            )
        if fmt == "tiktoken" and (meta := sidecar.find_sidecar(path)) is not None:
            if meta["format"] == sidecar.EXTENSION_FORMAT:
                return _load_extension(path, meta)
            return sidecar.load_trained(path)
    loaded = _load_file(path, fmt, name=name or path_name(path), pattern=pattern, special_tokens=special_tokens)
    return _as_chatglm6b(loaded) if fmt == "sentencepiece" else loaded


def _chatglm(path: Path, name: str | None) -> Tokenizer | None:
    """A ChatGLM model folder, or its `tokenizer.model` / `ice_text.model`, whose
    `tokenizer_config.json` names ChatGLM's tokenizer: loaded with that generation's rules."""
    from tokviz.core.backends import glm

    folder = path if path.is_dir() else path.parent
    if (found := discovery.chatglm_file(folder)) is not None and (path.is_dir() or path == found):
        return glm.load_snapshot(folder, name=name or path_name(folder))
    return None


def path_name(path: Path) -> str:
    """The name a vocabulary loaded from `path` goes by: for a Hugging Face cache snapshot (the
    folder or a file in it) its repository, `org/name`, not its revision hash; else the folder's
    name or the file's stem.

    >>> path_name(Path("hub/models--THUDM--chatglm3-6b/snapshots/0123abcd/tokenizer.model"))
    'THUDM/chatglm3-6b'
    >>> path_name(Path("vocabs/mine.tiktoken")), path_name(Path("vocabs/models--x/snapshots"))
    ('mine', 'snapshots')
    """
    for folder in (path, path.parent):
        repo = discovery.repo_id(folder.parent.parent.name) if folder.parent.name == "snapshots" else None
        if repo is not None:
            return repo
    return path.name if path.is_dir() else path.stem


def _as_chatglm6b(tokenizer: Tokenizer) -> Tokenizer:
    """A SentencePiece model with ChatGLM-6B's own pieces (`ice_text.model` alone) in ChatGLM-6B's
    preprocessing, which its ids assume; any other tokenizer as it is."""
    from tokviz.core.backends.chatglm import ChatGLMTokenizer, is_chatglm6b

    return ChatGLMTokenizer(tokenizer, name=tokenizer.name) if is_chatglm6b(tokenizer) else tokenizer


def _load_extension(path: Path, meta: Mapping[str, Any]) -> Tokenizer:
    """An extension alone: its base as the sidecar names it, checked against the recorded sha256."""
    spec = meta["base"]
    entry = find(spec)
    base_file = Path(spec).expanduser()
    if entry is not None:
        sidecar.check_base(path, meta, entry.sha256)  # loading the entry checks the file against it
    elif base_file.is_file():
        sidecar.check_base(path, meta, file_sha256(base_file))
    return sidecar.load_extended(load(spec), path)


def sniff_format(path: Path) -> str:
    """`tiktoken`, `sentencepiece`, `tokenizer.json` or `gguf`, from the content (names lie: Llama 3's
    `tokenizer.model` is a tiktoken rank file)."""
    from tokviz.core.backends.tiktoken_backend import looks_like_rank_file

    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        raise TokenizerError(f"cannot read {path}: {e.strerror or e}") from e
    if not head:
        raise TokenizerError(f"{path} is empty")
    if head[:4] == b"GGUF" or path.suffix == ".gguf":  # a broken .gguf gets the reader's error
        return "gguf"
    if head.lstrip()[:1] == b"{":
        return "tokenizer.json"
    if looks_like_rank_file(path):
        return "tiktoken"
    if path.suffix == ".model" or head[:1] == b"\x0a":  # a protobuf ModelProto starts with field 1
        return "sentencepiece"
    raise TokenizerError(
        f"{path}: unknown vocabulary format (expected a .tiktoken rank file, a SentencePiece .model, "
        f"a tokenizer.json or a .gguf)"
    )


def _load_file(
    path: Path,
    fmt: str,
    *,
    name: str | None,  # None: the file names itself (GGUF)
    pattern: str | None,
    special_tokens: Mapping[str, int] | None,
) -> Tokenizer:
    if fmt == "tiktoken":
        from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer

        return TiktokenTokenizer.from_file(
            path, pattern=pattern or CL100K_PATTERN, special_tokens=special_tokens, name=name
        )
    if fmt == "sentencepiece":
        from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer

        return SentencePieceTokenizer.from_file(path, name=name)
    if fmt == "trained":
        return sidecar.load_trained(path)
    if fmt == "gguf":
        from tokviz.core.backends.gguf_backend import GGUFTokenizer

        return GGUFTokenizer.from_file(path, name=name)
    if fmt == "tokenizer.json":
        from tokviz.core.backends.hf_backend import HFTokenizer

        return HFTokenizer.from_file(path, name=name)
    raise TokenizerError(f"{path}: unsupported format {fmt!r}")
