"""Start the compare window: `build_app`, `build_window` (no event loop, for tests) and `run`.

    python -m tokviz.gui.app --sample mixed -t cl100k_base -t qwen -t mistral-7b-v0.1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

from tokviz.analysis.chat import check_messages
from tokviz.gui.chat.panel import ChatPanel
from tokviz.gui.compare.window import MainWindow
from tokviz.gui.widgets.theme import apply_theme, icon

ORGANIZATION = "tokviz"
APPLICATION = "tokviz"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="tokviz gui", description="Compare tokenizers side by side.")
    p.add_argument("file", nargs="?", help="a text file to open")
    p.add_argument("--text", help="initial text")
    p.add_argument("--sample", help="a shipped sample: english, korean, chinese, japanese, emoji_chat, mixed, …")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC",
                   help="a catalog name or vocabulary file (repeat for more panes)")
    p.add_argument("--policy", default="none", help="special-token policy for every pane: none, all, raise, or tok1,tok2")
    p.add_argument("--pane-policy", action="append", default=[], metavar="N:POLICY",
                   help="special-token policy for pane N (1-based), e.g. 3:all")
    p.add_argument("--mode", choices=("text", "ids", "both"), help="token view")
    p.add_argument("--select-char", type=int, metavar="N",
                   help="after loading, select the first pane's token covering character N")
    p.add_argument("--context-limit", type=int, metavar="N",
                   help="mark where a context of N tokens ends in every pane")
    p.add_argument("--diff", action="store_true", help="open in diff mode (where the panes cut differently)")
    p.add_argument("--chat", metavar="MESSAGES.json", nargs="?", const="",
                   help='open in Chat mode, with the conversation in MESSAGES.json ([{"role": ..., "content": ...}] '
                        'or {"messages": [...]}); without a file, with the example conversation')
    p.add_argument("--size", default=None, metavar="WxH", help="window size, e.g. 1400x860")
    p.add_argument("--settings", type=Path, help="an INI file for the remembered state (default: the user's)")
    p.add_argument("--no-restore", action="store_true", help="ignore the remembered panes and text")
    return p.parse_args(list(argv) if argv is not None else None)


def build_app(argv: Sequence[str] | None = None) -> QApplication:
    """The QApplication (reused when one exists), with the tokviz names, icon and style.
    `argv` is like `sys.argv` (Qt reads its own options from it)."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv or []) or ["tokviz"])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setWindowIcon(icon("tokviz"))
    apply_theme(app)  # the style sheet and a light palette to match, in dark system themes too
    return app  # type: ignore[return-value]


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
                        chat_factory=ChatPanel)
    if mode is not None:
        window.set_options(mode=mode)
    if policy != "none":
        for pane in window.panes:
            pane.set_policy(policy)
    return window


def window_from_args(args: argparse.Namespace) -> MainWindow:
    text = args.text
    if args.file:
        text = Path(args.file).read_text("utf-8", errors="replace")
    window = build_window(
        text=text, specs=args.tokenizers, settings=make_settings(args.settings),
        restore=not args.no_restore, policy=args.policy, mode=args.mode,
    )
    for item in args.pane_policy:
        index, _, policy = item.partition(":")
        if not index.isdigit() or not 1 <= int(index) <= len(window.panes) or not policy:
            raise KeyError(f"--pane-policy {item!r}: expected N:POLICY with N from 1 to {len(window.panes)}")
        window.panes[int(index) - 1].set_policy(policy)
    if args.sample:
        window.load_sample(args.sample)
    if args.size:
        w, _, h = args.size.partition("x")
        window.resize(int(w), int(h))
    if args.select_char is not None:
        _select_when_ready(window, args.select_char)
    if args.context_limit:
        window.set_context_limit(args.context_limit)
    if args.diff:
        window.set_diff_mode(True)
    if args.chat is not None:
        open_chat(window, args.chat)
    return window


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
    try:
        return check_messages(value), tools
    except ValueError as e:
        raise ValueError(f"--chat {path}: {e}") from None


def _select_when_ready(window: MainWindow, char: int) -> None:
    """Select the first pane's token at `char` once every pane is laid out (screenshots)."""

    def attempt() -> None:
        if window.panes and all((p.result is not None and p.view.layout_done) or p.error for p in window.panes):
            first = next((p for p in window.panes if p.result is not None), None)
            if first is not None and (index := first.view.token_for_char(char)) is not None:
                window.select_token(first, index)
            return
        QTimer.singleShot(100, attempt)

    QTimer.singleShot(100, attempt)


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
    args = parse_args(argv[1:])
    if problem := display_problem():
        print(f"tokviz: {problem}", file=sys.stderr)
        return 1
    app = build_app(argv[:1])
    try:
        window = window_from_args(args)
    except (OSError, KeyError, ValueError) as e:
        print(f"tokviz gui: {e}", file=sys.stderr)
        return 2
    window.show()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(run(sys.argv))
