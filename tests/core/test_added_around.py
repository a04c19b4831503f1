""""As the model sees it": the BOS/EOS a model's own tokenizer adds, checked against the libraries
that add them (tokenizers' encode(add_special_tokens=True), sentencepiece's add_bos)."""

from __future__ import annotations

import tokenizers
from tokenizers import models, pre_tokenizers, processors, trainers

from tokviz.core.backends.hf_backend import HFTokenizer
from tokviz.core.tokenizer import SpecialPolicy, SpecialsAdded
from tokviz.core.tokens import TokenKind
from tokviz.service.protocol import TokenizerInfo
from tokviz.service.server import encode

TEXT = "Hello world! 안녕하세요 👋🏽\ndef f(x): return x"


def _with_added(tok, text: str) -> list[int]:
    before, after = tok.added_tokens(text)
    return [t.id for t in before] + tok.encode_ids(text) + [t.id for t in after]


def test_huggingface_counts_equal_tokenizers_own_encode(vocab) -> None:
    tok = vocab("deepseek-v3")
    reference = tok.tk.encode(TEXT, add_special_tokens=True).ids
    assert _with_added(tok, TEXT) == reference  # its tokenizer.json's post-processor adds nothing


def test_a_post_processor_template_is_what_gets_added() -> None:
    tk = tokenizers.Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.train_from_iterator([TEXT] * 20, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<s>", "</s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tk.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tk.token_to_id("<s>")), ("</s>", tk.token_to_id("</s>"))])
    tok = HFTokenizer.from_str(tk.to_str(), name="template")
    for text in (TEXT, "", "a"):
        assert _with_added(tok, text) == tk.encode(text, add_special_tokens=True).ids
    assert [t.piece for t in tok.added_tokens(TEXT)[0]] == ["<s>"]


def test_sentencepiece_adds_the_bos_as_add_bos_does(vocab) -> None:
    tok = vocab("mistral-7b-v0.1")
    assert tok.added_around(TEXT) == SpecialsAdded(before=(1,))
    assert _with_added(tok, TEXT) == tok.sp.encode(TEXT, add_bos=True)
    assert tok.piece(1) == "<s>"
    assert tok.specials_added(TEXT) == SpecialsAdded(before=(1,), after=(2,))  # what it *can* add


def test_gguf_follows_the_files_add_bos_token(vocab) -> None:
    spm = vocab("ggml-vocab-llama-spm")
    assert spm.added_around(TEXT) == spm.specials_added(TEXT) == SpecialsAdded(before=(1,))
    assert vocab("ggml-vocab-llama-bpe").added_around(TEXT) is None  # the file does not ask for BOS


def test_tiktoken_adds_nothing(vocab) -> None:
    tok = vocab("cl100k_base")
    assert tok.added_around(TEXT) is None and tok.added_tokens(TEXT) == ([], [])
    assert not TokenizerInfo.of(tok).adds_specials


def test_columns_as_the_model_sees_them(vocab) -> None:
    tok = vocab("mistral-7b-v0.1")
    plain = encode(tok, TEXT, SpecialPolicy())
    seen = encode(tok, TEXT, SpecialPolicy(), model_adds=True)
    tokens = seen
    assert seen.ids.tolist() == tok.sp.encode(TEXT, add_bos=True)
    assert list(tokens)[1:] == list(plain)
    bos = tokens[0]
    assert (bos.id, bos.piece, bos.kind, bos.start, bos.end) == (1, "<s>", TokenKind.SPECIAL, 0, 0)
    assert TokenizerInfo.of(tok).added_before == ("<s>",) and TokenizerInfo.of(tok).adds_specials


def test_an_end_token_sits_at_the_end_of_the_text(vocab) -> None:
    tok = vocab("ggml-vocab-bert-bge")  # [CLS] ... [SEP]
    seen = encode(tok, "hello world", SpecialPolicy(), model_adds=True)
    first, last = seen[0], seen[len(seen) - 1]
    assert first.piece == "[CLS]" and (first.start, first.end) == (0, 0)
    assert last.piece == "[SEP]" and (last.start, last.end) == (11, 11) and last.byte_start == 11
