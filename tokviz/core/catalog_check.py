"""The shape of a catalog file, checked before any entry is used.

A user's `catalog.json` is hand-edited: a wrong type (`"entries": {...}`, `"sha256": 7`) must be
one line naming the file, the entry and the field, not a traceback in every command. File names
are names inside the vocabulary folder, never paths out of it (`"../../x"` or `/etc/x` would let
`vocabs fetch` write anywhere; a subfolder such as the built-in `llama.cpp/` is fine); a package is
a pinned requirement (`name==version`), since it is handed to `pip download` and names a folder.

This module only reads JSON that is already parsed; it does not build entries (see `catalog`).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from tokviz.core.tokenizer import TokenizerError

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
#: `name==version` with a PEP 508 name and a plain release (1.13.1): a pinned requirement, surely
_PLAIN_PIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?==[0-9]+(?:\.[0-9]+)*")


class CatalogWarning(UserWarning):
    """A user catalog that cannot be used: its entries are skipped, the built-in ones still work."""


FORMATS = ("tiktoken", "sentencepiece", "tokenizer.json", "gguf", "trained")


def check_catalog(path: Path, data: Any, *, user: bool) -> list[dict[str, Any]]:
    """The entries of a parsed catalog file, or TokenizerError naming the file and the field."""
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise TokenizerError(f'{path}: not a tokviz catalog: it must be an object with an "entries" list, '
                             f"not {_shown(data.get('entries') if isinstance(data, dict) else data)}")
    found: list[dict[str, Any]] = data["entries"]
    for i, entry in enumerate(found):
        _check_entry(path, i, entry, user=user)
    return found


def check_file_name(name: str, *, subfolders: bool = False) -> str:
    """A file name inside the vocabulary folder, or ValueError saying why it is not one.

    >>> check_file_name("qwen.tiktoken")
    'qwen.tiktoken'
    >>> check_file_name("../../x.tiktoken")
    Traceback (most recent call last):
    ...
    ValueError: '../../x.tiktoken' is a path, not a file name in the vocabulary folder
    """
    parts = PurePosixPath(name).parts
    windows = PureWindowsPath(name)
    plain = (
        name.strip() == name and name not in ("", ".", "..") and "\x00" not in name
        and not windows.drive and not windows.root and "\\" not in name
        and not PurePosixPath(name).is_absolute() and ".." not in parts and not name.startswith("~")
        and (subfolders or len(parts) == 1)
    )
    if not plain:
        raise ValueError(f"{name!r} is a path, not a file name in the vocabulary folder")
    return name


def check_package(spec: str) -> str:
    """A pinned requirement (`name==version`), or ValueError saying what is wrong.

    >>> check_package("dashscope==2.0.2")
    'dashscope==2.0.2'
    >>> check_package("../../../x==1.0")
    Traceback (most recent call last):
    ...
    ValueError: '../../../x==1.0' is not a requirement (Expected package name at the start of dependency specifier)
    """
    if _PLAIN_PIN.fullmatch(spec):  # a name and a release, as every built-in entry's: no need to ask
        return spec  # `packaging` (many modules, resident in each of the app's processes)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(spec)
    except InvalidRequirement as e:
        raise ValueError(f"{spec!r} is not a requirement ({str(e).splitlines()[0]})") from None
    pins = [s for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    if req.url or req.marker or req.extras or len(pins) != 1 or len(req.specifier) != 1:
        raise ValueError(f"{spec!r} is not a pinned requirement (name==version)")
    return spec


def _check_entry(path: Path, i: int, entry: Any, *, user: bool) -> None:
    if not isinstance(entry, dict):
        raise TokenizerError(f"{path}: entry {i} must be an object, not {_shown(entry)}")
    where = f"{path}: entry {i}" + (f" ({entry['name']!r})" if isinstance(entry.get("name"), str) else "")

    def need(field: str, ok: bool, wanted: str, value: Any = None) -> None:
        if not ok:
            shown = _shown(entry.get(field) if value is None else value)
            raise TokenizerError(f'{where}: "{field}" must be {wanted}, not {shown}')

    for field in ("name", "format", "file", "sha256"):
        if field not in entry:
            raise TokenizerError(f'{where}: "{field}" is missing (every entry needs name, format, file, sha256)')
    need("name", isinstance(entry["name"], str) and entry["name"].strip() != "", "a non-empty string")
    need("format", entry["format"] in FORMATS, f"one of {', '.join(FORMATS)}")
    need("sha256", isinstance(entry["sha256"], str) and bool(_SHA256.fullmatch(entry["sha256"])),
         "64 hex digits")
    _check_name(need, "file", entry["file"], subfolders=True)
    for field in ("title", "family", "pattern", "url"):
        need(field, entry.get(field) is None or isinstance(entry[field], str), "a string")
    need("size", entry.get("size") is None or _is_size(entry["size"]), "the file's size in bytes (a positive integer)")
    need("bundled", isinstance(entry.get("bundled", False), bool), "true or false")
    need("bundled", not (user and entry.get("bundled")), "false in a user catalog")
    need("aliases", _list_of(entry.get("aliases", []), str), "a list of strings")
    specials = entry.get("special_tokens", {})
    need("special_tokens", isinstance(specials, dict) and all(_is_id(v) for v in specials.values()),
         "an object of token -> id")
    ranges = entry.get("special_token_ranges", [])
    need("special_token_ranges", _list_of(ranges, dict) and all(
        isinstance(r.get("template"), str) and _is_id(r.get("count")) and _is_id(r.get("first_id"))
        and _is_id(r.get("first_n", 0)) for r in ranges), 'a list of {"template", "count", "first_id"}')
    source = entry.get("source")
    if source is not None:
        need("source", isinstance(source, dict) and isinstance(source.get("package"), str)
             and isinstance(source.get("member"), str) and source.get("archive", "wheel") in ("wheel", "sdist"),
             'an object with "package" and "member" strings (and "archive": "wheel" or "sdist")')
        try:
            check_package(source["package"])
        except ValueError as e:
            raise TokenizerError(f'{where}: "source.package" {e}') from None
    extras = entry.get("extras", [])
    need("extras", _list_of(extras, dict) and all(
        isinstance(x.get("file"), str) and isinstance(x.get("member"), str)
        and isinstance(x.get("sha256"), str) and _SHA256.fullmatch(x["sha256"])
        and (x.get("size") is None or _is_size(x["size"])) for x in extras),
         'a list of {"file", "member", "sha256"} (and "size", a positive integer)')
    for x in extras:
        _check_name(need, "extras.file", x["file"], subfolders=True)


def _check_name(need: Any, field: str, value: Any, *, subfolders: bool) -> None:
    need(field, isinstance(value, str), "a file name")
    try:
        check_file_name(value, subfolders=subfolders)
    except ValueError:
        need(field, False, "a file name inside the vocabulary folder (no '..', not absolute)", value)


def _list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(v, kind) for v in value)


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _shown(value: Any) -> str:
    names = {dict: "an object", list: "a list", bool: "a boolean", type(None): "null"}
    return names.get(type(value)) or f"{value!r:.60}"
