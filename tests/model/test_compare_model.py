"""The compare window's model, without Qt: its state, its intents and the events they emit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tokviz.core.tokenizer import SpecialPolicy
from tokviz.model.compare import CompareModel, PaneModel, ViewOptions
from tokviz.model.events import Event


def test_the_model_loads_no_qt() -> None:
    code = ("import sys, tokviz.model.compare, tokviz.model.events\n"
            "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'superqt'))]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_event_calls_each_callback_once_in_order_and_disconnects() -> None:
    event: Event[int] = Event()
    seen: list[tuple[str, int]] = []

    def first(value: int) -> None:
        seen.append(("first", value))
        stop_second()  # disconnecting during an emission: this emission still reaches it

    stop_first = event.connect(first)
    stop_second = event.connect(lambda value: seen.append(("second", value)))
    event.emit(1)
    event.emit(2)
    stop_first()
    event.emit(3)
    assert seen == [("first", 1), ("second", 1), ("first", 2)]


def test_panes_are_added_moved_and_removed_with_one_event_each() -> None:
    model = CompareModel()
    changes: list[tuple[str, str, int, list[str]]] = []
    model.events.panes.connect(lambda c: changes.append((c.kind, c.pane.spec, c.index, model.specs())))
    a = model.add_pane("a")
    b = model.add_pane("b", policy="all", model_adds=True)
    c = model.add_pane("c")
    assert model.move_pane(a, 5) and not model.move_pane(a, 1) and not model.move_pane(b, -1)
    assert model.remove_pane(b) and not model.remove_pane(b)
    assert changes == [
        ("added", "a", 0, ["a"]), ("added", "b", 1, ["a", "b"]), ("added", "c", 2, ["a", "b", "c"]),
        ("moved", "a", 2, ["b", "c", "a"]), ("removed", "b", 0, ["c", "a"]),
    ]
    assert model.panes == (c, a) and b.policy.label == "all" and b.model_adds


def test_text_options_and_context_limit_are_announced_after_they_change() -> None:
    model = CompareModel()
    seen: list[object] = []
    model.events.text.connect(lambda text: seen.append(("text", text, model.text)))
    model.events.options.connect(lambda options: seen.append(("options", options is model.options)))
    model.events.context_limit.connect(lambda limit: seen.append(("limit", limit, model.context_limit)))
    model.set_text("héllo")
    model.set_text("héllo")  # asked again (a large paste): the panes decide whether to cut again
    model.change_options(mode="ids")
    model.change_options(mode="ids")  # no change, no event
    model.set_context_limit(0)
    model.set_context_limit(50)
    assert seen == [("text", "héllo", "héllo"), ("text", "héllo", "héllo"), ("options", True),
                    ("limit", None, None), ("limit", 50, 50)]
    assert model.options == ViewOptions(mode="ids")
    with pytest.raises(ValueError, match="number of tokens"):
        model.set_context_limit(-1)
    with pytest.raises(TypeError):
        model.change_options(colour=True)


def test_a_pane_announces_a_policy_only_when_it_changes() -> None:
    pane = PaneModel("cl100k_base")
    seen: list[str] = []
    pane.events.policy.connect(lambda p: seen.append(p.policy_text))
    pane.events.model_adds.connect(lambda p: seen.append(f"adds={p.model_adds}"))
    assert pane.set_policy("<|endoftext|>, <|fim_prefix|>")
    assert not pane.set_policy(" <|endoftext|>, <|fim_prefix|> ")
    assert pane.set_policy("  ")  # empty: the default, none
    pane.set_model_adds(True)
    pane.set_model_adds(True)
    assert seen == ["<|endoftext|>, <|fim_prefix|>", "none", "adds=True"]
    assert pane.policy == SpecialPolicy.parse("none")


def test_a_received_encoding_serves_only_its_own_request(vocab) -> None:
    tokenizer = vocab("cl100k_base")
    pane = PaneModel("cl100k_base")
    received: list[PaneModel] = []
    pane.events.received.connect(received.append)
    text = "a <|endoftext|> b"
    none, allowed = SpecialPolicy.parse("none"), SpecialPolicy.parse("all")
    assert pane.encoding_for(text, none, False) is None
    encoding = tokenizer.encode_columns(text)
    pane.receive(text, none, False, encoding)
    assert received == [pane] and pane.received is not None and pane.received.encoding is encoding
    assert pane.encoding_for("".join(["a <|endoftext|>", " b"]), none, False) is encoding  # equal, not the same str
    assert pane.encoding_for(text, allowed, False) is None
    assert pane.encoding_for(text, none, True) is None
    assert pane.encoding_for(text + " ", none, False) is None


def test_only_the_raise_policy_refuses_special_token_text() -> None:
    text = "x <|fim_prefix|><|endoftext|> <|endoftext|>"
    specials = ["<|endoftext|>", "<|fim_prefix|>", "<|fim"]
    pane = PaneModel("cl100k_base", policy="raise")
    assert pane.refused_special(specials) is None  # no text yet
    pane.set_text(text)
    assert pane.refused_special(specials) == ("<|fim_prefix|>", 2)  # the first, the longest there
    pane.set_text("no special text")
    assert pane.refused_special(specials) is None
    pane.set_text(text)
    for policy in ("none", "all", "<|endoftext|>"):
        pane.set_policy(policy)
        assert pane.refused_special(specials) is None


def test_a_pane_keeps_its_own_text_and_tells_a_new_one_from_the_same() -> None:
    pane = PaneModel("cl100k_base")
    assert pane.text is None
    text = "a long text " * 100
    assert pane.set_text(text) and pane.text is text
    same = "".join(["a long text "] * 100)  # equal, another object: the pane keeps the first
    assert not pane.set_text(same) and pane.text is text
    assert pane.set_text("other") and pane.text == "other"
    assert pane.set_text("") and pane.text == ""  # an empty text is a text


def test_a_trained_pane_takes_the_place_of_the_previous_runs_pane() -> None:
    model = CompareModel()
    changes: list[tuple[str, str, int]] = []
    model.events.panes.connect(lambda c: changes.append((c.kind, c.pane.spec, c.index)))
    model.add_pane("a")
    first = model.add_trained_pane("run1")
    model.add_pane("b")
    second = model.add_trained_pane("run2")
    assert model.specs() == ["a", "run2", "b"] and first not in model.panes
    assert changes[-3:] == [("added", "run2", 3), ("moved", "run2", 1), ("removed", "run1", 2)]
    model.remove_pane(second)  # the last run's pane is gone: the next one comes after the others
    model.add_trained_pane("run3")
    assert model.specs() == ["a", "b", "run3"]


def test_the_context_summary_reads_the_encodings_the_panes_show(vocab) -> None:
    text = "hello world, hello tokens"
    model = CompareModel(text)
    shown, failed, waiting = model.add_pane("cl100k_base"), model.add_pane("o200k_base"), model.add_pane("qwen")
    assert model.context_summary() == "no context limit"
    none = SpecialPolicy.parse("none")
    encoding = vocab("cl100k_base").encode_columns(text)
    shown.receive(text, none, False, encoding)
    failed.receive(text, none, False, vocab("o200k_base").encode_columns(text))
    failed.fail()  # a later request failed: it shows nothing, its last encoding is still at hand
    assert failed.shown is None and failed.received is not None and waiting.shown is None
    model.set_context_limit(3)
    end = int(encoding.starts[3])
    assert model.context_summary() == (
        f"limit 3 tokens — cl100k_base: ends at char {end} ({end / len(text):.0%} fits)")
    model.set_context_limit(len(encoding))
    assert model.context_summary() == f"limit {len(encoding)} tokens — cl100k_base: all {len(encoding)} tokens fit"
