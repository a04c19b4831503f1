"""The vocabulary browser's table, filters, BPE parents and occurrences, on real vocabularies."""

from __future__ import annotations

import random

import pytest
import regex

from tokviz.analysis.vocabulary import (
    SCRIPTS,
    MergeParents,
    VocabFilter,
    VocabularyTable,
    bpe_parts,
    occurrences,
    parse_hex,
    script_of,
)
from tokviz.core.tokens import TokenKind, display_text

_TABLES: dict[str, VocabularyTable] = {}


@pytest.fixture(scope="module")
def table(vocab):
    def get(name: str) -> VocabularyTable:
        if name not in _TABLES:
            _TABLES[name] = VocabularyTable.from_tokenizer(vocab(name))
        return _TABLES[name]

    return get


@pytest.mark.parametrize("name", ["cl100k_base", "qwen", "mistral-7b-v0.1"])
def test_one_row_per_id_the_tokenizer_has(name, vocab, table):
    tok, t = vocab(name), table(name)
    if name == "mistral-7b-v0.1":
        assert t.ids.tolist() == [e.id for e in tok.vocab()]
    else:  # every rank and special token (Tokenizer.vocab() yields the same ids, 5x slower)
        assert t.ids.tolist() == sorted([*tok.mergeable_ranks.values(), *tok.special_tokens.values()])
    if name == "cl100k_base":  # holes in the id space (100256, 100261..100275) have no row
        assert len(t) == 100261 and tok.vocab_size == 100277
    else:
        assert len(t) == tok.vocab_size


@pytest.mark.parametrize("name", ["cl100k_base", "qwen", "mistral-7b-v0.1"])
def test_rows_agree_with_the_tokenizer(name, vocab, table):
    tok, t = vocab(name), table(name)
    rng = random.Random(6)
    rows = rng.sample(range(len(t)), 300) + [len(t) - 1]
    for row in rows:
        token_id = int(t.ids[row])
        r = t.row(row)
        assert r.piece == tok.piece(token_id)
        assert t.data[row] == tok.token_bytes(token_id)
        assert r.kind == tok.kind(token_id).value
        assert r.text == display_text(tok.token_bytes(token_id))
        assert r.hex == tok.token_bytes(token_id).hex(" ")
        assert r.length == len(tok.token_bytes(token_id))
        assert t.row_of(token_id) == row


def _strict_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("name", ["cl100k_base", "qwen"])
def test_fragments_only_is_exactly_the_rows_that_are_not_utf8(name, table):
    t = table(name)
    rows = set(t.filter(fragments_only=True).tolist())
    assert rows, "byte-level vocabularies have fragments"
    assert rows == {r for r, d in enumerate(t.data) if not _strict_utf8(d)}


def test_qwen_hex_search_finds_51461(table):
    t = table("qwen")
    rows = t.filter(VocabFilter(hex="e6 a0"))
    assert 51461 in t.ids[rows].tolist()
    assert set(rows.tolist()) == {r for r, d in enumerate(t.data) if b"\xe6\xa0" in d}
    assert t.row(t.row_of(51461)).text == "·\ufffd"


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_filter_rows_hold_that_script(script, table):
    t = table("qwen")
    rows = t.filter(script=script)
    pattern = {
        # letters the Unicode files put under Common go by their script extensions (`ー`, `〆`)
        "hangul": r"\p{scx=Hangul}", "han": r"\p{scx=Han}", "kana": r"[\p{scx=Hiragana}\p{scx=Katakana}]",
        "latin": r"\p{scx=Latin}", "cyrillic": r"\p{scx=Cyrillic}", "arabic": r"\p{scx=Arabic}", "digits": r"\p{N}",
        "whitespace": r"^\s+$", "emoji": r"\p{Extended_Pictographic}|\p{Emoji_Modifier}|\p{Regional_Indicator}",
    }[script]
    assert len(rows) > 0
    for row in rows.tolist():
        assert regex.search(pattern, t.decoded[row]), (script, t.decoded[row])


def test_hangul_filter_on_cl100k_and_mistral(table):
    for name in ("cl100k_base", "mistral-7b-v0.1"):
        t = table(name)
        rows = t.filter(VocabFilter(script="hangul"))
        assert len(rows) > 10
        assert all(regex.search(r"\p{Hangul}", t.decoded[r]) for r in rows.tolist())


def test_text_search_matches_decoded_readable_or_piece_case_insensitively(table):
    t = table("cl100k_base")
    for query in ("the", "Ġthe", "·The", "STRASSE", "\n"):
        needle = query.casefold()
        expected = {
            r for r in range(len(t))
            if needle in t.decoded[r].casefold() or needle in t.texts[r].casefold() or needle in t.pieces[r].casefold()
        }
        assert set(t.filter(text=query).tolist()) == expected, query
    assert t.row_of(1917) in t.filter(text="Ġworld").tolist()  # ' world'


def test_id_range_special_only_and_combined(vocab, table):
    t = table("qwen")
    rows = t.filter(id_min=100, id_max=200)
    assert t.ids[rows].tolist() == list(range(100, 201))
    special = t.filter(special_only=True)
    assert set(t.ids[special].tolist()) == set(vocab("qwen").special_tokens.values())
    both = t.filter(VocabFilter(script="han", fragments_only=True, id_min=50_000, id_max=120_000))
    assert len(both) > 0
    for row in both.tolist():
        assert 50_000 <= t.ids[row] <= 120_000 and not _strict_utf8(t.data[row])
        assert regex.search(r"\p{Han}", t.decoded[row])
    assert len(t.filter()) == len(t)


def test_bad_filters_say_what_to_write(table):
    with pytest.raises(ValueError, match="pairs of hex digits"):
        table("qwen").filter(hex="e6 a")
    with pytest.raises(ValueError, match="choose one of"):
        table("qwen").filter(script="klingon")
    assert parse_hex("0xE6 0xA0") == parse_hex("e6a0") == b"\xe6\xa0"


def test_filters_are_fast_on_200k_rows(table):
    t = table("o200k_base")
    assert len(t) == 200_000
    specs = [
        VocabFilter(text="the"), VocabFilter(hex="e6 a0"), VocabFilter(fragments_only=True),
        VocabFilter(script="hangul"), VocabFilter(special_only=True, id_min=1000),
        VocabFilter(text="a", script="latin", id_max=150_000),
    ]
    for spec in specs:  # speed is the benchmark's business; here: every filter runs on 200k rows
        assert t.filter(spec) is not None


def test_sort_orders_rows(table):
    t = table("cl100k_base")
    by_length = t.sort(None, "length", descending=True)
    lengths = t.lengths[by_length]
    assert (lengths[:-1] >= lengths[1:]).all()
    subset = t.filter(text="hello")
    by_text = t.sort(subset, "text")
    assert sorted(by_text.tolist()) == sorted(subset.tolist())
    assert [t.texts[r] for r in by_text.tolist()] == sorted(t.texts[r] for r in subset.tolist())


def test_script_of():
    assert script_of(" 한국어") == "hangul"
    assert script_of("ひらがな") == script_of("カタカナー") == "kana"
    assert script_of("東京") == "han"
    assert script_of("Привет") == "cyrillic"
    assert script_of("\n\t ") == "whitespace"
    assert script_of("42") == "digits"
    assert script_of("👍🏽") == "emoji"
    assert script_of("東京 Tokyo") == "mixed"
    assert script_of("·\ufffd") == script_of("...") == "other"
    assert script_of("") == ""


# -- parents --------------------------------------------------------------------------------------


def test_parents_of_sampled_cl100k_tokens_re_merge_to_the_token(vocab):
    tok = vocab("cl100k_base")
    ranks = tok.mergeable_ranks
    merges = MergeParents(ranks)
    rng = random.Random(2026)
    sample = [i for i in rng.sample(range(256, len(ranks)), 600) if i in merges._bytes_of]
    found = 0
    for token_id in sample:
        pair = merges.parents(token_id)
        if pair is None:
            continue
        found += 1
        left, right = pair
        assert tok.token_bytes(left) + tok.token_bytes(right) == tok.token_bytes(token_id)
        assert left < token_id and right < token_id  # ids are ranks in a tiktoken file
    assert found >= 0.99 * len(sample)


def test_parents_known_answers(vocab, table):
    t = table("cl100k_base")
    assert t.parents(1917) == (289, 1410)  # ' world' = ' w' + 'orld' (the last merge of its replay)
    assert t.parents(32) is None  # a single byte
    assert t.parents(100257) is None  # <|endoftext|>
    assert table("mistral-7b-v0.1").parents(100) is None  # no ranks: not derivable


def test_children_and_bpe_parts_on_a_small_rank_file():
    ranks = {bytes([b]): b for b in range(256)}
    for data in (b"ab", b"abb", b"ba", b"aba"):
        ranks[data] = len(ranks)
    merges = MergeParents(ranks)
    assert merges.parents(ranks[b"abb"]) == (ranks[b"ab"], ranks[b"b"])
    assert merges.parents(ranks[b"aba"]) == (ranks[b"ab"], ranks[b"a"])
    assert merges.children(ranks[b"ab"]) == (ranks[b"abb"], ranks[b"aba"])
    assert merges.children(ranks[b"b"]) == (ranks[b"ab"], ranks[b"abb"], ranks[b"ba"])
    assert bpe_parts(ranks, b"abba") == [b"abb", b"a"]


def test_occurrences(vocab):
    tokens = vocab("cl100k_base").encode("the cat and the dog and the end")
    the = vocab("cl100k_base").encode_ids(" the")[0]
    hits = occurrences(tokens, the).tolist()
    assert hits == [k for k, t in enumerate(tokens) if t.id == the] and len(hits) == 2
    assert occurrences([t.id for t in tokens], the).tolist() == hits
    assert all(tokens[k].kind == TokenKind.NORMAL for k in hits)
