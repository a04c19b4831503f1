"""A pane whose tokenizer process dies starts a new one and shows the next text (issue 18:
it used to show BrokenPipeError for every later edit)."""

from __future__ import annotations

import os
import signal

from tests.gui.conftest import wait_ready
from tokviz.gui.compare.service import tokenizer_service


def tokenizer_processes() -> list:
    """The panes' shared tokenizer process (one, whatever the panes)."""
    process = tokenizer_service().client.process
    return [process] if process is not None else []


def test_a_killed_tokenizer_process_is_started_again(qtbot, make_window, vocab) -> None:
    window = make_window(["cl100k_base"], "hello world")
    wait_ready(qtbot, window)
    [first] = tokenizer_processes()
    os.kill(first.pid, signal.SIGKILL)
    first.join(10)
    assert not first.is_alive()
    window.set_text("the pane recovers")
    wait_ready(qtbot, window)
    [pane] = window.panes
    assert pane.error is None
    assert [t.id for t in pane.result.tokens] == vocab("cl100k_base").encode_ids("the pane recovers")
    [second] = tokenizer_processes()
    assert second.pid != first.pid and second.is_alive()
    window.set_text("and keeps working")  # the new process answers the next edit too
    wait_ready(qtbot, window)
    assert [t.id for t in pane.result.tokens] == vocab("cl100k_base").encode_ids("and keeps working")


def test_every_pane_recovers_when_the_shared_process_is_killed(qtbot, make_window, vocab) -> None:
    window = make_window(["cl100k_base", "o200k_base", "cl100k_base"], "hello world")
    wait_ready(qtbot, window)
    [first] = tokenizer_processes()  # three panes, one process
    os.kill(first.pid, signal.SIGKILL)
    first.join(10)
    window.set_text("all three recover")
    wait_ready(qtbot, window)
    for pane in window.panes:
        assert pane.error is None
        assert [t.id for t in pane.result.tokens] == vocab(pane.spec).encode_ids("all three recover")
    [second] = tokenizer_processes()
    assert second.pid != first.pid
