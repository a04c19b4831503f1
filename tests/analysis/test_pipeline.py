"""Pipeline stages per tokenizer family, on the real vocabularies (ChatGLM on a trained stand-in)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.core.test_chatglm import _train
from tests.core.texts import MULTILINGUAL
from tokviz.analysis.pipeline import Stage, pipeline, words
from tokviz.core.tokens import display_text

TEXT = "Hello  wörld ｈｉ 根\n\tdone"


def names(stages: list[Stage]) -> list[str]:
    return [s.name for s in stages]


def stage(stages: list[Stage], name: str) -> Stage:
    return next(s for s in stages if s.name == name)


@pytest.mark.parametrize("name", ["cl100k_base", "qwen", "o200k_base"])
def test_tiktoken_stages(name, vocab):
    tok = vocab(name)
    stages = pipeline(tok, TEXT)
    assert names(stages) == ["normalization", "pre-tokenization", "model", "special tokens", "ids"]
    assert stage(stages, "normalization").text == TEXT  # tiktoken does not normalize
    chunks = stage(stages, "pre-tokenization").items
    assert "".join(chunks) == display_text(TEXT) and len(chunks) > 4
    tokens = tok.encode(TEXT)
    assert stage(stages, "model").items == tuple(t.piece for t in tokens)
    assert stage(stages, "special tokens").items == ()
    assert stage(stages, "ids").ids == tuple(t.id for t in tokens)


def test_tiktoken_special_tokens_are_chunks_of_their_own(vocab):
    stages = pipeline(vocab("cl100k_base"), "a<|endoftext|>b", allowed_special="all")
    assert stage(stages, "pre-tokenization").items == ("a", "<|endoftext|>", "b")
    assert 100257 in stage(stages, "ids").ids
    with pytest.raises(ValueError, match="disallowed special token"):
        pipeline(vocab("cl100k_base"), "a<|endoftext|>b", disallowed_special="all")


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "botchan-bpe-1k", "botchan-unigram-1k", "kyoto-ja-unigram-8k"])
def test_sentencepiece_stages(name, vocab):
    tok = vocab(name)
    stages = pipeline(tok, TEXT)
    assert names(stages) == ["normalization", "pre-tokenization", "model", "special tokens", "ids"]
    normalized = stage(stages, "normalization").text
    assert normalized == tok.sp.normalize(TEXT) and normalized.startswith("▁")
    assert "".join(stage(stages, "pre-tokenization").items) == normalized
    assert stage(stages, "ids").ids == tuple(tok.encode_ids(TEXT))
    assert stage(stages, "model").items == tuple(tok.piece(i) for i in tok.encode_ids(TEXT))


def test_sentencepiece_normalizer_and_bos_eos(vocab):
    botchan = pipeline(vocab("botchan-bpe-1k"), "ｈｉ  there")
    assert stage(botchan, "normalization").text == "▁hi▁there"  # NFKC, extra spaces removed
    assert "nfkc" in stage(botchan, "normalization").note
    mistral = vocab("mistral-7b-v0.1")
    with_bos = pipeline(mistral, "hi", add_bos=True, add_eos=True)
    assert stage(with_bos, "special tokens").items == ("<s>", "</s>")
    assert stage(with_bos, "ids").ids == (1, *mistral.encode_ids("hi"), 2)
    plain = pipeline(mistral, "hi")
    assert stage(plain, "special tokens").items == () and "BOS <s> (id 1)" in stage(plain, "special tokens").note
    assert stage(plain, "ids").ids == tuple(mistral.encode_ids("hi"))


def test_huggingface_stages(vocab):
    tok = vocab("deepseek-v3")
    stages = pipeline(tok, MULTILINGUAL["code"])
    assert names(stages) == ["normalization", "pre-tokenization", "model", "special tokens", "ids"]
    chunks = stage(stages, "pre-tokenization").items
    assert "".join(chunks) == display_text(MULTILINGUAL["code"])  # byte-level chunks shown as text
    assert stage(stages, "ids").ids == tuple(tok.encode_ids(MULTILINGUAL["code"]))


def test_chatglm_stages(tmp_path_factory):
    from tokviz.core.backends.chatglm import ChatGLMTokenizer

    glm = ChatGLMTokenizer.from_file(_train(tmp_path_factory))
    text = "我是  昨天\n买的\tHello"
    stages = pipeline(glm, text)
    assert names(stages) == [
        "preprocess", "preprocess", "preprocess", "normalization", "pre-tokenization", "model",
        "special tokens", "ids",
    ]
    lower, linebreaks, blanks = stages[:3]
    assert lower.text == text.lower()
    assert linebreaks.text == "我是  昨天<n>买的\thello"
    assert blanks.text == "我是<|blank_2|>昨天<n>买的<|tab|>hello"
    assert stage(stages, "normalization").text.startswith("▁我是<|blank_2|>")
    model = stage(stages, "model").items
    assert "<|blank_2|>" in model and "<n>" in model and "<|tab|>" in model
    assert stage(stages, "special tokens").items == ("[gMASK]", "<sop>")
    assert stage(stages, "ids").ids == tuple(glm.added_around(text).around(glm.encode_ids(text)))


def test_words_view():
    assert words("▁hello▁▁world") == ["▁hello", "▁▁world"]
    assert words("") == []


def test_insight_modules_do_not_import_qt():
    code = (
        "import sys, tokviz.analysis.vocabulary, tokviz.analysis.replay, tokviz.analysis.pipeline,"
        " tokviz.core.backends.chatglm\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
