"""Exported split patterns cut in `tokenizers` (Oniguruma) exactly as in tiktoken (fancy-regex).

Each construct the translator passes through or spells out is checked over every assigned code
point against tiktoken's own engine; whole patterns (every preset and custom ones) are checked by
the ids of a trained vocabulary, on known texts and on arbitrary Unicode.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, pre_tokenizers

from tests.training.texts import HELD_OUT, TRAINING
from tokviz.core.tokenizer import TokenizerError
from tokviz.training.oniguruma import PROPERTIES, WORD, PatternNotPortable, _every_character, to_oniguruma
from tokviz.training.pretokenize import PRESETS
from tokviz.training.trainer import train_texts
from tokviz.training.vocabfile import hf_tokenizer_json, output_paths, save, trained_tokenizer

ASSIGNED = "".join(c for c in _every_character() if unicodedata.category(c) not in ("Cn", "Co"))
BYTES = {bytes([i]): i for i in range(256)}


def fancy_matches(pattern: str) -> set[str]:
    """The characters tiktoken's engine matches with `pattern` (a one-character atom, repeated)."""
    enc = tiktoken.Encoding("probe", pat_str=f"(?:{pattern})+", mergeable_ranks=BYTES, special_tokens={})
    return set(bytes(enc.encode_ordinary(ASSIGNED)).decode("utf-8"))


def oniguruma_matches(pattern: str) -> set[str]:
    split = pre_tokenizers.Split(Regex(f"(?:{pattern})+"), behavior="removed", invert=True)
    return set("".join(piece for piece, _ in split.pre_tokenize_str(ASSIGNED)))


@pytest.mark.slow
def test_every_listed_property_matches_the_same_characters():
    for name in sorted(PROPERTIES):
        for escape in (rf"\p{{{name}}}", rf"\P{{{name}}}"):
            assert fancy_matches(escape) == oniguruma_matches(escape), escape


@pytest.mark.parametrize(
    "atom",
    [r"\s", r"\S", r"\d", r"\D", ".", r"\w", r"\W", r"[^\r\n\p{L}\p{N}]", r"[^\s\p{L}\p{N}]", r"\pL", r"[\w-]",
     r"[^\w\s]", r"\x41", r"[\x{41}-\x{5A}]", r"(?i:k)", r"(?i:[sdmt])", r"(?s:.)", r"\v"],
)
def test_translated_atom_matches_the_same_characters(atom):
    assert fancy_matches(atom) == oniguruma_matches(to_oniguruma(atom))


def test_the_engines_differ_where_the_translator_says_they_do():
    """The reasons for the translation, so a tokenizers upgrade that changes them is noticed."""
    assert fancy_matches(r"\w") != oniguruma_matches(r"\w")  # ZWNJ/ZWJ vs superscript digits
    assert oniguruma_matches(f"[{WORD}]") == fancy_matches(r"\w")
    split = pre_tokenizers.Split(Regex(r"\p{N}{1,3}+"), behavior="removed", invert=True)
    assert [p for p, _ in split.pre_tokenize_str("3333")] == ["3333"]  # not possessive there


# -- whole patterns, through a trained vocabulary ---------------------------------------------

DIGITS = "Order 3333 of 12345 items, 1234567 in total; ٣٣٣٣ ① 2026-11-30 00:00:01 v1.2.3 0x1F600 "
CORPUS = [DIGITS * 3, *TRAINING, *(t.replace("<|endoftext|>", "") for t in HELD_OUT.values())]
CUSTOM = {
    "words": r"\w+|[^\w\s]+|\s+",
    "bounded": r"\b\w+\b|\S|\s+",
    "digits-possessive": r"\p{N}{2}+|\p{N}|(?i:the|THE)|[^\s\p{N}]+|\s+$|\s",
    "anchors": r"^\s+|\s+$|\S{1,4}+|\s",
    "partial": r"\p{L}+|\p{N}{1,3}",  # leaves spaces and punctuation unmatched: tiktoken drops them
}
PATTERNS = {name: name for name in PRESETS} | CUSTOM


@pytest.fixture(scope="module", params=sorted(PATTERNS))
def exported(request):
    result = train_texts(CORPUS, vocab_size=900, pattern=PATTERNS[request.param])
    return trained_tokenizer(result).encoding, Tokenizer.from_str(hf_tokenizer_json(result))


def test_cl100k_digit_runs_cut_as_tiktoken_cuts_them():
    result = train_texts(CORPUS, vocab_size=900, pattern="cl100k")
    enc = trained_tokenizer(result).encoding
    hf = Tokenizer.from_str(hf_tokenizer_json(result))
    ids = enc.encode_ordinary("3333")
    assert [enc.decode([i]) for i in ids] == ["333", "3"]
    assert hf.encode("3333", add_special_tokens=False).ids == ids


def test_exported_pattern_gives_the_same_ids_on_multilingual_text_with_digit_runs(exported):
    enc, hf = exported
    for text in [DIGITS, *HELD_OUT.values(), "I'LL SHE'S it'ſ straße STRASSE ﬆop \r\n\r\n  x  "]:
        assert hf.encode(text, add_special_tokens=False).ids == enc.encode_ordinary(text), text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.one_of(st.text(max_size=8), st.sampled_from([" ", "  ", "\n", "3333", "'S", "ß"])),
                     max_size=10).map("".join))
def test_exported_pattern_gives_the_same_ids_on_any_text(exported, text):
    enc, hf = exported
    assert hf.encode(text, add_special_tokens=False).ids == enc.encode_ordinary(text)


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, says",
    [(r"(?m)^\w+", "flag 'm'"), (r"\p{Bengali}+|\s", r"\p{Bengali}"), (r"[[:alpha:]]+|\s", "POSIX"),
     (r"(a)\1|\s", r"\1"), (r"[a-z--c]|\s", "set operation"), (r"(?i)\p{Lu}|\s", "case-insensitive")],
)
def test_untranslatable_pattern_is_refused_and_nothing_is_written(tmp_path, pattern, says):
    with pytest.raises(PatternNotPortable, match=re.escape(says)):
        to_oniguruma(pattern)
    result = dataclasses.replace(train_texts(["abc abc"], vocab_size=260, pattern="none"), pattern=pattern)
    with pytest.raises(TokenizerError, match=re.escape("save without the tokenizer.json (--hf-json)")):
        save(result, tmp_path / "mine", hf_json=True)
    assert not any(p.exists() for p in output_paths(tmp_path / "mine"))
