"""The Tokenizer capabilities, per backend, on real vocabularies (ChatGLM on a trained stand-in)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import tokenizers
from tokenizers import models, normalizers, pre_tokenizers, processors, trainers

from tokviz.core.backends.chatglm import ChatGLMTokenizer
from tokviz.core.backends.hf_backend import HFTokenizer
from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer
from tokviz.core.patterns import CL100K_PATTERN
from tokviz.core.tokenizer import PieceType, SpecialsAdded, TokenizerError

from .test_chatglm import _train

TEXT = "Hello  world, ｈｉ\n"


def test_tiktoken_keeps_what_it_was_built_from():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    tok = TiktokenTokenizer.from_ranks("tiny", ranks, pattern=r"\w+| ", special_tokens={"<|end|>": 257})
    assert tok.mergeable_ranks == ranks and list(tok.mergeable_ranks) == list(ranks)  # read back from tiktoken
    assert tok.split_pattern == r"\w+| "
    assert tok.special_tokens == {"<|end|>": 257}
    assert tok.encode_ids("abab a") == [256, 256, 32, 97]


def test_tiktoken_capabilities(vocab):
    tok = vocab("cl100k_base")
    assert tok.mergeable_ranks[b"hello"] == 15339 and len(tok.mergeable_ranks) == 100256
    assert tok.split_pattern == CL100K_PATTERN
    assert tok.byte_level
    assert tok.normalize(TEXT) is None and tok.pre_tokenize(TEXT) is None
    assert tok.sentencepiece is None and tok.preprocessing is None and tok.specials_added(TEXT) is None


def test_trained_vocabulary_is_a_byte_level_bpe(vocab):
    tok = vocab("tokviz-samples")
    assert tok.family == "trained" and tok.mergeable_ranks and tok.split_pattern and tok.byte_level


def test_sentencepiece_capabilities(vocab):
    tok = vocab("mistral-7b-v0.1")
    sp = tok.sp
    model = tok.sentencepiece
    assert model is not None and model is tok.sentencepiece  # read once
    assert model.model_type == "bpe"
    assert len(model.pieces) == len(model.types) == len(model.scores) == tok.vocab_size
    assert model.pieces[1000] == sp.id_to_piece(1000) and model.scores[1000] == sp.get_score(1000)
    assert model.types[0] is PieceType.UNKNOWN and model.types[1] is PieceType.CONTROL
    assert model.types[3] is PieceType.BYTE and model.unk_id == 0
    assert tok.normalize(TEXT) == sp.normalize(TEXT)
    assert tok.specials_added(TEXT) == SpecialsAdded(before=(1,), after=(2,))
    assert tok.mergeable_ranks is None and tok.split_pattern is None and not tok.byte_level
    assert tok.pre_tokenize(TEXT) is None and tok.preprocessing is None


def test_sentencepiece_unigram_model_type(vocab):
    model = vocab("botchan-unigram-1k").sentencepiece
    assert model is not None and model.model_type == "unigram"


def test_huggingface_capabilities(vocab):
    tok = vocab("deepseek-v3")
    assert tok.byte_level and tok.mergeable_ranks is None and tok.split_pattern is None
    assert tok.sentencepiece is None and tok.preprocessing is None
    chunks = tok.pre_tokenize("hello world")
    assert chunks is not None and "".join(chunks) == "helloĠworld"
    added = tok.specials_added("hello world")
    assert added is not None
    assert added.around(tok.encode_ids("hello world")) == tok.tk.encode("hello world").ids


def test_huggingface_normalizer_and_post_processor():
    tk = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.train_from_iterator(["Hello world, hello there"] * 20, trainers.WordPieceTrainer(
        vocab_size=60, special_tokens=["[UNK]", "[CLS]", "[SEP]"]))
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    tok = HFTokenizer.from_str(tk.to_str(), name="wordpiece")
    assert tok.normalize("Hello World") == "hello world"
    assert tok.pre_tokenize("hello, world") == ["hello", ",", "world"]
    assert tok.specials_added("hello") == SpecialsAdded(before=(1,), after=(2,))
    assert not tok.byte_level


def test_chatglm_preprocessing(tmp_path_factory):
    glm = ChatGLMTokenizer.from_file(_train(tmp_path_factory))
    prep = glm.preprocessing
    assert prep is not None and prep.inner is glm.base
    assert prep.apply("Hi\n  there") == "hi<n><|blank_2|>there"
    assert [s.name for s in prep.steps("Hi\n")] == [s.name for s in glm.preprocess_steps("Hi\n")]
    ids = glm.encode_ids("我是  昨天买的苹果")
    inner = glm.base.encode_ids(prep.apply("我是  昨天买的苹果"))
    assert prep.outer_ids(inner) == ids
    assert glm.sentencepiece is None and glm.mergeable_ranks is None
    assert glm.normalize("A\n") == glm.base.normalize("a<n>")
    no_prefix = ChatGLMTokenizer(glm.base, add_dummy_prefix=False, add_special_tokens=False)
    assert no_prefix.added_around("x") is None
    assert no_prefix.preprocessing.outer_ids([7, 8, 9]) == [9]


def test_chatglm_profile_needs_a_sentencepiece_model(vocab):
    with pytest.raises(TokenizerError, match="not a ChatGLM-6B model"):
        ChatGLMTokenizer(vocab("cl100k_base"))



# -- nothing outside the backends asks which backend it holds -------------------------------------

BACKEND_CLASSES = {"TiktokenTokenizer", "SentencePieceTokenizer", "HFTokenizer", "ChatGLMTokenizer"}
BACKEND_ATTRIBUTES = {"sp", "tk", "encoding", "model_info", "mergeable_ranks", "pattern", "base", "byte_level"}


def _probes(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        if node.func.id == "isinstance" and len(node.args) == 2:
            named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            named |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if named & BACKEND_CLASSES:
                found.append(f"{path}:{node.lineno}: isinstance(..., {sorted(named & BACKEND_CLASSES)})")
        if node.func.id in ("getattr", "hasattr") and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in BACKEND_ATTRIBUTES:
                found.append(f"{path}:{node.lineno}: {node.func.id}(..., {name.value!r})")
    return found


def test_no_backend_probing_outside_the_backends():
    package = Path(__file__).resolve().parents[2] / "tokviz"
    backends = package / "core" / "backends"
    files = [p for p in package.rglob("*.py") if backends not in p.parents]
    probes = [probe for path in files for probe in _probes(path)]
    assert not probes, "use the Tokenizer capabilities instead:\n" + "\n".join(probes)


def test_a_backend_must_say_how_it_cuts_plain_text():
    """`_lay_out_ordinary` is the one primitive: a backend without it cannot be made (it used to
    default to `_encode_ordinary`, which defaulted back to it: endless recursion at the first
    encode)."""
    from tokviz.core.tokenizer import Tokenizer

    class Partial(Tokenizer):
        name, family, special_tokens = "partial", "test", {}
        vocab_size = 0

        def decode(self, ids):
            return ""

        def token_bytes(self, token_id):
            return b""

        def piece(self, token_id):
            return ""

        def kind(self, token_id):
            raise KeyError(token_id)

    with pytest.raises(TypeError, match="_lay_out_ordinary"):
        Partial()


@pytest.mark.parametrize("name", ["cl100k_base", "qwen"])
def test_tiktokens_segment_layout_is_its_encode_of_the_segment(vocab, name):
    tok = vocab(name)
    text = "Héllo 根 안녕 👋🏽 world"
    start, end = 2, len(text) - 3
    laid = tok._lay_out_ordinary(text, start, end)
    tokens = laid.to_tokens(tok._info_for(laid.ids))
    alone = tok.encode(text[start:end])
    offset = len(text[:start].encode())
    assert [t.id for t in tokens] == [t.id for t in alone]
    assert [(t.start - start, t.end - start, t.byte_start - offset, t.byte_end - offset) for t in tokens] == [
        (t.start, t.end, t.byte_start, t.byte_end) for t in alone]
