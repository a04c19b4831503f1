"""A comparison as one self-contained HTML file: for a blog post or a bug report.

Qt-free, so `tokviz encode --html` and the compare window's export write the same page. The page
has its CSS inline and no scripts or external resources; each tokenizer gets a section with its
name, description and counts, then its tokens as spans in the panes' notation (`display_text`),
fragments read together with their neighbours (a character cut across tokens shown once, in the
token holding its first byte) and with their bytes in hex, special tokens as pills, and every token's description
(`token_tooltip`) as its `title`. Every piece of text goes through `html.escape`. Each span carries
`data-id` and `data-bytes`, so the page states exactly the tokens.
"""

from __future__ import annotations

import colorsys
import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.analysis.notation import joined_fragments, token_tooltip
from tokviz.analysis.palette import SHADE_MIX, id_slots, mix, position_slots
from tokviz.core.tokens import Token, TokenKind, display_text, hex_bytes

FORMAT_NAME = "tokviz-html"
FORMAT_VERSION = 1
_FALLBACK_TOKENS = ("#cfe3ff", "#ffe0a8", "#c8f0d2", "#ffc9dc", "#e2d4ff", "#b8ece9")
_FALLBACK_KINDS = {"special": "#b39ddb", "fragment": "#ff8a80", "byte_fallback": "#ffb74d", "unknown": "#cfd3d8"}
_HEX_KINDS = (TokenKind.FRAGMENT, TokenKind.BYTE_FALLBACK)
HEX_LIGHTER = 135  # the token view draws fragment boxes QColor.lighter(135) than their colour
_PILL_KINDS = (TokenKind.SPECIAL, TokenKind.UNKNOWN)
#: the legend: (css class, label) in the order the page shows them
LEGEND = (
    ("k-normal", "normal"), ("k-fragment", "fragment (part of a character)"),
    ("k-byte_fallback", "byte fallback"), ("k-special", "special"), ("k-unknown", "unknown"),
    ("past", "past the context limit"),
)

#: Looked at in Chromium (headless, light and dark, 400 to 1280 px wide): tokens are inline blocks
#: so lines break only between tokens, and a token wider than the page breaks inside itself
#: instead of running off it; the page declares a dark scheme of its own (the chips keep their
#: colours and dark text), so a browser's forced dark mode does not repaint the chips' text.
_CSS = """
:root { color-scheme: light dark; }
body { font: 15px/1.5 system-ui, sans-serif; color: #1f2937; background: #fff; margin: 1.5em; }
h1 { font-size: 1.2em; } h2 { font-size: 1.05em; margin: 1.2em 0 0.1em; }
.desc, .counts { color: #4b5563; font-size: 0.9em; margin: 0; }
.tokens { margin: 0.4em 0 1em; line-height: 2.1; }
.t { display: inline-block; line-height: 1.5; max-width: 100%; padding: 1px 3px; margin: 2px 2px 2px 0;
     border-radius: 2px; white-space: pre-wrap; overflow-wrap: anywhere; color: #1f2937; vertical-align: top; }
.t.k-fragment, .t.k-byte_fallback { border: 1px dashed #8b1a1a; }
.t.k-special, .t.k-unknown { border-radius: 0.8em; padding: 1px 6px; }
.t small { color: #8b1a1a; font-size: 0.75em; margin-left: 3px; }
.t.cont { border-left: 2px solid #8b1a1a; margin-left: -2px; }
.t.past { opacity: 0.35; }
.limit { border-left: 3px solid #dc2626; margin-right: 2px; }
.legend { font-size: 0.85em; color: #4b5563; }
.legend .t { line-height: 1.4; }
@media (prefers-color-scheme: dark) {
  body { color: #e5e7eb; background: #111827; }
  .desc, .counts, .legend { color: #9ca3af; }
}
""".strip()


@dataclass(frozen=True)
class HtmlPane:
    """One tokenizer's part of the page."""

    name: str
    description: str
    tokens: Sequence[Token]


def _palette() -> tuple[tuple[str, ...], dict[str, str]]:
    try:
        from tokviz.core.resources import palette

        data = palette()
        return tuple(data["tokens"]) or _FALLBACK_TOKENS, {**_FALLBACK_KINDS, **data.get("kinds", {})}
    except Exception:  # a broken palette resource must not stop an export
        return _FALLBACK_TOKENS, dict(_FALLBACK_KINDS)


def token_backgrounds(tokens: Sequence[Token], *, by_id: bool = False) -> list[str]:
    """The background of each token, as the panes choose it: neighbours never share a colour
    (kind colours alternate with a lighter shade).

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> t = Token(1, b"\\xe6", 0, 1, 0, 1, TokenKind.FRAGMENT, "æ")
    >>> a, b = token_backgrounds([t, t]); a != b
    True
    """
    colors, kinds = _palette()
    hexed = {k.value for k in _HEX_KINDS}
    ids = np.fromiter((t.id for t in tokens), dtype=np.int64, count=len(tokens))
    slots = (id_slots(ids, len(colors)) if by_id else position_slots(len(tokens), len(colors))).tolist()
    out = []
    for k, (token, slot) in enumerate(zip(tokens, slots)):
        kind = kinds.get(token.kind.value)
        if kind is None:
            out.append(colors[slot])
        else:
            shade = kind if k % 2 == 0 else mix(kind, *SHADE_MIX)
            # fragments are drawn lighter than their colour, as in the panes: the dark red second
            # shade under dark red hex bytes could not be read
            out.append(lighter(shade, HEX_LIGHTER) if token.kind.value in hexed else shade)
    return out


def lighter(color: str, factor: int) -> str:
    """`#rrggbb` made lighter as Qt's `QColor.lighter(factor)` does: the HSV value times
    factor/100, the excess taken from the saturation.

    >>> lighter("#ff8a80", 135), lighter("#000000", 150)
    ('#ffdcd9', '#000000')
    """
    r, g, b = (int(color[k:k + 2], 16) / 255 for k in (1, 3, 5))
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    s16, v16 = s * 65535, v * 65535 * factor / 100
    if v16 > 65535:
        s16, v16 = max(s16 - (v16 - 65535), 0.0), 65535.0
    rgb = colorsys.hsv_to_rgb(h, s16 / 65535, v16 / 65535)
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)


def _token_span(token: Token, index: int, background: str, text: str, past: bool,
                joined: tuple[str, bool] | None) -> str:
    classes = f"t k-{token.kind.value}" + (" past" if past else "") + (" cont" if joined and joined[1] else "")
    if token.kind in _PILL_KINDS:
        label = html.escape(token.piece or display_text(token.bytes))
    else:
        # a fragment shows the characters that begin in it, read with its neighbours
        label = html.escape(joined[0] if joined is not None else display_text(token.bytes))
        if token.kind in _HEX_KINDS:
            label += f"<small>{hex_bytes(token.bytes)}</small>"
    title = html.escape(token_tooltip(token, index, text=text), quote=True)
    span = (
        f'<span class="{classes}" style="background:{background}" data-id="{token.id}" '
        f'data-bytes="{token.bytes.hex()}" title="{title}">{label}</span>'
    )
    if token.kind not in _PILL_KINDS and b"\n" in token.bytes:
        span += "<br>" * token.bytes.count(b"\n")
    return span


def _pane_section(pane: HtmlPane, text: str, *, by_id: bool, limit: int | None) -> str:
    n = len(pane.tokens)
    chars = len(text)
    ratio = f" · {chars / n:.2f} chars/token" if n else ""
    parts = [
        f'<section class="pane"><h2>{html.escape(pane.name)}</h2>',
        f'<p class="desc">{html.escape(pane.description)}</p>',
        f'<p class="counts">{n:,} tokens · {chars:,} characters · {len(text.encode("utf-8", "replace")):,} '
        f"bytes{ratio}</p>",
        '<div class="tokens">',
    ]
    backgrounds = token_backgrounds(pane.tokens, by_id=by_id)
    joined = joined_fragments(pane.tokens)
    for index, (token, background) in enumerate(zip(pane.tokens, backgrounds)):
        if limit is not None and index == limit:
            parts.append('<span class="limit" title="context limit"></span>')
        past = limit is not None and index >= limit
        parts.append(_token_span(token, index, background, text, past, joined.get(index)))
    parts.append("</div></section>")
    return "".join(parts)


def legend_html() -> str:
    colors, kinds = _palette()
    hexed = {k.value for k in _HEX_KINDS}
    swatch = {"k-normal": colors[0],
              **{f"k-{k}": lighter(v, HEX_LIGHTER) if k in hexed else v for k, v in kinds.items()}}
    items = [
        f'<span class="t {cls}" style="background:{swatch.get(cls, "#ffffff")}">{html.escape(label)}</span>'
        for cls, label in LEGEND
    ]
    return '<p class="legend">' + " ".join(items) + "</p>"


def comparison_html(text: str, panes: Sequence[HtmlPane], *, title: str = "tokviz comparison",
                    by_id: bool = False, limit: int | None = None) -> str:
    """The whole page for `text` cut by each of `panes`.

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> pane = HtmlPane("toy", "a toy", [Token(7, b"a<b", 0, 3, 0, 3, TokenKind.NORMAL, "a<b")])
    >>> page = comparison_html("a<b", [pane])
    >>> 'data-id="7"' in page and "a&lt;b" in page and "<script" not in page
    True
    """
    head = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="color-scheme" content="light dark">'
        f'<meta name="generator" content="{FORMAT_NAME} {FORMAT_VERSION}">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
    )
    summary = " · ".join(f"{html.escape(p.name)}: {len(p.tokens):,}" for p in panes)
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="counts">{len(text):,} characters · {summary}</p>',
        legend_html(),
        *(_pane_section(p, text, by_id=by_id, limit=limit) for p in panes),
    ]
    return head + "\n".join(body) + "\n</body></html>\n"
