"""A pane's tokenizer process loads ChatGLM snapshots by spec like any model: the same load and
encode messages, the same columns, ChatGLM's own [gMASK] sop when the pane shows what the model
adds."""

from __future__ import annotations

import io
import json
from importlib import resources

import sentencepiece as spm

from tests.service.test_server import receive, send, start_server
from tokviz.core.backends.glm import CHATGLM2_SPECIALS, ROLE_TOKENS
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.service import protocol as p


def test_a_pane_loads_and_encodes_a_chatglm3_snapshot(tmp_path, monkeypatch) -> None:
    lines = [line for line in resources.files("tokviz.resources").joinpath("samples", "english.txt")
             .read_text("utf-8").splitlines() if line.strip()]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, model_type="bpe",
                                   vocab_size=500, byte_fallback=True, hard_vocab_limit=False, minloglevel=2)
    repo = tmp_path / "hub" / "models--THUDM--chatglm3-6b"
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    (snapshot / "tokenizer.model").write_bytes(model.getvalue())
    (snapshot / "tokenizer_config.json").write_text(
        json.dumps({"auto_map": {"AutoTokenizer": ["tokenization_chatglm.ChatGLMTokenizer", None]}}))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # before the child starts: it inherits it
    sp = spm.SentencePieceProcessor(model_file=str(snapshot / "tokenizer.model"))
    specials = {t: sp.vocab_size() + i for i, t in enumerate([*CHATGLM2_SPECIALS, *ROLE_TOKENS])}
    conn, child = start_server()
    try:
        send(conn, p.Load(1, "hf:THUDM/chatglm3-6b"))
        loaded = receive(conn)
        assert isinstance(loaded, p.Loaded), loaded
        text = "<|user|>\nHello world"
        send(conn, p.Encode(1, 1, text, SpecialPolicy.parse("all"), model_adds=True))
        reply = receive(conn)
        assert isinstance(reply, p.Encoded), reply
        expected = [specials["[gMASK]"], specials["sop"], specials["<|user|>"], *sp.encode(text[8:])]
        assert reply.encoding.ids.tolist() == expected
    finally:
        conn.close()
        child.join(30)
