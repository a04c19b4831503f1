"""The merge replay dialog on real tokenizers: final ids, steps with ranks, not-applicable models."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tokviz.core.tokenizer import SpecialPolicy
from tokviz.gui.tools.replay_dialog import MAX_CHARS, Chip, ChipFlow, ReplayDialog

TIMEOUT_MS = 20_000


def make_view(qtbot, spec: str, text: str, **kwargs) -> ReplayDialog:
    view = ReplayDialog(spec, text, **kwargs)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.ready, timeout=TIMEOUT_MS):
        pass
    return view


def test_cl100k_hello_world_ends_in_the_backends_ids(qtbot):
    view = make_view(qtbot, "cl100k_base", "hello world")
    assert view.replay is not None and view.replay.ids == [15339, 1917]
    assert "[15339, 1917]" in view.final_ids_label.text()
    assert view.match_label.text().startswith("✓")
    assert view.chunk_chips.chips[0].label == "hello" and view.chunk_chips.chips[1].label == "·world"
    # the first chunk, "hello": bytes, then el (301), lo (385), ello (4896), hello (15339)
    rows = [view.steps_list.item(k).text() for k in range(view.steps_list.count())]
    assert rows[0] == "bytes: 5 parts"
    assert rows[1] == "step 1 · rank 301 · → el"
    assert rows[-1].endswith("rank 15,339 · → hello")
    assert [c.label for c in view.state_chips.chips] == ["hello"]  # shown at the final state
    view.slider.setValue(0)
    assert [c.label for c in view.state_chips.chips] == list("hello")
    assert view.steps_list.currentRow() == 0
    view.steps_list.setCurrentRow(1)
    assert view.slider.value() == 1
    assert [c.label for c in view.state_chips.chips] == ["h", "el", "l", "o"]
    assert [c.marked for c in view.state_chips.chips] == [False, True, False, False]
    with qtbot.waitSignal(view.jump_to) as blocker:
        view.select_chunk(1)
    assert blocker.args == [5, 11]
    assert view.chunk_title.text().startswith("Chunk 2: “·world”")
    assert "[1917]" in view.chunk_ids_label.text()


def test_selection_special_tokens_fragments_and_a_worker_thread(qtbot, vocab):
    text = "x" * 10 + "<|endoftext|> 根据 " + "数据 " * 1200  # > 2k characters: replayed on a worker
    view = make_view(qtbot, "qwen", text, policy="all", selection=(10, len(text)), tokenizer=vocab("qwen"))
    assert view._call is not None
    replay = view.replay
    assert replay is not None and replay.matches_backend
    assert replay.ids == vocab("qwen").encode_ids(text[10:], allowed_special="all")
    assert replay.chunks[0].special and view.chunk_chips.chips[0].label == "<|endoftext|>"
    view.select_chunk(1)  # " 根据": its first bytes are fragments, labelled with their hex
    view.set_step(0)
    assert [c.sub for c in view.state_chips.chips][:3] == ["", "e6", "a0"]
    assert view.state_chips.chips[1].label == "�"


def test_long_selection_is_cut_with_a_message(qtbot, vocab):
    text = "abc " * 2000
    view = make_view(qtbot, "cl100k_base", text, tokenizer=vocab("cl100k_base"))
    assert len(view.replay.text) == MAX_CHARS
    assert view.cut_label.isVisibleTo(view) and "8,000 characters" in view.cut_label.text()


def test_sentencepiece_bpe_replays_with_scores(qtbot, vocab):
    tok = vocab("mistral-7b-v0.1")
    view = make_view(qtbot, "mistral-7b-v0.1", "Hello tokenizers", tokenizer=tok)
    assert view.replay.ids == tok.encode_ids("Hello tokenizers")
    assert view.match_label.text().startswith("✓")
    assert "score" in view.steps_list.item(1).text()


def test_unigram_model_shows_not_applicable(qtbot):
    view = make_view(qtbot, "botchan-unigram-1k", "hello world")
    assert view.replay is None
    assert view.stack.currentIndex() == 1
    assert "Unigram" in view.message_label.text() and "no merges" in view.message_label.text()


def test_disallowed_special_token_and_unknown_spec_are_messages(qtbot):
    view = make_view(qtbot, "cl100k_base", "a <|endoftext|>", policy=SpecialPolicy.parse("raise"))
    assert "disallowed special token" in view.message_label.text()
    view = make_view(qtbot, "no-such-tokenizer", "a")
    assert "unknown tokenizer" in view.message_label.text()


def test_chip_flow_wraps_and_reports_clicks(qtbot):
    flow = ChipFlow(max_chips=100)
    qtbot.addWidget(flow)
    flow.resize(200, 50)
    flow.set_chips([Chip(f"chip{k}") for k in range(150)])
    assert flow.heightForWidth(200) > flow.heightForWidth(2000)
    assert flow.chips[-1].label == "… 50 more"
    rect = flow.chip_rect(3)
    with qtbot.waitSignal(flow.clicked) as blocker:
        qtbot.mouseClick(flow, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert blocker.args == [3]
