"""`encode_stream` gives exactly the whole text's tokens, for every backend, with small windows
forced so that every kind of tricky text meets a window edge."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tokviz.core.stream import StreamWarning, encode_stream

VOCABS = [
    "cl100k_base", "o200k_base", "qwen", "llama3", "tokviz-samples",  # tiktoken / trained
    "mistral-7b-v0.1", "botchan-bpe-1k", "kyoto-ja-unigram-8k",  # SentencePiece BPE and unigram
    "deepseek-v3",  # tokenizer.json
    "ggml-vocab-llama-spm", "ggml-vocab-bert-bge", "ggml-vocab-gemma-4", "ggml-vocab-qwen2",  # GGUF
]

_ATOMS = ["a", "b", " ", "  ", "\n", "\r\n", "\r\n\r\n", "   \n", "123", "4567", "한국어", "根", " 根",
          "<|endoftext|>", "<s>", "</s>", "[CLS]", "\t", "Hello", "'s", "..", "ｈｉ", "ﬁn", "😀", "\n\n\n "]


def tricky_text(seed: int, n: int = 3000) -> str:
    rng = random.Random(seed)
    text = "".join(rng.choice(_ATOMS) for _ in range(n))
    # long runs that outlast the overlap, and a special token laid over a window edge
    return text[:700] + " " * 450 + "x" + "\r\n" * 300 + "<|endoftext|>" + "9" * 500 + text[700:] + "\n" * 40


def joined(parts, name):
    return np.concatenate([getattr(p, name) for p in parts]) if parts else np.zeros(0, dtype=np.int64)


@pytest.mark.parametrize("name", VOCABS)
@pytest.mark.parametrize("special", ["none", "all"])
def test_stream_equals_whole_encode(vocab, name, special):
    tok = vocab(name)
    policy = {"allowed_special": "all"} if special == "all" else {}
    text = tricky_text(len(name))
    whole = tok.encode_columns(text, **policy)
    blocks = [text[i : i + 333] for i in range(0, len(text), 333)]
    window = 1 << 20 if tok.scores_whole_text else 1200  # a unigram text is exact within a window
    parts = list(encode_stream(tok, blocks, window=window, overlap=160, **policy))
    assert len(parts) == 1 if tok.scores_whole_text else len(parts) > 1
    for column in ("ids", "starts", "ends", "byte_starts", "byte_ends"):
        assert joined(parts, column).tolist() == getattr(whole, column).tolist(), column
    data = [p.table.datas[k] for p in parts for k in p.key_index.tolist()]
    assert data == [whole.table.datas[k] for k in whole.key_index.tolist()]


def test_only_unigram_scores_the_whole_text(vocab):
    # kyoto's `....` is `.` + `...` or `...` + `.`, the same score; which one wins depends on the
    # rounding of the score summed from the start
    assert vocab("kyoto-ja-unigram-8k").scores_whole_text
    assert not vocab("mistral-7b-v0.1").scores_whole_text
    assert not vocab("cl100k_base").scores_whole_text


def test_a_unigram_text_longer_than_a_window_is_cut_with_a_warning(vocab):
    """One sentencepiece call on a long unigram text holds memory in proportion to it: past one
    window it is cut all the same, said once, and its tokens still spell the text, in order."""
    tok = vocab("kyoto-ja-unigram-8k")
    text = "".join(tricky_text(seed) for seed in range(3))
    with pytest.warns(StreamWarning, match="kyoto-ja-unigram-8k is a unigram model") as caught:
        parts = list(encode_stream(tok, [text], window=1200, overlap=160))
    assert len(parts) > 3 and len(caught) == 1
    starts, ends = joined(parts, "starts"), joined(parts, "ends")
    assert starts[0] == 0 and ends[-1] == len(text) and (starts[1:] >= starts[:-1]).all()
    whole = tok.encode_columns(text)
    assert abs(len(starts) - len(whole)) <= len(whole) // 100  # the same cut but where two score alike


def test_a_unigram_text_within_a_window_is_one_call_without_a_warning(vocab, recwarn):
    tok = vocab("kyoto-ja-unigram-8k")
    text = tricky_text(5)
    [part] = encode_stream(tok, [text[:1000], text[1000:]], window=len(text) + 1, overlap=160)
    assert part.ids.tolist() == tok.encode_columns(text).ids.tolist()
    assert not [w for w in recwarn if issubclass(w.category, StreamWarning)]


def test_disallowed_special_raises_as_the_whole_encode_does(vocab):
    tok = vocab("qwen")
    text = "a " * 2000 + "<|endoftext|>"
    with pytest.raises(ValueError, match="disallowed special token '<|endoftext|>'"):
        list(encode_stream(tok, [text], disallowed_special="all", window=1200, overlap=160))


def test_empty_and_short_texts(vocab):
    tok = vocab("cl100k_base")
    assert [len(p.ids) for p in encode_stream(tok, [])] == [0]
    [part] = encode_stream(tok, ["hello", " world"], window=1200, overlap=160)
    assert part.ids.tolist() == [15339, 1917]


def test_window_must_hold_two_overlaps(vocab):
    with pytest.raises(ValueError, match="twice the overlap"):
        list(encode_stream(vocab("cl100k_base"), ["x"], window=100, overlap=60))


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "botchan-bpe-1k", "cl100k_base", "kyoto-ja-unigram-8k"])
@pytest.mark.parametrize("special", ["none", "all"])
def test_a_text_encoded_whole_in_windows_has_every_token_of_one_encode(vocab, name, special, monkeypatch):
    """`encode_whole` cuts a text longer than the tokenizer's `encode_window` into windows and
    joins them: the same tokens (ids, bytes, kinds, pieces, spans) as one encode, and n_bytes."""
    from tokviz.core.stream import encode_whole

    tok = vocab(name)
    policy = {"allowed_special": "all"} if special == "all" else {}
    text = "".join(tricky_text(seed) for seed in range(4))
    whole = tok.encode_columns(text, **policy)
    window = None if tok.scores_whole_text else 1600
    monkeypatch.setattr(type(tok), "encode_window", property(lambda self: window))
    cut = encode_whole(tok, text, **policy)
    assert list(cut) == list(whole)
    assert cut.n_bytes == whole.n_bytes
    used = {whole.table.row(k) for k in set(whole.key_index.tolist())}
    assert {cut.table.row(k) for k in set(cut.key_index.tolist())} == used
    assert len(cut.table) <= len(whole.table)  # each distinct token once


def test_sentencepiece_bpe_is_encoded_in_windows_and_unigram_whole(vocab):
    assert vocab("mistral-7b-v0.1").encode_window == 1 << 17
    assert vocab("kyoto-ja-unigram-8k").encode_window is None  # its ties depend on the whole text
    assert vocab("cl100k_base").encode_window is None  # one call is fastest
