"""Partial decodes, as the Qwen seed shows them on the real Qwen vocabulary."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core import catalog
from tokviz.core.decoding import buffered_stream, decode_buffered, decode_naive, naive_stream


def test_qwen_seed_partial_decode(vocab):
    qwen = vocab("qwen")
    assert qwen.decode([51461]) == " \ufffd"
    assert qwen.decode([51461, 117]) == " 根"
    assert list(naive_stream(qwen, [51461, 117])) == [" \ufffd", "\ufffd"]
    assert list(buffered_stream(qwen, [51461, 117])) == [" ", "根"]
    assert decode_naive(qwen, [51461, 117]) == " \ufffd\ufffd"
    assert decode_buffered(qwen, [51461, 117]) == " 根"


def test_buffered_stream_equals_whole_decode_for_any_text(vocab):
    tok = vocab("cl100k_base")
    text = "스트리밍 채팅 🧑‍🤝‍🧑 根本 ok"
    ids = tok.encode_ids(text)
    assert decode_buffered(tok, ids) == text
    assert "\ufffd" in decode_naive(tok, ids)


def test_buffered_stream_flushes_an_incomplete_tail(vocab):
    qwen = vocab("qwen")
    assert list(buffered_stream(qwen, [51461])) == [" ", "\ufffd"]


# -- the buffered stream ends equal to the library's own decode ------------------------------

# the provisioned ones (the gguf test vocabularies join when fetched)
NAMES = [entry.name for entry in catalog.builtin_entries() if entry.available]
ANY_CHAR = st.characters(exclude_categories=[])  # every code point, lone surrogates included


def test_unknown_piece_streams_as_sentencepiece_decodes_it(vocab):
    tok = vocab("botchan-bpe-1k")
    ids = tok.encode_ids("▁ﾊ")
    assert tok.sp.decode(ids) == " ⁇ "
    assert decode_buffered(tok, ids) == " ⁇ "
    assert list(naive_stream(tok, [tok.sp.unk_id()])) == [" ⁇ "]


def test_byte_fallback_prefix_cut_inside_a_character_gives_one_replacement_per_byte(vocab):
    tok = vocab("mistral-7b-v0.1")
    ids = tok.encode_ids("aﾊ")  # ▁a <0xEF> <0xBE> <0x8A>
    assert [tok.piece(i) for i in ids][1:] == ["<0xEF>", "<0xBE>", "<0x8A>"]
    assert tok.sp.decode(ids[:3]) == "a\ufffd\ufffd"
    assert list(buffered_stream(tok, ids[:3])) == ["a", "", "", "\ufffd\ufffd"]
    assert list(buffered_stream(tok, ids)) == ["a", "", "", "ﾊ"]


def test_literal_space_mark_at_the_start_decodes_as_sentencepiece_does(vocab):
    tok = vocab("kyoto-ja-unigram-8k")
    ids = tok.encode_ids("▁ﾊ")
    assert tok.sp.decode(ids) == "ハ"
    assert decode_buffered(tok, ids) == "ハ"


def texts_for(name: str) -> st.SearchStrategy[str]:
    specials = sorted(catalog.load(name).special_tokens)[:40] or ["<|endoftext|>"]
    part = st.one_of(
        st.text(ANY_CHAR, max_size=6), st.sampled_from(["▁", " ", "  ", "\n", "根", "😀", "\ufffd"]),
        st.sampled_from(specials),
    )
    return st.lists(part, max_size=12).map("".join)


@pytest.mark.parametrize("name", NAMES)
def test_buffered_stream_ends_equal_to_the_librarys_decode(vocab, name):
    tok = vocab(name)

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(texts_for(name), st.data())
    def check(text, data):
        ids = tok.encode_ids(text, allowed_special="all")
        cut = data.draw(st.integers(0, len(ids)), label="cut")  # a prefix may end inside a character
        for prefix in (ids, ids[:cut]):
            pieces = list(buffered_stream(tok, prefix))
            assert "".join(pieces) == tok.decode(prefix)
            assert len(pieces) in (len(prefix), len(prefix) + 1)

    check()


SPACE_OPTIONS = [
    {},
    {"remove_extra_whitespaces": False},
    {"add_dummy_prefix": False},
    {"remove_extra_whitespaces": False, "add_dummy_prefix": False},
]


@pytest.mark.parametrize("options", SPACE_OPTIONS, ids=lambda o: ",".join(o) or "defaults")
def test_space_then_byte_fallback_streams_what_the_library_decodes_so_far(tmp_path, options):
    """' 根' on a byte-fallback model without 根: a `▁` piece, then three byte pieces. After each
    token the buffered stream has shown the library's decode of the ids so far, less an
    incomplete character: the first id's `' '` or `''` exactly as SentencePiece decodes it."""
    import io

    import sentencepiece as spm

    model = io.BytesIO()
    lines = [f"line {i} of plain english text, a few words long" for i in range(300)]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=300,
                                   model_type="bpe", byte_fallback=True, minloglevel=3, **options)
    path = tmp_path / "fallback.model"
    path.write_bytes(model.getvalue())
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = catalog.load_path(path)
    for text in (" 根", "根", "  根 ", "a 根"):
        ids = tok.encode_ids(text)
        assert ids == sp.encode(text)
        shown = ""
        for k, piece in enumerate(buffered_stream(tok, ids)):
            shown += piece
            if k < len(ids):
                assert shown == sp.decode(ids[: k + 1]).rstrip("\ufffd"), (text, k)
        assert shown == sp.decode(ids)
