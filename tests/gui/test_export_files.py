"""Exporting the comparison from the window: the HTML page (as `tokviz encode --html`), and the
panes as drawn in PNG and SVG; atomic saves, one-line errors."""

from __future__ import annotations

from html.parser import HTMLParser

from PySide6.QtGui import QImage

TEXT = "hello world 한국어 <b>&</b>"


class Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[list[int]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append([])
        elif tag == "span" and "data-id" in attrs:
            self.sections[-1].append(int(attrs["data-id"]))


def test_export_html_png_svg(make_window, tmp_path) -> None:
    window = make_window(["cl100k_base", "o200k_base"], TEXT)
    assert window.export_to(str(tmp_path / "cmp.html"))
    parser = Ids()
    parser.feed((tmp_path / "cmp.html").read_text(encoding="utf-8"))
    assert parser.sections == [[t.id for t in p.result.tokens] for p in window.panes]

    assert window.export_to(str(tmp_path / "cmp.png"))
    image = QImage(str(tmp_path / "cmp.png"))
    assert not image.isNull()
    assert image.width() >= window.pane_splitter.width()  # the panes as drawn (device pixels)

    assert window.export_to(str(tmp_path / "cmp.svg"))
    svg = (tmp_path / "cmp.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "cl100k_base" in svg
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".ini")) == [
        "cmp.html", "cmp.png", "cmp.svg"]  # no temporary files left


def test_export_errors_are_one_line(make_window, tmp_path) -> None:
    window = make_window(["cl100k_base"], TEXT)
    assert not window.export_to(str(tmp_path / "cmp.txt"))
    assert "choose a .html, .png or .svg" in window.statusBar().currentMessage()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert not window.export_to(str(blocker / "cmp.html"))
    assert window.statusBar().currentMessage().startswith("cannot write")
