"""`tokviz chat`: a conversation as each model sees it.

    tokviz chat -t SPEC [-t SPEC ...] [--template FILE|NAME] [--generation-prompt]
                [--set KEY=VALUE ...] [--context N] [--json] MESSAGES.json

MESSAGES.json is a list of `{"role": ..., "content": ...}` (the OpenAI / transformers shape), or an
object with "messages" and optionally "tools". Each tokenizer renders the chat with its own
template (or the one `--template` names) and prints the prompt, its tokens with their origin, the
counts per message and the injection findings. The work is `tokviz.analysis.chat`'s; this module
parses options and prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from tokviz.analysis.chat import TEMPLATE, ChatAnalysis, analyze_chat, check_messages, template_variables
from tokviz.analysis.chat_sources import choose_template
from tokviz.analysis.chat_template import ChatTemplateError
from tokviz.cli.errors import CliError, decode_input
from tokviz.core.tokens import TokenKind, display_text

_TEMPLATE_STYLE = "\x1b[48;5;252;38;5;240m"
_SPECIAL_STYLE = "\x1b[48;5;97;38;5;231;1m"
_MESSAGE_STYLES = ("\x1b[48;5;153;38;5;16m", "\x1b[48;5;194;38;5;16m", "\x1b[48;5;224;38;5;16m",
                   "\x1b[48;5;230;38;5;16m", "\x1b[48;5;189;38;5;16m")
_RESET = "\x1b[0m"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("chat", help="a conversation through each model's chat template: tokens by origin, "
                                           "counts per message, injected control tokens")
    p.add_argument("messages", metavar="MESSAGES.json",
                   help='[{"role": ..., "content": ...}, ...] or {"messages": [...], "tools": [...]}; - for stdin')
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC",
                   help="catalog name or vocabulary file (.gguf, tokenizer.json, ...); repeatable (default qwen)")
    p.add_argument("--template", metavar="FILE|NAME",
                   help="a .jinja file, a tokenizer_config.json or .gguf, one of the spec's named templates, "
                        "or a built-in (chatml, llama3, mistral); default: the spec's own")
    p.add_argument("--generation-prompt", action="store_true", help="end with the assistant's turn opened")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="variables",
                   help="a template variable, VALUE as JSON where it parses (enable_thinking=false); repeatable")
    p.add_argument("--context", type=int, metavar="N", help="context limit in tokens: how much room is left")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.set_defaults(run=run)
    return p


def read_conversation(where: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    data = sys.stdin.buffer.read() if where == "-" else Path(where).read_bytes()
    try:
        value = json.loads(decode_input(data, where))
    except json.JSONDecodeError as e:
        raise CliError(f"{where}: not JSON: {e}") from None
    tools = None
    if isinstance(value, dict):
        tools = value.get("tools")
        value = value.get("messages")
    try:
        return check_messages(value), tools
    except ValueError as e:
        raise CliError(f"{where}: {e}") from None


def parse_variables(items: list[str]) -> dict[str, Any]:
    try:
        return template_variables(items)
    except ValueError as e:
        raise CliError(f"--set {e}") from None


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    messages, tools = read_conversation(args.messages)
    variables = parse_variables(args.variables)
    if args.context is not None and args.context < 1:
        raise CliError(f"--context {args.context}: the context limit must be at least 1 token")
    analyses = []
    for spec in args.tokenizers or ["qwen"]:
        tokenizer = catalog.load(spec)
        try:
            template = choose_template(spec, args.template)
            analyses.append(analyze_chat(
                tokenizer, template, messages, add_generation_prompt=args.generation_prompt, tools=tools,
                template_kwargs=variables, context_limit=args.context,
            ))
        except ChatTemplateError as e:
            raise CliError(f"{spec}: {e}") from None
    out = sys.stdout
    if args.json:
        json.dump([a.to_json() for a in analyses], out, ensure_ascii=False)
        out.write("\n")
        return 0
    color = args.color == "always" or args.color == "auto" and out.isatty() and "NO_COLOR" not in os.environ
    for analysis in analyses:
        print_chat(out, analysis, messages, color=color)
    return 0


def print_chat(out: TextIO, analysis: ChatAnalysis, messages: list[dict[str, Any]], *, color: bool) -> None:
    template = analysis.template
    room = ""
    if analysis.room is not None:
        room = f"; room {analysis.room:,} of {analysis.context_limit:,}" if analysis.room >= 0 else \
            f"; {-analysis.room:,} over the limit of {analysis.context_limit:,}"
    out.write(f"── {analysis.tokenizer_name} · template {template.name} ({template.origin}): {analysis.total} tokens "
              f"= {analysis.overhead} template + {analysis.total - analysis.overhead} in {analysis.message_count} "
              f"messages{room}\n")
    for i, count in enumerate(analysis.per_message()):
        out.write(f"  message {i:<3} {messages[i]['role']:<10} {count:>7} tokens\n")
    out.write(f"  {'template':<22} {analysis.overhead:>7} tokens\n")
    out.write("prompt:\n")
    out.write(analysis.text if analysis.text.endswith("\n") else analysis.text + "\n")
    out.write("tokens (template tokens in {}, message N's in ‹N …›, * merged across the boundary):\n")
    out.write(_token_line(analysis, color=color) + "\n")
    naive = "the same tokens" if not analysis.naive_differs else "different tokens"
    out.write(f"naive pipeline (every special token parsed): {len(analysis.naive)} tokens, {naive}\n")
    if analysis.findings:
        out.write("findings:\n")
        for finding in analysis.findings:
            out.write(f"  ! {finding.describe(analysis.tokenizer_name)}\n")


def _token_line(analysis: ChatAnalysis, *, color: bool) -> str:
    parts = []
    current = None
    for chat_token in analysis.tokens:
        token = chat_token.token
        shown = token.piece if token.kind is TokenKind.SPECIAL else display_text(token.bytes)
        if color:
            if token.kind is TokenKind.SPECIAL:
                style = _SPECIAL_STYLE
            elif chat_token.origin == TEMPLATE:
                style = _TEMPLATE_STYLE
            else:
                style = _MESSAGE_STYLES[chat_token.origin % len(_MESSAGE_STYLES)]
            parts.append(f"{style}{shown}{_RESET}")
            continue
        if chat_token.origin != current:
            if current is not None and current != TEMPLATE:
                parts.append("›")
            if chat_token.origin != TEMPLATE:
                parts.append(f"‹{chat_token.origin} ")
            current = chat_token.origin
        parts.append(f"{{{shown}}}" if chat_token.origin == TEMPLATE else f"[{shown}]")
        if chat_token.shared:
            parts.append("*")
    if current is not None and current != TEMPLATE and not color:
        parts.append("›")
    return "".join(parts)
