"""Texts for the trainer tests: a small multilingual training corpus and held-out texts."""

ENGLISH = """\
A token is neither a character nor a word. It is a piece decided when the vocabulary was made,
and the vocabulary differs from model to model, so the same sentence costs a different number of
tokens in each. Price lists and context limits are counted in tokens, but on the screen we can only
count characters, so for a while people estimated with characters times some factor. The question
is when that estimate breaks. It breaks in the same places every time: a Korean document costs far
more than expected, the same document in English is cheap, logs pasted as they are blow up the
token count, and only the inputs with emoji make the length calculation disagree. The cause is the
same every time: tokens are not characters. Which pieces count as one is written in the vocabulary,
and the vocabulary is made from training data. A vocabulary made from mostly English text keeps the
common English pieces whole and cuts Korean into small fragments. Worse, the difference is silent.
No error is raised; it only shows up on the bill and at the context limit.
"""

KOREAN = """\
토큰은 글자도 아니고 단어도 아니다. 어휘를 만들 때 정해진 조각이고, 어휘는 모델마다 다르기 때문에 같은 문장도
모델마다 토큰 수가 다르다. 가격표와 컨텍스트 한도의 단위는 토큰이지만 화면에서 셀 수 있는 것은 글자뿐이라서,
한동안은 글자 수에 얼마를 곱해서 어림했다. 문제는 그 어림이 언제 틀어지느냐다. 틀어지는 곳은 늘 같다.
한국어 문서를 넣으면 생각보다 훨씬 비싸다. 같은 뜻의 영어 문서는 싸다. 로그를 그대로 넣으면 글자는 짧은데
토큰이 폭증한다. 이모지가 섞인 사용자 입력만 길이 계산이 맞지 않는다. 모두 같은 원인이다. 토큰은 글자 단위가
아니다. 어떤 조각을 하나로 칠지는 어휘에 적혀 있고, 그 어휘는 학습 자료로 만든다. 영어가 많은 자료로 만든
어휘라면 영어의 흔한 조각은 토큰 하나가 되고, 한국어는 잘게 쪼개진다. 더 나쁜 것은 이 차이가 조용하다는 것이다.
오류는 나지 않는다. 청구서와 컨텍스트 한도에서만 드러난다.
"""

KOREAN_HELD_OUT = """\
바이트에서 시작하는 이유는 간단하다. 글을 UTF-8로 쓰면 어떤 글자든 한 바이트에서 네 바이트가 되고, 바이트는
영부터 이백오십오까지 이백오십육 가지뿐이다. 이 이백오십육 개를 처음 어휘로 삼으면 어휘 밖의 글자는 아예 생기지
않는다. 한국어의 비용은 여기서 드러난다. 한글 음절 하나는 UTF-8로 세 바이트다. 어휘가 작고 합칠 규칙이 몇 개 없을
때 한글 한 글자는 토큰 세 개가 된다. 영어 알파벳은 한 바이트라서 같은 조건에서 한 글자가 토큰 하나다.
"""

HELD_OUT = {
    "korean": KOREAN_HELD_OUT,
    "chinese": "我是一只猫。根本没有人知道这个词表是怎么做出来的。词表大小只是上限，可合并的对用完了就停下。",
    "japanese": "吾輩は猫である。名前はまだ無い。カタカナとひらがなと漢字が混ざった文章を往復させる。",
    "emoji_zwj": "team 👩‍💻🧑‍🤝‍🧑 family 👨‍👩‍👧‍👦 thumbs 👍🏽 flags 🇰🇷🇯🇵 keycap 1️⃣",
    "code": 'def f(x):\n\tif x > 10:\n\t\treturn f"{x:>8}"  # tab-indented\n    return None\n',
    "json": '{\n    "name": "tokviz",\n    "tags": [\n        "bpe",\n        "sentencepiece"\n    ]\n}\n',
    "spaces": "a    b        c\t\td\n\n\n   e  \r\n",
    "mixed": "Ünïcödé ｈｅｌｌｏ ① ﬁ ㍻ Ⅻ 3.14159 2026-11-30 <|endoftext|> \u200b\u00a0end",
}

CODE = '''\
def merge(ids, pair, idx):
    """Replace every occurrence of pair in ids with idx."""
    newids = []
    i = 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            newids.append(idx)
            i += 2
        else:
            newids.append(ids[i])
            i += 1
    return newids
'''

TRAINING = [ENGLISH, KOREAN, CODE, HELD_OUT["chinese"][:20], "😀 emoji 👍🏽 again 😀 and 👍🏽"]
