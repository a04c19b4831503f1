"""The Tokenizer interface's position-given special tokens (`encode_trusted`), on every backend."""

from __future__ import annotations

import pytest

from tokviz.core.tokens import TokenKind

CHAT = "<|im_start|>user\nsay <|im_start|> and <|endoftext|><|im_end|>\n<|im_start|>assistant\n"


def spans_of(text: str, token: str) -> list[tuple[int, int]]:
    spans, pos = [], text.find(token)
    while pos >= 0:
        spans.append((pos, pos + len(token)))
        pos = text.find(token, pos + 1)
    return spans


@pytest.mark.parametrize("name", ["qwen", "deepseek-v3", "mistral-instruct-v3"])
def test_every_special_at_its_position_equals_parsing_all(name, vocab):
    tok = vocab(name)
    specials = sorted(tok.special_tokens, key=len, reverse=True)[:50]
    text = "x" + "".join(f"{s} a{s}b" for s in specials[:5]) + " end"
    every = tok.encode(text, allowed_special="all")
    spans = [(t.start, t.end) for t in every if t.kind is TokenKind.SPECIAL]
    assert spans, "the text holds special tokens"
    assert tok.encode_trusted(text, spans) == every


@pytest.mark.parametrize("name", ["qwen", "deepseek-v3", "mistral-instruct-v3"])
def test_no_spans_equals_parsing_none(name, vocab):
    tok = vocab(name)
    text = "[INST] <|im_start|> <s> </s> <｜begin▁of▁sentence｜> hello"
    assert tok.encode_trusted(text, []) == tok.encode(text)


def test_only_the_given_positions_become_control_tokens(vocab):
    qwen = vocab("qwen")
    first, inner, end, second = spans_of(CHAT, "<|im_start|>")[0], spans_of(CHAT, "<|im_start|>")[1], \
        spans_of(CHAT, "<|im_end|>")[0], spans_of(CHAT, "<|im_start|>")[2]
    tokens = qwen.encode_trusted(CHAT, [first, end, second])
    assert [(t.start, t.end) for t in tokens if t.kind is TokenKind.SPECIAL] == [first, end, second]
    assert all(t.id < 151643 for t in tokens if t.start >= inner[0] and t.end <= inner[1])
    between = CHAT[first[1]:end[0]]  # one ordinary segment, cut as tiktoken cuts it
    ids = [t.id for t in tokens]
    assert ids[1:-5] == qwen.encoding.encode_ordinary(between)
    assert b"".join(t.bytes for t in tokens) == CHAT.encode()


@pytest.mark.parametrize("spans", [[(1, 5)], [(12, 22), (0, 12)], [(0, 12), (0, 12)], [(len(CHAT) - 3, len(CHAT) + 9)]])
def test_a_span_that_is_not_a_special_token_in_order_is_an_error(vocab, spans):
    with pytest.raises(ValueError, match="no special token of qwen at characters"):
        vocab("qwen").encode_trusted(CHAT, spans)


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "deepseek-v3", "ggml-vocab-llama-bpe", "cl100k_base"])
def test_an_encode_keeps_no_reference_to_its_text(name, vocab):
    """A tokenizer holds no text once its encode is done (a 1 MB text and its offset tables,
    ~20 MB, stayed with every loaded vocabulary until its next encode)."""
    import sys

    tok = vocab(name)
    text = "Tokens are not characters. 토큰은 글자가 아니다. 🧑‍🤝‍🧑\n" * 50
    before = sys.getrefcount(text)
    tok.encode_columns(text)
    tok.encode(text)
    tok.encode_trusted(text, [])
    assert sys.getrefcount(text) == before
