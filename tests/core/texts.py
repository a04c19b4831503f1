"""Texts the core tests run every tokenizer over: the cases users check first."""

MULTILINGUAL = {
    "english": "The quick brown fox jumps over the lazy dog. Tokenizers don't count characters!",
    "korean": "안녕하세요. 토큰은 글자도 단어도 아닙니다. 한국어 문서는 생각보다 비쌉니다.",
    "chinese": "我是一只猫。根本没有人知道这个词表是怎么做出来的。",
    "japanese": "吾輩は猫である。名前はまだ無い。カタカナとひらがなと漢字。",
    "emoji_zwj": "team 👩‍💻🧑‍🤝‍🧑 family 👨‍👩‍👧‍👦 thumbs 👍🏽 flags 🇰🇷🇯🇵 keycap 1️⃣",
    "json_indented": '{\n    "name": "tokviz",\n    "tags": [\n        "bpe",\n        "sentencepiece"\n    ]\n}\n',
    "code": 'def f(x):\n\tif x > 10:\n\t\treturn f"{x:>8}"  # tab-indented\n    return None\n',
    "spaces": "a    b        c\t\td\n\n\n   e  \r\n",
    "fullwidth": "ｈｅｌｌｏ ① ﬁ ㍻ Ⅻ",
    "digits": "3.14159 1234567890 2026-11-30",
    "special_text": 'print("<|endoftext|>") <s> </s>',
}
