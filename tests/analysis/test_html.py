"""The HTML comparison page: it parses, holds exactly each tokenizer's tokens, escapes everything,
and `tokviz encode --html` writes it atomically."""

from __future__ import annotations

import os
from html.parser import HTMLParser

from tokviz.analysis.html import HtmlPane, comparison_html, token_backgrounds
from tokviz.cli import main
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import TokenKind

TEXT = 'Korean 한국어 <script>alert("x")</script> & \u2764\ufe0f\U0001F468\u200d\U0001F469<|endoftext|>\r\n'


class Page(HTMLParser):
    """Collects each section's token spans (data-id, data-bytes, title, shown text) and every tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[list[dict]] = []
        self.tags: list[str] = []
        self.open_span: dict | None = None
        self.h2: list[str] = []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append([])
        elif tag == "h2":
            self._in_h2 = True
        elif tag == "span" and "data-id" in attrs:
            self.open_span = {**attrs, "shown": ""}
            self.sections[-1].append(self.open_span)

    def handle_endtag(self, tag):
        if tag == "span":
            self.open_span = None
        self._in_h2 = False if tag == "h2" else self._in_h2

    def handle_data(self, data):
        if self.open_span is not None:
            self.open_span["shown"] += data
        if self._in_h2:
            self.h2.append(data)


def _parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    parser.close()
    return parser


def test_page_holds_exactly_the_tokens_of_each_tokenizer(vocab) -> None:
    tokenizers = [vocab("cl100k_base"), vocab("o200k_base")]
    cuts = [t.encode_with(TEXT, SpecialPolicy.parse("all")) for t in tokenizers]
    page = comparison_html(TEXT, [HtmlPane(t.name, t.describe(), c) for t, c in zip(tokenizers, cuts)])
    parsed = _parse(page)
    assert parsed.h2 == ["cl100k_base", "o200k_base"]
    for spans, tokens in zip(parsed.sections, cuts):
        assert [int(s["data-id"]) for s in spans] == [t.id for t in tokens]
        assert b"".join(bytes.fromhex(s["data-bytes"]) for s in spans) == TEXT.encode()
    assert "script" not in parsed.tags  # the text's <script> is text, not a tag
    cl100k = parsed.sections[0]
    shown = "".join(s["shown"] for s in cl100k)
    assert "<script>alert(\"x\")</script>" in shown.replace("·", " ")
    special = next(s for s in cl100k if s["class"].startswith("t k-special"))
    assert special["shown"] == "<|endoftext|>"
    # 국 is cut in two: drawn once in the token with its first byte, each token keeps its hex
    first, second = [s for s in cl100k if "k-fragment" in s["class"]][:2]
    assert (first["shown"], second["shown"]) == ("국ea b5", "ad")
    assert "cont" in second["class"].split() and "cont" not in first["class"].split()
    assert "⟨VS16⟩" in shown and "⟨ZWJ⟩" in shown and "⟨CR⟩↵" in shown
    assert "U+FE0F VARIATION SELECTOR-16" in "".join(s["title"] for s in cl100k)


def test_neighbouring_tokens_never_share_a_background(vocab) -> None:
    tokens = vocab("cl100k_base").encode_with("한국어 텍스트 " * 20 + "the the the the", SpecialPolicy.parse("none"))
    assert sum(t.kind is TokenKind.FRAGMENT for t in tokens) > 10
    for by_id in (False, True):
        colors = token_backgrounds(tokens, by_id=by_id)
        assert all(a != b for a, b in zip(colors, colors[1:]))


def test_encode_html_writes_the_page(capsys, tmp_path, vocab) -> None:
    out = tmp_path / "cmp.html"
    assert main(["encode", "-t", "cl100k_base", "-t", "o200k_base", "--html", str(out), "hello world"]) == 0
    assert "wrote" in capsys.readouterr().err
    parsed = _parse(out.read_text(encoding="utf-8"))
    assert [[int(s["data-id"]) for s in spans] for spans in parsed.sections][0] == [15339, 1917]
    assert [p.name for p in tmp_path.iterdir()] == ["cmp.html"]  # no temporary left behind


def test_encode_html_into_a_missing_folder_is_one_line(capsys, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["encode", "--html", str(blocker / "cmp.html"), "hi"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and "Traceback" not in err
    assert os.listdir(tmp_path) == ["file"]
