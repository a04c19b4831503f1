"""Split patterns: presets are tiktoken's, custom regexes are validated, segment dedupe is exact."""

from __future__ import annotations

import inspect
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.training.events import TrainingError
from tokviz.training.pretokenize import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    PRESETS,
    ChunkCounter,
    ascii_findall_bytes,
    ascii_pattern,
    compile_pattern,
    resolve_pattern,
)


def test_presets_are_tiktokens_strings():
    from tiktoken_ext import openai_public  # importing downloads nothing; calling would

    assert openai_public.r50k_pat_str == GPT2_PATTERN
    source = inspect.getsource(openai_public)
    assert CL100K_PATTERN in source
    for part in O200K_PATTERN.split("|"):
        assert part in source


def test_resolve_pattern():
    assert resolve_pattern("none") == (None, "none")
    assert resolve_pattern("cl100k") == (CL100K_PATTERN, "cl100k")
    assert resolve_pattern(r"\w+") == (r"\w+", None)
    assert set(PRESETS) == {"gpt2", "cl100k", "o200k", "none"}


def test_bad_regex_names_pattern_and_error():
    with pytest.raises(TrainingError) as info:
        resolve_pattern("(ab[")
    assert "'(ab['" in str(info.value) and "does not compile" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_empty_pattern_is_an_error():
    with pytest.raises(TrainingError, match="empty"):
        compile_pattern("")


def test_pattern_that_matches_empty_drops_empty_chunks():
    counter = ChunkCounter(compile_pattern(r"\w*"))
    counter.add("ab cd")
    assert counter.counts() == Counter({"ab": 1, "cd": 1})


def test_no_split_counts_each_line_whole_with_its_newline():
    counter = ChunkCounter(None)
    counter.add("a b\n c")
    counter.add("a b\r\n c\n\n")
    assert counter.counts() == Counter({"a b\n": 1, " c": 1, "a b\r\n": 1, " c\n": 1, "\n": 1})


ALPHABET = " \t\n\r\u00a0\u3000aZé한中1²'s.,:!-/_\u200d😀"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET, max_size=60), min_size=1, max_size=5),
       st.sampled_from([GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN]), st.sampled_from(["re", "numpy", "auto"]))
def test_segment_dedupe_equals_findall_on_whole_texts(texts, pattern, engine):
    compiled = regex.compile(pattern)
    counter = ChunkCounter(compiled, engine=engine)
    expected: Counter[str] = Counter()
    for text in texts:
        counter.add(text)
        expected.update(compiled.findall(text))
    expected.pop("", None)
    assert counter.counts() == expected


ASCII = "".join(map(chr, range(128)))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(ASCII + "  \n\n\r\taZ1'sS.,"), max_size=80),
       st.sampled_from([GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN]))
def test_ascii_translation_splits_ascii_text_as_the_regex_module(text, pattern):
    import re

    assert re.findall(ascii_pattern(pattern), text) == regex.findall(pattern, text)
    found = ascii_findall_bytes(pattern)(text.encode())
    assert [c.decode() for c in found] == regex.findall(pattern, text)


def test_ascii_translation_is_exact_on_every_ascii_pair():
    import re

    for pattern in (GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN):
        fast = re.compile(ascii_pattern(pattern))
        fast_bytes = ascii_findall_bytes(pattern)
        slow = regex.compile(pattern)
        for a in ASCII:
            text = "".join(a + b for b in ASCII) + a + "x y\n 1 ' "
            assert fast.findall(text) == slow.findall(text), (pattern, a)
            assert [c.decode() for c in fast_bytes(text.encode())] == slow.findall(text), (pattern, a)


def test_only_presets_are_translated():
    assert ascii_pattern(r"\w+|\s") is None
