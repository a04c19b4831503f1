"""The extension dialog on the real Qwen vocabulary: the seed's worked example, saving, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokviz.core import catalog
from tokviz.gui.tools.extend_dialog import ExtendDialog, open_extend_dialog, parse_words

TIMEOUT = 20_000
SEED = "我是一只猫\t20\n你是一只猫\t10\n他是一只猫\t5\n一只\t200\n一只猫\t100\n夸张的 比喻手法\t20\n"
EXPECTED = [
    (151851, "一只猫"), (151852, "只猫"), (151853, "是一只猫"),
    (151854, "我是一只猫"), (151855, "你是一只猫"), (151856, "他是一只猫"),
]


def learn(qtbot, dialog: ExtendDialog, *, ok: bool = True):
    signal = dialog.learned if ok else dialog.learn_failed
    with qtbot.waitSignal(signal, timeout=TIMEOUT) as blocker:
        assert dialog.learn() is not None
    return blocker.args[0]


@pytest.fixture
def dialog(qtbot) -> ExtendDialog:
    d = open_extend_dialog(None, "qwen")
    qtbot.addWidget(d)
    assert d.base_box.currentData() == "qwen"
    return d


def test_typed_seed_words_learn_six_merges_and_save(qtbot, dialog, tmp_path: Path) -> None:
    # typed with spaces: the last run of spaces separates the frequency, so "夸张的 比喻手法" stays whole
    dialog.words_edit.setPlainText(SEED.replace("\t", " "))
    ext = learn(qtbot, dialog)
    assert dialog.merges() == EXPECTED
    assert [m.id for m in ext.merges] == [i for i, _ in EXPECTED]
    assert dialog.merges_table.item(0, 1).text() == "一只" and dialog.merges_table.item(0, 2).text() == "猫"
    assert dialog.merges_table.item(0, 4).text() == "一只猫".encode().hex(" ")
    assert [dialog.merges_table.item(r, 5).text() for r in range(6)] == [f"{m.frequency:,}" for m in ext.merges]
    warnings = [dialog.warnings_list.item(i).text() for i in range(dialog.warnings_list.count())]
    assert len(warnings) == 2
    assert any("'一只' is already a token" in w for w in warnings)
    assert any("夸张的 比喻手法" in w and "pre-tokenized" in w for w in warnings)
    assert dialog.save_button.isEnabled()

    out = tmp_path / "qwen_cat.tiktoken"
    with qtbot.waitSignal(dialog.extension_saved, timeout=TIMEOUT) as blocker:
        assert dialog.save(out) == out
    assert blocker.args == [str(out)]
    assert out.is_file() and out.with_suffix(".json").is_file()
    extended = catalog.load(blocker.args[0])
    assert extended.encode_ids("我是一只猫") == [151854]
    assert extended.encode_ids("他是一只猫很可爱")[:1] == [151856]


def test_word_list_file_and_start_id(qtbot, dialog, tmp_path: Path) -> None:
    words = tmp_path / "words.tsv"
    words.write_text(SEED, encoding="utf-8")
    dialog.word_file_edit.setText(str(words))
    dialog.file_radio.setChecked(True)
    dialog.start_edit.setText("200000")
    learn(qtbot, dialog)
    assert dialog.merges() == [(i - 151851 + 200000, t) for i, t in EXPECTED]
    dialog.start_edit.setText("200001")  # a changed input: the listed merges are no longer saveable
    assert not dialog.save_button.isEnabled()


def test_malformed_word_list_names_the_line_and_writes_nothing(qtbot, dialog, tmp_path: Path) -> None:
    words = tmp_path / "bad.tsv"
    words.write_text("一只猫\t100\n我是一只猫\ttwenty\n", encoding="utf-8")
    dialog.word_file_edit.setText(str(words))
    dialog.file_radio.setChecked(True)
    out = tmp_path / "out.tiktoken"
    dialog.output_edit.setText(str(out))
    message = learn(qtbot, dialog, ok=False)
    assert "line 2" in message and "twenty" in message
    assert "line 2" in dialog.message.text()
    assert dialog.merges_table.rowCount() == 0
    assert not dialog.save_button.isEnabled()
    assert dialog.save() is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tsv"]

    dialog.file_radio.setChecked(False)
    dialog.typed_radio.setChecked(True)
    dialog.words_edit.setPlainText("一只猫 100\n\n我是一只猫\n")
    assert "line 3" in learn(qtbot, dialog, ok=False)


def test_start_id_inside_the_base_is_refused(qtbot, dialog, tmp_path: Path) -> None:
    dialog.words_edit.setPlainText(SEED)
    dialog.start_edit.setText("100")
    out = tmp_path / "out.tiktoken"
    dialog.output_edit.setText(str(out))
    message = learn(qtbot, dialog, ok=False)
    assert "start id 100" in message and "151851" in message
    assert "start id 100" in dialog.message.text()
    assert dialog.save() is None
    assert not list(tmp_path.iterdir())


def test_parse_words_rules() -> None:
    assert parse_words("a\t1\n a b 2\n\na\t3") == {"a": 4, " a b": 2}
    assert parse_words("ｶﾞ\t1") == {"ｶﾞ": 1}  # NFC keeps compatibility forms
    assert parse_words("e\u0301\t1") == {"é": 1}
    with pytest.raises(ValueError, match="line 1: frequency must be positive"):
        parse_words("word\t0")
    with pytest.raises(ValueError, match="no words"):
        parse_words("\n  \n")


def test_non_bpe_base_is_not_preselected(qtbot) -> None:
    d = ExtendDialog("mistral-7b-v0.1")
    qtbot.addWidget(d)
    assert d.base_box.findData("mistral-7b-v0.1") < 0
    assert "not a byte-level BPE" in d.message.text()


def test_closing_while_learning_stops_the_thread(qtbot) -> None:
    d = open_extend_dialog(None, "qwen")
    qtbot.addWidget(d)
    d.words_edit.setPlainText(SEED)
    run = d.learn()
    d.close()
    assert not run.is_running


def test_a_failed_save_says_once_what_failed_and_changes_nothing(qtbot, dialog, tmp_path: Path) -> None:
    dialog.words_edit.setPlainText(SEED)
    learn(qtbot, dialog)
    out = tmp_path / "blocked.tiktoken"
    out.with_suffix(".json").mkdir()  # a folder where the sidecar must go
    assert dialog.save(out) is None
    message = dialog.message.text()
    assert "blocked.json" in message and "nothing was changed" in message
    assert "cannot write" not in message  # one message, not the save's wrapped in another
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["blocked.json"]
