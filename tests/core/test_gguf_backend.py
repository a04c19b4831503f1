"""GGUF vocabularies cut exactly as llama.cpp cuts them: every case of the 15 test suites llama.cpp
ships with its vocabulary-only GGUF files (`tests/test-tokenizer-0`: no BOS, no special-token
parsing), plus kinds, specials and what the interface says about them."""

from __future__ import annotations

import pytest

from tokviz.core import catalog
from tokviz.core.backends.gguf_backend import GGUFTokenizer
from tokviz.core.tokenizer import TokenizerError
from tokviz.core.tokens import TokenKind

SUITES = [e.name for e in catalog.builtin_entries() if e.format == "gguf"]
SEPARATOR = "\n__ggml_vocab_test__\n"


def read_cases(inp, out) -> list[tuple[str, list[int]]]:
    """The cases as test-tokenizer-0.cpp reads them: the input split at the separator (nothing
    after the last one), one line of ids per case."""
    raw = inp.read_bytes().decode("utf-8")
    texts, pos = [], 0
    while pos < len(raw):
        nxt = raw.find(SEPARATOR, pos)
        if nxt == -1:
            texts.append(raw[pos:])
            break
        texts.append(raw[pos:nxt])
        pos = nxt + len(SEPARATOR)
    lines = out.read_bytes().decode("utf-8").splitlines()
    assert len(texts) == len(lines)
    return [(text, [int(x) for x in line.split()]) for text, line in zip(texts, lines)]


def test_the_catalog_has_all_15_suites():
    assert len(SUITES) == 15


@pytest.mark.parametrize("name", SUITES)
def test_every_llama_cpp_case_gives_llama_cpps_ids(vocab, vocab_path, name):
    tok = vocab(name)
    cases = read_cases(vocab_path(name, ".inp"), vocab_path(name, ".out"))
    failures = [(text, want, got) for text, want in cases if (got := tok.encode_ids(text)) != want]
    assert not failures, f"{len(failures)}/{len(cases)} cases differ, first: {failures[0]}"
    # the columns path (what the panes use) gives the same ids
    text = "".join(text for text, _ in cases)
    assert tok.encode_columns(text).ids.tolist() == tok.encode_ids(text)


def test_describe_and_bos_eos(vocab):
    spm = vocab("ggml-vocab-llama-spm")
    assert spm.describe() == "ggml-vocab-llama-spm (model llama-spm · GGUF llama, 32,000 ids)"
    own = catalog.load_path(catalog.find("ggml-vocab-llama-spm").path)  # named by its general.name
    assert own.describe() == "llama-spm (GGUF llama, 32,000 ids)"
    gemma = vocab("ggml-vocab-gemma-4")  # its general.name is a commit hash: not shown
    assert gemma.describe().startswith("ggml-vocab-gemma-4 (GGUF gemma4")
    assert (spm.bos_id, spm.eos_id, spm.add_bos, spm.add_eos) == (1, 2, True, False)
    assert spm.specials_added("x").around([5]) == [1, 5]
    bpe = vocab("ggml-vocab-llama-bpe")
    assert "pre-tokenizer llama-bpe" in bpe.describe() and bpe.byte_level
    assert bpe.bos_id == 128000 and bpe.specials_added("x") is None  # the file does not ask for BOS
    bert = vocab("ggml-vocab-bert-bge")
    assert bert.specials_added("x").around([7]) == [101, 7, 102]  # [CLS] ... [SEP]
    assert vocab("ggml-vocab-gemma-4").specials_added("x").before == (2,)


def test_kinds_and_pieces(vocab):
    spm = vocab("ggml-vocab-llama-spm")
    assert spm.kind(0) is TokenKind.UNKNOWN and spm.kind(1) is TokenKind.SPECIAL
    assert spm.kind(13) is TokenKind.BYTE_FALLBACK and spm.token_bytes(13) == b"\n"
    assert spm.special_tokens == {"<s>": 1, "</s>": 2}
    hello = spm.encode("Hello world")
    assert [t.piece for t in hello] == ["▁Hello", "▁world"]
    assert [(t.start, t.end) for t in hello] == [(0, 5), (5, 11)]  # the prefix `▁` spans no character
    gpt2 = vocab("ggml-vocab-gpt-2")
    cut = gpt2.encode("héllo 🚀")
    assert b"".join(t.bytes for t in cut) == "héllo 🚀".encode()
    assert gpt2.decode(gpt2.encode_ids("héllo 🚀")) == "héllo 🚀"
    assert spm.decode(spm.encode_ids("Hello world")) == "Hello world"


def test_control_tokens_follow_the_policy(vocab):
    tok = vocab("ggml-vocab-llama-bpe")
    text = "a<|begin_of_text|>b"
    assert 128000 not in tok.encode_ids(text)  # plain text by default
    assert tok.encode_ids(text, allowed_special="all") == [64, 128000, 65]
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode_ids(text, disallowed_special="all")


def test_user_defined_tokens_are_always_split_out_as_llama_cpp_does(vocab):
    phi = vocab("ggml-vocab-phi-3")
    assert phi._user_defined == ["</s>"] and "</s>" not in phi.special_tokens
    assert "<|assistant|>" in phi.special_tokens  # a control token: parsed only when allowed
    # `</s>` is cut out even with no special tokens allowed, and phi-3's rule strips the spaces after it
    assert phi.encode_ids("a</s>  b") == [263, 2, 289]
    tokens = phi.encode("a</s>  b")
    assert tokens[1].kind is TokenKind.SPECIAL and (tokens[1].start, tokens[1].end) == (1, 7)


def test_the_chat_template_is_exposed(vocab):
    assert "<|im_start|>" in vocab("ggml-vocab-qwen2").chat_template
    assert vocab("ggml-vocab-gpt-2").chat_template is None


def test_an_unsupported_model_is_named(tmp_path, vocab_path):
    data = vocab_path("ggml-vocab-gpt-2").read_bytes()
    # same length as "gpt2": the file stays well-formed
    path = tmp_path / "rwkv.gguf"
    key = data.index(b"tokenizer.ggml.model")
    at = data.index(b"gpt2", key)
    path.write_bytes(data[:at] + b"rwkv" + data[at + 4:])
    with pytest.raises(TokenizerError, match="tokenizer model 'rwkv' is not supported"):
        catalog.load(str(path))


def test_a_gguf_path_loads_through_the_catalog(tmp_path, vocab_path):
    copy = tmp_path / "my-model.gguf"
    copy.write_bytes(vocab_path("ggml-vocab-qwen2").read_bytes())
    assert catalog.sniff_format(copy) == "gguf"
    tok = catalog.load(str(copy))
    assert isinstance(tok, GGUFTokenizer) and tok.name == tok.meta.get("general.name")  # never hashed
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(8))
    with pytest.raises(TokenizerError, match="broken.gguf: truncated GGUF header"):
        catalog.load(str(broken))


def test_the_pipeline_capabilities(vocab):
    qwen = vocab("ggml-vocab-qwen2")
    assert qwen.normalize("a b") is None
    assert qwen.pre_tokenize("Hello wörld 123") == ["Hello", "ĠwÃ¶rld", "Ġ", "1", "2", "3"]
    spm = vocab("ggml-vocab-llama-spm")
    assert spm.normalize("Hello world") == "▁Hello▁world" and spm.pre_tokenize("x") is None
    assert vocab("ggml-vocab-gemma-4").normalize("a b") == "a▁b"
    assert vocab("ggml-vocab-bert-bge").pre_tokenize("Héllo, World!") == ["hello", ",", "world", "!"]


def test_a_wordpiece_vocabulary_without_an_unknown_token_is_refused(tmp_path):
    """'hello' came out as the token 'a' (id 0): a word without pieces had nothing else to be."""
    import struct

    def string(s: bytes) -> bytes:
        return struct.pack("<Q", len(s)) + s

    path = tmp_path / "no-unk.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 2)
                     + string(b"tokenizer.ggml.model") + struct.pack("<I", 8) + string(b"bert")
                     + string(b"tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + string(b"a") + string(b"b"))
    message = (r"no-unk\.gguf: a bert \(WordPiece\) vocabulary without an unknown "
               r"token \(tokenizer\.ggml\.unknown_token_id, or id 100, is not one of its 2 tokens\)")
    with pytest.raises(TokenizerError, match=message):
        GGUFTokenizer.from_file(path)


def test_a_multi_step_pre_tokenizer_does_not_keep_the_texts_it_cut():
    """Each step remembers the cut of short pieces only: a 1 MB text's first step is the whole
    text, and keeping it (and its spans) held ~10 MB more with every text encoded."""
    from tokviz.core.backends.gguf_pretokenize import MEMO_MAX_CHARS, PreTokenizer

    pre = PreTokenizer("DEFAULT")
    text = "Hello world, this is some text 12345 with words. " * 2000
    first = pre.split(text)
    assert pre.split(text + "!")[: len(first) - 1] == first[:-1]
    assert all(len(piece) <= MEMO_MAX_CHARS for memo in pre._memos for piece in memo)
