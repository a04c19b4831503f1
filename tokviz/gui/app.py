"""Start the compare window: `build_app`, `build_window` (no event loop, for tests) and `run`.

    python -m tokviz.gui.app --sample mixed -t cl100k_base -t qwen -t mistral-7b-v0.1
"""

from __future__ import annotations

import argparse
import gc
import json
import linecache
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from tokviz.core.heap import limit_arenas
from tokviz.core.textfile import read_text_exact
from tokviz.gui.compare.window import MainWindow
from tokviz.gui.widgets.theme import apply_theme, icon

ORGANIZATION = "tokviz"
APPLICATION = "tokviz"
GIL_SWITCH_S = 0.0005  # how long a thread holds the GIL while another waits for it (see `build_app`)


class OptionError(Exception):
    """A bad command-line option of the app: one line, said before any window or thread exists."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise OptionError(message)


def _count(minimum: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
        return number
    return parse


def _size(value: str) -> tuple[int, int]:
    """`WxH` in pixels.

    >>> _size("1400x860")
    (1400, 860)
    """
    w, x, h = value.lower().partition("x")
    if not (x and w.isdigit() and h.isdigit() and int(w) > 0 and int(h) > 0):
        raise argparse.ArgumentTypeError(f"{value!r} is not WIDTHxHEIGHT in pixels, e.g. 1400x860")
    return int(w), int(h)


def _policy(value: str) -> str:
    value = value.strip()
    if not value or not any(t.strip() for t in value.split(",")):
        raise argparse.ArgumentTypeError(f"{value!r}: expected none, all, raise or tok1,tok2")
    return value


def _pane_policy(value: str) -> tuple[int, str]:
    """`N:POLICY`, N counted from 1.

    >>> _pane_policy("3:all")
    (3, 'all')
    """
    index, colon, policy = value.partition(":")
    if not (colon and index.strip().isdigit() and int(index) >= 1):
        raise argparse.ArgumentTypeError(f"{value!r}: expected N:POLICY with a pane number N from 1, e.g. 2:all")
    return int(index), _policy(policy)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The app's options, each checked here (a bad one raises OptionError, before any thread starts)."""
    p = _Parser(prog="tokviz gui", description="Compare tokenizers side by side.")
    p.add_argument("file", nargs="?", help="a text file to open")
    p.add_argument("--text", help="initial text")
    p.add_argument("--sample", help="a shipped sample: english, korean, chinese, japanese, emoji_chat, mixed, …")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC",
                   help="a catalog name or vocabulary file (repeat for more panes)")
    p.add_argument("--policy", default="none", type=_policy,
                   help="special-token policy for every pane: none, all, raise, or tok1,tok2")
    p.add_argument("--pane-policy", action="append", default=[], metavar="N:POLICY", type=_pane_policy,
                   help="special-token policy for pane N (1-based), e.g. 3:all")
    p.add_argument("--mode", choices=("text", "ids", "both"), help="token view")
    p.add_argument("--select-char", type=_count(0), metavar="N",
                   help="after loading, select the first pane's token covering character N")
    p.add_argument("--context-limit", type=_count(1), metavar="N",
                   help="mark where a context of N tokens ends in every pane")
    p.add_argument("--diff", action="store_true", help="open in diff mode (where the panes cut differently)")
    p.add_argument("--overlap", action="store_true",
                   help="open Tools > Vocabulary overlap on the panes' vocabularies at start")
    p.add_argument("--chat", metavar="MESSAGES.json", nargs="?", const="",
                   help='open in Chat mode, with the conversation in MESSAGES.json ([{"role": ..., "content": ...}] '
                        'or {"messages": [...]}); without a file, with the conversation of the last run '
                        '(the example conversation the first time)')
    p.add_argument("--dataset", metavar="PATH",
                   help="open the Dataset tab and count PATH (a dataset file or folder) in every pane's tokenizer")
    p.add_argument("--size", default=None, metavar="WxH", type=_size, help="window size, e.g. 1400x860")
    p.add_argument("--settings", type=Path, help="an INI file for the remembered state (default: the user's)")
    p.add_argument("--no-restore", action="store_true", help="ignore the remembered panes and text")
    return p.parse_args(list(argv) if argv is not None else None)


def build_app(argv: Sequence[str] | None = None) -> QApplication:
    """The QApplication (reused when one exists), with the tokviz names, icon and style.
    `argv` is like `sys.argv` (Qt reads its own options from it)."""
    # before the panes' threads: each would get a malloc arena of its own, and the replies they
    # receive would stay resident in it. Not a fixed mmap threshold, which would keep less but
    # make a pane's preparation slower (fresh pages for every large temporary)
    limit_arenas()
    # The GUI thread lets go of the GIL in every Qt call and every numpy pass over a long array,
    # and takes it back after each. While a pane's preparation runs Python on a worker thread,
    # each take waits until the worker is asked to let go: up to the switch interval. At the
    # default 5 ms, a layout slice of a few ms of work stretched to tens.
    sys.setswitchinterval(GIL_SWITCH_S)
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(list(argv or []) or ["tokviz"])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setWindowIcon(icon("tokviz"))
    apply_theme(app)  # the style sheet and a light palette to match, in dark system themes too
    freeze_startup()
    return app


def freeze_startup() -> None:
    """Put what the imports made (modules, classes, functions: tens of thousands of objects that
    live as long as the app) out of the cyclic collector's sight (`gc.freeze`). A full collection
    walked all of them each time, on whichever thread allocated last, often a pane's worker, while
    the GUI thread waited for the GIL (a stall `bench/bench_gui.py` shows). Frozen objects are
    still freed by reference counting; only a cycle among them would wait forever, so this runs
    before any window or pane exists (a removed pane is a cycle that must be collected).

    First it lets go of the source text of every module imported so far: PySide6 reads each
    module imported after it (`inspect.getsource`, to see whether it uses PySide6), which leaves
    its lines in `linecache`, a cache that only tracebacks read (and re-read on demand). `numpy.ma`
    is imported before that, as `np.unique` imports it on its first call (in a pane's
    preparation), which would put its source back."""
    import numpy.ma  # noqa: F401

    linecache.clearcache()
    gc.collect()
    gc.freeze()


def make_settings(path: Path | None = None) -> QSettings:
    if path is not None:
        return QSettings(str(path), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def build_window(
    *,
    text: str | None = None,
    specs: Sequence[str] | None = None,
    settings: QSettings | None = None,
    restore: bool = True,
    policy: str = "none",
    mode: str | None = None,
) -> MainWindow:
    """Build (not show) the compare window. Needs a QApplication (`build_app`)."""
    window = MainWindow(settings or make_settings(), specs=list(specs or []) or None, text=text, restore=restore,
                        chat_factory=chat_panel, dataset_factory=dataset_panel)
    if mode is not None:
        window.set_options(mode=mode)
    if policy != "none":
        for pane in window.panes:
            pane.set_policy(policy)
    return window


def window_from_args(args: argparse.Namespace) -> MainWindow:
    """Build the window the options ask for. Raises OptionError, OSError or ValueError (NotTextError,
    a bad --chat file); the window's threads are stopped again when an option turns out wrong
    after it was built."""
    text = args.text
    if args.file:
        text = read_text_exact(args.file)
    if args.tokenizers:
        _check_pane_numbers(args.pane_policy, len(args.tokenizers))
    window = build_window(
        text=text, specs=args.tokenizers, settings=make_settings(args.settings),
        restore=not args.no_restore, policy=args.policy, mode=args.mode,
    )
    try:
        _configure(window, args)
    except BaseException:  # a bad option or --chat file: no pane thread may outlive the window
        window.shutdown()
        raise
    return window


def _configure(window: MainWindow, args: argparse.Namespace) -> None:
    _check_pane_numbers(args.pane_policy, len(window.panes))
    for index, policy in args.pane_policy:
        window.panes[index - 1].set_policy(policy)
    if args.sample:
        window.load_sample(args.sample)
    if args.size:
        window.resize(*args.size)
    if args.select_char is not None:
        _select_when_ready(window, args.select_char)
    if args.context_limit:
        window.set_context_limit(args.context_limit)
    if args.diff:
        window.set_diff_mode(True)
    if args.overlap:
        QTimer.singleShot(0, window.tools.open_overlap)  # once the window is shown, as the menu would
    if args.chat is not None:
        open_chat(window, args.chat)
    if args.dataset is not None:
        if not os.path.exists(args.dataset):
            raise OptionError(f"argument --dataset: {args.dataset}: no such file or folder")
        window.set_mode("dataset")
        window.dataset_panel.open_path(args.dataset)


def chat_panel(**options: Any) -> QWidget:
    """The window's Chat mode, built when it is first opened. Imported only then: the chat
    modules and jinja2 (its templates) would be memory of every window, used or not."""
    from tokviz.gui.chat.panel import ChatPanel

    return ChatPanel(**options)


def dataset_panel(**options: Any) -> QWidget:
    """The window's Dataset tab, built when it is first opened (its modules imported only then)."""
    from tokviz.gui.dataset.panel import DatasetPanel

    return DatasetPanel(**options)


def open_chat(window: MainWindow, path: str) -> None:
    """Switch to Chat mode with the conversation in `path` ("": the example). A bad file is a ValueError."""
    conversation = read_messages(path) if path else None
    window.set_mode("chat")
    if conversation is not None and window.chat_panel is not None:
        messages, tools = conversation
        window.chat_panel.set_messages(messages, tools=tools)


def read_messages(path: str) -> tuple[list[dict], list[dict] | None]:
    """The messages and tools of a conversation file: `[...]` or `{"messages": [...], "tools": [...]}`."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"--chat {path}: not a JSON file: {e}") from None
    tools = None
    if isinstance(value, dict):
        tools = value.get("tools")
        value = value.get("messages")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
        raise ValueError(f"--chat {path}: \"tools\" must be a list of objects")
    from tokviz.analysis.chat import check_messages

    try:
        return check_messages(value), tools
    except ValueError as e:
        raise ValueError(f"--chat {path}: {e}") from None


def _check_pane_numbers(pane_policies: Sequence[tuple[int, str]], panes: int) -> None:
    for index, policy in pane_policies:
        if index > panes:
            raise OptionError(f"argument --pane-policy: {index}:{policy}: there {'is' if panes == 1 else 'are'} "
                              f"{panes} pane{'' if panes == 1 else 's'} (N counts from 1)")


def _select_when_ready(window: MainWindow, char: int) -> None:
    """Select the first pane's token at `char` once every pane is laid out (screenshots): checked each
    time a pane reports a result or finishes a layout, so nothing waits on a timer."""
    done = False

    def attempt() -> None:
        nonlocal done
        if done or not window.panes:
            return
        if all((p.result is not None and p.view.layout_done) or p.error for p in window.panes):
            done = True
            first = next((p for p in window.panes if p.result is not None), None)
            if first is not None and (index := first.view.token_for_char(char)) is not None:
                window.select_token(first, index)

    for pane in window.panes:
        pane.updated.connect(attempt)
        pane.view.laid_out.connect(attempt)
    attempt()


def display_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why no window can open here, said before Qt aborts the process with its own message."""
    if sys.platform != "linux" or environ.get("QT_QPA_PLATFORM"):
        return None
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set); run it "
        "in a desktop session, or use the command line: tokviz encode --help"
    )


def run(argv: Sequence[str] | None = None) -> int:
    """Entry point for `tokviz gui [options]`. `argv` is like `sys.argv`: the program name, then
    the options (`run(["tokviz", "--sample", "mixed", "-t", "qwen"])`)."""
    argv = list(sys.argv if argv is None else argv)
    try:
        args = parse_args(argv[1:])
    except OptionError as e:
        print(f"tokviz gui: {e} (tokviz gui --help lists the options)", file=sys.stderr)
        return 2
    if problem := display_problem():
        print(f"tokviz: {problem}", file=sys.stderr)
        return 1
    app = build_app(argv[:1])
    try:
        window = window_from_args(args)
    except OSError as e:
        print(f"tokviz gui: cannot open {e.filename or args.file}: {e.strerror or e}", file=sys.stderr)
        return 2
    except (OptionError, KeyError, ValueError) as e:
        print(f"tokviz gui: {e}", file=sys.stderr)
        return 2
    window.show()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(run(sys.argv))
