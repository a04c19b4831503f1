"""Rendering chat templates as transformers does: real templates, provenance, errors, the sandbox, limits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analysis.chat_helpers import CONVERSATION, NOW, gguf_file, reference_render
from tokviz.analysis.chat_sources import gguf_templates
from tokviz.analysis.chat_template import TEMPLATE, ChatTemplate, ChatTemplateError, Limits

GGUF_WITH_TEMPLATES = ["qwen2", "qwen35", "phi-3", "command-r", "gemma-4"]

TOOLS = [{"type": "function", "function": {
    "name": "add", "description": "Add two numbers. Ünïcode stays.",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                   "required": ["a", "b"]}}}]
TOOL_CHAT = [
    {"role": "user", "content": "What is 2+2?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
    {"role": "tool", "name": "add", "content": "4"},
    {"role": "assistant", "content": "It is 4."},
]


@pytest.mark.parametrize("name", GGUF_WITH_TEMPLATES)
@pytest.mark.parametrize("generation_prompt", [False, True])
def test_real_gguf_templates_render_as_transformers_settings_do(name, generation_prompt):
    templates = gguf_templates(gguf_file(name))
    template = templates["default"]
    assert "bos_token" in template.special_strings or "eos_token" in template.special_strings
    rendered = template.render(CONVERSATION, add_generation_prompt=generation_prompt, now=NOW)
    expected = reference_render(
        template.source, messages=CONVERSATION, add_generation_prompt=generation_prompt, **template.special_strings
    )
    assert rendered.text == expected
    assert len(expected) > sum(len(m["content"].strip()) for m in CONVERSATION)
    # every message whose text the template kept is located, in order, and is that message's text
    located = [run.message for run in rendered.runs]
    assert located == sorted(located) and set(located) >= {1, 2, 3}
    for run in rendered.runs:
        assert rendered.text[run.start:run.end] in CONVERSATION[run.message]["content"]


COHERE_TOOLS = [{"name": "add", "description": "Add two numbers",
                 "parameter_definitions": {"a": {"description": "first", "type": "float", "required": True},
                                           "b": {"description": "second", "type": "float", "required": False}}}]


def test_command_r_named_templates_with_tools():
    templates = gguf_templates(gguf_file("command-r"))
    assert {"default", "tool_use", "rag"} <= set(templates)
    tool_use = templates["tool_use"]
    rendered = tool_use.render(TOOL_CHAT[:1], tools=COHERE_TOOLS, add_generation_prompt=True, now=NOW)
    expected = reference_render(tool_use.source, messages=TOOL_CHAT[:1], tools=COHERE_TOOLS,
                                add_generation_prompt=True, **tool_use.special_strings)
    assert rendered.text == expected and "def add(a: float, b: Optional[float] = None)" in expected


def test_gemma_4_tool_calls_and_tool_messages():
    template = gguf_templates(gguf_file("gemma-4"))["default"]
    rendered = template.render(TOOL_CHAT, tools=TOOLS, add_generation_prompt=True, now=NOW)
    expected = reference_render(template.source, messages=TOOL_CHAT, tools=TOOLS, add_generation_prompt=True,
                                **template.special_strings)
    assert rendered.text == expected
    assert "Ünïcode" in expected
    # the tool call's name and the tool's answer are the messages' own text
    assert [(r.message, expected[r.start:r.end]) for r in rendered.runs] == \
        [(0, "What is 2+2?"), (1, "add"), (2, "4"), (3, "It is 4.")]


def test_tojson_keeps_non_ascii_and_takes_transformers_options():
    template = ChatTemplate("{{ tools | tojson }}|{{ tools[0] | tojson(indent=1, sort_keys=True) }}")
    tools = [{"b": "日本", "a": "<é>"}]
    assert template.render([], tools=tools).text == \
        '[{"b": "日本", "a": "<é>"}]|{\n "a": "<é>",\n "b": "日本"\n}'


def test_template_keyword_arguments_reach_the_template():
    template = ChatTemplate("{% if enable_thinking is defined and not enable_thinking %}<no-think>{% endif %}"
                            "{% for m in messages %}{{ m.content }}{% endfor %}")
    assert template.render(CONVERSATION[1:2], enable_thinking=False).text == "<no-think>  What is 2+2?  "
    assert template.render(CONVERSATION[1:2]).text == "  What is 2+2?  "


def test_strftime_now_and_special_strings():
    template = ChatTemplate("{{ bos_token }}{{ strftime_now('%d %b %Y') }}{{ eos_token }}",
                            special_strings={"bos_token": "<s>", "eos_token": "</s>"})
    assert template.render([], now=NOW).text == "<s>02 Jan 2026</s>"


OPS = (
    "{% for m in messages %}[{{ m.content | trim }}|{{ m.content.split(',')[-1] }}|{{ m.content[1:4] }}"
    "|{{ m.content.replace('a', 'XY') }}|{% set s %}{{ m.content.lstrip() }}{% endset %}{{ s ~ '!' }}"
    "|{{ (m.content + '#').rstrip('#') }}|{{ m.content.upper() }}]{% endfor %}"
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab, \n<|>é日"), max_size=12), min_size=1, max_size=3))
def test_provenance_survives_string_operations(contents):
    messages = [{"role": "user", "content": c} for c in contents]
    rendered = ChatTemplate(OPS).render(messages)
    assert rendered.text == reference_render(OPS, messages=messages)
    for run in rendered.runs:
        assert rendered.text[run.start:run.end] in contents[run.message]
    template_chars = sum(end - start for start, end in rendered.template_spans())
    assert template_chars + sum(r.end - r.start for r in rendered.runs) == len(rendered.text)
    # the replacement text is the template's: no run holds "XY" unless the content had it
    for run in rendered.runs:
        assert "XY" not in rendered.text[run.start:run.end] or "XY" in contents[run.message]


def test_roles_are_template_text_and_content_is_the_message():
    rendered = ChatTemplate("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}").render(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    assert rendered.text == "<user>hi<assistant>yo"
    assert [rendered.origin_at(i) for i in range(len(rendered.text))] == \
        [TEMPLATE] * 6 + [0, 0] + [TEMPLATE] * 11 + [1, 1]


# -- errors -------------------------------------------------------------------------------------

def test_a_syntax_error_names_the_line_and_the_message():
    with pytest.raises(ChatTemplateError) as info:
        ChatTemplate("{% for m in messages %}\n{{ m.content }\n{% endfor %}", name="broken.jinja")
    assert info.value.line == 2
    assert str(info.value).startswith("broken.jinja line 2: ")
    assert "unexpected '}'" in info.value.message


def test_raise_exception_names_the_line_and_the_templates_message():
    source = (
        "{% for m in messages %}\n"
        "{% if m.role == 'system' %}\n"
        "{{ raise_exception('System role not supported') }}\n"
        "{% endif %}{% endfor %}"
    )
    with pytest.raises(ChatTemplateError) as info:
        ChatTemplate(source).render(CONVERSATION)
    assert (info.value.line, info.value.message) == (3, "System role not supported")


def test_a_python_error_inside_a_template_is_a_template_error():
    with pytest.raises(ChatTemplateError, match=r"template line 2: TypeError"):
        ChatTemplate("ok\n{{ messages[0].content - 1 }}").render(CONVERSATION)


@pytest.mark.parametrize("source", [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ raise_exception.__globals__['__builtins__']['open']('/etc/passwd').read() }}",
    "{{ messages.__class__.__base__ }}",
    "{% set x = [] %}{{ x.append(1) }}",
    "{{ messages[0].update({'role': 'x'}) }}",
])
def test_the_sandbox_refuses_internals_and_mutation(source):
    with pytest.raises(ChatTemplateError, match="refused by the sandbox"):
        ChatTemplate(source).render(CONVERSATION)


def test_private_attributes_are_undefined_not_read():
    assert ChatTemplate("[{{ self._TemplateReference__context }}{{ messages[0].content._runs }}]").render(
        CONVERSATION).text == "[]"


@pytest.mark.parametrize("source", ["{% include '/etc/passwd' %}", "{% import 'os' as os %}{{ os }}",
                                    "{% extends '/etc/hostname' %}"])
def test_a_template_cannot_read_files(source):
    with pytest.raises(ChatTemplateError) as info:
        ChatTemplate(source).render(CONVERSATION)
    assert "root:" not in str(info.value)


def test_a_loop_without_end_is_stopped_by_the_step_budget():
    source = "{% for i in range(100000) %}\n{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with pytest.raises(ChatTemplateError, match=r"stopped after 50,000 steps") as info:
        ChatTemplate(source).render([], limits=Limits(steps=50_000))
    assert info.value.line in (1, 2)


def test_loops_over_content_are_charged_too():
    source = "{% for a in messages[0].content %}{% for b in messages[0].content %}{% endfor %}{% endfor %}"
    with pytest.raises(ChatTemplateError, match="steps"):
        ChatTemplate(source).render([{"role": "user", "content": "x" * 1000}], limits=Limits(steps=10_000))
    assert ChatTemplate(source).render([{"role": "user", "content": "x" * 50}], limits=Limits(steps=10_000)).text == ""


@pytest.mark.parametrize("source", [
    "{% for i in range(1000) %}0123456789{% endfor %}",
    "{{ 'x' * 100000000000 }}",
    "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
    "{% macro m() %}{% for i in range(1000) %}0123456789{% endfor %}{% endmacro %}{% set x = m() %}",
    "{{ 'x'.ljust(100000000000) }}",
])
def test_huge_output_is_stopped_before_it_is_built(source):
    with pytest.raises(ChatTemplateError, match=r"stopped.*5,000"):
        ChatTemplate(source).render([], limits=Limits(chars=5_000))


@pytest.mark.parametrize("source", [
    "{{ '{:>1000000000}'.format('x') }}",  # each took 1-4 GB before the value was looked at
    "{{ '{:>{w}}'.format('x', w=1000000000) }}",
    "{{ '{0:{1}}'.format('x', 1000000000) }}",
    "{{ '{:.1000000000f}'.format(1.5) }}",
    "{{ '{a:>999999999}'.format_map({'a': 'x'}) }}",
    "{{ '%1000000000s' % 'x' }}",
    "{{ '%*s' % (1000000000, 'x') }}",
    "{{ '%1000000000s'|format('x') }}",
    "{{ 'x'|center(1000000000) }}",
    "{{ 'a\nb'|indent(1000000000) }}",  # ran for over 90 s
    "{{ ('\t' * 4000).expandtabs(1000000) }}",
    "{{ ('x' * 4000).replace('x', 'y' * 100) }}",
    "{{ ('x' * 4000)|replace('x', 'y' * 100) }}",
    "{{ ('x' * 4000).translate({120: 'y' * 100}) }}",
    "{{ ('x' * 4000)|wordwrap(1, wrapstring='y' * 100) }}",
    "{{ [1]|batch(1000000000, 'x')|list }}",
    "{{ [1]|slice(1000000000)|list }}",
    "{{ lipsum(n=1000000) }}",
])
def test_one_call_that_would_build_a_huge_value_is_stopped_before_it_runs(source):
    with pytest.raises(ChatTemplateError, match=r"stopped: (the template asks for a value of more than|a string "
                                                 r"wider than) 5,000") as info:
        ChatTemplate(source).render([], limits=Limits(chars=5_000))
    assert "built" not in str(info.value)  # stopped before, not after the value was made


def test_slow_filters_and_huge_json_indents_are_stopped():
    with pytest.raises(ChatTemplateError, match=r"wordwrap would cut a word of 1,000,000 characters into lines of 1"):
        ChatTemplate("{{ ('x' * 1000000)|wordwrap(1) }}").render([])  # textwrap: 730 MB and over 90 s
    with pytest.raises(ChatTemplateError, match=r"tojson with an indent of 1,000,000,000 \(more than 1,000\)"):
        ChatTemplate("{{ messages|tojson(indent=1000000000) }}").render([{"role": "user", "content": "x"}])


@pytest.mark.parametrize("source, text", [
    ("{{ '{:>5}|{:.2f}'.format('ab', 1.5) }}", "   ab|1.50"),
    ("{{ '%-4s|%03d' % ('ab', 7) }}", "ab  |007"),
    ("{{ '%s!'|format('hi') }}", "hi!"),
    ("{{ 'ab'|center(6) }}|{{ 'a\nb'|indent(2) }}|{{ 'a b c'|wordwrap(3) }}", "  ab  |a\n  b|a b\nc"),
    ("{{ 'a\tb'.expandtabs(4) }}{{ 'aXa'.replace('a', 'bb') }}{{ 'ab'|replace('b', 'c') }}", "a   bbbXbbac"),
    ("{{ messages|tojson(indent=2) }}", '[\n  {\n    "role": "user"\n  }\n]'),
    ("{{ [1, 2, 3]|batch(2, 0)|list }}", "[[1, 2], [3, 0]]"),
])
def test_the_guarded_operations_still_give_what_they_give(source, text):
    assert ChatTemplate(source).render([{"role": "user"}]).text == text


def test_huge_numbers_and_recursion_are_stopped():
    with pytest.raises(ChatTemplateError, match="number too large"):
        ChatTemplate("{{ 9 ** 99999 }}").render([])
    with pytest.raises(ChatTemplateError, match="recurses"):
        ChatTemplate("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").render([])


def test_the_deadline_is_checked_at_the_step_points():
    # a deadline already past (seconds < 0): stopped at the first check, after 4,096 steps, whatever the clock
    with pytest.raises(ChatTemplateError, match=r"stopped after -1 s"):
        ChatTemplate("{% for i in range(100000) %}{% endfor %}").render([], limits=Limits(seconds=-1))
    assert ChatTemplate("{% for i in range(100) %}{% endfor %}ok").render([], limits=Limits(seconds=-1)).text == "ok"
