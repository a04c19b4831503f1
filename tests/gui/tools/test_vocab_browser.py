"""The vocabulary browser on real vocabularies: row counts, filters, sorting, parents, occurrences."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tokviz.analysis.vocabulary import COLUMNS
from tokviz.gui.tools.vocab_browser import VocabBrowser, open_vocab_browser

TIMEOUT_MS = 20_000
COLUMN = {name: k for k, (name, _) in enumerate(COLUMNS)}


def make_browser(qtbot, spec: str, **kwargs) -> VocabBrowser:
    browser = VocabBrowser(spec, **kwargs)
    qtbot.addWidget(browser)
    with qtbot.waitSignal(browser.loaded, timeout=TIMEOUT_MS) as blocker:
        blocker.connect(browser.load_failed)
    assert browser.error is None, browser.error
    return browser


def shown_ids(browser: VocabBrowser) -> list[int]:
    model = browser.model
    return [model.data(model.index(r, 0), Qt.ItemDataRole.UserRole) for r in range(model.rowCount())]


def test_cl100k_rows_filters_sorting_parents_and_occurrences(qtbot, vocab):
    tok = vocab("cl100k_base")
    text = "hello world, hello again"
    browser = make_browser(qtbot, "cl100k_base", text=text)
    model = browser.model
    assert model.rowCount() == len(browser.table) == len(tok.mergeable_ranks) + len(tok.special_tokens)
    assert browser.count_label.text() == f"{model.rowCount():,} of {len(browser.table):,}"
    assert model.data(model.index(15339 - 0, COLUMN["text"])) == "hello"  # ids 0.. have no holes here

    # fragments only: every row's bytes fail strict UTF-8, and the row is flagged in colour
    browser.fragments_only.setChecked(True)
    qtbot.waitUntil(lambda: model.rowCount() < len(browser.table), timeout=TIMEOUT_MS)  # the debounce fires
    fragments = shown_ids(browser)
    assert 0 < len(fragments) < len(browser.table)
    for token_id in fragments:
        with pytest.raises(UnicodeDecodeError):
            tok.token_bytes(token_id).decode("utf-8")
    assert model.data(model.index(0, 0), Qt.ItemDataRole.BackgroundRole) is not None

    # special only
    browser.fragments_only.setChecked(False)
    browser.special_only.setChecked(True)
    browser.apply_filter()
    assert sorted(shown_ids(browser)) == sorted(tok.special_tokens.values())

    # text search, id range, and a bad hex query keeps the rows and says why
    browser.special_only.setChecked(False)
    browser.search.setText("hello")
    browser.id_max.setValue(20000)
    browser.apply_filter()
    ids = shown_ids(browser)
    assert 15339 in ids and all(i <= 20000 for i in ids)
    assert all("hello" in tok.decode([i]).lower() for i in ids)
    browser.search_mode.setCurrentText("Hex")
    browser.search.setText("e6 a")
    browser.apply_filter()
    assert shown_ids(browser) == ids and browser.filter_message.isVisibleTo(browser)

    # sorting by length, descending, through the header
    browser.clear_filters()
    browser.view.sortByColumn(COLUMN["length"], Qt.SortOrder.DescendingOrder)
    lengths = [int(model.data(model.index(r, COLUMN["length"]))) for r in range(50)]
    assert lengths == sorted(lengths, reverse=True)
    assert lengths[0] == max(len(tok.token_bytes(i)) for i in tok.mergeable_ranks.values())

    # parents: " world" (1917) is merged from two tokens whose bytes join to it; a click selects one
    assert browser.select_token(1917)
    left, right = (b.property("token_id") for b in browser.parent_buttons)
    assert tok.token_bytes(left) + tok.token_bytes(right) == b" world"
    browser.search.setText("zzzz-no-such-token")
    browser.apply_filter()
    assert model.rowCount() == 0
    browser.parent_buttons[0].click()  # hidden by the filter: the filters are cleared
    assert browser.selected_id() == left
    assert browser.search.text() == "" and model.rowCount() == len(browser.table)
    assert model.token_id(browser.view.currentIndex().row()) == left

    # occurrences of "hello" (15339) in the current text, and the jump signal
    assert browser.select_token(15339)
    assert browser.occurrence_spans() == [(0, 5)]
    assert browser.occurrence_label.text().startswith("1 occurrence")
    with qtbot.waitSignal(browser.jump_to) as blocker:
        browser.occurrence_list.itemClicked.emit(browser.occurrence_list.item(0))
    assert blocker.args == [0, 5]
    assert browser.select_token(24748)  # " hello"
    assert browser.occurrence_spans() == [(12, 18)]


def test_qwen_rows_hex_and_script_filter(qtbot, vocab):
    tok = vocab("qwen")
    browser = make_browser(qtbot, "qwen")
    model = browser.model
    assert model.rowCount() == len(browser.table) == len(tok.mergeable_ranks) + len(tok.special_tokens)
    browser.search_mode.setCurrentText("Hex")
    browser.search.setText("e6 a0")
    browser.apply_filter()
    ids = shown_ids(browser)
    assert 51461 in ids
    assert all(b"\xe6\xa0" in tok.token_bytes(i) for i in ids)
    browser.clear_filters()
    browser.script_combo.setCurrentIndex(browser.script_combo.findData("hangul"))
    browser.apply_filter()
    assert 0 < model.rowCount() < len(browser.table)
    texts = [model.data(model.index(r, COLUMN["script"])) for r in range(model.rowCount())]
    assert set(texts) == {"hangul"}


def test_sentencepiece_vocab_has_no_parents_and_dialog_opens(qtbot):
    dialog = open_vocab_browser(None, "mistral-7b-v0.1", text="hello")
    qtbot.addWidget(dialog)
    browser = dialog.browser
    qtbot.waitUntil(lambda: not browser.busy, timeout=TIMEOUT_MS)
    assert browser.model.rowCount() == 32000
    assert browser.select_token(100)
    assert not any(b.isVisibleTo(browser) for b in browser.parent_buttons)
    assert "no merge ranks" in browser.parents_note.text()


def test_unknown_spec_shows_an_error(qtbot):
    browser = VocabBrowser("no-such-tokenizer")
    qtbot.addWidget(browser)
    with qtbot.waitSignal(browser.load_failed, timeout=TIMEOUT_MS):
        pass
    assert "unknown tokenizer" in browser.error_label.text()
    assert browser.stack.currentIndex() == 1


def test_wired_to_the_compare_window(qtbot, make_window):
    """The wiring the window owner will add: a pane's own token columns, jump_to -> highlight."""
    window = make_window(["cl100k_base"], text="hello world, hello again")
    pane = window.panes[0]
    dialog = open_vocab_browser(window, pane.spec, window.text(), pane.result.tokens)
    qtbot.addWidget(dialog)
    browser = dialog.browser
    browser.jump_to.connect(window.highlight_chars)
    qtbot.waitUntil(lambda: not browser.busy, timeout=TIMEOUT_MS)
    assert browser.select_token(24748)  # " hello"
    assert browser.occurrence_spans() == [(12, 18)]
    browser.occurrence_list.itemClicked.emit(browser.occurrence_list.item(0))
    assert list(pane.view.highlighted) == [3]  # hello · world · , · hello


def test_text_mode_finds_hex_and_keeps_a_leading_space(qtbot, vocab):
    tok = vocab("cl100k_base")
    browser = make_browser(qtbot, "cl100k_base")
    browser.search.setText("e6 a0")  # the placeholder's own example, in Text mode
    browser.apply_filter()
    ids = shown_ids(browser)
    assert ids and all(b"\xe6\xa0" in tok.token_bytes(i) for i in ids)
    assert "text or bytes e6 a0" in browser.count_label.text()
    browser.search.setText(" hello")
    browser.apply_filter()
    with_space = shown_ids(browser)
    assert 24748 in with_space and 15339 not in with_space  # " hello" yes, "hello" no
    assert all(" hello" in tok.token_bytes(i).decode("utf-8", "replace").casefold() for i in with_space)


def test_showing_a_hidden_parent_can_go_back_to_the_search(qtbot):
    browser = make_browser(qtbot, "cl100k_base")
    browser.search.setText(" hello")
    browser.apply_filter()
    assert browser.select_token(24748)
    left, right = browser.table.parents(24748)
    hidden = next(p for p in (left, right) if browser.model.view_row_of(p) is None)
    browser.select_token(hidden)  # what the parent button does
    assert browser.search.text() == "" and browser.selected_id() == hidden
    assert not browser.back_button.isHidden()
    browser.back_button.click()
    assert browser.search.text() == " hello" and browser.selected_id() == 24748
    assert 24748 in shown_ids(browser) and browser.back_button.isHidden()


def test_odd_token_filters_with_counts(qtbot, tmp_path):
    import base64

    from tokviz.core import catalog

    ranks = {bytes([b]): b for b in range(256)} | {b"x y": 256}
    path = tmp_path / "odd.tiktoken"
    path.write_text("".join(f"{base64.b64encode(d).decode()} {i}\n" for d, i in ranks.items()))
    browser = make_browser(qtbot, str(path), tokenizer=catalog.load(str(path)))
    qtbot.waitUntil(lambda: browser.oddities is not None, timeout=TIMEOUT_MS)
    texts = [browser.odd_combo.itemText(k) for k in range(browser.odd_combo.count())]
    assert texts == ["all tokens", "unreachable (1)", "fragment alone (128)", "duplicate bytes (0)",
                     "control-looking (30)"]
    browser.odd_combo.setCurrentIndex(1)
    browser.apply_filter()
    assert shown_ids(browser) == [256]
    browser.odd_combo.setCurrentIndex(2)
    browser.apply_filter()
    assert shown_ids(browser) == list(range(128, 256))


def test_the_dialog_steps_aside_from_the_occurrence(qtbot, make_window):
    window = make_window(["cl100k_base"], text="hello world, hello again " * 200)
    window.resize(900, 700)
    window.move(0, 0)
    dialog = window.tools.open_vocabulary(window.panes[0])
    qtbot.addWidget(dialog)
    browser = dialog.browser
    qtbot.waitUntil(lambda: not browser.busy, timeout=TIMEOUT_MS)
    dialog.move(window.frameGeometry().topLeft())  # right over the window
    assert browser.select_token(24748)
    browser.occurrence_list.itemClicked.emit(browser.occurrence_list.item(50))
    start = browser.occurrence_spans()[50][0]
    view = window.panes[0].view
    assert not dialog.frameGeometry().intersects(window.frameGeometry()) or (
        dialog.frameGeometry().top() > window.frameGeometry().top() + window.height() // 2
    )
    index = view.token_for_char(start)
    assert index in view.highlighted and view.cell_rect(index).intersects(view.viewport().rect())


def test_a_gguf_vocabulary_rows_kinds_search_and_odd_tokens(qtbot, vocab):
    from tokviz.analysis.oddities import find_oddities

    bert = vocab("ggml-vocab-bert-bge")
    browser = make_browser(qtbot, "ggml-vocab-bert-bge", tokenizer=bert, text="playing")
    model = browser.model
    assert model.rowCount() == len(browser.table) == bert.vocab_size == 30522
    assert model.data(model.index(0, COLUMN["kind"])) == "special"  # [PAD], a control token
    assert model.data(model.index(2652, COLUMN["piece"])) == "▁playing"
    assert model.data(model.index(2652, COLUMN["text"])) == "·playing"  # the bytes " playing"
    browser.search.setText("playing")
    browser.apply_filter()
    assert 2652 in shown_ids(browser)
    # the odd-token filters count with the WordPiece rule: the same counts as the analysis
    qtbot.waitUntil(lambda: browser.oddities is not None, timeout=TIMEOUT_MS)
    counts = find_oddities(bert).counts()
    texts = [browser.odd_combo.itemText(k) for k in range(browser.odd_combo.count())]
    assert texts[1] == f"unreachable ({counts['unreachable']:,})"
    browser.clear_filters()
    browser.odd_combo.setCurrentIndex(1)
    browser.apply_filter()
    assert shown_ids(browser) == browser.oddities.ids["unreachable"].tolist()
    assert bert.encode_ids("0ing")[1] not in shown_ids(browser)  # `##ing` is reachable after `0`


@pytest.mark.parametrize("last", [2**31 - 1, 2**32 - 2])
def test_a_rank_file_with_one_far_id_loads_and_is_counted(qtbot, tmp_path, last):
    """The odd-token count walks the ids there are, not every id up to the largest (2**31 of
    them here: tens of minutes, and closing the browser waited for it), and an id past what a
    spin box holds does not stop the loading."""
    import base64

    from tokviz.core import catalog

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": last}
    path = tmp_path / "far.tiktoken"
    path.write_text("".join(f"{base64.b64encode(d).decode()} {i}\n" for d, i in ranks.items()))
    tokenizer = catalog.load(str(path))
    read = []
    token_bytes = tokenizer.token_bytes
    tokenizer.token_bytes = lambda i: read.append(i) or token_bytes(i)  # type: ignore[method-assign]
    browser = make_browser(qtbot, str(path), tokenizer=tokenizer)
    qtbot.waitUntil(lambda: browser.oddities is not None, timeout=TIMEOUT_MS)
    assert browser.oddities.examined == 257
    assert max(read) == last and len(set(read)) == 257  # never an id that is not there
    assert browser.id_max.maximum() == min(last, 2**31 - 1)
    browser.close()
