"""Odd tokens on real vocabularies: each category checked against the library's own encode."""

from __future__ import annotations

import base64
from pathlib import Path

from tokviz.analysis.oddities import find_oddities, looks_like_control
from tokviz.core import catalog
from tokviz.core.tokens import is_fragment


def test_r50k_has_no_unreachable_tokens_and_its_fragments_are_what_tiktoken_decodes_partially(vocab):
    r50k = vocab("r50k_base")
    odd = find_oddities(r50k)
    enc = r50k.encoding
    expected = [i for i in range(50256) if is_fragment(enc.decode_single_token_bytes(i))]
    assert odd.examined == odd.tested + len(expected) == 50256
    assert odd.ids["fragments"].tolist() == expected and len(expected) == 344
    assert odd.ids["unreachable"].tolist() == [] and odd.ids["duplicates"].tolist() == []
    # GPT-2's byte tokens for control characters look like controls; none is special
    assert enc.decode_single_token_bytes(int(odd.ids["control_looking"][0])) == b"\x00"


def test_a_rank_that_never_fires_is_unreachable(tmp_path: Path):
    # b"x y" (id 256) is a rank, but the split pattern always cuts "x y" before the space, so
    # ordinary encoding never sees it whole (tiktoken looks a whole chunk up before merging)
    ranks = {bytes([b]): b for b in range(256)} | {b"x y": 256, b"q\x01": 257}
    path = tmp_path / "odd.tiktoken"
    path.write_text("".join(f"{base64.b64encode(d).decode()} {i}\n" for d, i in ranks.items()))
    tokenizer = catalog.load(str(path))
    odd = find_oddities(tokenizer)
    assert tokenizer.encoding.encode("x y") == [120, 32, 121]  # tiktoken's own encode
    assert odd.ids["unreachable"].tolist() == [256, 257] and odd.instead[256] == [120, 32, 121]
    assert odd.ids["control_looking"].tolist()[-1] == 257  # holds U+0001
    assert len(odd.ids["fragments"]) == 128  # the bytes 0x80-0xff alone


def test_batched_encoding_equals_encoding_each_text_alone(vocab):
    for name in ("cl100k_base", "mistral-7b-v0.1", "deepseek-v3", "ggml-vocab-command-r", "ggml-vocab-llama-spm",
                 "ggml-vocab-bert-bge", "ggml-vocab-deepseek-llm", "ggml-vocab-gemma-4", "tokviz-samples"):
        tokenizer = vocab(name)
        texts = ["hello", " world", "  ", "\n\n", "한국어", "<|endoftext|>", "", "a b", "ing", "▁x",
                 "<｜begin▁of▁sentence｜>", "<|START_OF_TURN_TOKEN|>x", "Á", "x [PAD255999] y", "\ud83d\ude00",
                 "<s>", "[CLS] a"]
        assert list(tokenizer.encode_ordinary_batch(texts)) == [[t.id for t in tokenizer.encode(x)] for x in texts]


def test_sentencepiece_pieces_are_tested_after_the_dummy_prefix(vocab):
    mistral = vocab("mistral-7b-v0.1")
    odd = find_oddities(mistral)
    # the word-start pieces are tested (`▁the` is what `the` alone gives); the rest cannot be alone
    normal = [e.piece for e in mistral.vocab() if e.kind.value == "normal"]
    starts = sum(1 for piece in normal if piece.startswith("▁") and len(piece) > 1)
    assert odd.tested == starts
    the = mistral.encode("the")[0].id
    assert mistral.piece(the) == "▁the" and the not in odd.ids["unreachable"]
    # the byte-fallback pieces are left out of every category (no "duplicate" of `A`)
    assert odd.ids["fragments"].tolist() == [] and odd.ids["duplicates"].tolist() == []


def test_control_looking():
    assert looks_like_control("<|im_start|>") and looks_like_control("[CLS]") and looks_like_control("\x7f")
    assert not looks_like_control("<b>c") and not looks_like_control("\t") and not looks_like_control("[x]")


def test_cancel_stops_between_batches(vocab):
    calls = []
    odd = find_oddities(vocab("cl100k_base"), progress=lambda done, total: calls.append(done),
                        cancelled=lambda: len(calls) >= 1)
    assert len(calls) == 1 and odd.tested > calls[0]


def test_a_wordpiece_continuation_piece_is_reachable_when_a_word_yields_it(vocab):
    bert = vocab("ggml-vocab-bert-bge")
    continuing = bert.word_continuations()
    ing = bert.encode_ids("0ing")  # `▁0` `ing`: `ing` is llama.cpp's spelling of `##ing`
    assert len(ing) == 2 and ing[1] in continuing and bert.piece(ing[1]) == "ing"
    assert bert.encode_ids("ing") != [ing[1]]  # alone it is a word start: never `##ing`
    assert [bert.piece(i) for i in bert.encode_ids("tokenizing")] == ["▁token", "izing"]
    odd = find_oddities(bert)
    unreachable = set(odd.ids["unreachable"].tolist())
    assert ing[1] not in unreachable
    # every continuation piece is tested, and each one called reachable is yielded by the word of
    # a one-character start and its text for one of the word starts tried
    assert odd.tested == odd.examined
    for token_id in sorted(continuing - unreachable)[::97]:
        text = bert.token_bytes(token_id).decode()
        assert any(token_id in bert.encode_ids(start + text) for start in "0123456789x")
    # the unreachable ones cannot stand inside a word: punctuation and CJK characters are words of
    # their own, marks are stripped with the accents, `[unused0]` holds brackets
    for token_id in sorted(continuing & unreachable):
        text = bert.token_bytes(token_id).decode()
        assert all(token_id not in bert.encode_ids(start + text) for start in "0123456789x")
    assert bert.piece(1) == "[unused0]" and 1 in unreachable
    assert bert.piece(bert.encode_ids("的")[0]) == "▁的" and bert.encode_ids("x的")[1:] == bert.encode_ids("的")
    # not a WordPiece model: no continuation pieces
    assert vocab("cl100k_base").word_continuations() is None
