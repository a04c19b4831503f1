"""The Chat mode's conversation, remembered between runs: one JSON file beside the settings file
(as the window keeps its text in `<settings>-input.txt`), written atomically, read all or nothing.

The file holds the messages (with the keys besides role and content that came with them), the
tools, `add_generation_prompt`, the template variables as typed, and each pane's edited template
(keyed by the pane's vocabulary: the template it was edited from, and the edited text). It is written whole through
`write_atomic` (a temporary file, then a rename), so a crash leaves the old conversation or the
new one, never half of each. A file that does not parse or has the wrong shape is not used at all:
the Chat mode shows its example conversation and says why, and the file stays as it is until the
next save replaces it. Qt-free, so it is tested without a window.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokviz.core.files import write_atomic

FORMAT_NAME = "tokviz-chat"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class EditedTemplate:
    """A pane's template as edited in the template editor: the choice it was edited from (its
    label in the pane's picker, say "own: default") and the edited source."""

    based_on: str
    source: str


@dataclass(frozen=True)
class ChatState:
    """What the Chat mode remembers."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    generation_prompt: bool = False
    variables: str = ""
    templates: dict[str, EditedTemplate] = field(default_factory=dict)  # spec -> its pane's edit


def conversation_path(settings_file: str | Path) -> Path:
    """Where the conversation of a settings file is kept.

    >>> conversation_path("/home/u/.config/tokviz/tokviz.ini").name
    'tokviz-chat.json'
    """
    settings = Path(settings_file)
    return settings.with_name(settings.stem + "-chat.json")


def save_state(path: Path, state: ChatState) -> None:
    """Write `state` to `path` atomically, making the settings folder on a first run (Qt writes the
    settings file itself only later). Raises OSError."""
    data = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "messages": state.messages,
        "tools": state.tools,
        "add_generation_prompt": state.generation_prompt,
        "variables": state.variables,
        "templates": {spec: {"based_on": t.based_on, "source": t.source} for spec, t in state.templates.items()},
    }
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"), make_folders=True)


def load_state(path: Path) -> ChatState | None:
    """The remembered conversation (None when none was saved). Raises ValueError, saying why,
    for a file that cannot be read or is not a whole conversation: nothing of it is used."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"{path} could not be read ({e.strerror or e})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is not a whole conversation file ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(f"{path} is not a {FORMAT_NAME} file")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path} is version {data.get('version')!r}; this tokviz reads version {FORMAT_VERSION}")
    messages, tools = data.get("messages"), data.get("tools")
    if not _messages(messages):
        raise ValueError(f"{path}: 'messages' is not a list of messages with a role")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
        raise ValueError(f"{path}: 'tools' is not a list of tool definitions")
    generation, variables = data.get("add_generation_prompt", False), data.get("variables", "")
    if not isinstance(generation, bool) or not isinstance(variables, str):
        raise ValueError(f"{path}: 'add_generation_prompt' or 'variables' has the wrong type")
    templates = data.get("templates", {})  # absent in files written before templates were kept
    if not (isinstance(templates, dict) and all(
        isinstance(t, dict) and isinstance(t.get("based_on"), str) and isinstance(t.get("source"), str)
        for t in templates.values()
    )):
        raise ValueError(f"{path}: 'templates' is not a map of edited templates")
    edited = {spec: EditedTemplate(t["based_on"], t["source"]) for spec, t in templates.items()}
    return ChatState(list(messages), tools, generation, variables, edited)  # type: ignore[arg-type]


def _messages(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in value
    )
