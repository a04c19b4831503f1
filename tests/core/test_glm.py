"""ChatGLM's four generations loaded like any model: by file (`-t PATH/ice_text.model`) and from
Hugging Face cache snapshots (`hf:THUDM/...`), with the ids THUDM's `tokenization_chatglm.py`
gives.

The real files are on no package registry, so each test builds a model of the same structure and
lays it out as the hub lays out a download: a SentencePiece model trained here with ChatGLM-6B's
user-defined symbols (`ice_text.model`), a plain one (ChatGLM2/3's `tokenizer.model`), and a rank
file cut from a real one (GLM-4's `tokenizer.model`). The expected ids are computed the way the
original code computes them (its `SPTokenizer`, its `tiktoken.Encoding`), transcribed below.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
import sentencepiece as spm
import tiktoken

from tokviz.core import catalog, discovery
from tokviz.core.backends.chatglm import ChatGLMTokenizer, user_defined_symbols
from tokviz.core.backends.glm import (
    CHATGLM2_SPECIALS,
    GLM4_PATTERN,
    GLM4_SPECIALS,
    ROLE_TOKENS,
    ChatGLM2Tokenizer,
    GLM4Tokenizer,
)
from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import TokenKind

TEXT = "我是  昨天买的苹果\nHello World\tthe quick brown fox"
AUTO_MAP = {"AutoTokenizer": ["tokenization_chatglm.ChatGLMTokenizer", None]}
# the line of chatglm3-6b's tokenization_chatglm.py that spells its role tokens (read, never run)
CHATGLM3_SOURCE = 'role_special_tokens = ["<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"]\n'


def _lines() -> list[str]:
    samples = resources.files("tokviz.resources").joinpath("samples")
    text = "".join(samples.joinpath(f).read_text("utf-8") for f in ("chinese.txt", "english.txt"))
    return [line for line in text.splitlines() if line.strip()]


def _train(path: Path, **options: object) -> Path:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_lines()), model_writer=model, model_type="bpe", vocab_size=900,
        byte_fallback=True, character_coverage=1.0, hard_vocab_limit=False, minloglevel=2, **options,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.getvalue())
    return path


@pytest.fixture(scope="module")
def ice_text(tmp_path_factory) -> Path:
    """A stand-in `ice_text.model`: ChatGLM-6B's user-defined symbols, pad 3 as in the original."""
    folder = tmp_path_factory.mktemp("ice")
    return _train(folder / "ice_text.model", user_defined_symbols=user_defined_symbols(), pad_id=3)


@pytest.fixture(scope="module")
def glm2_model(tmp_path_factory) -> Path:
    """A stand-in ChatGLM2/3 `tokenizer.model`: a plain BPE model (<unk> <s> </s>)."""
    return _train(tmp_path_factory.mktemp("glm2") / "tokenizer.model")


@pytest.fixture(scope="module")
def glm4_ranks(tmp_path_factory, vocab_path) -> Path:
    """A stand-in GLM-4 `tokenizer.model`: the first 3000 ranks of cl100k_base's rank file."""
    lines = vocab_path("cl100k_base").read_bytes().splitlines(keepends=True)[:3000]
    path = tmp_path_factory.mktemp("glm4") / "tokenizer.model"
    path.write_bytes(b"".join(lines))
    return path


def snapshot(hub: Path, repo: str, files: dict[str, Path | str | dict]) -> Path:
    """Lay files out as the hub's cache does: models--ORG--NAME/snapshots/REV/, refs/main -> REV."""
    repo_dir = hub / f"models--{repo.replace('/', '--')}"
    folder = repo_dir / "snapshots" / "0123abcd"
    folder.mkdir(parents=True)
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text("0123abcd")
    for name, content in files.items():
        if isinstance(content, Path):
            (folder / name).write_bytes(content.read_bytes())
        elif isinstance(content, dict):
            (folder / name).write_text(json.dumps(content), "utf-8")
        else:
            (folder / name).write_text(content, "utf-8")
    return folder


@pytest.fixture
def hub(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "hub"


# -- the originals, transcribed ------------------------------------------------------------------


def chatglm6b_ids(sp, text: str, *, do_lower_case: bool, num_image_tokens: int) -> list[int]:
    """ChatGLM-6B's `_tokenize` + `SPTokenizer.encode` + `[gMASK] <sop>` (add_special_tokens)."""
    if do_lower_case:
        text = text.lower()
    text = text.replace("\n", "<n>").replace("\t", "<|tab|>")
    for i in range(80, 1, -1):
        text = text.replace(" " * i, f"<|blank_{i}|>")
    ids = [i + num_image_tokens for i in sp.encode(text)]
    return [*ids, sp.piece_to_id("[gMASK]") + num_image_tokens, sp.piece_to_id("<sop>") + num_image_tokens]


def chatglm2_specials(sp, roles: tuple[str, ...]) -> dict[str, int]:
    """`SPTokenizer.special_tokens`: numbered from the model's size on."""
    return {token: sp.vocab_size() + i for i, token in enumerate([*CHATGLM2_SPECIALS, *roles])}


def chatglm2_ids(sp, text: str, specials: dict[str, int]) -> list[int]:
    """`get_prefix_tokens()` + `[PieceToId(p) for p in EncodeAsPieces(text)]`."""
    return [specials["[gMASK]"], specials["sop"], *(sp.piece_to_id(p) for p in sp.encode_as_pieces(text))]


def glm4_encoding(path: Path) -> tiktoken.Encoding:
    """`ChatGLM4Tokenizer.__init__`'s encoding: ranks read line by line, specials after them."""
    ranks = {}
    for line in path.read_text().splitlines():
        token, rank = line.strip().split()
        ranks[base64.b64decode(token)] = int(rank)
    specials = {token: i for i, token in enumerate(GLM4_SPECIALS, start=len(ranks))}
    return tiktoken.Encoding(name="glm4", pat_str=GLM4_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


# -- ChatGLM-6B ----------------------------------------------------------------------------------


def test_ice_text_model_alone_loads_as_chatglm6b(ice_text):
    tok = catalog.load(str(ice_text))
    assert isinstance(tok, ChatGLMTokenizer)
    sp = spm.SentencePieceProcessor(model_file=str(ice_text))
    assert tok.added_around(TEXT).around(tok.encode_ids(TEXT)) == chatglm6b_ids(
        sp, TEXT, do_lower_case=True, num_image_tokens=0)
    spans = [(t.start, t.end) for t in tok.encode(TEXT)]
    assert spans[0][0] == 0 and spans[-1][1] == len(TEXT)
    assert [(t.start, t.end) for t in tok.added_tokens(TEXT)[1]] == [(len(TEXT), len(TEXT))] * 2  # no text


def test_a_plain_sentencepiece_model_stays_plain(glm2_model):
    assert type(catalog.load(str(glm2_model))) is SentencePieceTokenizer


@pytest.mark.parametrize(("config", "lower", "offset"), [
    ({"do_lower_case": False, "num_image_tokens": 0}, False, 0),
    ({}, False, 20000),  # the original class's defaults where the config is silent
    ({"do_lower_case": True, "num_image_tokens": 20000}, True, 20000),
])
def test_hf_chatglm6b_snapshot_follows_its_tokenizer_config(hub, ice_text, config, lower, offset):
    snapshot(hub, "THUDM/chatglm-6b", {
        "ice_text.model": ice_text, "tokenization_chatglm.py": "# not run\nraise SystemExit(1)\n",
        "tokenizer_config.json": {"tokenizer_class": "ChatGLMTokenizer", "auto_map": AUTO_MAP, **config},
    })
    tok = catalog.load("hf:THUDM/chatglm-6b")
    sp = spm.SentencePieceProcessor(model_file=str(ice_text))
    assert tok.name == "THUDM/chatglm-6b"
    ids = tok.encode_ids(TEXT)
    assert tok.added_around(TEXT).around(ids) == chatglm6b_ids(sp, TEXT, do_lower_case=lower, num_image_tokens=offset)
    assert tok.decode(ids) == (TEXT.lower() if lower else TEXT)


def test_the_snapshot_folder_and_its_file_load_the_same_way(hub, ice_text):
    folder = snapshot(hub, "THUDM/chatglm-6b", {
        "ice_text.model": ice_text, "tokenizer_config.json": {"auto_map": AUTO_MAP, "num_image_tokens": 0},
    })
    expected = catalog.load("hf:THUDM/chatglm-6b").encode_ids(TEXT)
    assert catalog.load(str(folder)).encode_ids(TEXT) == expected
    assert catalog.load(str(folder / "ice_text.model")).encode_ids(TEXT) == expected


# -- ChatGLM2 / ChatGLM3 -------------------------------------------------------------------------


@pytest.mark.parametrize(("repo", "source", "roles"), [
    ("THUDM/chatglm2-6b", "special_tokens = ['[MASK]', '[gMASK]', '[sMASK]', 'sop', 'eop']\n", ()),
    ("THUDM/chatglm3-6b", CHATGLM3_SOURCE, ROLE_TOKENS),
    ("THUDM/chatglm3-6b", None, ROLE_TOKENS),  # no code in the snapshot: the name tells
])
def test_chatglm2_and_3_snapshots_number_their_specials_after_the_model(hub, glm2_model, repo, source, roles):
    files: dict[str, Path | str | dict] = {
        "tokenizer.model": glm2_model, "tokenizer_config.json": {"auto_map": AUTO_MAP},
    }
    if source is not None:
        files["tokenization_chatglm.py"] = source
    snapshot(hub, repo, files)
    tok = catalog.load(f"hf:{repo}")
    sp = spm.SentencePieceProcessor(model_file=str(glm2_model))
    specials = chatglm2_specials(sp, roles)
    assert isinstance(tok, ChatGLM2Tokenizer) and tok.vocab_size == sp.vocab_size() + len(specials)
    assert tok.describe() == f"{repo} ({repo.split('/')[1][:8]}: sentencepiece, {tok.vocab_size:,} ids)"
    assert {t: tok.special_tokens[t] for t in specials} == specials
    added = tok.added_around(TEXT)
    assert added is not None and added.around(tok.encode_ids(TEXT)) == chatglm2_ids(sp, TEXT, specials)
    assert tok.piece(specials["[gMASK]"]) == "[gMASK]" and tok.kind(specials["sop"]) == TokenKind.SPECIAL
    assert tok.decode(tok.encode_ids(TEXT)) == sp.decode(sp.encode(TEXT))


def test_chatglm3_role_tokens_are_text_unless_asked_for(hub, glm2_model):
    snapshot(hub, "THUDM/chatglm3-6b", {
        "tokenizer.model": glm2_model, "tokenizer_config.json": {"auto_map": AUTO_MAP},
        "tokenization_chatglm.py": CHATGLM3_SOURCE,
    })
    tok = catalog.load("hf:THUDM/chatglm3-6b")
    text = "<|user|>\n你好"
    plain = tok.encode(text)
    assert all(t.kind != TokenKind.SPECIAL for t in plain)  # encode_special_tokens=False
    parsed = tok.encode_with(text, SpecialPolicy.parse("all"))
    assert parsed[0].id == tok.special_tokens["<|user|>"] and (parsed[0].start, parsed[0].end) == (0, 8)


# -- GLM-4 ---------------------------------------------------------------------------------------


def test_glm4_snapshot_is_tiktoken_with_its_pattern_and_specials(hub, glm4_ranks):
    snapshot(hub, "THUDM/glm-4-9b-chat", {
        "tokenizer.model": glm4_ranks,
        "tokenizer_config.json": {"auto_map": {"AutoTokenizer": ["tokenization_chatglm.ChatGLM4Tokenizer", None]}},
    })
    tok = catalog.load("hf:THUDM/glm-4-9b-chat")
    original = glm4_encoding(glm4_ranks)
    assert isinstance(tok, GLM4Tokenizer)
    text = TEXT + "  I'LL see 12345 <|user|>"
    assert tok.encode_ids(text) == original.encode(text, disallowed_special=())
    assert tok.special_tokens["<|endoftext|>"] == 3000 and tok.special_tokens["<|end_of_video|>"] == 3013
    parsed = tok.encode_with(text, SpecialPolicy.parse("all"))
    assert [t.id for t in parsed] == original.encode(text, allowed_special="all")
    added = tok.added_around(text)
    assert added is not None and added.before == (original.encode_single_token("[gMASK]"),
                                                   original.encode_single_token("<sop>"))


# -- discovery and the CLI -----------------------------------------------------------------------


def test_scan_lists_chatglm_snapshots(hub, ice_text, glm4_ranks):
    snapshot(hub, "THUDM/chatglm-6b", {"ice_text.model": ice_text, "tokenizer_config.json": {"auto_map": AUTO_MAP}})
    found = discovery.hf_tokenizer_file(hub / "models--THUDM--chatglm-6b" / "snapshots" / "0123abcd")
    assert found is not None and found[1] == "chatglm" and found[0].name == "ice_text.model"
    assert discovery.resolve("hf:THUDM/chatglm-6b").format == "chatglm"


def test_cli_compares_chatglm_like_any_model(hub, ice_text):
    snapshot(hub, "THUDM/chatglm-6b", {
        "ice_text.model": ice_text, "tokenizer_config.json": {"auto_map": AUTO_MAP, "num_image_tokens": 0},
    })
    sp = spm.SentencePieceProcessor(model_file=str(ice_text))
    done = subprocess.run(
        [sys.executable, "-m", "tokviz", "encode", "-t", "hf:THUDM/chatglm-6b", "-t", str(ice_text),
         "--json", "我是  昨天买的苹果"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    panes = json.loads(done.stdout)
    # the text's own tokens: the [gMASK] <sop> the model appends are `added_tokens`, as BOS is
    own = chatglm6b_ids(sp, "我是  昨天买的苹果", do_lower_case=False, num_image_tokens=0)[:-2]
    assert [[t["id"] for t in pane["tokens"]] for pane in panes] == [own, own]
    assert panes[0]["tokenizer"] == "THUDM/chatglm-6b"
