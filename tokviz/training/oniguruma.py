"""Translate a split pattern from tiktoken's regex dialect to Oniguruma, the engine of `tokenizers`.

tiktoken cuts text with Rust's `fancy-regex`; a `tokenizer.json` `Split` is run by Oniguruma. The
same string means different things in the two:

* `X{1,3}+` is possessive in fancy-regex and "`X{1,3}`, one or more times" in Oniguruma
  (cl100k's `\\p{N}{1,3}+`: `'3333'` is one chunk there, `333` + `3` in tiktoken). Every
  possessive quantifier becomes an atomic group: `(?>X{1,3})`, `(?>X*)`.
* `^` and `$` are line anchors in Oniguruma, text anchors in fancy-regex: `\\A`, `\\z`.
* `\\w` also takes Join_Control (ZWNJ, ZWJ) in fancy-regex and also No (`²`) in Oniguruma: it is
  spelled out as fancy-regex defines it, and `\\b` / `\\B` with it.
* Case-insensitive `(?i:ll)` also matches `ß` against `ss` in Oniguruma (full case folding):
  each literal is spelled out as a class of its simple case variants (`[lL][lL]`), found with
  tiktoken's own engine, and the flag dropped.
* `\\xHH` is a byte in Oniguruma, a code point in fancy-regex: `\\x{HH}`. `\\pL` -> `\\p{L}`.
* Capturing groups become non-capturing (a split does not use them); `(?s)` `.` -> `[\\s\\S]`.

What is not known to mean the same (`(?m)`, `(?x)`, back references, POSIX classes, an unlisted
`\\p{...}` name, class set operations) is refused with `PatternNotPortable`, naming it.
`tests/training/test_oniguruma.py` checks every construct passed through over all code points.

This module does not check a whole pattern on text: `vocabfile.hf_tokenizer_json` does.
"""

from __future__ import annotations

import functools

#: `\p{...}` names known to match the same code points in both engines (checked over all of them)
PROPERTIES = frozenset(
    [
        "L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No",
        "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So",
        "Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf",
        "Han", "Hiragana", "Katakana", "Latin", "Greek", "Cyrillic", "Hangul", "Arabic", "Hebrew", "Thai", "Devanagari",
        "Common", "Alphabetic", "White_Space", "Emoji",
    ]
)
#: fancy-regex's `\w` (Unicode's word characters), in Oniguruma's terms
WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"
_SIMPLE_ESCAPES = {"s", "S", "d", "D", "A", "z", "n", "r", "t", "f"}
_META = set("\\^$.|?*+()[]{}")


class PatternNotPortable(ValueError):
    """The pattern holds a construct tokviz cannot write so that `tokenizers` cuts the same."""


def to_oniguruma(pattern: str) -> str:
    """Give `pattern` as Oniguruma must read it to match what fancy-regex (tiktoken) matches.

    >>> print(to_oniguruma(r"'(?i:ll)|\\p{N}{1,3}+|\\s++$"))
    '(?:[Ll][Ll])|(?>\\p{N}{1,3})|(?>\\s+)\\z
    """
    return _Translator(pattern).run()


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def fail(self, what: str) -> PatternNotPortable:
        return PatternNotPortable(
            f"split pattern {self.p!r}: {what} (at character {self.i}) has no known equivalent in "
            f"Oniguruma, the regex engine of tokenizers, so a tokenizer.json would cut text differently "
            f"from tiktoken; rewrite that part, or save without the tokenizer.json (--hf-json)"
        )

    def run(self) -> str:
        out = self.alternation(ignore_case=False, dotall=False)
        if self.i < len(self.p):
            raise self.fail(f"unbalanced {self.p[self.i]!r}")
        return out

    # -- structure ------------------------------------------------------------------------------

    def alternation(self, ignore_case: bool, dotall: bool) -> str:
        """Until an unmatched `)` or the end. A bare `(?i)` switches flags for the rest."""
        parts: list[str] = []  # the finished atoms (each with its quantifier) of this branch
        out: list[str] = []
        flags = [ignore_case, dotall]
        while self.i < len(self.p):
            c = self.p[self.i]
            if c == ")":
                break
            if c == "|":
                self.i += 1
                out.append("".join(parts) + "|")
                parts = []
                continue
            if c in "*+?{":
                raise self.fail(f"quantifier {c!r} with nothing to repeat")
            atom = self.atom(flags)
            if atom is None:  # a flag group that changed `flags`
                continue
            parts.append(self.quantified(atom))
        out.append("".join(parts))
        return "".join(out)

    def quantified(self, atom: str) -> str:
        p = self.p
        if self.i >= len(p) or p[self.i] not in "*+?{":
            return atom
        start = self.i
        if p[self.i] == "{":
            end = p.find("}", self.i)
            body = p[self.i + 1 : end] if end > 0 else ""
            lo, _, hi = body.partition(",")
            if end < 0 or not lo.isdigit() or (hi and not hi.isdigit()):
                raise self.fail(f"{{{body}}}: only {{n}}, {{n,}} and {{n,m}} are repetitions")
            self.i = end + 1
        else:
            self.i += 1
        quantifier = p[start : self.i]
        if self.i < len(p) and p[self.i] == "?":
            self.i += 1
            return atom + quantifier + "?"
        if self.i < len(p) and p[self.i] == "+":  # possessive: an atomic group in both engines
            self.i += 1
            return f"(?>{atom}{quantifier})"
        if self.i < len(p) and p[self.i] in "*+?{":
            raise self.fail("a repetition of a repetition")
        return atom + quantifier

    def atom(self, flags: list[bool]) -> str | None:
        p, c = self.p, self.p[self.i]
        ignore_case, dotall = flags
        if c == "(":
            return self.group(flags)
        if c == "[":
            return self.char_class(ignore_case)
        self.i += 1
        if c == "\\":
            return self.escape(ignore_case, in_class=False)
        if c == ".":
            return r"[\s\S]" if dotall else r"[^\n]"
        if c == "^":
            return r"\A"
        if c == "$":
            return r"\z"
        if c == "]" or c == "}":
            raise self.fail(f"unescaped {c!r}")
        del p
        return _literal(c, ignore_case)

    def group(self, flags: list[bool]) -> str | None:
        p = self.p
        self.i += 1
        inner_flags = list(flags)
        head = "(?:"
        if p.startswith("?", self.i):
            for prefix in ("?:", "?=", "?!", "?<=", "?<!", "?>"):
                if p.startswith(prefix, self.i):
                    head = "(" + prefix
                    self.i += len(prefix)
                    break
            else:
                if p.startswith("?P<", self.i) or (p.startswith("?<", self.i)):
                    end = p.find(">", self.i)
                    if end < 0:
                        raise self.fail("an unterminated group name")
                    self.i = end + 1  # a named group: the split does not use its capture
                else:
                    end = self.i + 1
                    while end < len(p) and p[end] not in ":)":
                        end += 1
                    if end >= len(p):
                        raise self.fail("an unterminated group")
                    self.set_flags(p[self.i + 1 : end], inner_flags)
                    self.i = end + 1
                    if p[end] == ")":  # `(?i)`: for the rest of the enclosing group
                        flags[:] = inner_flags
                        return None
        body = self.alternation(*inner_flags)
        if self.i >= len(p) or p[self.i] != ")":
            raise self.fail("an unclosed group")
        self.i += 1
        return head + body + ")"

    def set_flags(self, spec: str, flags: list[bool]) -> None:
        on = True
        for f in spec:
            if f == "-":
                on = False
            elif f == "i":
                flags[0] = on
            elif f == "s":
                flags[1] = on
            else:
                raise self.fail(f"flag {f!r} in (?{spec})")

    # -- atoms ----------------------------------------------------------------------------------

    def escape(self, ignore_case: bool, *, in_class: bool) -> str:
        p = self.p
        if self.i >= len(p):
            raise self.fail("a trailing backslash")
        c = p[self.i]
        self.i += 1
        if c in "pP":
            if p.startswith("{", self.i):
                end = p.find("}", self.i)
                name = p[self.i + 1 : end] if end > 0 else ""
                self.i = end + 1 if end > 0 else len(p)
            else:
                name = p[self.i : self.i + 1]
                self.i += 1
            negated = name.startswith("^")
            name = name.removeprefix("^")
            if name not in PROPERTIES:
                raise self.fail(f"\\{c}{{{name}}}")
            if ignore_case and name not in ("L", "N", "Nd", "Han", "Common", "Alphabetic", "White_Space"):
                raise self.fail(f"case-insensitive \\{c}{{{name}}}")
            return f"\\{'P' if (c == 'P') != negated else 'p'}{{{name}}}"
        if c in _SIMPLE_ESCAPES:
            if in_class and c in "Az":
                raise self.fail(f"\\{c} in a class")
            return "\\" + c
        if c == "v":
            return r"\x{B}"
        if c in "wW":
            if in_class:
                return WORD if c == "w" else f"[^{WORD}]"
            return f"[{WORD}]" if c == "w" else f"[^{WORD}]"
        if c in "bB" and not in_class:
            w = f"[{WORD}]"
            if c == "b":
                return f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))"
            return f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"
        if c in "xu":
            if p.startswith("{", self.i):
                end = p.find("}", self.i)
                digits = p[self.i + 1 : end] if end > 0 else ""
                self.i = end + 1 if end > 0 else len(p)
            else:
                width = 2 if c == "x" else 4
                digits = p[self.i : self.i + width]
                self.i += width
            try:
                char = chr(int(digits, 16))
            except ValueError:
                raise self.fail(f"\\{c}{digits}") from None
            return _literal(char, ignore_case, in_class=in_class)
        if c.isalnum() or c == "_":
            raise self.fail(f"\\{c}")
        return _literal(c, ignore_case, in_class=in_class)

    def char_class(self, ignore_case: bool) -> str:
        p = self.p
        self.i += 1
        out = ["["]
        if p.startswith("^", self.i):
            out.append("^")
            self.i += 1
        first = True
        while True:
            if self.i >= len(p):
                raise self.fail("an unclosed class")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[":
                if p.startswith("[:", self.i):
                    raise self.fail("a POSIX class [:...:]")
                out.append(self.char_class(ignore_case))
                continue
            if p.startswith(("&&", "--", "~~"), self.i):
                raise self.fail(f"class set operation {p[self.i:self.i + 2]!r}")
            self.i += 1
            if c == "\\":
                low = self.escape(ignore_case, in_class=True)
            else:
                low = _literal(c, ignore_case, in_class=True)
            if p.startswith("-", self.i) and self.i + 1 < len(p) and p[self.i + 1] != "]":
                if ignore_case:
                    raise self.fail("a range in a case-insensitive class")
                self.i += 1
                c2 = p[self.i]
                self.i += 1
                high = self.escape(False, in_class=True) if c2 == "\\" else _literal(c2, False, in_class=True)
                out.append(f"{low}-{high}")
            else:
                out.append(low)
        return "".join(out) + "]"


def _literal(char: str, ignore_case: bool, *, in_class: bool = False) -> str:
    """One character as Oniguruma reads it literally; under `(?i)` the class of its case variants."""
    variants = case_variants(char) if ignore_case else char
    spelled = "".join(_spell(v, in_class or len(variants) > 1) for v in variants)
    if len(variants) > 1 and not in_class:
        return f"[{spelled}]"
    return spelled


def _spell(char: str, in_class: bool) -> str:
    if char.isalnum() or char in " '\"_,;:!@#%&=<>`~/":
        return char
    if (in_class and char in "\\]^-[") or (not in_class and char in _META):
        return "\\" + char
    return f"\\x{{{ord(char):X}}}"


@functools.cache
def case_variants(char: str) -> str:
    """The characters fancy-regex's `(?i)` matches for `char` (simple case folding), asked of
    tiktoken's own engine over every code point.

    >>> case_variants("s"), case_variants("1")
    ('Ssſ', '1')
    """
    import tiktoken

    ranks = {bytes([i]): i for i in range(256)}
    literal = _spell(char, in_class=False)
    enc = tiktoken.Encoding("case", pat_str=f"(?i:{literal})", mergeable_ranks=ranks, special_tokens={})
    found = bytes(enc.encode_ordinary(_every_character())).decode("utf-8")
    return "".join(sorted(set(found))) or char


@functools.lru_cache(maxsize=1)
def _every_character() -> str:
    return "".join(map(chr, (*range(0xD800), *range(0xE000, 0x110000))))
