"""The tokenizers already on this machine: the Hugging Face hub cache, Ollama, LM Studio,
llama.cpp's cache and folders the user added, found by their known layouts.

* Hugging Face (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`):
  `models--ORG--NAME/snapshots/REV/` holding `tokenizer.json`, `tokenizer.model` or a
  `*.tiktoken` (files are symlinks into `blobs/`); `refs/main` names the revision, else the
  newest snapshot is taken. Spec `hf:ORG/NAME` (`hf:ORG/NAME@REV` for another revision); a
  `-GGUF` repository, which has only `.gguf` files, lists each as `hf:ORG/NAME/FILE.gguf`.
* Ollama (`$OLLAMA_MODELS`, else `~/.ollama/models`): `manifests/HOST/NAMESPACE/MODEL/TAG`, a JSON
  whose `application/vnd.ollama.image.model` layer digest `sha256:HEX` names `blobs/sha256-HEX`,
  a GGUF. Spec `ollama:MODEL:TAG` (`ollama:USER/MODEL:TAG` outside the library namespace).
* LM Studio (`~/.lmstudio/models`, `~/.cache/lm-studio/models`): `PUBLISHER/MODEL/*.gguf`.
  Spec `lmstudio:PUBLISHER/MODEL/FILE.gguf`.
* llama.cpp's cache (`$LLAMA_CACHE`, else `~/.cache/llama.cpp`) and the user's folders
  (`folders.json` in the data folder): any `*.gguf`, `tokenizer.json`, `*.tiktoken` or
  `tokenizer.model` down to a few levels. The spec is the path.

Vocabulary sizes come from metadata only: a GGUF's header up to its token list
(`tokviz.core.gguf.read_summary`), a snapshot's `config.json` `vocab_size` (the model's, which
may round the tokenizer's up), else a SentencePiece model's count of pieces, a rank file's last
rank. Scanning never opens weights, follows a
folder symlink only to a folder inside the tree being scanned and never twice (a loop is a
note), and skips what it cannot read with a note; it never raises for what it finds on disk.

This module does not load tokenizers (`tokviz.core.catalog.load` does, through `resolve`) and
does not touch the network.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from tokviz.core.files import write_atomic
from tokviz.core.gguf import GGUFError, read_summary
from tokviz.core.paths import data_dir
from tokviz.core.tokenizer import TokenizerError

Source = Literal["hf", "ollama", "lmstudio", "llama.cpp", "folder"]
SOURCE_TITLES: dict[str, str] = {
    "hf": "Hugging Face cache", "ollama": "Ollama", "lmstudio": "LM Studio",
    "llama.cpp": "llama.cpp cache", "folder": "your folders",
}
SPEC_PREFIXES = ("hf:", "ollama:", "lmstudio:")
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_REGISTRY = "registry.ollama.ai"
HF_FILES = ("tokenizer.json", "tokenizer.model")  # in the order a snapshot is loaded from
FOLDERS_FORMAT = "tokviz-folders v1"
MAX_DEPTH = 4  # how deep a folder walk goes (llama.cpp's cache and the user's folders)
MAX_LISTED = 20_000  # folder entries one walk looks at before it stops with a note


@dataclass(frozen=True)
class Found:
    """One tokenizer on this machine."""

    name: str  # Qwen/Qwen2.5-7B-Instruct, llama3.2:3b, a GGUF's general.name
    source: Source
    format: str  # tokenizer.json | sentencepiece | tiktoken | gguf | chatglm
    vocab_size: int | None  # None where no metadata says it cheaply
    path: Path  # the file a load reads (a snapshot's tokenizer.json, an Ollama blob)
    spec: str  # what `-t` accepts
    detail: str = ""  # GGUF: tokenizer model and pre-tokenizer; HF: the revision

    @property
    def label(self) -> str:
        """The name as a menu shows it (`ollama llama3.2:3b`)."""
        return f"ollama {self.name}" if self.source == "ollama" else self.name

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path)
        return data


@dataclass
class Scan:
    """What a scan found, in a stable order, and the notes on what it skipped."""

    found: list[Found] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    roots: list[tuple[Source, Path]] = field(default_factory=list)  # the folders looked in


# -- where to look ------------------------------------------------------------------------------


def _home() -> Path:
    return Path.home()


def hf_hub_dir() -> Path:
    if env := os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(env).expanduser()
    if env := os.environ.get("HF_HOME"):
        return Path(env).expanduser() / "hub"
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else _home() / ".cache") / "huggingface" / "hub"


def ollama_dir() -> Path:
    env = os.environ.get("OLLAMA_MODELS")
    return Path(env).expanduser() if env else _home() / ".ollama" / "models"


def lmstudio_dirs() -> list[Path]:
    return [_home() / ".lmstudio" / "models", _home() / ".cache" / "lm-studio" / "models"]


def llama_cpp_dir() -> Path:
    env = os.environ.get("LLAMA_CACHE")
    return Path(env).expanduser() if env else _home() / ".cache" / "llama.cpp"


def roots() -> list[tuple[Source, Path]]:
    """Every folder a scan looks in, the user's last."""
    found: list[tuple[Source, Path]] = [("hf", hf_hub_dir()), ("ollama", ollama_dir())]
    found += [("lmstudio", d) for d in lmstudio_dirs()]
    found.append(("llama.cpp", llama_cpp_dir()))
    found += [("folder", d) for d in user_folders()]
    return found


# -- the user's folders -------------------------------------------------------------------------


def folders_file() -> Path:
    return data_dir() / "folders.json"


def user_folders() -> list[Path]:
    """The folders the user added; an unreadable or foreign file counts as none (and is kept)."""
    try:
        data = json.loads(folders_file().read_text("utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("format") != FOLDERS_FORMAT:
        return []
    return [Path(f) for f in data.get("folders", []) if isinstance(f, str)]


def _save_folders(folders: Sequence[Path]) -> None:
    data = {"format": FOLDERS_FORMAT, "folders": [str(f) for f in folders]}
    write_atomic(folders_file(), (json.dumps(data, indent=1) + "\n").encode("utf-8"), make_folders=True)


def add_folder(folder: str | os.PathLike[str]) -> Path:
    """Remember a folder to scan (absolute); raises TokenizerError when it is not a folder."""
    path = Path(folder).expanduser().absolute()
    if not path.is_dir():
        raise TokenizerError(f"{path} is not a folder")
    folders = user_folders()
    if path not in folders:
        _save_folders([*folders, path])
    return path


def remove_folder(folder: str | os.PathLike[str]) -> bool:
    """Forget a folder; False when it was not remembered."""
    path = Path(folder).expanduser().absolute()
    folders = user_folders()
    if path not in folders:
        return False
    _save_folders([f for f in folders if f != path])
    return True


# -- scanning -----------------------------------------------------------------------------------


def scan(
    where: Sequence[tuple[Source, Path]] | None = None, *, check: Callable[[], None] | None = None
) -> Scan:
    """Find every tokenizer under `where` (default: `roots()`). `check()` is called between
    models (for cancellation: it may raise)."""
    result = Scan(roots=list(where if where is not None else roots()))
    seen: set[Path] | None = None  # resolved paths, built only when a folder walk needs them
    for source, root in result.roots:
        if not root.is_dir():
            continue
        for found in _SCANNERS[source](root, result.notes, check or _nothing):
            # a file a folder walk finds again (a user folder holding the HF cache) is listed
            # once; two Ollama tags of one blob (`llama3.2:latest`, `llama3.2:3b`) are two names
            if source in ("llama.cpp", "folder"):
                if seen is None:
                    seen = {f.path.resolve() for f in result.found}
                key = found.path.resolve()
                if key in seen:
                    continue
                seen.add(key)
            result.found.append(found)
    return result


def _nothing() -> None:
    return None


def _listdir(folder: Path, notes: list[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as e:
        notes.append(f"{folder}: cannot list ({e.strerror or e})")
        return []


def _gguf_found(path: Path, notes: list[str], *, source: Source, spec: str, name: str | None = None) -> Found | None:
    try:
        summary = read_summary(path)
    except GGUFError as e:
        notes.append(str(e))
        return None
    if summary.model is None:  # a projector or an adapter: no vocabulary in it
        return None
    pre = f" · pre-tokenizer {summary.pre}" if summary.pre else ""
    return Found(
        name or summary.name or path.stem, source, "gguf", summary.vocab_size, path, spec,
        f"GGUF {summary.model}{pre}",
    )


# Hugging Face


def hf_snapshot(repo_dir: Path, revision: str | None = None) -> Path | None:
    """The snapshot folder of a `models--ORG--NAME` folder: `revision` (a ref or a commit), else
    `refs/main`, else the newest snapshot; None when there is none."""
    snapshots = repo_dir / "snapshots"
    for ref in ([revision] if revision else []) + ["main"]:
        ref_file = repo_dir / "refs" / ref
        try:
            commit = ref_file.read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            commit = ref if ref == revision else ""
        if commit and (snapshots / commit).is_dir() and "/" not in commit:
            return snapshots / commit
        if revision:
            return None  # the revision asked for is not here: never another one instead
    try:
        folders = [p for p in snapshots.iterdir() if p.is_dir()]
    except OSError:
        return None
    return max(folders, key=lambda p: p.stat().st_mtime_ns, default=None)


def hf_tokenizer_file(snapshot: Path) -> tuple[Path, str] | None:
    """The file a snapshot's tokenizer loads from and its format, or None. A snapshot whose
    `tokenizer_config.json` names THUDM's ChatGLM tokenizer is `chatglm` (its `ice_text.model` or
    `tokenizer.model`, loaded with ChatGLM's own rules; its code is not run)."""
    if (chatglm := chatglm_file(snapshot)) is not None:
        return chatglm, "chatglm"
    if (snapshot / "tokenizer.json").is_file():
        return snapshot / "tokenizer.json", "tokenizer.json"
    if (snapshot / "tokenizer.model").is_file():
        return snapshot / "tokenizer.model", _model_format(snapshot / "tokenizer.model")
    try:
        ranks = sorted(p for p in snapshot.iterdir() if p.suffix == ".tiktoken" and p.is_file())
    except OSError:
        return None
    return (ranks[0], "tiktoken") if ranks else None


def chatglm_file(folder: Path) -> Path | None:
    """The vocabulary file of a ChatGLM model folder, or None when the folder's config does not
    name ChatGLM's tokenizer (or cannot be read: the loader then says why)."""
    from tokviz.core.backends import glm

    try:
        config = glm.tokenizer_config(folder)
    except TokenizerError:
        return None
    return glm.vocab_file(folder) if glm.is_chatglm_config(config) else None


_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+=* \d+\n")


def _model_format(path: Path) -> str:
    """`sentencepiece`, or `tiktoken` for a rank file named tokenizer.model (Llama 3's), from its
    first line."""
    try:
        with open(path, "rb") as f:
            head = f.read(128)
    except OSError:
        return "sentencepiece"
    return "tiktoken" if _RANK_LINE.match(head) else "sentencepiece"


def repo_id(folder_name: str) -> str | None:
    """`models--Qwen--Qwen2.5-7B` -> `Qwen/Qwen2.5-7B` (the hub's own folder naming)."""
    if not folder_name.startswith("models--"):
        return None
    return folder_name.removeprefix("models--").replace("--", "/", 1)


def _scan_hf(root: Path, notes: list[str], check: Callable[[], None]) -> Iterator[Found]:
    for entry in _listdir(root, notes):
        repo = repo_id(entry.name)
        if repo is None:
            continue
        check()
        repo_dir = Path(entry.path)
        snapshot = hf_snapshot(repo_dir)
        if snapshot is None:
            continue
        found = hf_tokenizer_file(snapshot)
        if found is None:
            for gguf in sorted(snapshot.glob("*.gguf")):  # a -GGUF repository: its files
                name = f"{repo}/{gguf.name}"
                if (item := _gguf_found(gguf, notes, source="hf", spec=f"hf:{name}", name=name)):
                    yield item
            continue
        file, fmt = found
        # a rank file's own size (without its special tokens); else the model's config.json
        size = _rank_file_size(file, notes) if fmt == "tiktoken" else _config_vocab_size(snapshot, notes)
        if size is None and fmt == "sentencepiece":
            size = sentencepiece_size(file, notes)
        yield Found(repo, "hf", fmt, size, file, f"hf:{repo}", f"revision {snapshot.name[:12]}")


def _config_vocab_size(snapshot: Path, notes: list[str]) -> int | None:
    config = snapshot / "config.json"
    if not config.is_file():
        return None
    try:
        data = json.loads(config.read_text("utf-8"))
    except (OSError, ValueError) as e:
        notes.append(f"{config}: unreadable ({e})")
        return None
    if not isinstance(data, dict):
        return None
    size = data.get("vocab_size", (data.get("text_config") or {}).get("vocab_size"))
    return size if isinstance(size, int) else None


def sentencepiece_size(path: Path, notes: list[str]) -> int | None:
    """The number of pieces of a SentencePiece `tokenizer.model`, counted in its protobuf without
    parsing a piece: the pieces are the repeated field 1 of `ModelProto`, written first, so the
    count is the number of field-1 records before the first other field. None, with a note, for a
    file that is not such a protobuf."""
    try:
        data = path.read_bytes()
    except OSError as e:
        notes.append(f"{path}: unreadable ({e.strerror or e})")
        return None
    count, pos, n = 0, 0, len(data)
    while pos < n and data[pos] == 0x0A:  # field 1, length-delimited: a piece
        length, shift = 0, 0
        pos += 1
        while pos < n:  # the record's length, a varint (one byte for a piece under 128 bytes)
            byte = data[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        pos += length
        count += 1
    if pos > n or count == 0:
        notes.append(f"{path}: not a SentencePiece model (no pieces where they should be)")
        return None
    return count


def _rank_file_size(path: Path, notes: list[str]) -> int | None:
    """A rank file's size from its last line (`base64 rank`): the last rank + 1, reading 256
    bytes rather than counting a few megabytes of lines."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(f.tell() - 256, 0))
            tail = f.read().rstrip().rsplit(b"\n", 1)[-1]
    except OSError as e:
        notes.append(f"{path}: unreadable ({e.strerror or e})")
        return None
    rank = tail.rsplit(b" ", 1)[-1]
    return int(rank) + 1 if rank.isdigit() else None


# Ollama


def ollama_name(host: str, namespace: str, model: str, tag: str) -> str:
    """The name Ollama itself prints: `llama3.2:3b`, `user/model:tag`, `host/ns/model:tag`.

    >>> ollama_name("registry.ollama.ai", "library", "llama3.2", "3b")
    'llama3.2:3b'
    """
    if host == OLLAMA_REGISTRY:
        return f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
    return f"{host}/{namespace}/{model}:{tag}"


def ollama_blob(root: Path, manifest: Path) -> Path:
    """The model blob a manifest names; raises TokenizerError saying what is wrong."""
    try:
        data = json.loads(manifest.read_text("utf-8"))
        layers = data["layers"]
        digest = next(layer["digest"] for layer in layers if layer.get("mediaType") == OLLAMA_MODEL_LAYER)
    except StopIteration:
        raise TokenizerError(f"{manifest}: no {OLLAMA_MODEL_LAYER} layer (not a language model)") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise TokenizerError(f"{manifest}: not a readable Ollama manifest ({e})") from e
    algorithm, _, hexdigest = str(digest).partition(":")
    if algorithm != "sha256" or not hexdigest or not all(c in "0123456789abcdef" for c in hexdigest):
        raise TokenizerError(f"{manifest}: unexpected digest {digest!r}")
    blob = root / "blobs" / f"sha256-{hexdigest}"
    if not blob.is_file():
        raise TokenizerError(f"{manifest}: its model blob {blob} is missing (run `ollama pull` again)")
    return blob


def _scan_ollama(root: Path, notes: list[str], check: Callable[[], None]) -> Iterator[Found]:
    manifests = root / "manifests"
    for host in _listdir(manifests, notes) if manifests.is_dir() else []:
        for namespace in _listdir(Path(host.path), notes) if host.is_dir() else []:
            for model in _listdir(Path(namespace.path), notes) if namespace.is_dir() else []:
                for tag in _listdir(Path(model.path), notes) if model.is_dir() else []:
                    if not tag.is_file():
                        continue
                    check()
                    name = ollama_name(host.name, namespace.name, model.name, tag.name)
                    try:
                        blob = ollama_blob(root, Path(tag.path))
                    except TokenizerError as e:
                        notes.append(str(e))
                        continue
                    if item := _gguf_found(blob, notes, source="ollama", spec=f"ollama:{name}", name=name):
                        yield item


# LM Studio, llama.cpp's cache, the user's folders


def _scan_lmstudio(root: Path, notes: list[str], check: Callable[[], None]) -> Iterator[Found]:
    for path in _walk(root, notes, depth=2, want=lambda name: name.endswith(".gguf")):
        check()
        rel = path.relative_to(root).as_posix()
        if item := _gguf_found(path, notes, source="lmstudio", spec=f"lmstudio:{rel}"):
            yield item


def _scan_files(source: Source) -> Callable[[Path, list[str], Callable[[], None]], Iterator[Found]]:
    def scan_folder(root: Path, notes: list[str], check: Callable[[], None]) -> Iterator[Found]:
        for path in _walk(root, notes, depth=MAX_DEPTH, want=_is_vocab_name):
            check()
            if path.suffix == ".gguf":
                if item := _gguf_found(path, notes, source=source, spec=str(path)):
                    yield item
                continue
            fmt = {"tokenizer.json": "tokenizer.json"}.get(path.name) or (
                _model_format(path) if path.name == "tokenizer.model" else "tiktoken")
            if fmt == "tiktoken":
                size = _rank_file_size(path, notes)
            else:
                size = _config_vocab_size(path.parent, notes)
                if size is None and fmt == "sentencepiece":
                    size = sentencepiece_size(path, notes)
            name = path.parent.name if fmt != "tiktoken" else path.stem
            yield Found(name, source, fmt, size, path, str(path if fmt != "tokenizer.json" else path.parent),
                        str(path.parent))

    return scan_folder


def _is_vocab_name(name: str) -> bool:
    return name.endswith((".gguf", ".tiktoken")) or name in HF_FILES


def _walk(root: Path, notes: list[str], *, depth: int, want: Callable[[str], bool]) -> Iterator[Path]:
    """Files under `root` (down to `depth` folders) whose name `want`s, sorted. A folder symlink
    is followed only to a folder inside `root` not visited yet; anything else is a note."""
    real_root = root.resolve()
    seen: set[tuple[int, int]] = set()
    listed = 0

    def visit(folder: Path, level: int) -> Iterator[Path]:
        nonlocal listed
        try:
            st = folder.stat()
        except OSError as e:
            notes.append(f"{folder}: cannot read ({e.strerror or e})")
            return
        if (st.st_dev, st.st_ino) in seen:
            notes.append(f"{folder}: symlink loop (folder already visited), skipped")
            return
        seen.add((st.st_dev, st.st_ino))
        for entry in _listdir(folder, notes):
            listed += 1
            if listed > MAX_LISTED:
                if listed == MAX_LISTED + 1:
                    notes.append(f"{root}: more than {MAX_LISTED:,} entries; the rest was not scanned")
                return
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError as e:
                notes.append(f"{path}: cannot read ({e.strerror or e})")
                continue
            if is_dir:
                if entry.name.startswith(".") or level >= depth:
                    continue
                if entry.is_symlink():
                    target = path.resolve()
                    if not target.is_relative_to(real_root):
                        notes.append(f"{path}: a symlink out of {root} ({target}), not followed")
                        continue
                yield from visit(path, level + 1)
            elif is_file and want(entry.name):
                yield path
            elif not is_file and entry.is_symlink() and want(entry.name):
                notes.append(f"{path}: broken symlink, skipped")

    yield from visit(root, 0)


_SCANNERS: dict[str, Callable[[Path, list[str], Callable[[], None]], Iterator[Found]]] = {
    "hf": _scan_hf, "ollama": _scan_ollama, "lmstudio": _scan_lmstudio,
    "llama.cpp": _scan_files("llama.cpp"), "folder": _scan_files("folder"),
}


# -- resolving a spec ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Resolved:
    """Where a `hf:` / `ollama:` / `lmstudio:` spec points."""

    path: Path  # the file to load
    format: str  # tokenizer.json | sentencepiece | tiktoken | gguf | chatglm
    name: str
    folder: Path | None = None  # a Hugging Face snapshot (its tokenizer_config.json, templates)


def is_local_spec(spec: str) -> bool:
    return spec.startswith(SPEC_PREFIXES)


def resolve(spec: str) -> Resolved:
    """Where `hf:ORG/NAME[@REV]`, `ollama:MODEL[:TAG]` or `lmstudio:PUBLISHER/MODEL/FILE` points
    on this machine; raises TokenizerError saying what is missing and where it looked."""
    kind, _, rest = spec.partition(":")
    if not rest:
        raise TokenizerError(f"{spec!r}: name a model after {kind}: (for example {_EXAMPLES[kind]})")
    if kind == "hf":
        return _resolve_hf(rest)
    if kind == "ollama":
        return _resolve_ollama(rest)
    if kind == "lmstudio":
        return _resolve_lmstudio(rest)
    raise TokenizerError(f"{spec!r} is not a local model spec ({', '.join(SPEC_PREFIXES)})")


_EXAMPLES = {"hf": "hf:Qwen/Qwen2.5-7B-Instruct", "ollama": "ollama:llama3.2:3b",
             "lmstudio": "lmstudio:lmstudio-community/Qwen2.5-7B-Instruct-GGUF/Qwen2.5-7B-Instruct-Q4_K_M.gguf"}


def _resolve_hf(rest: str) -> Resolved:
    """`hf:ORG/NAME[@REV]`, or `hf:ORG/NAME/FILE.gguf[@REV]` for one file of a -GGUF repository
    (which has no tokenizer file; `hf:ORG/NAME` alone then takes its first GGUF by name: the
    quantizations of one model share one vocabulary)."""
    repo, _, revision = rest.partition("@")
    org, _, model = repo.partition("/")
    model, _, file = model.partition("/")
    if not org or not model or "/" in file or ".." in repo or (file and not file.endswith(".gguf")):
        raise TokenizerError(
            f"hf:{rest}: expected hf:ORG/NAME or hf:ORG/NAME/FILE.gguf (for example {_EXAMPLES['hf']})"
        )
    repo = f"{org}/{model}"
    hub = hf_hub_dir()
    repo_dir = hub / f"models--{org}--{model}"
    if not repo_dir.is_dir():
        wanted = file or "tokenizer.json tokenizer_config.json"  # a -GGUF repository has only its files
        raise TokenizerError(
            f"hf:{repo}{'/' + file if file else ''} is not in the Hugging Face cache ({hub}); download it with "
            f"`huggingface-cli download {repo} {wanted}`"
        )
    snapshot = hf_snapshot(repo_dir, revision or None)
    if snapshot is None:
        what = f"revision {revision!r}" if revision else "a snapshot"
        raise TokenizerError(f"hf:{rest}: {repo_dir} has no {what}")
    if file:
        if not (snapshot / file).is_file():
            raise TokenizerError(f"hf:{rest}: {snapshot} holds no {file}")
        return Resolved(snapshot / file, "gguf", f"{repo}/{file}")
    found = hf_tokenizer_file(snapshot)
    if found is None:
        ggufs = sorted(snapshot.glob("*.gguf"))
        if ggufs:
            return Resolved(ggufs[0], "gguf", f"{repo}/{ggufs[0].name}")
        raise TokenizerError(
            f"hf:{rest}: {snapshot} holds no tokenizer.json, tokenizer.model, .tiktoken or .gguf file"
        )
    return Resolved(found[0], found[1], repo, snapshot)


def _resolve_ollama(rest: str) -> Resolved:
    name, _, tag = rest.rpartition(":") if ":" in rest else (rest, "", "latest")
    parts = name.split("/")
    if not name or "" in parts or ".." in parts or len(parts) > 3 or not tag:
        raise TokenizerError(f"ollama:{rest}: expected ollama:MODEL:TAG (for example {_EXAMPLES['ollama']})")
    host, namespace = OLLAMA_REGISTRY, "library"
    if len(parts) == 3:
        host, namespace = parts[0], parts[1]
    elif len(parts) == 2:
        namespace = parts[0]
    root = ollama_dir()
    manifest = root / "manifests" / host / namespace / parts[-1] / tag
    if not manifest.is_file():
        raise TokenizerError(f"ollama:{rest} is not in Ollama's store ({root}); run `ollama pull {name}:{tag}`")
    shown = ollama_name(host, namespace, parts[-1], tag)
    return Resolved(ollama_blob(root, manifest), "gguf", shown)


def _resolve_lmstudio(rest: str) -> Resolved:
    parts = rest.split("/")
    if "" in parts or ".." in parts:
        raise TokenizerError(f"lmstudio:{rest}: expected lmstudio:PUBLISHER/MODEL/FILE.gguf")
    for root in lmstudio_dirs():
        path = root.joinpath(*parts)
        if path.is_file():
            return Resolved(path, "gguf", rest)
        if path.is_dir() and (ggufs := sorted(path.glob("*.gguf"))):
            return Resolved(ggufs[0], "gguf", rest)  # a model folder: its quantizations share one vocabulary
    raise TokenizerError(
        f"lmstudio:{rest} is not in LM Studio's models folder ({', '.join(map(str, lmstudio_dirs()))})"
    )


__all__ = [
    "Found", "Resolved", "Scan", "add_folder", "hf_hub_dir", "is_local_spec", "llama_cpp_dir", "lmstudio_dirs",
    "ollama_dir", "remove_folder", "resolve", "roots", "scan", "sentencepiece_size", "user_folders",
]
