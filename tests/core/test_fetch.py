"""`tokviz vocabs fetch` with a real pip against a local package folder (no network in tests)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
import zipfile

import pytest

from tokviz.core import catalog
from tokviz.core.cancel import Cancelled
from tokviz.core.fetch import FetchError, _Archive, fetch
from tokviz.core.tokenizer import TokenizerError

RANKS = b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256))
RANKS_SHA256 = hashlib.sha256(RANKS).hexdigest()
MEMBER = "vocabpkg/data/tiny.tiktoken"


CASES = b"ab\n__ggml_vocab_test__\nb\n"
CASES_MEMBER = "vocabpkg/data/tiny.tiktoken.inp"


def make_wheel(folder, payload=RANKS):
    path = folder / "vocabpkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(MEMBER, payload)
        z.writestr(CASES_MEMBER, CASES)
        z.writestr("vocabpkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: vocabpkg\nVersion: 1.0\n")
        z.writestr("vocabpkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("vocabpkg-1.0.dist-info/RECORD", "")
    return path


@pytest.fixture
def local_registry(tmp_path, monkeypatch):
    """A data folder whose catalog names a package that only a local folder serves."""
    packages = tmp_path / "packages"
    packages.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(data))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(packages))

    def write_catalog(sha256=RANKS_SHA256, extras=(), **more):
        (data / "catalog.json").write_text(json.dumps({"entries": [{
            "name": "tiny", "format": "tiktoken", "file": "tiny.tiktoken", "sha256": sha256,
            "pattern": r"\S+|\s+",
            "source": {"package": "vocabpkg==1.0", "archive": "wheel", "member": MEMBER},
            "extras": list(extras), **more,
        }]}))

    write_catalog()
    return packages, write_catalog


def test_fetch_extracts_only_the_verified_member(local_registry):
    packages, _ = local_registry
    make_wheel(packages)
    events = []
    [result] = fetch(["tiny"], progress=lambda *a: events.append(a))
    assert result.ok and "vocabpkg==1.0" in result.message
    entry = catalog.find("tiny")
    assert entry.path.read_bytes() == RANKS
    assert sorted(p.name for p in entry.path.parent.iterdir()) == ["tiny.tiktoken"]
    assert catalog.load("tiny").encode_ids("ab") == [97, 98]
    assert any("pip download" in e[1] for e in events)
    [again] = fetch(["tiny"])
    assert again.ok and again.message.startswith("already here")


def test_a_file_with_the_wrong_hash_is_refused(local_registry):
    packages, write_catalog = local_registry
    make_wheel(packages)
    write_catalog(sha256="0" * 64)
    [result] = fetch(["tiny"])
    assert not result.ok and "refusing the file" in result.message
    assert not catalog.find("tiny").path.exists()


def test_no_source_reachable_says_what_to_do(local_registry):
    [result] = fetch(["tiny"])  # the folder has no package: as offline as it gets
    assert not result.ok
    assert "pip download failed" in result.message and "tokviz vocabs fetch tiny" in result.message


def test_unknown_name():
    with pytest.raises(FetchError, match="unknown vocabulary 'nope'"):
        fetch(["nope"])


def test_cancel_leaves_nothing_behind(local_registry):
    packages, _ = local_registry
    make_wheel(packages)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        fetch(["tiny"], cancel=cancel)
    assert not catalog.find("tiny").path.exists()


def test_extra_files_come_from_the_same_archive_and_are_checked(local_registry):
    packages, write_catalog = local_registry
    make_wheel(packages)
    extra = {"file": "cases/tiny.inp", "member": CASES_MEMBER, "sha256": hashlib.sha256(CASES).hexdigest()}
    write_catalog(extras=[extra])
    [result] = fetch(["tiny"])
    assert result.ok
    entry = catalog.find("tiny")
    assert entry.extra_path(".inp").read_bytes() == CASES
    entry.extra_path(".inp").write_bytes(b"edited")
    with pytest.raises(TokenizerError, match="does not match its sha256.*tokviz vocabs fetch tiny"):
        entry.extra_path(".inp")
    [again] = fetch(["tiny"])  # the main file is fine, the extra is not: fetched again
    assert again.ok and not again.message.startswith("already here")
    assert entry.extra_path(".inp").read_bytes() == CASES
    write_catalog(extras=[{**extra, "sha256": "0" * 64}])
    [refused] = fetch(["tiny"], force=True)
    assert not refused.ok and "tiny.inp: refusing the file" in refused.message


def test_a_compressed_tar_is_read_in_one_pass(tmp_path):
    path = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        for name, data in [("pkg-1.0/a", b"A"), ("pkg-1.0/dir", None), ("pkg-1.0/b", b"BB")]:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    archive = _Archive(path, {"pkg-1.0/a": None, "pkg-1.0/b": None})
    assert archive.read("pkg-1.0/b", None) == b"BB" and archive.read("pkg-1.0/a", None) == b"A"
    with pytest.raises(FetchError, match="pkg-1.0.tar.gz has no pkg-1.0/c"):
        archive.read("pkg-1.0/c", None)
    with pytest.raises(FetchError, match="pkg-1.0/dir in pkg-1.0.tar.gz is not a file"):
        archive.read("pkg-1.0/dir", None)
    path.write_bytes(b"not a tar")
    with pytest.raises(FetchError, match="not a readable archive"):
        _Archive(path, {}).read("x", None)


def test_a_member_past_the_size_limit_is_refused_while_it_streams(tmp_path, monkeypatch):
    """A small archive with a huge member (a zip bomb) stops at the limit, not when memory runs out:
    the catalog's size for the file, or without one the general bound."""
    from tokviz.core import fetch as fetch_module

    wheel = tmp_path / "bomb-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("big", bytes(1 << 20))
    assert wheel.stat().st_size < 10_000
    with pytest.raises(FetchError, match=r"big in bomb-1\.0-py3-none-any\.whl is 1,048,576 bytes, more than the "
                                         r"catalog's size for it \(1,000\): refusing it"):
        _Archive(wheel, {"big": 1000}).read("big", None)
    with pytest.raises(FetchError, match=r"more than the catalog's size for it \(1,048,575\)"):
        _Archive(wheel, {}).read("big", None, (1 << 20) - 1)
    assert _Archive(wheel, {"big": 1 << 20}).read("big", None) == bytes(1 << 20)
    assert _Archive(wheel, {"big": None}).read("big", None) == bytes(1 << 20)  # the general bound
    monkeypatch.setattr(fetch_module, "MAX_FILE_SIZE", 1000)
    with pytest.raises(FetchError, match=r"1,048,576 bytes, more than any vocabulary file \(1,000\): refusing it"):
        _Archive(wheel, {"big": None}).read("big", None)
    sdist = tmp_path / "bomb-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as t:
        info = tarfile.TarInfo("bomb-1.0/big")
        info.size = 1 << 20
        t.addfile(info, io.BytesIO(bytes(1 << 20)))
    with pytest.raises(FetchError, match=r"bomb-1\.0/big in bomb-1\.0\.tar\.gz is 1,048,576 bytes, more than the "
                                         r"catalog's size for it \(2,000\)"):
        _Archive(sdist, {"bomb-1.0/big": 2000}).read("bomb-1.0/big", None)


class Endless(io.RawIOBase):
    """A download that never ends (a hostile or broken server), counting what was read of it."""

    def __init__(self) -> None:
        self.read_so_far = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        buffer[:] = bytes(len(buffer))
        self.read_so_far += len(buffer)
        return len(buffer)


def test_a_stream_is_refused_as_soon_as_it_passes_the_expected_size():
    from tokviz.core.fetch import _read_capped

    stream = Endless()
    with pytest.raises(FetchError, match=r"https://x/v is larger than 5,000 bytes, more than the catalog's size"):
        _read_capped(stream, 5000, "https://x/v")
    assert stream.read_so_far == 5001  # not a byte more than it takes to know


def test_the_catalog_size_bounds_a_fetch(local_registry):
    packages, write_catalog = local_registry
    make_wheel(packages, payload=RANKS + b"x" * 100)  # the member grew past what the catalog says
    write_catalog(size=len(RANKS))
    [result] = fetch(["tiny"])
    assert not result.ok and f"more than the catalog's size for it ({len(RANKS):,})" in result.message
    assert not catalog.find("tiny").path.exists()


def test_the_built_in_catalog_gives_every_file_its_size():
    built_in = [e for e in catalog.entries() if not e.user]
    assert built_in and all(isinstance(e.size, int) and e.size > 0 for e in built_in)
    assert all(isinstance(x.size, int) for e in built_in for x in e.extras)
    for entry in built_in:  # each size is the file's, where the file is here and checked
        if entry.available and catalog.file_sha256(entry.path) == entry.sha256:
            assert entry.path.stat().st_size == entry.size, entry.name


def test_a_truncated_tar_gz_is_one_clear_line(tmp_path):
    path = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        info = tarfile.TarInfo("pkg-1.0/a")
        data = bytes(range(256)) * 400
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(FetchError, match=r"pkg-1\.0\.tar\.gz is (truncated or damaged|not a readable archive)") as e:
        _Archive(path, {"pkg-1.0/a": None}).read("pkg-1.0/a", None)
    assert "\n" not in str(e.value)


def test_an_unsupported_zip_method_is_one_clear_line(tmp_path):
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("m", b"data")
    raw = bytearray(path.read_bytes())
    raw[8:10] = (9).to_bytes(2, "little")  # local header: Deflate64, which zipfile does not implement
    central = raw.index(b"PK\x01\x02")
    raw[central + 10:central + 12] = (9).to_bytes(2, "little")
    path.write_bytes(bytes(raw))
    message = r"m in pkg-1\.0-py3-none-any\.whl cannot be extracted: .*zip method not supported"
    with pytest.raises(FetchError, match=message):
        _Archive(path, {"m": None}).read("m", None)
