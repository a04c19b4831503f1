"""Save trained vocabularies: `.tiktoken` ranks, the JSON sidecar, HF `tokenizer.json`.

`NAME.tiktoken` holds `base64(token bytes) rank` per line (tiktoken's format; ranks 0..255 are the
bytes, merge i has rank 256 + i). `NAME.json` next to it is the sidecar (`"format": "tokviz-bpe"`,
`"version": 1`) with the split pattern, special tokens, parameters, corpus summary and the merges
with their counts and the sha256 of the rank file. A save is all or nothing
(`tokviz.core.files.write_files_atomic`): every file goes to a temporary in the same folder first,
and a failure at any step leaves the previous files byte-identical.

Loading a saved vocabulary is the core's (`tokviz.core.sidecar.load_trained`, or `catalog.load`
on the `.tiktoken`), which also defines the format name and version written here. This module does
not train (see `trainer`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokviz.core.backends.tiktoken_backend import BYTE_LEVEL, TiktokenTokenizer
from tokviz.core.files import write_files_atomic
from tokviz.core.patterns import WHOLE_TEXT_PATTERN
from tokviz.core.sidecar import TRAINED_FORMAT, TRAINED_VERSION
from tokviz.core.tokenizer import TokenizerError
from tokviz.training.oniguruma import PatternNotPortable, to_oniguruma
from tokviz.training.trainer import TrainingResult

if TYPE_CHECKING:
    import tokenizers


OUTPUT_SUFFIXES = (".tokenizer.json", ".tiktoken", ".json")


def output_stem(name: str | os.PathLike[str]) -> Path:
    """The output name without the suffix of any file a training writes (in any case): `-o x.json`
    names the same vocabulary as `-o x`, never `x.json.tiktoken`.

    >>> [output_stem(n).name for n in ("mine", "mine.TIKTOKEN", "mine.json", "mine.tokenizer.json", "v1.2")]
    ['mine', 'mine', 'mine', 'mine', 'v1.2']
    """
    base = Path(name)
    lowered = base.name.lower()
    for suffix in OUTPUT_SUFFIXES:
        if lowered.endswith(suffix) and len(lowered) > len(suffix):
            return base.with_name(base.name[: -len(suffix)])
    return base


def output_paths(name: str | os.PathLike[str]) -> tuple[Path, Path, Path]:
    """`(NAME.tiktoken, NAME.json, NAME.tokenizer.json)` for an output name or the path of any of
    them (`output_stem`).

    >>> [p.name for p in output_paths("out/mine.TIKTOKEN")]
    ['mine.tiktoken', 'mine.json', 'mine.tokenizer.json']
    """
    base = output_stem(name)
    return (base.with_name(base.name + ".tiktoken"), base.with_name(base.name + ".json"),
            base.with_name(base.name + ".tokenizer.json"))


def rank_file_bytes(result: TrainingResult) -> bytes:
    lines = [base64.b64encode(data) + b" " + str(rank).encode() for rank, data in enumerate(result.token_bytes())]
    return b"\n".join(lines) + b"\n"


def sidecar(result: TrainingResult) -> dict[str, Any]:
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
    """Write `NAME.tiktoken`, optionally `NAME.tokenizer.json`, and the sidecar `NAME.json`, all or
    none of them: a failure leaves the files that were there byte-identical (SaveError names the
    file and the cause)."""
    ranks_path, sidecar_path, hf_path = output_paths(name)
    if not ranks_path.parent.is_dir():
        raise TokenizerError(f"cannot save to {ranks_path}: folder {ranks_path.parent} does not exist")
    hf_text = hf_tokenizer_json(result) if hf_json else None  # a pattern it refuses writes nothing
    ranks = rank_file_bytes(result)
    meta = {**sidecar(result), "ranks_sha256": hashlib.sha256(ranks).hexdigest()}
    files = [(ranks_path, ranks)]
    if hf_text is not None:
        files.append((hf_path, hf_text.encode("utf-8")))
    files.append((sidecar_path, _sidecar_text(meta).encode("utf-8")))
    write_files_atomic(files)
    return [path for path, _ in files]


def _sidecar_text(meta: dict[str, Any]) -> str:
    """The sidecar's JSON: a key a line, each value on its line whole. (`indent` would put every
    number of the merges on a line of its own, and makes `json` use its pure-Python encoder,
    which takes longer than the rest of the save.)

    >>> print(_sidecar_text({"name": "v", "merges": [[97, 97, 4]]}))
    {
     "name": "v",
     "merges": [[97, 97, 4]]
    }
    """
    lines = (f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in meta.items())
    return "{\n" + ",\n".join(lines) + "\n}"


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


#: what an exported tokenizer.json must cut as tiktoken does before it is written: scripts, digit
#: runs, contractions in every case, ligatures and sharp s, runs of spaces and line ends
EXPORT_PROBE = (
    "3333 12345 1234567 ٣٣٣٣ ①② 3.14159 2026-11-30\n"
    "I'll WE'RE she'S don'T it'ſ 'LL 'Ve ß SS ﬆ ﬁne K\u212a\n"
    "토큰은 글자가 아니다. 我是一只猫。 吾輩は猫である カタカナ Ünïcödé ｈｅｌｌｏ\n"
    "  a  \n\n   b\t\tc\r\n \r\nend   \u200b\u200c\u200d\u00a0x²y 👩\u200d💻 1️⃣ \n  "
)


def hf_tokenizer_json(result: TrainingResult) -> str:
    """The vocabulary as a Hugging Face `tokenizer.json`: byte-level BPE, merges in rank order.

    Pre-tokenization is a `Split` that keeps the matches of the pattern, translated for
    Oniguruma (`oniguruma.to_oniguruma`: tiktoken's regex engine reads some constructs
    differently), then `ByteLevel` without its own regex. Text the pattern does not match is
    dropped, as tiktoken drops it. Before it is returned, the file must give tiktoken's ids on
    `EXPORT_PROBE`; a pattern that cannot be translated, or one that still cuts differently, is a
    TokenizerError saying so.
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
    steps: list[pre_tokenizers.PreTokenizer] = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    if result.pattern is not None:
        split = pre_tokenizers.Split(Regex(hf_split_pattern(result.pattern)), behavior="removed", invert=True)
        steps.insert(0, split)
    tok.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tok.decoder = decoders.ByteLevel()
    ordered = sorted(result.special_tokens.items(), key=lambda kv: kv[1])
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s, _ in ordered])
    _check_export(result, tok)
    return tok.to_str()


def hf_split_pattern(pattern: str) -> str:
    """`pattern` as a tokenizer.json's Split must spell it, or TokenizerError saying why it cannot
    be (the CLI asks before training, so a refusal does not come after a long run)."""
    from tokenizers import Regex

    try:
        translated = to_oniguruma(pattern)
        Regex(translated)
    except PatternNotPortable as e:
        raise TokenizerError(str(e)) from e
    except Exception as e:  # Oniguruma's own compile error
        raise TokenizerError(
            f"split pattern {pattern!r} cannot be written to a tokenizer.json: tokenizers does not "
            f"compile it ({e}); save without the tokenizer.json (--hf-json)"
        ) from e
    return translated


def _check_export(result: TrainingResult, tok: tokenizers.Tokenizer) -> None:
    ours = trained_tokenizer(result).encoding.encode_ordinary(EXPORT_PROBE)
    theirs = tok.encode(EXPORT_PROBE, add_special_tokens=False).ids
    if ours != theirs:
        k = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        raise TokenizerError(
            f"split pattern {result.pattern!r} cuts text differently in tokenizers than in tiktoken "
            f"(first at token {k} of a test text: {ours[k:k + 3]} vs {theirs[k:k + 3]}), so no "
            f"tokenizer.json was written; save without the tokenizer.json (--hf-json) or simplify the pattern"
        )
