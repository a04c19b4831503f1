"""The shipped assets (`tokviz.resources`): samples, palette, icons, style, and the wheel."""

from __future__ import annotations

import json
import math
import re
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.wheel import build_wheel, run_unpacked
from tokviz.core import resources
from tokviz.core.resources import Sample, palette, resource_path, sample_text, samples
from tokviz.core.tokens import TokenKind

ROOT = Path(__file__).resolve().parents[2]
HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
ICONS = ["tokviz.svg", "add.svg", "remove.svg", "open.svg", "train.svg", "play.svg", "stop.svg"]


# ---------------------------------------------------------------------------------------- samples


def test_samples_index_lists_every_expected_sample():
    listed = [s.file for s in samples()]
    assert len(listed) == len(set(listed))
    assert set(listed) >= {
        "english.txt", "korean.txt", "chinese.txt", "japanese.txt", "emoji_chat.txt",
        "json_indented.json", "json_minified.json", "logs.log", "python_code.py", "mixed.txt",
    }
    assert listed[0] == "english.txt"
    for s in samples():
        assert isinstance(s, Sample)
        assert s.title and s.language and s.kind


def test_samples_index_has_nothing_unlisted():
    on_disk = {p.name for p in resource_path("samples").iterdir() if p.is_file()}
    assert on_disk - {"samples.json"} == {s.file for s in samples()}


@pytest.mark.parametrize("sample", samples(), ids=lambda s: s.file)
def test_sample_exists_decodes_and_is_not_empty(sample: Sample):
    raw = sample.path().read_bytes()
    assert raw, sample.file
    assert not raw.startswith(b"\xef\xbb\xbf"), "no BOM"
    text = raw.decode("utf-8")  # strict
    assert text.strip()
    assert sample.read_text() == text == sample_text(sample.file)
    assert "\r" not in text
    assert len(raw) <= 8 * 1024


def test_sample_is_frozen():
    with pytest.raises(AttributeError):
        samples()[0].file = "x"  # type: ignore[misc]


def test_sample_text_rejects_paths():
    for bad in ["", "../palette.json", "a/b.txt", "..", "a\\b"]:
        with pytest.raises(ValueError):
            sample_text(bad)
    with pytest.raises(FileNotFoundError):
        sample_text("no-such-sample.txt")


def test_json_pair_is_the_same_data():
    indented = sample_text("json_indented.json")
    minified = sample_text("json_minified.json")
    assert json.loads(indented) == json.loads(minified)
    assert "\n    \"" in indented and "\t" not in indented
    assert minified.strip().count("\n") == 0 and ": " not in minified.replace('": "', "")
    assert len(minified) < len(indented)


def _script_share(text: str, predicate) -> float:
    letters = [c for c in text if unicodedata.category(c).startswith("L")]
    return sum(map(predicate, letters)) / len(letters)


def test_korean_is_mostly_hangul():
    text = sample_text("korean.txt")
    assert _script_share(text, lambda c: "\uac00" <= c <= "\ud7a3") > 0.9


def test_chinese_has_the_required_phrases():
    text = sample_text("chinese.txt")
    assert "我是一只猫" in text and "根本" in text
    assert _script_share(text, lambda c: "\u4e00" <= c <= "\u9fff") > 0.9


def test_japanese_mixes_three_scripts():
    text = sample_text("japanese.txt")
    assert re.search(r"[\u3041-\u309f]", text)  # hiragana
    assert re.search(r"[\u30a0-\u30ff]", text)  # katakana
    assert re.search(r"[\u4e00-\u9fff]", text)  # kanji


def test_emoji_chat_has_hard_emoji():
    text = sample_text("emoji_chat.txt")
    for emoji in [
        "👩\u200d💻", "🧑\u200d🤝\u200d🧑", "👨\u200d👩\u200d👧\u200d👦", "👍🏽", "🇰🇷", "🇯🇵", "1\ufe0f\u20e3",
    ]:
        assert emoji in text


def test_mixed_has_everything_including_special_token_text():
    text = sample_text("mixed.txt")
    assert 'print("<|endoftext|>")' in text and "<|im_start|>user" in text
    assert re.search(r"[\uac00-\ud7a3]", text) and re.search(r"[\u3041-\u309f]", text)
    assert "\u200d" in text and "def " in text


def test_python_sample_is_valid_spaces_only_python():
    text = sample_text("python_code.py")
    assert "\t" not in text
    compile(text, "python_code.py", "exec")
    assert '"""' in text and 'f"' in text
    indents = {len(m) for m in re.findall(r"^( +)\S", text, flags=re.M)}
    assert indents and all(n % 4 == 0 for n in indents)


def test_logs_look_like_logs():
    text = sample_text("logs.log")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", text)
    assert re.search(r"\b\d{1,3}(\.\d{1,3}){3}\b", text)
    assert re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", text)
    assert "Traceback (most recent call last):" in text


# ---------------------------------------------------------------------------------------- palette


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def _luminance(color: str) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = map(channel, _rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_palette_shape_and_hex():
    p = palette()
    assert p["format"] == "tokviz-palette" and p["version"] == 1
    assert len(p["tokens"]) == 12
    kind_colors = p["kinds"]
    assert set(kind_colors) == {k.value for k in TokenKind if k is not TokenKind.NORMAL}
    for color in [*p["tokens"], *kind_colors.values(), p["highlight"]]:
        assert HEX.match(color), color


def test_palette_neighbours_differ_and_dark_text_is_readable():
    tokens = palette()["tokens"]
    assert len({c.lower() for c in tokens}) == len(tokens)
    for a, b in zip(tokens, tokens[1:] + tokens[:1]):  # wraps around: colours cycle
        assert math.dist(_rgb(a), _rgb(b)) >= 40, (a, b)
    for color in tokens:
        assert _contrast(color, "#222222") >= 7, color


def test_palette_kind_colours_stand_apart():
    p = palette()
    specials = [*p["kinds"].values(), p["highlight"]]
    assert len({c.lower() for c in specials}) == len(specials)
    for color in specials:
        assert color.lower() not in {t.lower() for t in p["tokens"]}
        assert _contrast(color, "#222222") >= 4.5, color


def test_palette_returns_a_fresh_copy():
    palette()["tokens"].clear()
    assert len(palette()["tokens"]) == 12


# ---------------------------------------------------------------------------- icons and the style


@pytest.mark.parametrize("name", ICONS)
def test_icons_are_svg(name: str):
    root = ET.fromstring(resource_path("icons", name).read_text(encoding="utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    if name != "tokviz.svg":
        assert root.get("viewBox") == "0 0 24 24"


def test_stylesheet_is_there_and_leaves_token_colours_to_code():
    qss = resource_path("styles", "tokviz.qss").read_text(encoding="utf-8")
    assert "QFrame#tokenPane" in qss
    assert qss.count("{") == qss.count("}")
    assert "font-family" not in qss
    assert not {t.lower() for t in palette()["tokens"]} & set(re.findall(r"#[0-9a-f]{6}", qss.lower()))


def test_module_is_qt_free():
    source = Path(resources.__file__).read_text(encoding="utf-8")
    assert "PySide6" not in source and "Qt" not in re.sub(r"Qt-free|for Qt", "", source)


# ---------------------------------------------------------------------------------------- wheel


@pytest.mark.slow
def test_wheel_ships_the_resources(tmp_path: Path):
    site, _ = build_wheel(tmp_path)
    src = tmp_path / "src"
    names = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    for required in [
        "tokviz/resources/__init__.py",
        "tokviz/resources/samples/korean.txt",
        "tokviz/resources/samples/samples.json",
        "tokviz/resources/palette.json",
        "tokviz/resources/icons/tokviz.svg",
        "tokviz/resources/styles/tokviz.qss",
        "tokviz/core/catalog.json",
        "tokviz/core/resources.py",
        "tokviz/py.typed",
    ]:
        assert required in names, required
    for s in samples():
        assert f"tokviz/resources/samples/{s.file}" in names
    # Found, not listed: every module of every subpackage and every shipped file is in the wheel.
    shipped = {p.relative_to(src).as_posix() for p in (src / "tokviz").rglob("*") if p.is_file()}
    assert shipped and shipped <= names, sorted(shipped - names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert any(n.startswith("tokviz/training/_merge.") and n.endswith((".so", ".pyd")) for n in names), \
        "the compiled merge loop was not built into the wheel"

    # The installed package finds its resources without the checkout: only the unpacked wheel is seen.
    probe = (
        "import tokviz.resources as r, tokviz.core.resources as m, tokviz.training._merge as c\n"
        f"assert r.__file__.startswith({str(site)!r}) and c.__file__.startswith({str(site)!r}), r.__file__\n"
        "print(len(m.samples()), len(m.sample_text('korean.txt')), m.palette()['highlight'])"
    )
    result = run_unpacked(site, probe)
    assert result.returncode == 0, result.stderr
    count, korean_len, highlight = result.stdout.split()
    assert int(count) == len(samples())
    assert int(korean_len) == len(sample_text("korean.txt"))
    assert highlight == palette()["highlight"]
