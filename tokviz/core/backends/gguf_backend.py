"""GGUF vocabularies (llama.cpp's model files), cut exactly as llama.cpp's `llama-vocab.cpp` cuts
them (the llama.cpp vendored by llama-cpp-python 0.3.36; its test vocabularies check it).

Only the metadata is read (`tokviz.core.gguf`), never the weights. Tokenizer models:

* `gpt2` (llama.cpp's BPE): words from the pre-tokenizer `tokenizer.ggml.pre` names
  (`gguf_pretokenize`), each word's bytes in GPT-2's byte alphabet, then merges by the rank of
  the *pair* in `tokenizer.ggml.merges` (lowest first, leftmost on ties); a final symbol that is
  not a token falls back to its single bytes. Words repeat, so each distinct word is merged once.
* `gemma4`: the same BPE on raw UTF-8 with spaces as `▁`, only newlines split, `<0xNN>` bytes.
* `llama` (SPM): the whole segment (with the `▁` prefix where `add_space_prefix`) merged by the
  score of the merged piece (highest first, leftmost on ties), unmerged symbols resegmented and
  byte pieces `<0xNN>` for what the vocabulary lacks.
* `bert` (WPM): lower-cased, accents stripped, split at whitespace and punctuation, then the
  longest vocabulary match from the left of `▁word`; a word that cannot be matched is `[UNK]`.

`t5` (Unigram), `rwkv`, `plamo2` and the others are refused with a message naming the model.

Token types map to kinds: control tokens are the special tokens (`special_tokens`, parsed under the
caller's policy); user-defined tokens are split out of plain text before anything else, always, as
llama.cpp does (like Hugging Face's added tokens that are not special); byte tokens are
BYTE_FALLBACK, the unknown token UNKNOWN.
"""

from __future__ import annotations

import heapq
import os
import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

from tokviz.core.backends.gguf_pretokenize import PRE_TYPES, PreTokenizer
from tokviz.core.backends.tiktoken_backend import BYTE_LEVEL, BYTE_LEVEL_INVERSE
from tokviz.core.gguf import GGUFError, GGUFMetadata, read_metadata
from tokviz.core.layout import Laid, fill_gaps
from tokviz.core.tokenizer import SpecialsAdded, Tokenizer, TokenizerError
from tokviz.core.tokens import TokenKind, kind_for_bytes, sanitize

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_MODELS = {"gpt2": "bpe", "gemma4": "bpe", "llama": "spm", "bert": "wpm"}
_SPACE = "\u2581"
_HASH = re.compile(r"[0-9a-f]{32,64}")


class GGUFTokenizer(Tokenizer):
    family = "gguf"

    def __init__(self, meta: GGUFMetadata, *, name: str | None = None) -> None:
        self.meta = meta
        path = meta.path
        model = meta.get("tokenizer.ggml.model")
        if model is None:
            raise TokenizerError(f"{path}: a GGUF file without a vocabulary (no tokenizer.ggml.model)")
        if model not in _MODELS:
            raise TokenizerError(
                f"{path}: tokenizer model {model!r} is not supported (tokviz cuts gpt2, gemma4, llama and bert "
                f"GGUF vocabularies exactly as llama.cpp does)"
            )
        self.model: str = model
        self.algorithm = _MODELS[model]
        tokens = meta.get("tokenizer.ggml.tokens")
        if not isinstance(tokens, list) or not tokens:
            raise TokenizerError(f"{path}: tokenizer.ggml.tokens is missing or not a list of strings")
        self.name = name or meta.get("general.name") or path.stem
        n = len(tokens)
        self._texts = [t or f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
        types = meta.get("tokenizer.ggml.token_type")
        self._types = np.asarray(types, dtype=np.int64)[:n] if types is not None else np.ones(n, np.int64)
        if len(self._types) < n:
            raise TokenizerError(f"{path}: fewer token types than tokens")
        scores = meta.get("tokenizer.ggml.scores")
        self._scores = np.asarray(scores, dtype=np.float32)[:n] if scores is not None else np.zeros(n, np.float32)
        self._to_id = {t: i for i, t in enumerate(self._texts)}
        self.chat_template: str | None = meta.get("tokenizer.chat_template")
        self._read_flags(meta)
        self.special_tokens = {self._texts[i]: int(i) for i in np.flatnonzero(self._types == CONTROL)}
        self._user_defined = sorted(
            (self._texts[i] for i in np.flatnonzero(self._types == USER_DEFINED)), key=len, reverse=True
        )
        firsts = sorted({t[0] for t in self._user_defined if t})
        self._user_first = re.compile("[" + "".join(map(re.escape, firsts)) + "]") if firsts else None
        self._strip = self._strip_attributes(meta)
        if self.algorithm == "bpe":
            self._setup_bpe(meta)
        self._word_cache: dict[str, list[tuple[int, int, int]]] = {}
        if self.algorithm == "spm":
            glue = {t[k - 1] for t in self._texts for k in range(1, len(t)) if t[k] == _SPACE != t[k - 1]}
            self._spm_cut = re.compile(f"(?<=[^{re.escape(_SPACE + ''.join(sorted(glue)))}]){_SPACE}")

    def _cached(
        self, piece: str, cut: Callable[[str], list[tuple[int, int, int]]]
    ) -> list[tuple[int, int, int]]:
        """`cut(piece)`, remembered per piece: a piece that cannot span a boundary of the model
        (a pre-tokenized word, a SentencePiece piece, a whitespace-free run) cuts the same way
        wherever it stands. The memory is dropped past 200,000 pieces."""
        done = self._word_cache.get(piece)
        if done is None:
            done = self._word_cache[piece] = cut(piece)
            if len(self._word_cache) > 200_000:
                self._word_cache.clear()
        return done

    # -- loading ----------------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, name: str | None = None) -> GGUFTokenizer:
        try:
            meta = read_metadata(path)
        except GGUFError as e:
            raise TokenizerError(str(e)) from e
        return cls(meta, name=name)

    def _read_flags(self, meta: GGUFMetadata) -> None:
        def token_id(key: str, default: int | None) -> int | None:
            value = meta.get(f"tokenizer.ggml.{key}")
            value = default if value is None else int(value)
            return value if value is not None and 0 <= value < len(self._texts) else None

        spm, bpe, wpm = self.algorithm == "spm", self.algorithm == "bpe", self.algorithm == "wpm"
        self.bos_id = token_id("bos_token_id", 1 if spm else 101 if wpm else None)
        self.eos_id = token_id("eos_token_id", 2 if spm else None)
        self.unk_id = token_id("unknown_token_id", 0 if spm else 100 if wpm else None)
        if wpm and self.unk_id is None:  # a word without pieces would have nothing to become
            raise TokenizerError(f"{meta.path}: a bert (WordPiece) vocabulary without an unknown token "
                                 f"(tokenizer.ggml.unknown_token_id, or id 100, is not one of its "
                                 f"{len(self._texts):,} tokens)")
        self.sep_id = token_id("seperator_token_id", 102 if wpm else None)
        self.pre: str = meta.get("tokenizer.ggml.pre") or ("default" if bpe else "")
        if self.model == "gemma4":
            self.pre = "gemma4"
        self.add_bos = bool(meta.get("tokenizer.ggml.add_bos_token", spm or wpm))
        if self.pre in ("gemma4", "granite-embed-multi-311m"):
            self.add_bos = True  # llama.cpp's workaround for Gemma 4
        self.add_eos = bool(meta.get("tokenizer.ggml.add_eos_token", False))
        self.add_sep = bool(meta.get("tokenizer.ggml.add_sep_token", wpm))
        self.add_space_prefix = bool(meta.get("tokenizer.ggml.add_space_prefix", spm))
        lowercase = bool(meta.get("tokenizer.ggml.lowercase", True))
        self.lowercase = lowercase
        self.strip_accents = bool(meta.get("tokenizer.ggml.strip_accents", lowercase))
        self.max_token_len = max(len(t.encode("utf-8", "surrogateescape")) for t in self._texts)

    def _strip_attributes(self, meta: GGUFMetadata) -> dict[str, tuple[bool, bool]]:
        """llama.cpp's per-model lstrip/rstrip of the text around special tokens (by model name)."""
        name = str(meta.get("general.name") or "").lower()
        arch = str(meta.get("general.architecture") or "")
        strip: dict[str, tuple[bool, bool]] = {}
        if self.pre in ("jina-v2-de", "jina-v2-es", "jina-v2-code") or arch in ("nomic-bert-moe", "jina-bert-v3"):
            strip["<mask>"] = (True, False)
        elif "phi-3" in name or "phi3" in name:
            for i in np.flatnonzero(np.isin(self._types, (CONTROL, USER_DEFINED, UNKNOWN))):
                strip[self._texts[i]] = (False, True)
            strip["</s>"] = (False, True)
            for t in ("<unk>", "<s>", "<|endoftext|>"):
                strip.pop(t, None)
        elif "modern-bert" in name:
            strip["[MASK]"] = (True, False)
        return strip

    def _setup_bpe(self, meta: GGUFMetadata) -> None:
        if self.pre not in PRE_TYPES:
            raise TokenizerError(f"{meta.path}: unknown pre-tokenizer {self.pre!r} (llama.cpp refuses it too)")
        pre_type, self.ignore_merges, self.escape_whitespaces = PRE_TYPES[self.pre]
        try:
            self._pretokenizer = PreTokenizer(pre_type)
        except ValueError as e:
            raise TokenizerError(f"{meta.path}: {e}") from e
        self.byte_encode = self._pretokenizer.byte_encode
        merges = meta.get("tokenizer.ggml.merges")
        if not isinstance(merges, list):
            raise TokenizerError(f"{meta.path}: a {self.model} vocabulary without tokenizer.ggml.merges")
        ranks: dict[tuple[str, str], int] = {}
        for i, merge in enumerate(merges):
            pos = merge.find(" ", 1)
            pair = (merge[:pos], merge[pos + 1:]) if pos != -1 else ("", "")
            ranks.setdefault(pair, i)  # std::map::emplace keeps the first
        self._ranks = ranks

    # -- the interface ------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return len(self._texts)

    @property
    def byte_level(self) -> bool:  # type: ignore[override]
        return self.algorithm == "bpe" and self.byte_encode

    def describe(self) -> str:
        """`qwen2:7b (model qwen2 · GGUF gpt2, pre-tokenizer qwen2, 151,936 ids)`: the file's own
        model name (`general.name`) where the pane's name is another (an Ollama tag, a catalog
        name) and it is not a bare hash, then the tokenizer model and pre-tokenizer."""
        pre = f", pre-tokenizer {self.pre}" if self.algorithm == "bpe" else ""
        general = self.meta.get("general.name")
        named = (
            f"model {general} · "
            if isinstance(general, str) and general and general != self.name and not _HASH.fullmatch(general)
            else ""
        )
        return f"{self.name} ({named}GGUF {self.model}{pre}, {self.vocab_size:,} ids)"

    def normalize(self, text: str) -> str | None:
        """Spaces as `▁` (SPM, with the prefix llama.cpp adds; Gemma 4's BPE); WPM's lower-casing,
        accent stripping and dropped control characters (whitespace kept: it splits the words);
        None for the other BPE models.

        >>> from tokviz.core.catalog import load  # doctest: +SKIP
        >>> load("ggml-vocab-bert-bge").normalize("Ünïcödé\tOK")  # doctest: +SKIP
        'unicode\tok'
        """
        if self.algorithm == "spm":
            return (_SPACE if self.add_space_prefix else "") + text.replace(" ", _SPACE)
        if self.algorithm == "bpe" and self.escape_whitespaces:
            return text.replace(" ", _SPACE)
        if self.algorithm == "wpm":
            return "".join(self._wpm_normal(ch) for ch in text)
        return None

    def _wpm_normal(self, ch: str) -> str:
        """One character as `_wpm_words` sees it (whitespace kept)."""
        if ord(ch) in _WHITESPACE:
            return ch
        out = []
        for c in unicodedata.normalize("NFD", ch) if self.strip_accents else ch:
            cat = unicodedata.category(c)
            if ord(c) == 0 or ord(c) == 0xFFFD or cat.startswith("C") or (self.strip_accents and cat.startswith("M")):
                continue
            out.append(_tolower(c) if self.lowercase else c)
        return "".join(out)

    def pre_tokenize(self, text: str) -> list[str] | None:
        """The words llama.cpp's BPE merges (byte-level ones in GPT-2's alphabet), or WPM's words
        after lower-casing and accent stripping; None for SPM, which merges the whole text."""
        if self.algorithm == "bpe":
            words = [text[a:b] for a, b in self._pretokenizer.split(text)]
            if self.byte_encode:
                words = ["".join(BYTE_LEVEL[x] for x in w.encode("utf-8", "surrogatepass")) for w in words]
            return words
        if self.algorithm == "wpm":
            return [word for word, _, _ in self._wpm_words(text, 0, len(text))]
        return None

    def specials_added(self, text: str) -> SpecialsAdded | None:
        before = (self.bos_id,) if self.add_bos and self.bos_id is not None else ()
        after: tuple[int, ...] = ()
        if self.algorithm == "wpm" and self.add_sep and self.sep_id is not None:
            after = (self.sep_id,)
        elif self.add_eos and self.eos_id is not None:
            after = (self.eos_id,)
        return SpecialsAdded(before, after) if before or after else None

    def piece(self, token_id: int) -> str:
        return self._texts[token_id]

    def kind(self, token_id: int) -> TokenKind:
        t = int(self._types[token_id])
        if t in (CONTROL, USER_DEFINED):
            return TokenKind.SPECIAL
        if t == UNKNOWN:
            return TokenKind.UNKNOWN
        if t == BYTE:
            return TokenKind.BYTE_FALLBACK
        return kind_for_bytes(self.token_bytes(token_id))

    def token_bytes(self, token_id: int) -> bytes:
        text = self._texts[token_id]
        t = int(self._types[token_id])
        if t == BYTE and len(text) == 6 and text.startswith("<0x"):
            return bytes([int(text[3:5], 16)])
        if t in (CONTROL, USER_DEFINED, UNKNOWN, UNUSED):
            return text.encode("utf-8", "surrogateescape")
        if self.algorithm == "bpe" and self.byte_encode:
            try:
                return bytes(map(BYTE_LEVEL_INVERSE.__getitem__, text))
            except KeyError:  # not spelled in GPT-2's alphabet: the text itself
                return text.encode("utf-8", "surrogateescape")
        if self.algorithm == "wpm":
            body = text[2:] if text.startswith("##") else text
            return body.replace(_SPACE, " ").encode("utf-8", "surrogateescape")
        return text.replace(_SPACE, " ").encode("utf-8", "surrogateescape")

    def decode(self, ids: Sequence[int]) -> str:
        data = b"".join(self.token_bytes(i) for i in ids if int(self._types[i]) != CONTROL)
        text = data.decode("utf-8", "replace")
        if self.algorithm == "spm" and self.add_space_prefix and text.startswith(" "):
            text = text[1:]
        return text

    # -- encoding -----------------------------------------------------------------------------------

    def _lay_out_ordinary(self, text: str, start: int, end: int) -> Laid | None:
        if start >= end:
            return None
        id_parts: list[list[int]] = []
        start_parts: list[np.ndarray] = []
        end_parts: list[np.ndarray] = []
        for kind, a, b, token in self._fragments(text, start, end):
            if kind == "token":
                cut: _Cut = ([token], np.array([a], np.int64), np.array([b], np.int64))
            else:
                cut = self._encode_fragment(text, a, b)
            id_parts.append(cut[0])
            start_parts.append(cut[1])
            end_parts.append(cut[2])
        ids = [i for part in id_parts for i in part]
        if not ids:
            return None
        omap = self._offset_map(text)
        starts = np.concatenate(start_parts) - start
        ends = np.concatenate(end_parts) - start
        fill_gaps(starts, ends, end - start)
        starts += start
        ends += start
        offsets = omap.byte_offsets
        return Laid(ids, offsets[starts], offsets[ends], starts, ends, self._datas(ids, text, starts, ends))

    def _datas(self, ids: list[int], text: str, starts: np.ndarray, ends: np.ndarray) -> list[bytes] | None:
        if self.unk_id is None or self.unk_id not in ids:
            return None
        datas = list(map(self._info_for(ids).data.__getitem__, ids))  # each id's bytes, computed once
        for k in np.flatnonzero(np.asarray(ids) == self.unk_id).tolist():
            # the unknown token stands for the text it replaced
            datas[k] = text[int(starts[k]):int(ends[k])].encode("utf-8", "surrogatepass")
        return datas

    def _fragments(self, text: str, start: int, end: int) -> list[tuple[str, int, int, int]]:
        """llama.cpp's `tokenizer_st_partition` for user-defined tokens (always split out): longest
        token first, every occurrence in every remaining text fragment."""
        frags: list[tuple[str, int, int, int]] = [("text", start, end, -1)]
        if self._user_first is None or not self._user_first.search(text, start, end):
            return frags  # no user-defined token begins anywhere in it (most texts)
        present = set(text[start:end])
        for token in self._user_defined:
            if token[0] not in present or text.find(token, start, end) == -1:
                continue
            lstrip, rstrip = self._strip.get(token, (False, False))
            token_id = self._to_id[token]
            out: list[tuple[str, int, int, int]] = []
            for frag in frags:
                if frag[0] != "text":
                    out.append(frag)
                    continue
                a, b = frag[1], frag[2]
                while True:
                    k = text.find(token, a, b)
                    if k == -1:
                        if a < b:
                            out.append(("text", a, b, -1))
                        break
                    left_end = k
                    if lstrip:
                        while left_end > a and text[left_end - 1] in " \t\n\v\f\r":
                            left_end -= 1
                    if left_end > a:
                        out.append(("text", a, left_end, -1))
                    right = k + len(token)
                    if rstrip:
                        while right < b and text[right] in " \t\n\v\f\r":
                            right += 1
                    out.append(("token", left_end, right, token_id))
                    a = right
            frags = out
        return frags

    def _encode_fragment(self, text: str, a: int, b: int) -> _Cut:
        pieces, starts, cut = self._pieces(text, a, b)
        ids, token_starts, token_ends = self._assemble(pieces, starts, cut)
        if self.algorithm == "spm":
            np.maximum(token_starts, a, out=token_starts)  # the `▁` prefix spans no character
            np.maximum(token_ends, a, out=token_ends)
        return ids, token_starts, token_ends

    def _pieces(self, text: str, a: int, b: int) -> tuple[list[str], np.ndarray, _PieceCut]:
        """`text[a:b]` as the pieces the model cuts one by one (words, SentencePiece pieces,
        whitespace-free runs), the character each starts at, and the cut of one piece."""
        if self.algorithm == "bpe":
            return (*self._bpe_pieces(text, a, b), self._bpe_word)
        if self.algorithm == "spm":
            return (*self._spm_pieces(text, a, b), self._spm_piece)
        return (*self._wpm_pieces(text, a, b), self._wpm_chunk)

    def encode_ordinary_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids, piece by piece through the per-piece cache, with no spans or arrays."""
        out: list[list[int]] = []
        for text in texts:
            text = sanitize(text)
            ids: list[int] = []
            for kind, a, b, token in self._fragments(text, 0, len(text)):
                if kind == "token":
                    ids.append(token)
                    continue
                if a >= b:
                    continue  # an empty text has no tokens (not even SentencePiece's prefix)
                pieces, _, cut = self._pieces(text, a, b)
                for piece in pieces:
                    ids.extend(t[0] for t in self._cached(piece, cut))
            out.append(ids)
        return out

    def word_continuations(self) -> frozenset[int] | None:
        """WordPiece: the ordinary pieces without the `▁` llama.cpp's conversion gives word starts."""
        if self.algorithm != "wpm":
            return None
        return frozenset(
            int(i) for i in np.flatnonzero(self._types == NORMAL) if not self._texts[i].startswith(_SPACE)
        )

    # -- BPE ------------------------------------------------------------------------------------------

    def _bpe_pieces(self, text: str, a: int, b: int) -> tuple[list[str], np.ndarray]:
        segment = text[a:b]
        if self.escape_whitespaces:
            segment = segment.replace(" ", _SPACE)
        words, starts = self._pretokenizer.words(segment)
        return words, starts + a

    def _assemble(
        self, pieces: list[str], starts: np.ndarray, cut: Callable[[str], list[tuple[int, int, int]]],
    ) -> _Cut:
        """The cuts of `pieces` (each at its start character `starts`) laid end to end: each
        distinct piece is cut once (`_cached`), then numpy copies its tokens to every place it
        stands (a long text has many times more words than distinct ones)."""
        if not pieces:
            return [], np.zeros(0, np.int64), np.zeros(0, np.int64)
        index: dict[str, int] = {}
        occ = np.fromiter((index.setdefault(p, len(index)) for p in pieces), dtype=np.int64, count=len(pieces))
        cuts = [self._cached(p, cut) for p in index]
        counts = np.fromiter(map(len, cuts), dtype=np.int64, count=len(cuts))
        flat = [t for c in cuts for t in c]
        ids_u = np.fromiter((t[0] for t in flat), dtype=np.int64, count=len(flat))
        starts_u = np.fromiter((t[1] for t in flat), dtype=np.int64, count=len(flat))
        ends_u = np.fromiter((t[2] for t in flat), dtype=np.int64, count=len(flat))
        first = np.zeros(len(cuts), dtype=np.int64)
        np.cumsum(counts[:-1], out=first[1:])
        n_occ = counts[occ]
        before = np.cumsum(n_occ) - n_occ  # output position of each piece's first token
        gather = np.repeat(first[occ] - before, n_occ) + np.arange(int(n_occ.sum()), dtype=np.int64)
        shift = np.repeat(starts, n_occ)
        return ids_u[gather].tolist(), starts_u[gather] + shift, ends_u[gather] + shift

    def _bpe_word(self, word: str) -> list[tuple[int, int, int]]:
        """One word's tokens as (id, char start, char end) relative to the word."""
        if self.byte_encode:
            data = word.encode("utf-8", "surrogatepass")
            symbols = [BYTE_LEVEL[x] for x in data]
            # encoded symbol k stands for byte k; map bytes back to characters
            if len(data) == len(word):  # ASCII: byte k is character k
                char_of = list(range(len(word)))
            else:
                char_of = [k for k, c in enumerate(word) for _ in range(len(c.encode("utf-8", "surrogatepass")))]
        else:
            symbols = list(word)
            char_of = list(range(len(word)))
        to_id = self._to_id
        n = len(symbols)
        if (self.ignore_merges and "".join(symbols) in to_id) or (
            self.pre == "gemma4" and word.strip("\n") == "" and word in to_id
        ):
            return [(to_id["".join(symbols)], 0, len(word))]
        texts = symbols[:]
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        ranks = self._ranks
        heap: list[tuple[int, int, int, str]] = []
        for i in range(n - 1):
            r = ranks.get((texts[i], texts[i + 1]))
            if r is not None:
                heap.append((r, i, i + 1, texts[i] + texts[i + 1]))
        heapq.heapify(heap)
        while heap:
            r, left, right, merged = heapq.heappop(heap)
            lt, rt = texts[left], texts[right]
            if not lt or not rt or lt + rt != merged:
                continue
            texts[left] = merged
            texts[right] = ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prv[nxt[right]] = left
            p = prv[left]
            if p >= 0 and (r2 := ranks.get((texts[p], merged))) is not None:
                heapq.heappush(heap, (r2, p, left, texts[p] + merged))
            q = nxt[left]
            if q >= 0 and (r2 := ranks.get((merged, texts[q]))) is not None:
                heapq.heappush(heap, (r2, left, q, merged + texts[q]))
        out: list[tuple[int, int, int]] = []
        i = 0
        pos = 0  # symbol index of texts[i]
        while i != -1:
            sym = texts[i]
            width = len(sym) if not self.byte_encode else len(sym)
            s_char, e_char = char_of[pos], char_of[pos + width - 1] + 1
            token = to_id.get(sym)
            if token is not None:
                out.append((token, s_char, e_char))
            else:
                for byte in sym.encode("utf-8", "surrogateescape"):
                    if self.byte_encode:
                        fallback = to_id.get(bytes([byte]).decode("utf-8", "surrogateescape"))
                    else:
                        fallback = to_id.get(f"<0x{byte:02X}>")
                    if fallback is not None:
                        out.append((fallback, s_char, e_char))
            pos += width
            i = nxt[i]
        return out

    # -- SPM ------------------------------------------------------------------------------------------

    def _spm_pieces(self, text: str, a: int, b: int) -> tuple[list[str], np.ndarray]:
        """llama.cpp merges a whole fragment at once; it is cut here into pieces no vocabulary
        piece can span (before a `▁` that follows a character no piece has before a `▁`), which
        gives the same merges, and each distinct piece is merged once."""
        prefix = self.add_space_prefix and self._prev_special_or_start(text, a)
        processed = (_SPACE if prefix else "") + text[a:b].replace(" ", _SPACE)
        shift = a - 1 if prefix else a  # processed index k is original character shift + k
        cuts = [0, *(m.start() for m in self._spm_cut.finditer(processed) if m.start() > 0), len(processed)]
        bounds = np.asarray(cuts, dtype=np.int64)
        return [processed[x:y] for x, y in zip(cuts, cuts[1:])], bounds[:-1] + shift

    def _spm_piece(self, piece: str) -> list[tuple[int, int, int]]:
        """llama.cpp's SPM session on one piece: (id, start, end) in the piece's characters."""
        texts = list(piece)
        n = len(texts)
        starts = list(range(n))
        ends = list(range(1, n + 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        to_id, scores = self._to_id, self._scores
        heap: list[tuple[float, int, int, int]] = []
        width = [1] * n  # symbols in chars

        def add(left: int, right: int) -> None:
            if left == -1 or right == -1:
                return
            merged = texts[left] + texts[right]
            token = to_id.get(merged)
            if token is None:
                return
            heapq.heappush(heap, (-float(scores[token]), left, right, len(merged)))

        for i in range(1, n):
            add(i - 1, i)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            if not texts[left] or not texts[right] or len(texts[left]) + len(texts[right]) != size:
                continue
            texts[left] += texts[right]
            width[left] += width[right]
            texts[right] = ""
            width[right] = 0
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prv[nxt[right]] = left
            add(prv[left], left)
            add(left, nxt[left])
        # every merged symbol is a vocabulary piece (a bigram is only queued when it is one), so
        # llama.cpp's `resegment` only ever falls back to bytes for a single unknown character
        out: list[tuple[int, int, int]] = []
        i = 0
        while i != -1:
            sym = texts[i]
            s, e = starts[i], ends[i + width[i] - 1]
            token = to_id.get(sym)
            if token is not None:
                out.append((token, s, e))
            else:
                out.extend((self._byte_token(byte), s, e) for byte in sym.encode("utf-8", "surrogatepass"))
            i = nxt[i]
        return out

    def _prev_special_or_start(self, text: str, a: int) -> bool:
        """llama.cpp adds the `▁` prefix to a text fragment when it opens the input or follows a
        special token; tokviz segments start at 0 or after a special token."""
        return True

    def _byte_token(self, byte: int) -> int:
        token = self._to_id.get(f"<0x{byte:02X}>")
        if token is None:
            token = self._to_id.get(bytes([byte]).decode("utf-8", "surrogateescape"))
        if token is None:
            raise TokenizerError(f"{self.name}: no byte token for 0x{byte:02X} in this vocabulary")
        return token

    # -- WPM ------------------------------------------------------------------------------------------

    def _wpm_pieces(self, text: str, a: int, b: int) -> tuple[list[str], np.ndarray]:
        """Whitespace always ends a word, so each run between whitespace is cut once and cached."""
        spans = [m.span() for m in _NOT_SPACE.finditer(text, a, b)]
        starts = np.fromiter((x for x, _ in spans), dtype=np.int64, count=len(spans))
        return [text[x:y] for x, y in spans], starts

    def _wpm_chunk(self, chunk: str) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        to_id = self._to_id
        for word, ws, we in self._wpm_words(chunk, 0, len(chunk)):
            word1 = (_SPACE + word).encode("utf-8")
            n = len(word1)
            start_len = len(out)
            i = 0
            while i < n:
                match = False
                for j in range(min(n, i + self.max_token_len + 1), i, -1):
                    token = to_id.get(word1[i:j].decode("utf-8", "surrogateescape"))
                    if token is not None:
                        out.append((token, ws, we))
                        match = True
                        i = j
                        break
                if not match:
                    del out[start_len:]
                    break
            if len(out) == start_len:
                out.append((self.unk_id if self.unk_id is not None else 0, ws, we))
        return out

    def _wpm_words(self, text: str, a: int, b: int) -> list[tuple[str, int, int]]:
        """llama.cpp's WPM `preprocess`, with the original span of each word."""
        words: list[tuple[str, int, int]] = []
        current: list[str] = []
        cur_start = a

        def finish(end: int) -> None:
            if current:
                words.append(("".join(current), cur_start, end))
                current.clear()

        for k in range(a, b):
            ch = text[k]
            cps = unicodedata.normalize("NFD", ch) if self.strip_accents else ch
            for c in cps:
                cp = ord(c)
                cat = unicodedata.category(c)
                if cp in _WHITESPACE:
                    finish(k)
                    cur_start = k + 1
                    continue
                if cp == 0 or cp == 0xFFFD or cat.startswith("C"):
                    continue
                if self.strip_accents and cat.startswith("M"):
                    continue
                s = _tolower(c) if self.lowercase else c
                if cat.startswith("P") or (cp < 0x7F and cat.startswith("S")) or _is_chinese(cp):
                    finish(k)
                    words.append((s, k, k + 1))
                    cur_start = k + 1
                else:
                    if not current:
                        cur_start = k
                    current.append(s)
        finish(b)
        return words


#: one fragment's cut: ids, character starts, character ends (on the whole text)
_Cut = tuple[list[int], np.ndarray, np.ndarray]
#: one piece's cut: (id, character start, character end) relative to the piece
_PieceCut = Callable[[str], list[tuple[int, int, int]]]


_WHITESPACE = frozenset(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
     0x202F, 0x205F, 0x3000]
)


_NOT_SPACE = re.compile("[^" + "".join(re.escape(chr(c)) for c in sorted(_WHITESPACE)) + "]+")


def _tolower(c: str) -> str:
    lower = c.lower()
    return lower if len(lower) == 1 else c


def _is_chinese(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F
    )
