"""Partial decodes, as the Qwen seed shows them on the real Qwen vocabulary."""

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
