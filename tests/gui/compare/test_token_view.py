"""What the token view draws: fragment runs read as whole characters, named invisible characters,
neighbouring backgrounds that differ (as painted), in real panes with real vocabularies."""

from __future__ import annotations

from PySide6.QtCore import QPoint

from tokviz.core.tokens import TokenKind, display_text

KOREAN = "한국어 텍스트를 읽을 수 있어야 합니다 👨\u200d👩\u200d👧"
INVISIBLE = "a\u00a0b c\u200bd \u2764\ufe0f so\u00adft \x07\x1b\x00 x\r\ny \ufeffz \u2028w\n"


def test_fragment_runs_read_as_the_text(make_window) -> None:
    window = make_window(["cl100k_base"], KOREAN)
    view = window.panes[0].view
    cells = [view.cell(i) for i in range(len(view.tokens))]
    assert "".join(c.label for c in cells) == display_text(KOREAN)  # every character shown once
    fragments = [i for i, t in enumerate(view.tokens) if t.kind is TokenKind.FRAGMENT]
    assert len(fragments) > 10
    assert all(cells[i].hex for i in fragments)  # the cut stays visible: each keeps its bytes
    gook = next(i for i in fragments if cells[i].label == "국")
    assert cells[gook].hex == "ea b5" and cells[gook + 1].cont and cells[gook + 1].label == ""
    assert view.result.widths[gook] > view.measurer.text_width("국")


def test_invisible_characters_get_named_glyphs_in_panes_and_tooltips(qtbot, make_window) -> None:
    window = make_window(["o200k_base"], "x")
    pane = window.panes[0]
    pane.set_text(INVISIBLE)  # straight to the pane: the editor's plain text rewrites NBSP, CR, LS
    qtbot.waitUntil(lambda: pane.result is not None and pane.result.text == INVISIBLE and pane.view.layout_done)
    view = pane.view
    shown = "".join(view.cell(i).label for i in range(len(view.tokens)))
    for glyph in ("⟨NBSP⟩", "⟨ZWSP⟩", "⟨VS16⟩", "⟨SHY⟩", "⟨BEL⟩", "⟨ESC⟩", "⟨NUL⟩", "⟨CR⟩↵", "⟨BOM⟩", "⟨LS⟩"):
        assert glyph in shown, glyph
    vs16 = next(i for i, t in enumerate(view.tokens) if "\ufe0f" in t.bytes.decode("utf-8", "replace"))
    assert "U+FE0F VARIATION SELECTOR-16" in view.tooltip_for(vs16)


def _painted(view, index: int):
    rect = view.cell_rect(index)
    image = view.viewport().grab().toImage()
    ratio = image.devicePixelRatio()
    return image.pixelColor(QPoint(int((rect.left() + 2) * ratio), int((rect.top() + 2) * ratio))).name()


def test_neighbours_are_painted_in_different_colours(qtbot, make_window) -> None:
    text = "a a a a a a a a " + "한국어 텍스트 " * 3
    window = make_window(["cl100k_base"], text)
    view = window.panes[0].view
    for by_id in (False, True):
        window.set_options(color_by_id=by_id)
        qtbot.waitUntil(lambda b=by_id: view.color_by_id == b)
        colours = [_painted(view, i) for i in range(len(view.tokens))]
        assert all(a != b for a, b in zip(colours, colours[1:])), colours
    ids = [t.id for t in view.tokens]
    assert ids[1] == ids[2] == ids[3]  # " a" again and again: by id, still apart


def test_the_background_an_export_asks_for_is_the_painted_one(qtbot, make_window) -> None:
    """`background(i)` (what exports draw) is the palette's colour of the token's slot by
    position and by id (by position computed per token, with no array over every token)."""
    import numpy as np

    from tokviz.analysis.palette import id_slots, position_slots

    window = make_window(["cl100k_base"], "a a a a a a a a " + "한국어 텍스트 " * 3)
    view = window.panes[0].view
    n, count = len(view.colors.tokens), len(view.tokens)
    for by_id in (False, True):
        window.set_options(color_by_id=by_id)
        qtbot.waitUntil(lambda b=by_id: view.color_by_id == b)
        slots = id_slots(np.array([t.id for t in view.tokens]), n) if by_id else position_slots(count, n)
        assert [view.background(i) for i in range(count)] == [
            view.colors.for_slot(i, int(slots[i]), view.cell(i).kind) for i in range(count)]
        plain = [i for i in range(count) if view.tokens[i].kind is TokenKind.NORMAL]
        assert [view.background(i).name() for i in plain] == [_painted(view, i) for i in plain]


def test_the_legend_shows_every_kind_in_the_panes_colours(make_window) -> None:
    from tokviz.gui.widgets.theme import token_colors

    window = make_window(["cl100k_base"], "x")
    legend = window.legend
    assert legend.isVisible()
    assert legend.labels() == ["normal", "fragment", "byte fallback", "special", "unknown",
                               "past the context limit"]
    image = legend.grab().toImage()
    painted = {image.pixelColor(x, image.height() // 2).name() for x in range(image.width())}
    colors = token_colors()
    for kind in (TokenKind.FRAGMENT, TokenKind.SPECIAL, TokenKind.BYTE_FALLBACK):
        swatch = colors.for_slot(0, 0, kind)
        assert swatch.lighter(135).name() in painted or swatch.name() in painted, kind


def test_a_layout_that_measures_over_several_slices_paints_as_one_laid_out_at_once(qtbot, vocab, monkeypatch):
    """Widths are measured by the view, a slice of time at a time: a slice may place no line at
    all. A paint then (of the line not placed yet) leaves nothing behind: the lines painted once
    the layout is done are those of a view that laid the same tokens out in one go."""
    from tokviz.core.tokenizer import SpecialPolicy
    from tokviz.gui.compare import token_view as token_view_module
    from tokviz.gui.compare.cells import ViewOptions
    from tokviz.gui.compare.pane_result import PaneResult, prepare
    from tokviz.gui.compare.token_view import TokenView
    from tokviz.service.server import encode

    text = KOREAN * 3 + " ".join(f"word{i}" for i in range(200))
    cols = encode(vocab("cl100k_base"), text, SpecialPolicy()).compact()
    # one grab paints every visible line: a paint that runs out of its time budget leaves the
    # rest to the next paint, which a grab does not wait for (a race with the machine's load)
    monkeypatch.setattr(token_view_module, "PAINT_BUDGET_S", 3600.0)

    def view_of(slice_s: float) -> TokenView:
        monkeypatch.setattr(token_view_module, "LAYOUT_SLICE_S", slice_s)
        view = TokenView()
        qtbot.addWidget(view)
        view.resize(420, 300)
        view.show()
        qtbot.waitExposed(view)
        tokens, cells, widths, breaks = prepare(cols, ViewOptions(), view.fonts)
        assert widths.unmeasured > 64  # many more cells than one slice of no time measures
        view.set_result(PaneResult(0, text, SpecialPolicy(), ViewOptions(), tokens, cells, widths, breaks,
                                   cols.starts, cols.ends, cols.n_bytes))
        return view

    sliced = view_of(0.0)  # every slice out of time at once: a cell measured a slice
    assert sliced.token_layout is not None and sliced.token_layout.placed() == 0
    sliced.viewport().grab()  # painted with nothing placed
    with qtbot.waitSignal(sliced.laid_out, timeout=10_000):
        pass
    at_once = view_of(10.0)
    assert at_once.layout_done
    assert sliced.viewport().grab().toImage() == at_once.viewport().grab().toImage()


def test_the_views_laying_out_share_one_turn_budget(qtbot, vocab, monkeypatch):
    """Every view laying out runs a slice in each turn of the event loop: each gets its share of
    the turn's budget, so four panes do not stall the window four times as long as one."""
    from tokviz.core.tokenizer import SpecialPolicy
    from tokviz.gui.compare import token_view as token_view_module
    from tokviz.gui.compare.cells import ViewOptions
    from tokviz.gui.compare.pane_result import PaneResult, prepare
    from tokviz.gui.compare.token_view import TokenView, _slice_budget, laying_out
    from tokviz.service.server import encode

    text = KOREAN * 3 + " ".join(f"word{i}" for i in range(200))
    cols = encode(vocab("cl100k_base"), text, SpecialPolicy()).compact()
    monkeypatch.setattr(token_view_module, "LAYOUT_SLICE_S", 0.0)  # the first slice places nothing
    others = len(laying_out())  # views of earlier tests not destroyed yet
    views = []
    for _ in range(3):
        view = TokenView()
        qtbot.addWidget(view)
        view.resize(420, 300)
        tokens, cells, widths, breaks = prepare(cols, ViewOptions(), view.fonts)
        view.set_result(PaneResult(0, text, SpecialPolicy(), ViewOptions(), tokens, cells, widths, breaks,
                                   cols.starts, cols.ends, cols.n_bytes))
        assert not view.layout_done
        views.append(view)
    monkeypatch.setattr(token_view_module, "LAYOUT_SLICE_S", 0.006)
    assert len(laying_out()) == others + 3 and _slice_budget() == 0.006 / (others + 3)
    views[0].token_layout.advance()  # done: its next slice says so and leaves the turn to the others
    with qtbot.waitSignal(views[0].laid_out, timeout=0):
        views[0]._layout_slice()  # as its timer would (no turn of the event loop for the others)
    assert views[0] not in laying_out() and _slice_budget() == 0.006 / (others + 2)
    qtbot.waitUntil(lambda: all(view.layout_done for view in views), timeout=10_000)
    assert not set(views) & set(laying_out())


def test_the_painted_lines_a_view_keeps_are_bounded_in_bytes_after_a_scroll_through(qtbot, make_window) -> None:
    """Scrolled from the top of a long text to its end, a view keeps the last lines it painted
    up to `LINE_CACHE_BYTES` (or three screenfuls, if those take more): not every line it drew."""
    from tokviz.gui.compare import token_view as token_view_module

    text = "".join(f"line {i}: the quick brown fox jumps over the lazy dog 안녕 👋\n" for i in range(3000))
    window = make_window(["cl100k_base"], text)
    view = window.panes[0].view
    qtbot.waitUntil(lambda: view.layout_done, timeout=30_000)
    bar = view.verticalScrollBar()
    assert bar.maximum() > 50 * view.viewport().height()
    painted = set()
    for value in range(0, bar.maximum() + 1, view.viewport().height() // 2):
        bar.setValue(value)
        view.viewport().repaint()
        painted |= set(view._line_cache)
    pixmap = next(iter(view._line_cache.values()))
    line_bytes = pixmap.width() * pixmap.height() * 4
    screens = token_view_module.LINE_CACHE_SCREENS * (len(view.visible_lines()) + 1)
    assert len(painted) > 4 * screens  # it painted far more lines than it keeps
    assert len(view._line_cache) <= max(token_view_module.LINE_CACHE_BYTES // line_bytes, screens)
    assert max(view._line_cache) >= view.token_layout.line_count - len(view.visible_lines()) - 1  # the last ones

