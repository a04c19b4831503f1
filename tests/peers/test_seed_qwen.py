"""Every example of the Qwen tokenizer article (Qwen's tokenization_note: byte-level BPE on
qwen.tiktoken, partial decodes, special-token injection, vocabulary extension with add_merges),
through tokviz's CLI and its Tokenizer interface, on the real qwen.tiktoken."""

from __future__ import annotations

import json

import pytest
import tiktoken
import tiktoken.load

from tests.peers.cli import encode_json, ids_of, run
from tokviz.core import catalog
from tokviz.core.decoding import buffered_stream, naive_stream
from tokviz.core.tokens import TokenKind

INJECTION = 'print("<|endoftext|>")'
AS_TEXT = [1350, 9639, 91, 8691, 723, 427, 91, 82598]
AS_TEXT_BYTES = [b"print", b'("<', b"|", b"endo", b"ft", b"ext", b"|", b'>")']
AS_SPECIAL = [1350, 445, 151643, 899]
WHITELISTED = 'print("<|extra_0|>")<|endoftext|>'


@pytest.fixture(scope="module")
def qwen_tiktoken():
    """tiktoken's own Encoding of qwen.tiktoken, as Qwen's tokenizer builds it."""
    entry = catalog.find("qwen")
    return tiktoken.Encoding("qwen", pat_str=entry.pattern, special_tokens=dict(entry.special_tokens),
                             mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(entry.verified_path())))


# -- regular and special tokens -------------------------------------------------------------


def test_vocabulary_151643_regular_and_208_special_tokens(vocab):
    qwen = vocab("qwen")
    assert len(qwen.mergeable_ranks) == 151_643
    assert len(qwen.special_tokens) == 208 and qwen.vocab_size == 151_851
    assert [qwen.special_tokens[t] for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")] == [151643, 151644, 151645]
    assert {f"<|extra_{n}|>" for n in range(205)} <= set(qwen.special_tokens)
    assert qwen.special_tokens["<|extra_204|>"] == 151850
    assert all(qwen.kind(i) is TokenKind.SPECIAL for i in qwen.special_tokens.values())


# -- decoding errors: 51461 is the first bytes of 根 ---------------------------------------


def test_partial_token_decodes_to_a_replacement_character(vocab):
    qwen = vocab("qwen")
    assert qwen.token_bytes(51461) == b" \xe6\xa0" and qwen.token_bytes(117) == b"\xb9"
    assert qwen.decode([51461]) == " \ufffd"
    assert qwen.decode([51461, 117]) == " 根"
    assert qwen.encode_ids(" 根") == [51461, 117]
    assert [t.kind for t in qwen.encode(" 根")] == [TokenKind.FRAGMENT, TokenKind.FRAGMENT]


def test_streaming_decode_naive_shows_garbage_buffered_waits(vocab):
    # the FAQ's "chat_stream() produces garbled text": each token decoded alone
    qwen = vocab("qwen")
    assert list(naive_stream(qwen, [51461, 117])) == [" \ufffd", "\ufffd"]
    assert "".join(buffered_stream(qwen, [51461, 117])) == " 根"
    assert "\ufffd" not in "".join(buffered_stream(qwen, qwen.encode_ids("我非常渴望与人工智能一起工作 根")))


def test_cli_shows_the_fragments_bytes_and_their_replacement_character(capsys):
    code, out, _ = run(capsys, "encode", "--color", "never", "-t", "qwen", " 根")
    assert code == 0
    assert out.splitlines() == [
        "── qwen (tiktoken, 151,851 ids): 2 tokens, 2 chars, 1.00 chars/token",
        "[·�⟨20 e6 a0⟩][�⟨b9⟩]",
        "ids: 51461 117",
    ]
    [qwen] = encode_json(capsys, "-t", "qwen", " 根")
    assert [(t["bytes"], t["text"], t["kind"]) for t in qwen["tokens"]] == [
        ("20e6a0", " \ufffd", "fragment"), ("b9", "\ufffd", "fragment")]


# -- injection: allowed_special / disallowed_special -----------------------------------------


def test_special_token_text_is_plain_text_by_default(vocab, capsys, qwen_tiktoken):
    qwen = vocab("qwen")
    tokens = qwen.encode(INJECTION)
    reference = qwen_tiktoken.encode(INJECTION, allowed_special=set(), disallowed_special=())
    assert [t.id for t in tokens] == AS_TEXT == reference
    assert [t.bytes for t in tokens] == AS_TEXT_BYTES
    assert ids_of(capsys, "-t", "qwen", INJECTION) == [AS_TEXT]
    assert ids_of(capsys, "-t", "qwen", "--special", "none", INJECTION) == [AS_TEXT]


def test_special_token_text_is_parsed_when_all_are_allowed(vocab, capsys, qwen_tiktoken):
    # Qwen's present default: allowed_special="all", disallowed_special=()
    assert vocab("qwen").encode_ids(INJECTION, allowed_special="all", disallowed_special=()) == AS_SPECIAL
    assert qwen_tiktoken.encode(INJECTION, allowed_special="all") == AS_SPECIAL
    [qwen] = encode_json(capsys, "-t", "qwen", "--special", "all", INJECTION)
    assert [t["id"] for t in qwen["tokens"]] == AS_SPECIAL
    assert qwen["tokens"][2] == {"id": 151643, "bytes": b"<|endoftext|>".hex(), "start": 7, "end": 20,
                                 "kind": "special", "text": "<|endoftext|>", "piece": "<|endoftext|>"}


def test_a_whitelist_parses_only_its_tokens(vocab, capsys, qwen_tiktoken):
    expected = [1350, 9639, 91, 15460, 62, 15, 91, 82598, 151643]
    assert vocab("qwen").encode_ids(WHITELISTED, allowed_special={"<|endoftext|>"}) == expected
    assert qwen_tiktoken.encode(WHITELISTED, allowed_special={"<|endoftext|>"}, disallowed_special=()) == expected
    assert ids_of(capsys, "-t", "qwen", "--special", "<|endoftext|>", WHITELISTED) == [expected]


def test_a_disallowed_token_raises_tiktokens_error_with_its_three_ways_out(vocab, qwen_tiktoken):
    with pytest.raises(ValueError) as ours:
        vocab("qwen").encode(WHITELISTED, allowed_special={"<|endoftext|>"}, disallowed_special=("<|extra_0|>",))
    with pytest.raises(ValueError) as theirs:
        qwen_tiktoken.encode(WHITELISTED, allowed_special={"<|endoftext|>"}, disallowed_special=("<|extra_0|>",))
    assert str(ours.value) == str(theirs.value)
    message = str(ours.value)
    assert message.startswith("Encountered text corresponding to disallowed special token '<|extra_0|>'.")
    assert "allowed_special" in message and "disallowed_special=()" in message


def test_cli_raise_refuses_special_token_text_in_one_line(capsys):
    code, out, err = run(capsys, "encode", "-t", "qwen", "--special", "raise", WHITELISTED)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("tokviz: error: qwen: Encountered text corresponding to "
                                                   "disallowed special token '<|extra_0|>'")


# -- byte-level BPE knows no characters: Panda, Pandas --------------------------------------


@pytest.mark.parametrize(("text", "pieces"), [
    ("Panda", [b"P", b"anda"]), (" Panda", [b" Panda"]), ("Pandas", [b"P", b"andas"]), (" Pandas", [b" Pand", b"as"]),
])
def test_the_same_letters_cut_differently_by_context(vocab, capsys, text, pieces):
    assert [t.bytes for t in vocab("qwen").encode(text)] == pieces
    [qwen] = encode_json(capsys, "-t", "qwen", text)
    assert [bytes.fromhex(t["bytes"]) for t in qwen["tokens"]] == pieces


def test_yi_zhi_bytes_and_its_existing_token(vocab):
    qwen = vocab("qwen")
    assert "一只".encode() == b"\xe4\xb8\x80\xe5\x8f\xaa"
    assert qwen.encode_ids("一只") == [qwen.mergeable_ranks[b"\xe4\xb8\x80\xe5\x8f\xaa"]] == [102292]
    # 是一 first
    assert qwen.mergeable_ranks[b"\xe6\x98\xaf\xe4\xb8\x80"] < qwen.mergeable_ranks[b"\xe4\xb8\x80\xe5\x8f\xaa"]


# -- vocabulary extension: examples/qwen_extra_vocab.txt -> examples/qwen_extra.tiktoken -------

WORDS = "我是一只猫\t20\n你是一只猫\t10\n他是一只猫\t5\n一只\t200\n一只猫\t100\n夸张的 比喻手法\t20\n"
#: Qwen's examples/qwen_extra.tiktoken
QWEN_EXTRA = ["5LiA5Y+q54yr 151851", "5Y+q54yr 151852", "5piv5LiA5Y+q54yr 151853", "5oiR5piv5LiA5Y+q54yr 151854",
              "5L2g5piv5LiA5Y+q54yr 151855", "5LuW5piv5LiA5Y+q54yr 151856"]


@pytest.fixture(scope="module")
def extension(tmp_path_factory):
    folder = tmp_path_factory.mktemp("extend")
    (folder / "qwen_extra_vocab.txt").write_text(WORDS, encoding="utf-8")
    return folder


def test_extend_learns_add_merges_six_merges_in_its_order(capsys, extension):
    out_path = extension / "qwen_extra.tiktoken"
    code, out, err = run(capsys, "extend", "qwen", str(extension / "qwen_extra_vocab.txt"), "-o", str(out_path))
    assert code == 0, err
    said = out + err
    assert "'夸张的 比喻手法' would be pre-tokenized to ['夸张的', ' 比喻手法']" in said  # cannot be one token
    assert "'一只' is already a token" in said  # skipped
    merges = [line for line in said.splitlines() if line.startswith("merge: ")]
    assert [(m.split("-> ")[1].split(" id ")[0], m.rsplit("(frequency ", 1)[1].rstrip(")")) for m in merges] == [
        ("'一只猫'", "100"), ("'只猫'", "35"), ("'是一只猫'", "35"), ("'我是一只猫'", "20"), ("'你是一只猫'", "10"),
        ("'他是一只猫'", "5")]
    assert "6 new merges, ids 151851..151856" in said
    assert out_path.read_text(encoding="utf-8").splitlines() == QWEN_EXTRA


def test_extended_vocabulary_encodes_the_new_words_whole(capsys, extension):
    extra = str(extension / "qwen_extra.tiktoken")
    if not (extension / "qwen_extra.tiktoken").exists():
        run(capsys, "extend", "qwen", str(extension / "qwen_extra_vocab.txt"), "-o", extra)
    tok = catalog.load(extra)
    assert tok.vocab_size == 151_857  # len(tokenizer) after extra_vocab_file
    assert tok.encode_ids("我是一只猫") == [151854]
    extended, base = ids_of(capsys, "-t", extra, "-t", "qwen", "我是一只猫")
    assert extended == [151854] and len(base) > 1
    for word, token_id in (("一只猫", 151851), ("你是一只猫", 151855), ("他是一只猫", 151856)):
        assert tok.encode_ids(word) == [token_id]
    assert tok.decode(tok.encode_ids("他说我是一只猫。")) == "他说我是一只猫。"
    sidecar = json.loads((extension / "qwen_extra.json").read_text(encoding="utf-8"))
    assert (sidecar["base"], sidecar["start_id"]) == ("qwen", 151851)  # the base travels with the file
    assert [m[2:] for m in sidecar["merges"]] == [[100, 151851], [35, 151852], [35, 151853], [20, 151854],
                                                  [10, 151855], [5, 151856]]


def test_extend_normalizes_words_to_nfc(capsys, tmp_path):
    # add_merges' load_expand_vocab: unicodedata.normalize("NFC", word)
    (tmp_path / "w.txt").write_text("cafe\u0301\t5\n", encoding="utf-8")
    code, _, err = run(capsys, "extend", "qwen", str(tmp_path / "w.txt"), "-o", str(tmp_path / "x.tiktoken"))
    assert code == 0, err
    assert catalog.load(str(tmp_path / "x.tiktoken")).encode_ids("café") == [151851]
