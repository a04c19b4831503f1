"""Trained and extended vocabularies: the JSON sidecar beside a `.tiktoken`, read and checked.

`NAME.json` beside `NAME.tiktoken` says what the rank file is:

* `"format": "tokviz-bpe"`, version 1: a vocabulary tokviz trained (`tokviz.training.vocabfile`
  writes it): the split pattern, special tokens, training parameters, corpus summary, merges.
* `"format": "tokviz-extension"`, version 1: extra ranks learned on a base (`tokviz.training.extend`
  writes it): the base's catalog name or absolute path and its sha256, so the extra file alone
  loads as base + extra, and a base that changed since is refused instead of extended wrongly.

This module is the one reader: the format names and versions are defined here and the writers in
`tokviz.training` use them. A sidecar that cannot be read, has another version or the wrong shape
is a `TokenizerError` naming the file and the field. It does not find an extension's base (the
catalog loads it and hands it in), and it writes nothing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokviz.core.files import sha256_hex
from tokviz.core.patterns import WHOLE_TEXT_PATTERN
from tokviz.core.tokenizer import Tokenizer, TokenizerError

# the tiktoken backend (and tiktoken, with its resident memory) is imported by the functions that build a
# tokenizer: the catalog imports this module, and the window, which lists vocabularies but loads
# none, has no other use for tiktoken
if TYPE_CHECKING:
    from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer

TRAINED_FORMAT = "tokviz-bpe"
TRAINED_VERSION = 1
EXTENSION_FORMAT = "tokviz-extension"
EXTENSION_VERSION = 1
_VERSIONS = {TRAINED_FORMAT: TRAINED_VERSION, EXTENSION_FORMAT: EXTENSION_VERSION}
_SHA256 = re.compile(r"[0-9a-f]{64}")


def sidecar_path(ranks_path: str | os.PathLike[str]) -> Path:
    """`NAME.json` for `NAME.tiktoken`.

    >>> sidecar_path("out/mine.tiktoken").as_posix()
    'out/mine.json'
    """
    return Path(ranks_path).with_suffix(".json")


def find_sidecar(ranks_path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The checked tokviz sidecar beside a rank file; None when there is none, or when the JSON
    beside it is not tokviz's (another tool's `NAME.json`)."""
    path = sidecar_path(ranks_path)
    if not path.is_file():
        return None
    data = _read_json(path)
    if not isinstance(data, dict) or data.get("format") not in _VERSIONS:
        return None
    return _checked(path, data)


def is_sidecar(path: str | os.PathLike[str]) -> bool:
    """Whether the JSON file `path` is a tokviz sidecar (a trained vocabulary's or an extension's);
    a large `tokenizer.json` is told apart by its first bytes, not parsed."""
    try:
        with open(path, "rb") as f:
            if b'"tokviz-' not in f.read(1 << 16):
                return False
        data = _read_json(Path(path))
    except (OSError, TokenizerError):
        return False
    return isinstance(data, dict) and data.get("format") in _VERSIONS


def read_sidecar(path: str | os.PathLike[str], *, expected: str = TRAINED_FORMAT) -> dict[str, Any]:
    """Read and check a sidecar of the `expected` format; TokenizerError saying what is wrong."""
    path = Path(path)
    data = _read_json(path)
    if not isinstance(data, dict) or data.get("format") != expected:
        raise TokenizerError(f'{path} is not a {expected} sidecar (no "format": "{expected}")')
    return _checked(path, data)


def load_trained(path: str | os.PathLike[str]) -> TiktokenTokenizer:
    """Load a trained vocabulary from `NAME.tiktoken` or `NAME.json` (both files must exist)."""
    from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer, check_every_byte, read_rank_file

    path = Path(path)
    stem = path.with_suffix("") if path.suffix.lower() in (".tiktoken", ".json") else path
    ranks_path = stem.with_name(stem.name + ".tiktoken")
    meta = read_sidecar(stem.with_name(stem.name + ".json"))
    ranks = read_rank_file(ranks_path)
    try:
        check_every_byte(ranks)
    except TokenizerError as e:
        raise TokenizerError(f"{ranks_path}: {e}") from None
    return TiktokenTokenizer.from_ranks(
        meta.get("name") or ranks_path.stem, ranks,
        pattern=meta.get("pattern") or WHOLE_TEXT_PATTERN, special_tokens=meta.get("special_tokens") or {},
        family="trained",
    )


def check_base(ranks_path: str | os.PathLike[str], meta: Mapping[str, Any], base_sha256: str) -> None:
    """Refuse an extension whose base is not the file it was learned on."""
    if meta["base_sha256"] != base_sha256:
        raise TokenizerError(
            f'{sidecar_path(ranks_path)}: "base_sha256" {meta["base_sha256"]} does not match the base '
            f'{meta["base"]!r} ({base_sha256}): the base changed since the extension was learned; '
            f"learn it again with `tokviz extend`"
        )


def load_extended(base: Tokenizer, extra_path: str | os.PathLike[str]) -> TiktokenTokenizer:
    """A base byte-level BPE plus an extra rank file (`tokviz extend`, or Qwen's `qwen_extra.tiktoken`)."""
    from tokviz.core.backends.tiktoken_backend import read_rank_file

    extra_path = Path(extra_path)
    try:
        return extended_tokenizer(base, read_rank_file(extra_path), name=f"{base.name}+{extra_path.stem}")
    except TokenizerError as e:
        raise TokenizerError(f"{extra_path}: {e}") from e


def extended_tokenizer(
    base: Tokenizer, extra: Mapping[bytes, int], *, name: str | None = None
) -> TiktokenTokenizer:
    """The base with the extra ranks added: a working tokenizer for every view.

    >>> from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer
    >>> base = TiktokenTokenizer("ab", {b"a": 0, b"b": 1}, pattern="[ab]+")
    >>> extended_tokenizer(base, {b"ab": 2}).encode_ids("abab")
    [2, 2]
    >>> extended_tokenizer(base, {b"ab": 1})
    Traceback (most recent call last):
    ...
    tokviz.core.tokenizer.TokenizerError: extra ranks reuse ids of the base ([1]...): refusing to overwrite them
    """
    from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer

    ranks, pattern = base.mergeable_ranks, base.split_pattern
    if ranks is None or pattern is None:
        raise TokenizerError(f"extra ranks need a byte-level BPE base, not {base.describe()}")
    clash = sorted(set(extra.values()) & {*ranks.values(), *base.special_tokens.values()})
    if clash:
        raise TokenizerError(f"extra ranks reuse ids of the base ({clash[:5]}...): refusing to overwrite them")
    known = sorted(t for t in extra if t in ranks)
    if known:
        raise TokenizerError(f"extra ranks repeat tokens the base already has: {known[:5]}")
    return TiktokenTokenizer.from_ranks(
        name or f"{base.name}+extra", {**ranks, **extra},
        pattern=pattern, special_tokens=base.special_tokens, family=base.family,
    )


# -- checking -------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise TokenizerError(f"cannot read sidecar {path}: {e}") from e


def _checked(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    fmt = data["format"]
    if data.get("version") != _VERSIONS[fmt]:
        raise TokenizerError(
            f"{path}: sidecar version {data.get('version')!r} is not supported (expected {_VERSIONS[fmt]}); "
            f"it was written by another tokviz version: save it again"
        )
    if fmt == TRAINED_FORMAT:
        _check_trained(path, data)
    else:
        _check_extension(path, data)
    _check_ranks_sha256(path, data)
    return data


def _check_ranks_sha256(path: Path, data: dict[str, Any]) -> None:
    """Refuse a sidecar beside a rank file it was not written with (a save killed between its two
    renames, or one file of the pair copied over): loading it would mix two vocabularies."""
    sha = data.get("ranks_sha256")
    if sha is None:  # written before the field existed
        return
    if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
        raise _field_error(path, "ranks_sha256", "the rank file's sha256 (64 hex digits)", sha)
    ranks_path = path.with_suffix(".tiktoken")
    try:
        digest = sha256_hex(ranks_path.read_bytes())
    except OSError as e:
        raise TokenizerError(f"cannot read {ranks_path}: {e.strerror or e}") from e
    if digest != sha:
        backup = _matching_backup(ranks_path, sha)
        way_out = f"the old rank file is kept: mv {backup} {ranks_path}" if backup else "save it again"
        raise TokenizerError(
            f"{ranks_path} is not the rank file {path.name} was saved with (sha256 {digest[:12]}..., "
            f'the sidecar\'s "ranks_sha256" {sha[:12]}...): the pair was not saved together; {way_out}'
        )


def _matching_backup(ranks_path: Path, sha: str) -> Path | None:
    """The backup a save killed between its renames left beside the file (`tokviz.core.files`
    names it `.NAME.tiktoken.<hex>.old`), when it is the rank file this sidecar was saved with."""
    for candidate in sorted(ranks_path.parent.glob(f".{ranks_path.name}.*.old")):
        try:
            if sha256_hex(candidate.read_bytes()) == sha:
                return candidate
        except OSError:
            continue
    return None


def _check_trained(path: Path, data: dict[str, Any]) -> None:
    for field in ("name", "pattern"):
        if data.get(field) is not None and not isinstance(data[field], str):
            raise _field_error(path, field, "a string", data[field])
    specials = data.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in specials.items()
    ):
        raise _field_error(path, "special_tokens", "an object of token -> id", specials)


def _check_extension(path: Path, data: dict[str, Any]) -> None:
    base = data.get("base")
    if not isinstance(base, str) or not base.strip():
        raise _field_error(path, "base", "the base's catalog name or path", base)
    own = {path.resolve(), path.with_suffix(".tiktoken").resolve()}
    if Path(base).expanduser().resolve() in own:
        raise TokenizerError(
            f'{path}: "base" names the extension itself ({base!r}); it must name the vocabulary it extends'
        )
    sha = data.get("base_sha256")
    if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
        raise _field_error(path, "base_sha256", "the base's sha256 (64 hex digits)", sha)


def _field_error(path: Path, field: str, wanted: str, value: Any) -> TokenizerError:
    shown = {dict: "an object", list: "a list", bool: "a boolean", type(None): "null"}
    what = shown.get(type(value)) or f"{value!r:.60}"
    return TokenizerError(f'{path}: "{field}" must be {wanted}, not {what}')
