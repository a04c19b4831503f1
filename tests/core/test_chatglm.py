"""The ChatGLM-6B profile against a transcription of the original wrapper, on a trained stand-in.

`ice_text.model` is on no package registry, so the tests train a small SentencePiece BPE model on
Chinese and English text with ChatGLM's user-defined symbols. `original_ids` below is the
original `tokenization_chatglm.py` logic as the seed shows it, line for line; the profile must give
the same ids and, on top, spans on the original text.
"""

from __future__ import annotations

import io
import itertools
from importlib import resources

import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core.backends.chatglm import ChatGLMTokenizer, blank_token, user_defined_symbols
from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer
from tokviz.core.tokenizer import TokenizerError
from tokviz.core.tokens import TokenKind

# Sentences of our own: `我是` starts many words (so `▁我是` becomes a piece), `苹果` never does.
OWN_TEXT = """\
我是学生 我是老师 我是医生 我是工程师 我是昨天来的
吃苹果 买苹果 红苹果 青苹果 这个苹果很甜 那些苹果是昨天买的
我爱学习 我们爱学习 学习使我快乐 你是谁 人家是城堡中的小公主
你要干什么 小公主我们来玩吧 今天天气很好 昨天下雨了 明天会更好
Hello World hello world the quick brown fox jumps over the lazy dog
tokenizers cut text into pieces haha HAHA tab separated values
"""


def _train(tmp_path_factory) -> str:
    samples = resources.files("tokviz.resources").joinpath("samples")
    text = OWN_TEXT * 3 + "".join(samples.joinpath(f).read_text("utf-8") for f in ("chinese.txt", "english.txt"))
    lines = [line for line in text.splitlines() if line.strip()]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, model_type="bpe", vocab_size=1200,
        user_defined_symbols=user_defined_symbols(), byte_fallback=True, character_coverage=1.0,
        max_sentencepiece_length=4, hard_vocab_limit=False, pad_id=3, minloglevel=2,
    )
    path = tmp_path_factory.mktemp("chatglm") / "ice_text_standin.model"
    path.write_bytes(model.getvalue())
    return str(path)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return _train(tmp_path_factory)


@pytest.fixture(scope="module")
def glm(model_path):
    return ChatGLMTokenizer.from_file(model_path)


@pytest.fixture(scope="module")
def sp(model_path):
    return spm.SentencePieceProcessor(model_file=model_path)


def original_ids(sp, text: str, *, do_lower_case=True, add_dummy_prefix=True, max_len=80) -> list[int]:
    """ChatGLMTokenizer._tokenize + SPTokenizer.encode as the seed shows them (num_image_tokens=0)."""
    if do_lower_case:
        text = text.lower()
    text = text.replace("\n", "<n>")
    text = text.replace("\t", "<|tab|>")
    for i in range(max_len, 1, -1):
        text = text.replace(" " * i, f"<|blank_{i}|>")
    if not add_dummy_prefix:
        text = "<n>" + text
    ids = sp.encode(text)
    return ids if add_dummy_prefix else ids[2:]


def pieces(tokens):
    return [t.piece for t in tokens]


def test_two_spaces_become_a_blank_2_piece_covering_them(glm):
    text = "我是  昨天买的苹果"
    tokens = glm.encode(text)
    assert pieces(tokens)[:2] == ["▁我是", "<|blank_2|>"]
    blank = tokens[1]
    assert (blank.start, blank.end, text[blank.start : blank.end]) == (2, 4, "  ")
    assert blank.bytes == b"  " and blank.kind == TokenKind.NORMAL
    assert (blank.byte_start, blank.byte_end) == (6, 8)


def test_word_start_mark_follows_the_seed(glm, sp):
    """`▁` + the first word is one piece when the vocabulary has it (`▁我是`), otherwise a lone `▁`
    (id 5 in ice_text.model) that stands for no character."""
    apple_first = glm.encode("苹果我是昨天买的")
    assert apple_first[0].piece == "▁" and apple_first[0].id == sp.piece_to_id("▁")
    assert apple_first[0].start == apple_first[0].end == 0
    assert apple_first[1].piece.startswith("苹")
    assert glm.encode("我是昨天买的苹果")[0].piece == "▁我是"
    assert glm.encode("我是 昨天买的苹果")[1].piece.startswith("▁")  # a single space starts a word


def test_byte_fallback_pieces_keep_their_own_byte(glm):
    text = "A😀b"  # lower-cased A, then an emoji the stand-in model only has as bytes
    tokens = glm.encode(text)
    fallback = [t for t in tokens if t.kind == TokenKind.BYTE_FALLBACK]
    assert [t.bytes for t in fallback] == [bytes([b]) for b in "😀".encode()]
    assert [(t.byte_start, t.byte_end) for t in fallback] == [(1, 2), (2, 3), (3, 4), (4, 5)]
    assert all((t.start, t.end) == (1, 2) for t in fallback)


def test_newline_tab_and_space_runs(glm):
    text = "a\tb\nc"
    tokens = glm.encode(text)
    tab = next(t for t in tokens if t.piece == "<|tab|>")
    newline = next(t for t in tokens if t.piece == "<n>")
    assert text[tab.start : tab.end] == "\t" and tab.bytes == b"\t"
    assert text[newline.start : newline.end] == "\n" and newline.bytes == b"\n"


@pytest.mark.parametrize("run", [2, 3, 79, 80, 81, 82, 160, 163])
def test_space_runs_as_the_original(run, glm, sp):
    text = "x" + " " * run + "y"
    tokens = glm.encode(text)
    assert [t.id for t in tokens] == original_ids(sp, text)
    blanks = [t for t in tokens if t.piece.startswith("<|blank_")]
    expected = [blank_token(80)] * (run // 80) + ([blank_token(run % 80)] if run % 80 >= 2 else [])
    assert pieces(blanks) == expected
    covered = sum(t.end - t.start for t in blanks)
    assert covered == run - (1 if run % 80 == 1 else 0)
    if run % 80 == 1:  # the one space left over starts the next word: `▁y`
        assert tokens[-1].piece == "▁y" and text[tokens[-1].start : tokens[-1].end] == " y"


def test_gmask_and_sop_are_appended_and_eop_ends_a_target(glm):
    before, after = glm.added_tokens("我爱学习")
    assert before == [] and pieces(after) == ["[gMASK]", "<sop>"]
    assert all(t.start == t.end == 4 and t.kind == TokenKind.SPECIAL for t in after)
    assert "[gMASK]" not in pieces(glm.encode("我爱学习"))  # encode: the text's own tokens, as every backend
    assert ChatGLMTokenizer(glm.base, add_special_tokens=False).added_tokens("我爱学习") == ([], [])
    example = glm.preprocess_example("你是谁", "人家是城堡中的小公主")
    prompt, target = glm.encode_ids("你是谁"), glm.encode_ids("人家是城堡中的小公主")
    gmask, sop, eop = glm.id_of("[gMASK]"), glm.id_of("<sop>"), glm.id_of("<eop>")
    assert example["input_ids"] == [*prompt, gmask, sop, *target, eop]
    assert example["seq_len"] == len(prompt) + 2


@pytest.mark.parametrize("text", ["我爱学习", "", "Hello  World\n\tx", "<sop> 根"])
def test_columns_hold_the_same_tokens_as_encode(glm, text):
    assert list(glm.encode_columns(text)) == glm.encode(text)


def test_lower_casing_keeps_spans_on_the_original(glm):
    text = "Hello World"
    tokens = glm.encode(text)
    assert "".join(t.piece for t in tokens).replace("▁", " ").strip() == "hello world"
    assert "".join(text[t.start : t.end] for t in tokens) == text
    cased = ChatGLMTokenizer(glm.base, do_lower_case=False)
    assert "".join(pieces(cased.encode(text))).replace("▁", " ").strip() == text


PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
CHATGLM_TEXT = st.lists(
    st.sampled_from(["我是", "苹果", "昨天", "买的", " ", "  ", " " * 81, "\t", "\n", "Hello", "a", "İ", "ß", "😀"])
    | st.characters(codec="utf-8"),
    max_size=25,
).map("".join)


def test_ids_equal_the_original_wrapper_and_spans_cover_the_text(glm, sp):
    @PROPERTY
    @given(CHATGLM_TEXT)
    def check(text):
        tokens = glm.encode(text)
        assert [t.id for t in tokens] == original_ids(sp, text)
        if tokens:  # spans are ordered and cover every character, as the backends' are
            assert tokens[0].start == 0 and tokens[-1].end == len(text)
            for a, b in itertools.pairwise(tokens):
                assert a.start <= b.start <= a.end <= b.end
                assert a.byte_start <= b.byte_start and a.byte_end <= b.byte_end
            for t in tokens:  # a byte span lies within its characters' bytes
                assert len(text[: t.start].encode()) <= t.byte_start <= t.byte_end <= len(text[: t.end].encode())

    check()


def test_merge_replay_of_the_profile_ends_in_its_ids(glm):
    from tokviz.analysis.replay import replay

    @PROPERTY
    @given(CHATGLM_TEXT)
    def check(text):
        assert replay(glm, text, check=False).ids == glm.encode_ids(text)

    check()
    r = replay(glm, "我是  昨天买的苹果")
    assert r.matches_backend and r.algorithm == "sentencepiece-bpe"
    assert r.chunks[0].text.startswith("▁我是<|blank_2|>") and (r.chunks[0].start, r.chunks[0].end) == (0, 10)
    assert all("[gMASK]" not in c.pieces for c in r.chunks)  # the replay, as encode, is the text's own
    no_prefix = ChatGLMTokenizer(glm.base, add_dummy_prefix=False)
    assert replay(no_prefix, "苹果 hello\n").matches_backend


def test_without_dummy_prefix_as_the_original(glm, sp):
    plain = ChatGLMTokenizer(glm.base, add_dummy_prefix=False)
    for text in ("我是昨天买的苹果", "hello  world\n", "苹果"):
        assert plain.encode_ids(text) == original_ids(sp, text, add_dummy_prefix=False)
    assert plain.encode("苹果")[0].piece != "▁"


def test_decode_gives_the_whitespace_back(glm):
    text = "我是  昨天\n买的\t苹果" + " " * 83 + "hello"
    assert glm.decode(glm.encode_ids(text)) == text


def test_image_token_offset_and_not_a_chatglm_model(glm, vocab):
    old = ChatGLMTokenizer(glm.base, num_image_tokens=20000)
    assert old.vocab_size == glm.vocab_size + 20000
    assert old.piece(5) == "<image_5>" and old.id_of("<image_5>") == 5
    assert old.encode_ids("我爱学习") == [i + 20000 for i in glm.encode_ids("我爱学习")]
    assert old.decode(old.encode_ids("我是  苹果")) == "我是  苹果"
    with pytest.raises(TokenizerError, match="not a ChatGLM-6B model"):
        ChatGLMTokenizer(vocab("botchan-bpe-1k"))


def test_vocabulary_view_of_the_profile(glm):
    assert glm.token_bytes(glm.id_of("<n>")) == b"\n"
    assert glm.kind(glm.id_of(blank_token(5))) == TokenKind.NORMAL
    assert glm.kind(glm.id_of("[gMASK]")) == TokenKind.SPECIAL
    assert "[gMASK]" in glm.special_tokens and "<n>" not in glm.special_tokens
    entries = list(glm.vocab())
    assert len(entries) == glm.vocab_size == glm.base.vocab_size
    assert isinstance(glm.base, SentencePieceTokenizer)
