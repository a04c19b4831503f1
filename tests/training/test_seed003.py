"""Seed 003's experiment: the same vocabulary size, learned with and without Korean."""

from __future__ import annotations

from tests.training.texts import ENGLISH, KOREAN, KOREAN_HELD_OUT
from tokviz.training.curve import corpus_curve, default_ks, text_curve
from tokviz.training.trainer import train_texts
from tokviz.training.vocabfile import trained_tokenizer


def _is_hangul_merge(data: bytes) -> bool:
    # any merged token holding a byte of a Hangul syllable (UTF-8 lead bytes 0xEA-0xED)
    return any(0xEA <= b <= 0xED for b in data)


def test_english_only_vocabulary_pays_a_token_per_byte_for_korean():
    size = 256 + 120
    both = train_texts([ENGLISH * 3, KOREAN * 3], vocab_size=size)
    english = train_texts([ENGLISH * 3], vocab_size=size)
    assert both.vocab_size == english.vocab_size == size  # same size, as the experiment requires

    assert not any(_is_hangul_merge(t) for t in english.token_bytes()[256:])
    assert any(_is_hangul_merge(t) for t in both.token_bytes()[256:])

    paragraph = KOREAN_HELD_OUT
    n_bytes = len(paragraph.encode("utf-8"))
    enc_en = trained_tokenizer(english).encoding
    enc_both = trained_tokenizer(both).encoding
    ids_en, ids_both = enc_en.encode_ordinary(paragraph), enc_both.encode_ordinary(paragraph)
    assert len(ids_en) > 0.9 * n_bytes  # about one token per byte: only spaces/ASCII merged
    assert len(ids_both) < 0.75 * len(ids_en)  # far fewer with Korean in the training text
    assert enc_en.decode(ids_en) == paragraph  # and both decode exactly
    assert enc_both.decode(ids_both) == paragraph


def test_compression_curve():
    result = train_texts([ENGLISH, KOREAN], vocab_size=256 + 200)
    curve = corpus_curve(result)
    assert curve[0] == len((ENGLISH + KOREAN).encode("utf-8"))
    assert len(curve) == len(result.merges) + 1
    assert all(a > b for a, b in zip(curve, curve[1:]))
    ks = default_ks(len(result.merges), 8)
    counts = text_curve(result, KOREAN, ks)
    assert counts[0] == len(KOREAN.encode("utf-8"))
    assert all(a >= b for a, b in zip(counts, counts[1:]))
    # the curve for a training text follows the corpus curve: only one document, nothing else
    single = train_texts([KOREAN], vocab_size=256 + 100, pattern="cl100k")
    assert text_curve(single, KOREAN, [len(single.merges)]) == [corpus_curve(single)[-1]]


def test_live_merges_rebuild_the_final_vocabulary():
    from tokviz.training.events import TokenTable

    events = []
    result = train_texts([ENGLISH, KOREAN], vocab_size=256 + 300, progress=events.append)
    table = TokenTable()
    for event in events:
        if event.phase == "merging":
            table.add(event.new_merges)
    assert [table[i] for i in range(len(table))] == result.token_bytes()
    assert [e for e in events if e.phase == "merging"][-1].corpus_tokens == corpus_curve(result)[-1]
