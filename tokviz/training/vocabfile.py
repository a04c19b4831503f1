"""Save trained vocabularies: `.tiktoken` ranks, the JSON sidecar, HF `tokenizer.json`.

`NAME.tiktoken` holds `base64(token bytes) rank` per line (tiktoken's format; ranks 0..255 are the
bytes, merge i has rank 256 + i). `NAME.json` next to it is the sidecar (`"format": "tokviz-bpe"`,
`"version": 1`) with the split pattern, special tokens, parameters, corpus summary and the merges
with their counts. Every file is written to a temporary file in the same folder and moved into
place with `os.replace`; the sidecar is written last, so a loader that finds it finds the ranks.

Loading a saved vocabulary is the core's (`tokviz.core.sidecar.load_trained`, or `catalog.load`
on the `.tiktoken`), which also defines the format name and version written here. This module does
not train (see `trainer`).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from tokviz.core.backends.tiktoken_backend import BYTE_LEVEL, TiktokenTokenizer
from tokviz.core.files import write_atomic
from tokviz.core.patterns import WHOLE_TEXT_PATTERN
from tokviz.core.sidecar import TRAINED_FORMAT, TRAINED_VERSION
from tokviz.core.tokenizer import TokenizerError
from tokviz.training.trainer import TrainingResult


def output_paths(name: str | os.PathLike[str]) -> tuple[Path, Path, Path]:
    """`(NAME.tiktoken, NAME.json, NAME.tokenizer.json)` for an output name or `.tiktoken` path."""
    base = Path(name)
    if base.suffix == ".tiktoken":
        base = base.with_suffix("")
    return (base.with_name(base.name + ".tiktoken"), base.with_name(base.name + ".json"),
            base.with_name(base.name + ".tokenizer.json"))


def rank_file_bytes(result: TrainingResult) -> bytes:
    lines = [base64.b64encode(data) + b" " + str(rank).encode() for rank, data in enumerate(result.token_bytes())]
    return b"\n".join(lines) + b"\n"


def sidecar(result: TrainingResult) -> dict:
    return {
        "format": TRAINED_FORMAT,
        "version": TRAINED_VERSION,
        "name": result.name,
        "pattern": result.pattern,
        "pattern_preset": result.pattern_preset,
        "special_tokens": dict(result.special_tokens),
        "vocab_size": result.vocab_size,
        "requested_vocab_size": result.requested_vocab_size,
        "training": {**result.params, "seconds": round(result.seconds, 3)},
        "corpus": result.corpus.to_json(),
        "initial_tokens": result.initial_tokens,
        "merges": [list(m) for m in result.merges],
        "replaced": list(result.replaced),
    }


def save(result: TrainingResult, name: str | os.PathLike[str], *, hf_json: bool = False) -> list[Path]:
    """Write `NAME.tiktoken`, optionally `NAME.tokenizer.json`, then the sidecar `NAME.json`."""
    ranks_path, sidecar_path, hf_path = output_paths(name)
    if not ranks_path.parent.is_dir():
        raise TokenizerError(f"cannot save to {ranks_path}: folder {ranks_path.parent} does not exist")
    write_atomic(ranks_path, rank_file_bytes(result))
    written = [ranks_path]
    if hf_json:
        write_atomic(hf_path, hf_tokenizer_json(result).encode("utf-8"))
        written.append(hf_path)
    write_atomic(sidecar_path, json.dumps(sidecar(result), ensure_ascii=False, indent=1).encode("utf-8"))
    written.append(sidecar_path)
    return written


def trained_tokenizer(result: TrainingResult, *, num_merges: int | None = None) -> TiktokenTokenizer:
    """A tokenizer from an in-memory result (optionally only its first `num_merges` merges).

    >>> from tokviz.training.trainer import train_texts
    >>> tok = trained_tokenizer(train_texts(["aaabdaaabac"], vocab_size=259, pattern="none"))
    >>> tok.encoding.encode("aaabdaaabac")
    [258, 100, 258, 97, 99]
    """
    specials = result.special_tokens if num_merges is None else {}
    return TiktokenTokenizer.from_ranks(
        result.name, result.ranks(num_merges), pattern=result.pattern or WHOLE_TEXT_PATTERN,
        special_tokens=specials, family="trained",
    )


def hf_tokenizer_json(result: TrainingResult) -> str:
    """The vocabulary as a Hugging Face `tokenizer.json`: byte-level BPE, merges in rank order.

    Pre-tokenization is `Split(pattern, "isolated")` then `ByteLevel` without its own regex, so
    `tokenizers` cuts text exactly where tiktoken does and gives the same ids.
    """
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
    )

    table = result.token_bytes()
    pieces = ["".join(BYTE_LEVEL[b] for b in data) for data in table]
    vocab = {piece: i for i, piece in enumerate(pieces)}
    merges = [(pieces[left], pieces[right]) for left, right, _ in result.merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    steps = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    if result.pattern is not None:
        steps.insert(0, pre_tokenizers.Split(Regex(result.pattern), behavior="isolated"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tok.decoder = decoders.ByteLevel()
    ordered = sorted(result.special_tokens.items(), key=lambda kv: kv[1])
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s, _ in ordered])
    return tok.to_str()
