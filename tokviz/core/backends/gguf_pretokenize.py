"""llama.cpp's pre-tokenizers for GGUF BPE vocabularies, as `src/llama-vocab.cpp` and
`src/unicode.cpp` of llama.cpp (as vendored by llama-cpp-python 0.3.36) define them.

`tokenizer.ggml.pre` names a pre-tokenizer type; each type is a list of regexes applied one after
another, each cutting the pieces the previous one left (a match and the text between matches
both become pieces). llama.cpp runs each regex in one of three ways, and so does this module:

* a hand-written splitter for the common patterns (GPT-2, Llama 3, Qwen2, Qwen3.5, newlines):
  equivalent to the regex, so here the `regex` module runs the pattern itself;
* `std::regex` over a "collapsed" copy of the text when the pattern uses `\\p{..}` categories:
  every non-ASCII character becomes one byte standing for its category (letter 0xD2, number
  0xD1, ...; non-ASCII whitespace 0x0B) and the pattern's categories become those bytes plus
  their ASCII members. That is not the same as real Unicode categories (a non-ASCII letter
  matches `[A-Za-z]`-free classes differently), so it is emulated byte for byte, with
  ECMAScript's `\\s` (ASCII whitespace only) and `$` (end of the piece only);
* `std::wregex` on the code points otherwise (non-ASCII whitespace becomes 0x0B first).

Character categories come from Python's `unicodedata`, llama.cpp's from its own tables
(`unicode-data.cpp`): they agree except for code points assigned in different Unicode versions.

The tables below are generated from llama-vocab.cpp; types whose splitting llama.cpp does with
custom code not reproduced here (Kimi-K2, AFMoE, Tiny Aya digits, SuperBPE) are refused with a
message naming them.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import numpy as np
import regex

#: `tokenizer.ggml.pre` -> (pre-tokenizer type, ignore_merges, escape_whitespaces)
PRE_TYPES: dict[str, tuple[str, bool, bool]] = {
    'default': ('DEFAULT', False, False),
    'minicpm5': ('MINICPM5', True, False),
    'llama3': ('LLAMA3', True, False),
    'llama-v3': ('LLAMA3', True, False),
    'llama-bpe': ('LLAMA3', True, False),
    'falcon3': ('LLAMA3', True, False),
    'falcon-h1': ('LLAMA3', True, False),
    'pixtral': ('LLAMA3', True, False),
    'midm-2.0': ('LLAMA3', True, False),
    'lfm2': ('LLAMA3', True, False),
    'jina-v5-nano': ('LLAMA3', True, False),
    'deepseek-llm': ('DEEPSEEK_LLM', False, False),
    'deepseek-coder': ('DEEPSEEK_CODER', False, False),
    'deepseek-v3': ('DEEPSEEK3_LLM', False, False),
    'spark2_5': ('SPARK2_5', False, False),
    'youtu': ('YOUTU', True, False),
    'falcon': ('FALCON', False, False),
    'mpt': ('MPT', False, False),
    'starcoder': ('STARCODER', False, False),
    'gpt-2': ('GPT2', False, False),
    'phi-2': ('GPT2', False, False),
    'jina-es': ('GPT2', False, False),
    'jina-de': ('GPT2', False, False),
    'gigachat': ('GPT2', False, False),
    'jina-v2-es': ('GPT2', False, False),
    'jina-v2-de': ('GPT2', False, False),
    'a.x-4.0': ('GPT2', False, False),
    'mellum': ('GPT2', False, False),
    'modern-bert': ('GPT2', False, False),
    'jais-2': ('JAIS2', False, False),
    'gemma4': ('GEMMA4', False, True),
    'granite-embed-multi-311m': ('GEMMA4', False, True),
    'sarvam-moe': ('SARVAM_MOE', False, True),
    'jina-v1-en': ('GPT2', False, False),
    'jina-v2-code': ('GPT2', False, False),
    'roberta-bpe': ('GPT2', False, False),
    'whitespace': ('WHITESPACE', False, False),
    'refact': ('REFACT', False, False),
    'command-r': ('COMMAND_R', False, False),
    'qwen2': ('QWEN2', False, False),
    'deepseek-r1-qwen': ('QWEN2', False, False),
    'kormo': ('QWEN2', False, False),
    'f2llmv2': ('QWEN2', False, False),
    'qwen35': ('QWEN35', False, False),
    'stablelm2': ('STABLELM2', False, False),
    'olmo': ('OLMO', False, False),
    'dbrx': ('DBRX', False, False),
    'smaug-bpe': ('SMAUG', False, False),
    'poro-chat': ('PORO', False, False),
    'chatglm-bpe': ('CHATGLM4', False, False),
    'glm4': ('CHATGLM4', True, False),
    'glm5': ('CHATGLM4', True, False),
    'viking': ('VIKING', False, False),
    'jais': ('JAIS', False, False),
    'tekken': ('TEKKEN', True, False),
    'smollm': ('SMOLLM', False, False),
    'codeshell': ('CODESHELL', False, False),
    'bloom': ('BLOOM', False, False),
    'gpt3-finnish': ('GPT3_FINNISH', False, False),
    'exaone': ('EXAONE', False, False),
    'exaone4': ('GPT2', False, False),
    'exaone-moe': ('EXAONE_MOE', False, False),
    'chameleon': ('CHAMELEON', False, False),
    'minerva-7b': ('MINERVA', False, False),
    'megrez': ('QWEN2', False, False),
    'gpt-4o': ('GPT4O', False, False),
    'llama4': ('GPT4O', False, False),
    'kanana2': ('GPT4O', False, False),
    'talkie': ('GPT4O', False, False),
    'granite-embed-multi-97m': ('GRANITE_EMB_MULTI', True, False),
    'tiny_aya': ('TINY_AYA', False, False),
    'cohere2moe': ('TINY_AYA', False, False),
    'superbpe': ('SUPERBPE', False, False),
    'trillion': ('TRILLION', False, False),
    'granite-docling': ('GRANITE_DOCLING', False, False),
    'bailingmoe': ('BAILINGMOE', False, False),
    'bailingmoe2': ('BAILINGMOE', False, False),
    'llada-moe': ('BAILINGMOE', False, False),
    'seed-coder': ('SEED_CODER', False, False),
    'hunyuan': ('HUNYUAN', False, False),
    'hunyuan-dense': ('HUNYUAN_DENSE', False, False),
    'hy_v4': ('HY_V4', False, False),
    'joyai-llm': ('JOYAI_LLM', False, False),
    'kimi-k2': ('KIMI_K2', False, False),
    'ufakzeka': ('UFAKZEKA', False, False),
    'grok-2': ('GROK_2', False, False),
    'afmoe': ('AFMOE', False, False),
    'laguna': ('LAGUNA', False, False),
    'minimax-m2': ('MINIMAX_M2', False, False),
    'solar-open': ('SOLAR_OPEN', False, False),
    'mellum2': ('MELLUM2', False, False),
}

#: pre-tokenizer type -> (the regexes applied one after another, byte_encode)
REGEXES: dict[str, tuple[tuple[str, ...], bool]] = {
    'LLAMA3': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'JAIS2': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",  # noqa: E501
        ),
        True,
    ),
    'DBRX': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'SMAUG': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'DEEPSEEK_LLM': (
        (
            '[\r\n]',
            '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+',  # noqa: E501
            '\\s?[!-/:-~！-／：-～‘-‟\u3000-。]+',
            '\\s+$',
            '[一-龥ࠀ-一가-\ud7ff]+',
            '\\p{N}+',
        ),
        True,
    ),
    'DEEPSEEK3_LLM': (
        (
            '\\p{N}{1,3}',
            '[一-龥\u3040-ゟ゠-ヿ]+',
            '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',  # noqa: E501
        ),
        True,
    ),
    'HUNYUAN_DENSE': (
        (
            '\\p{N}{1,3}',
            '[一-龥\u3040-ゟ゠-ヿ]+',
            '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',  # noqa: E501
        ),
        True,
    ),
    'JOYAI_LLM': (
        (
            '\\p{N}{1,3}',
            '[一-龥\u3040-ゟ゠-ヿ]+',
            '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',  # noqa: E501
        ),
        True,
    ),
    'HY_V4': (
        (
            '\\p{N}{1,3}',
            '[一-龥\u3040-ゟ゠-ヿ]+',
            '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',  # noqa: E501
        ),
        True,
    ),
    'SPARK2_5': (
        (
            '\\p{N}{1,3}',
            '[一-龥\u3040-ゟ゠-ヿ]+',
            '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+',  # noqa: E501
            '\\p{N}',
        ),
        True,
    ),
    'YOUTU': (
        (
            '[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥\u3040-ゟ゠-ヿ]+',
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'DEEPSEEK_CODER': (
        (
            '[\r\n]',
            '\\s?\\p{L}+',
            '\\s?\\p{P}+',
            '[一-龥ࠀ-一가-\ud7ff]+',
            '\\p{N}',
        ),
        True,
    ),
    'FALCON': (
        (
            '[\\p{P}\\$\\+<=>\\^~\\|`]+',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
            '[0-9][0-9][0-9]',
        ),
        True,
    ),
    'STARCODER': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'REFACT': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'COMMAND_R': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'SMOLLM': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'CODESHELL': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'EXAONE': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'MINERVA': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'MELLUM2': (
        (
            '\\p{N}',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'GPT2': (
        (
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'MPT': (
        (
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'OLMO': (
        (
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'JAIS': (
        (
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'TRILLION': (
        (
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'GRANITE_DOCLING': (
        (
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'STABLELM2': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'QWEN2': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'HUNYUAN': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'SOLAR_OPEN': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'QWEN35': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'PORO': (
        (
            ' ?[^(\\s|.,!?…。，、।۔،)]+',
        ),
        True,
    ),
    'BLOOM': (
        (
            ' ?[^(\\s|.,!?…。，、।۔،)]+',
        ),
        True,
    ),
    'GPT3_FINNISH': (
        (
            ' ?[^(\\s|.,!?…。，、।۔،)]+',
        ),
        True,
    ),
    'CHATGLM4': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'VIKING': (
        (
            ' ?[^(\\s|.,!?…。，、।۔،)]+',
            '\\p{N}',
        ),
        True,
    ),
    'TEKKEN': (
        (
            '[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',  # noqa: E501
        ),
        True,
    ),
    'CHAMELEON': (
        (
            '<sentinel:[0-9]+>',
            '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z',
            '([\\t\\n]|    |  )',
            '\\p{N}',
            '[\\p{P}!-/:-@\\[-`{-~]',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        ),
        True,
    ),
    'GPT4O': (
        (
            "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'MINIMAX_M2': (
        (
            "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'GRANITE_EMB_MULTI': (
        (
            "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'TINY_AYA': (
        (
            '\\d{1,3}(?=(?:\\d{3})*\\b)',
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'KIMI_K2': (
        (
            '\\p{Han}+',
        ),
        True,
    ),
    'SUPERBPE': (
        (
            '\\p{N}+',
            '(?=(\\d{3})+(?!\\d))',
        ),
        True,
    ),
    'BAILINGMOE': (
        (
            "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'SEED_CODER': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'UFAKZEKA': (
        (
            '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
        ),
        True,
    ),
    'GROK_2': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'AFMOE': (
        (
            '\\p{AFMoE_digits}',
            '[一-鿿㐀-䶿豈-\ufaff\u3040-ゟ゠-ヿ･-ﾟ⼀-\u2fdfเ-\u0e7f\u0e80-\u0effក-\u17ffက-႟ꩠ-ꩿꧠ-\ua9ff가-\ud7afᄀ-ᇿ]+',
            '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',  # noqa: E501
        ),
        True,
    ),
    'LAGUNA': (
        (
            '[^\\n]+|[\\n]+',
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'EXAONE_MOE': (
        (
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'GEMMA4': (
        (
            '[^\\n]+|[\\n]+',
        ),
        False,
    ),
    'SARVAM_MOE': (
        (
            '[^\\n]+|[\\n]+',
        ),
        False,
    ),
    'MINICPM5': (
        (
            '\\p{N}{1,3}',
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",  # noqa: E501
        ),
        True,
    ),
    'WHITESPACE': (
        (
            '\\S+',
        ),
        False,
    ),
    'DEFAULT': (
        (
            '[\\p{P}\\$\\+<=>\\^~\\|]+',
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
            '\\p{N}+',
            '[0-9][0-9][0-9]',
        ),
        True,
    ),
}

#: patterns llama.cpp splits with hand-written code equivalent to the regex
_CUSTOM = {
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    (
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
        "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
    ),
    REGEXES["LLAMA3"][0][0],
    REGEXES["QWEN2"][0][0],
    REGEXES["QWEN35"][0][0],
    "[^\\n]+|[\\n]+",
}
UNSUPPORTED = {"KIMI_K2": "Kimi-K2", "AFMOE": "AFMoE", "TINY_AYA": "Tiny Aya", "SUPERBPE": "SuperBPE"}

_CATEGORIES = ("\\p{N}", "\\p{L}", "\\p{P}", "\\p{M}", "\\p{S}", "\\p{Lu}", "\\p{Ll}", "\\p{Lt}", "\\p{Lm}", "\\p{Lo}")
# category -> (collapsed byte, its ASCII members as a class body), as unicode.cpp's k_ucat_* maps
_COLLAPSED = {
    "N": ("\\xd1", "0-9"),
    "L": ("\\xd2", "A-Za-z"),
    "P": ("\\xd3", "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"),
    "M": ("\\xd4", ""),
    "S": ("\\xd5", "\\$\\+<->\\^`\\|~"),
}
#: llama.cpp's whitespace set (Unicode's White_Space property)
WHITESPACE = frozenset(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
     0x202F, 0x205F, 0x3000]
)


class PreTokenizer:
    """Cut text into the words llama.cpp's BPE sees, as character spans."""

    def __init__(self, pre_type: str) -> None:
        if pre_type in UNSUPPORTED:
            raise ValueError(
                f"pre-tokenizer type {pre_type} ({UNSUPPORTED[pre_type]}) is split by llama.cpp's own code, "
                f"which tokviz does not reproduce"
            )
        exprs, self.byte_encode = REGEXES[pre_type]
        self._steps = [_step(e) for e in exprs]
        #: per step, each piece's cut (relative spans), remembered: words repeat
        self._memos: list[dict[str, list[tuple[int, int]]]] = [{} for _ in exprs]

    def words(self, text: str) -> tuple[list[str], np.ndarray]:
        """The words of `text` and the character each starts at: `split`, faster where one regex
        of whole-text matches is the whole pre-tokenizer (GPT-2, Llama 3, Qwen2: `findall` where
        the matches cover the text, the common case; `split` where they leave a gap)."""
        if len(self._steps) == 1 and self._steps[0][0] == "custom" and self._steps[0][1].groups == 0:
            found: list[str] = self._steps[0][1].findall(text)
            lengths = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
            if int(lengths.sum()) == len(text):
                return found, np.cumsum(lengths) - lengths
        spans = self.split(text)
        starts = np.fromiter((a for a, _ in spans), dtype=np.int64, count=len(spans))
        return [text[a:b] for a, b in spans], starts

    def split(self, text: str) -> list[tuple[int, int]]:
        """`(start, end)` character spans of the words, covering `text` in order."""
        spans = [(0, len(text))] if text else []
        subjects = {"custom": text}
        for (kind, pattern), memo in zip(self._steps, self._memos):
            if kind not in subjects:
                subjects[kind] = text.translate(_COLLAPSE if kind == "collapsed" else _WIDE)
            spans = _cut(subjects[kind], pattern, spans, memo)
        return spans


MEMO_MAX_CHARS = 256  # the longest piece whose cut `_cut` remembers


def _cut(
    subject: str, pattern: re.Pattern[str] | regex.Pattern[str], spans: list[tuple[int, int]],
    memo: dict[str, list[tuple[int, int]]],
) -> list[tuple[int, int]]:
    """Each span of `subject` cut by `pattern` (a match and the text between matches both become
    pieces), the cut of each distinct short piece remembered in `memo` (cleared past 100,000
    pieces; a long piece, such as the whole text a first step is given, is cut and forgotten, or
    the memo would hold every text encoded and its spans)."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        piece = subject[start:end]  # the iterator's range ends here: lookaheads cannot see past it
        cuts = memo.get(piece)
        if cuts is None:
            cuts = _pieces(pattern, piece)
            if len(piece) <= MEMO_MAX_CHARS:
                if len(memo) > 100_000:
                    memo.clear()
                memo[piece] = cuts
        if len(cuts) == 1:
            out.append((start, end))
        else:
            out.extend([(start + a, start + b) for a, b in cuts])
    return out


def _pieces(pattern: re.Pattern[str] | regex.Pattern[str], piece: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = 0
    for m in pattern.finditer(piece):
        a, b = m.span()
        if a > pos:
            out.append((pos, a))
        if b > a:
            out.append((a, b))
        pos = b
    if pos < len(piece):
        out.append((pos, len(piece)))
    return out


@functools.cache
def _step(expr: str) -> tuple[str, re.Pattern[str] | regex.Pattern[str]]:
    if expr in _CUSTOM:
        return "custom", regex.compile(expr)
    if any(cat in expr for cat in _CATEGORIES):
        if any(ord(c) >= 128 for c in expr):
            raise ValueError(f"pre-tokenizer regex {expr!r} mixes categories and non-ASCII characters")
        return "collapsed", re.compile(_ecmascript(_collapse_pattern(expr)), re.ASCII | re.DOTALL)
    return "wide", re.compile(_ecmascript(expr), re.ASCII | re.DOTALL)


def _collapse_pattern(expr: str) -> str:
    """unicode.cpp's rewrite of `\\p{X}` into the collapsed byte plus its ASCII members."""
    out = []
    inside = False
    i = 0
    while i < len(expr):
        c = expr[i]
        if c == "[" and (i == 0 or expr[i - 1] != "\\"):
            out.append("[")
            inside = True
            i += 1
            continue
        if inside and c == "]" and expr[i - 1] != "\\":
            out.append("]")
            inside = False
            i += 1
            continue
        if expr.startswith("\\p{", i):
            close = expr.find("}", i + 3)
            if close != -1 and close <= i + 10 and expr[i:close + 1] in _CATEGORIES:
                byte, members = _COLLAPSED[expr[i + 3]]
                body = byte + members
                out.append(body if inside else f"[{body}]")
                i = close + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _ecmascript(expr: str) -> str:
    """ECMAScript's `$` is the end of the input only (Python's also matches before a final newline)."""
    out = []
    i = 0
    while i < len(expr):
        c = expr[i]
        if c == "\\":
            out.append(expr[i:i + 2])
            i += 2
            continue
        out.append("\\Z" if c == "$" else c)
        i += 1
    return "".join(out)


def _category_byte(cp: int) -> str:
    if cp < 128:
        return chr(cp)
    if cp in WHITESPACE:
        return "\x0b"
    cat = unicodedata.category(chr(cp))[0]
    return chr(int(_COLLAPSED[cat][0][2:], 16)) if cat in _COLLAPSED else "\xd0"


class _CollapseTable(dict[int, str]):
    """`str.translate` table computing each code point's collapsed byte on first use."""

    def __missing__(self, cp: int) -> str:
        value = self[cp] = _category_byte(cp)
        return value


_COLLAPSE = _CollapseTable()
#: std::wregex's input: non-ASCII whitespace as a vertical tab
_WIDE = {cp: "\x0b" for cp in WHITESPACE if cp > 0x7F}
