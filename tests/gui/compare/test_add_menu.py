"""The Add menu: model names people know, a search box, "On this machine" scanned on a Worker
over real model stores in tmp_path (the `machine` fixture); and the GGUF-vs-original note."""

from __future__ import annotations

from tests.gui.conftest import TIMEOUT_MS, wait_ready
from tokviz.core import catalog, model_names
from tokviz.gui.compare.add_menu import AddMenu


def make_menu(qtbot, added: list[str]) -> AddMenu:
    menu = AddMenu(added.append, lambda entry: entry.available, lambda: None)
    qtbot.addWidget(menu)
    return menu


def scanned(qtbot, menu: AddMenu):
    with qtbot.waitSignal(menu.scanned, timeout=TIMEOUT_MS) as blocker:
        menu.start_scan()
    return blocker.args[0]


def test_catalog_by_model_names_and_the_search_box(qtbot):
    menu = make_menu(qtbot, [])
    texts = menu.visible_items()
    assert "GPT-4o, GPT-4.1, o1, o3, o4-mini — o200k_base" in texts
    assert any(t.startswith("Llama 3, Llama 3.1") and t.endswith("— llama3") for t in texts)
    menu.search.setText("gpt4o")
    assert menu.visible_items() == ["GPT-4o, GPT-4.1, o1, o3, o4-mini — o200k_base"]
    menu.search.setText("qwen 2.5")
    assert menu.visible_items() == ["Qwen2, Qwen2.5, Qwen3 — ggml-vocab-qwen2"]
    menu.search.setText("deepseek")
    assert {t.rsplit("— ", 1)[1] for t in menu.visible_items()} == {
        "deepseek-v3", "ggml-vocab-deepseek-llm", "ggml-vocab-deepseek-coder"}
    menu.search.clear()  # the known models' vocabularies; llama.cpp's test ones under "More"
    shown = {t.rsplit("— ", 1)[1] for t in menu.visible_items()}
    assert shown == {"cl100k_base", "o200k_base", "p50k_base", "r50k_base", "qwen", "llama3", "mistral-7b-v0.1",
                     "mistral-instruct-v3", "deepseek-v3"}
    in_more = {a.text() for a in menu.more.actions()}
    more = {e.name for e in catalog.entries() if model_names.label(e.name, e.title) in in_more}
    assert more | shown == {e.name for e in catalog.entries()} and not more & shown
    assert menu.more.menuAction().isVisible()
    menu.search.setText("falcon")
    assert menu.visible_items() == ["Falcon — ggml-vocab-falcon"] and not menu.more.menuAction().isVisible()


def test_on_this_machine_lists_the_stores_and_adds_a_pane(qtbot, machine):
    added: list[str] = []
    menu = make_menu(qtbot, added)
    scan = scanned(qtbot, menu)
    assert len(scan.found) == 8
    local = [t for t in menu.visible_items() if "Ollama" in t or "Hugging Face" in t or "LM Studio" in t]
    assert "ollama qwen2:7b — Ollama · 151,936 ids" in local
    assert "deepseek-ai/DeepSeek-V3 — Hugging Face cache · 129,280 ids" in local
    menu.search.setText("ollama")
    shown = menu.visible_items()
    assert shown == ["ollama qwen2:7b — Ollama · 151,936 ids", "ollama someone/llama3.2:3b — Ollama · 128,256 ids"]
    action = next(a for a in menu.actions() if a.text() == shown[0])
    action.trigger()
    assert added == ["ollama:qwen2:7b"]


def test_an_added_folder_is_scanned(qtbot, machine):
    menu = make_menu(qtbot, [])
    scanned(qtbot, menu)
    folder = machine / "mine"
    folder.mkdir()
    (folder / "gpt2.gguf").write_bytes((machine / "spare" / "gpt2.gguf").read_bytes())
    with qtbot.waitSignal(menu.scanned, timeout=TIMEOUT_MS) as blocker:
        menu.add_folder(str(folder))
    assert str(folder / "gpt2.gguf") in {f.spec for f in blocker.args[0].found}
    assert any(t.startswith("gpt-2 — your folders") for t in menu.visible_items())


def test_the_window_has_the_add_menu(make_window):
    window = make_window(["cl100k_base"], "hi")
    menus = window.menuBar().findChildren(AddMenu)
    assert len(menus) == 1


def test_a_gguf_pane_beside_its_original_says_where_they_differ(qtbot, make_window, vocab):
    text = "Hello world! 'tis 3.14159 — ünïcödé\n\n   spaces   and\ttabs 12345678"
    window = make_window(["ggml-vocab-qwen2", "qwen", "cl100k_base"], text)
    wait_ready(qtbot, window)
    message = window.statusBar().currentMessage()
    gguf, qwen = vocab("ggml-vocab-qwen2"), vocab("qwen")
    same = gguf.encode_ids(text) == qwen.encode_ids(text)
    expected = "cuts exactly as qwen" if same else "differs from qwen in"
    assert f"{gguf.name} {expected}" in message
    assert "cl100k_base" not in message.split(" · ")[-1]  # another vocabulary is not its original
    subtitle = window.panes[0].subtitle.text()
    assert "GGUF gpt2" in subtitle and "pre-tokenizer qwen2" in subtitle
    # the note is also on the GGUF pane itself, where a full status bar cannot cut it off
    tip = window.panes[0].subtitle.toolTip()
    assert tip.startswith(f"{gguf.name} {expected}") and tip in message
    assert window.panes[1].subtitle.toolTip() == window.panes[2].subtitle.toolTip() == ""


def test_the_note_counts_the_gguf_tokens_where_the_cuts_differ(qtbot, make_window, vocab):
    from tokviz.analysis.diff import diff_texts

    text = "The quick brown fox — 12345 ünïcödé   spaces\n\tdef f(x): return x**2  # ok"
    window = make_window(["ggml-vocab-llama-spm", "mistral-7b-v0.1"], text)
    gguf, mistral = vocab("ggml-vocab-llama-spm"), vocab("mistral-7b-v0.1")
    diff = diff_texts(text, [gguf, mistral])
    n = sum(len(s.left) for s in diff.stretches())
    assert n > 0  # Llama 2's and Mistral's vocabularies cut this text differently
    assert f"ggml-vocab-llama-spm differs from mistral-7b-v0.1 in {n:,} tokens" in window.statusBar().currentMessage()
