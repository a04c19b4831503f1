"""Exporting the comparison from the window: the HTML page (as `tokviz encode --html`), and the
panes as drawn in PNG and SVG; atomic saves, one-line errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from tokviz.gui.compare.renderer import xml_text

TEXT = "hello world 한국어 <b>&</b>"
SVG = "{http://www.w3.org/2000/svg}"



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
    assert "<image" not in svg  # text, not pictures of text
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


def _texts(element: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text") if t.get("class") == cls]


def test_svg_is_text_equal_to_the_panes(make_window, tmp_path) -> None:
    """The SVG holds each pane's name, counts and every token's label, hex bytes and id as text,
    exactly as the panes show them; it parses as XML and Qt's own SVG renderer draws it."""
    text = "Korean 한국어 cuts: 국 <|endoftext|> ok\x1b\n\u200d tail"
    window = make_window(["cl100k_base", "mistral-7b-v0.1"], text, policy="all", mode="both")
    for pane in window.panes:
        assert pane.view.layout_done
    assert window.export_to(str(tmp_path / "cmp.svg"))
    data = (tmp_path / "cmp.svg").read_bytes()
    root = ET.fromstring(data)
    columns = [g for g in root.iter(f"{SVG}g") if g.get("class") == "pane"]
    assert len(columns) == 2
    for pane, column in zip(window.panes, columns):
        cells = pane.result.cells
        assert _texts(column, "name") == [pane.tokenizer.name]
        assert _texts(column, "desc") == [pane.tokenizer.describe()]
        counts = " · ".join(_texts(column, "counts"))  # rows broken at " · " to fit the column
        assert counts == pane.stats_label.text().replace("\n", " · ")
        assert _texts(column, "label") == [c.label for c in cells]  # the panes' display, token by token
        assert _texts(column, "hex") == [c.hex for c in cells if c.hex]
        assert _texts(column, "sub") == [str(t.id) for t in pane.result.tokens]  # "both": the id row
        tokens = [g for g in column.iter(f"{SVG}g") if (g.get("class") or "").split(" ")[0] == "token"]
        assert [int(g.get("data-id")) for g in tokens] == [t.id for t in pane.result.tokens]
        fills = [g.find(f"{SVG}rect").get("fill") for g in tokens]
        drawn = [pane.view.background(i) for i in range(len(cells))]  # fragments' boxes are lighter
        assert fills == [(c.lighter(135) if cell.hex else c).name() for c, cell in zip(drawn, cells)]
    kinds = {g.get("class") for g in root.iter(f"{SVG}g")}
    assert {"token k-special", "token k-fragment", "token k-normal"} <= kinds

    renderer = QSvgRenderer(QByteArray(data))
    assert renderer.isValid()
    size = renderer.defaultSize()
    assert size.width() > 200 and size.height() > 50
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    colors = {image.pixelColor(x, y).name() for x in range(0, size.width(), 3) for y in range(0, size.height(), 3)}
    first_fill = window.panes[0].view.background(0).name()
    assert first_fill in colors  # the first token's background was drawn
    assert QColor("#ffffff").name() in colors


def test_svg_escapes_what_xml_cannot_hold() -> None:
    assert xml_text("<&>\x00\x1b\ud800") == "&lt;&amp;&gt;\ufffd\ufffd\ufffd"


def test_html_fragments_are_as_light_as_the_panes_draw_them() -> None:
    """The page's fragment boxes use the panes' QColor.lighter(135), computed without Qt."""
    from tokviz.analysis.html import HEX_LIGHTER, lighter
    from tokviz.analysis.palette import SHADE_MIX, mix
    from tokviz.core.resources import palette

    colors = [*palette()["tokens"], *palette()["kinds"].values()]
    colors += [mix(c, *SHADE_MIX) for c in colors]
    assert [lighter(c, HEX_LIGHTER) for c in colors] == [QColor(c).lighter(HEX_LIGHTER).name() for c in colors]
