"""How a chat pane marks each token's origin: the template's own tokens on grey, a message's
tokens in the usual palette underlined in that message's colour, and tokens holding text a naive
pipeline would turn into a control token underlined in red.

The colours of the messages are shared with the message editor, so message 2 has the same colour
in the list and under its tokens in every pane.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from tokviz.analysis.chat import TEMPLATE, ChatAnalysis
from tokviz.core.tokens import TokenKind
from tokviz.gui.compare.token_view import TokenStyle

MESSAGE_COLORS = ("#2563eb", "#16a34a", "#c026d3", "#ea580c", "#0891b2", "#a16207", "#7c3aed", "#db2777")
TEMPLATE_FILLS = (QColor("#e5e7eb"), QColor("#d1d5db"))  # alternating, so token edges stay visible
FINDING_COLOR = QColor("#dc2626")
ROLE_NAMES = ("system", "user", "assistant", "tool")


def message_color(index: int) -> QColor:
    return QColor(MESSAGE_COLORS[index % len(MESSAGE_COLORS)])


def token_styles(analysis: ChatAnalysis) -> list[TokenStyle | None]:
    """One style per token of `analysis.tokens`."""
    flagged = [(f.start, f.end) for f in analysis.findings if f.message is not None and f.start >= 0]
    styles: list[TokenStyle | None] = []
    for i, chat_token in enumerate(analysis.tokens):
        token = chat_token.token
        if any(start < token.end and token.start < end for start, end in flagged):
            styles.append(TokenStyle(underline=FINDING_COLOR))
        elif chat_token.origin == TEMPLATE:
            # the template's control tokens keep their pill colour; its plain text goes grey
            styles.append(None if token.kind is TokenKind.SPECIAL else TokenStyle(fill=TEMPLATE_FILLS[i % 2]))
        else:
            styles.append(TokenStyle(underline=message_color(chat_token.origin)))
    return styles
