"""The pipeline view on real tokenizers: tiktoken, SentencePiece, and the ChatGLM-6B profile on a
trained stand-in for `ice_text.model` (trained as tests/core/test_chatglm.py trains it)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from tests.core.test_chatglm import _train
from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer
from tokviz.gui.tools.pipeline_dialog import PipelineDialog

TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def standin_path(tmp_path_factory) -> str:
    return _train(tmp_path_factory)


def make_view(qtbot, spec: str, text: str, **kwargs) -> PipelineDialog:
    view = PipelineDialog(spec, text, **kwargs)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.ready, timeout=TIMEOUT_MS):
        pass
    return view


def names(view: PipelineDialog) -> list[str]:
    return [box.stage.name for box in view.boxes]


def test_tiktoken_stages(qtbot, vocab):
    view = make_view(qtbot, "cl100k_base", "hello world\n", policy="none")
    assert names(view) == ["normalization", "pre-tokenization", "model", "special tokens", "ids"]
    assert view.box("pre-tokenization").labels() == ["hello", "·world", "↵"]
    model = view.box("model")
    ids = vocab("cl100k_base").encode_ids("hello world\n")
    assert [c.sub for c in model.chips.chips] == [str(i) for i in ids]
    assert view.box("ids").labels() == ["15339", "1917", "198"]
    assert view.box("special tokens").chips is None  # tiktoken adds none
    assert not view.chatglm_box.isEnabled() and not view.bos_box.isEnabled()


def test_sentencepiece_stages_and_bos(qtbot, vocab):
    tok = vocab("mistral-7b-v0.1")
    view = make_view(qtbot, "mistral-7b-v0.1", "Hello  world")
    assert names(view) == ["normalization", "pre-tokenization", "model", "special tokens", "ids"]
    assert view.box("normalization").text_label.text() == "▁Hello▁▁world"
    assert view.box("pre-tokenization").labels() == ["▁Hello", "▁▁world"]
    ids = tok.encode_ids("Hello  world")
    assert view.box("ids").labels() == [str(i) for i in ids]
    assert view.bos_box.isEnabled() and view.chatglm_box.isEnabled()
    with qtbot.waitSignal(view.ready, timeout=TIMEOUT_MS):
        view.bos_box.setChecked(True)
    assert view.box("special tokens").labels() == ["<s>"]
    notes = [label for label in view.box("special tokens").findChildren(QLabel) if "BOS <s>" in label.text()]
    assert notes and all(n.textFormat() == Qt.TextFormat.PlainText for n in notes)  # not strike-through
    assert view.box("ids").labels() == [str(i) for i in [1, *ids]]
    # Mistral is no ChatGLM model: the profile says so instead of showing stages
    with qtbot.waitSignal(view.ready, timeout=TIMEOUT_MS):
        view.chatglm_box.setChecked(True)
    assert view.stack.currentIndex() == 1 and "not a ChatGLM-6B model" in view.message_label.text()


def test_chatglm_profile_on_a_trained_standin(qtbot, standin_path):
    text = "我是  昨天买的苹果\nHello\tWorld"
    # the model as a plain SentencePiece model, the profile applied by the dialog's option
    plain = SentencePieceTokenizer.from_file(standin_path)
    view = make_view(qtbot, standin_path, text, tokenizer=plain, chatglm=True)
    assert names(view)[:3] == ["preprocess", "preprocess", "preprocess"]
    steps = {box.title.text(): box.text_label.text() for box in view.boxes if box.stage.name == "preprocess"}
    assert steps["Lower-case"].endswith("hello→world")
    assert "<n>" in steps["Line breaks"]
    assert steps["Tabs and blanks"] == "我是<|blank_2|>昨天买的苹果<n>hello<|tab|>world"
    assert "<|blank_2|>" in view.box("model").labels()
    assert view.box("special tokens").labels() == ["[gMASK]", "<sop>"]
    assert view.header.text().endswith(f"ChatGLM-6B profile · {len(text)} characters")
    # switching the profile off shows the plain SentencePiece stages of the same model
    with qtbot.waitSignal(view.ready, timeout=TIMEOUT_MS):
        view.chatglm_box.setChecked(False)
    assert "preprocess" not in names(view)
    assert "<|blank_2|>" not in view.box("model").labels()


def test_a_chatglm_model_by_its_file_is_chatglm_without_the_option(qtbot, standin_path):
    text = "我是  昨天买的苹果\nHello\tWorld"
    view = make_view(qtbot, standin_path, text)
    assert names(view)[:3] == ["preprocess", "preprocess", "preprocess"]
    assert view.box("special tokens").labels() == ["[gMASK]", "<sop>"]
    assert "ChatGLM-6B" in view.header.text() and not view.chatglm_box.isEnabled()


def test_gguf_stages_bpe_spm_and_wordpiece(qtbot, vocab):
    text = "Hello  World! Ünïcödé"
    qwen2 = vocab("ggml-vocab-qwen2")
    view = make_view(qtbot, "ggml-vocab-qwen2", text)
    assert names(view) == ["normalization", "pre-tokenization", "model", "special tokens", "ids"]
    assert view.box("pre-tokenization").labels() == ["Hello", "·", "·World", "!", "·Ünïcödé"]
    assert view.box("pre-tokenization").stage.note.endswith("(byte-level pieces shown as text)")
    assert view.box("ids").labels() == [str(i) for i in qwen2.encode_ids(text)]
    assert view.box("special tokens").chips is None  # the file does not ask for BOS
    assert not view.bos_box.isChecked() and not view.bos_box.isEnabled()
    spm = vocab("ggml-vocab-llama-spm")
    view = make_view(qtbot, "ggml-vocab-llama-spm", text)
    assert view.box("normalization").stage.text == "▁Hello▁▁World!▁Ünïcödé"
    assert view.box("special tokens").labels() == ["<s>"]  # add_bos_token
    # the greyed box shows the file's rule: it adds <s> (it was shown off)
    assert view.bos_box.isChecked() and not view.bos_box.isEnabled() and "<s>" in view.bos_box.toolTip()
    assert "add_bos_token" in view.box("special tokens").stage.note
    assert view.box("ids").labels() == [str(i) for i in spm.encode_ids(text)]
    # WordPiece: lower-casing and accent stripping are the normalization; the words are not byte-level
    bert = vocab("ggml-vocab-bert-bge")
    view = make_view(qtbot, "ggml-vocab-bert-bge", text)
    assert view.box("normalization").stage.text == "hello  world! unicode"
    assert view.box("normalization").stage.note == "the normalizer's output"
    assert view.box("pre-tokenization").labels() == ["hello", "world", "!", "unicode"]
    assert view.box("pre-tokenization").stage.note == "the pre-tokenizer's chunks"
    assert view.box("special tokens").labels() == ["[CLS]", "[SEP]"]
    assert view.box("ids").labels() == [str(i) for i in bert.encode_ids(text)]


def test_long_text_is_cut_and_unknown_spec_is_a_message(qtbot):
    view = make_view(qtbot, "cl100k_base", "word " * 5000)
    assert view.cut_label.isVisibleTo(view) and len(view.text) == 20_000
    assert view.box("ids").chips.chips[-1].label.startswith("… ")
    view = make_view(qtbot, "no-such-tokenizer", "a")
    assert "unknown tokenizer" in view.message_label.text()
