"""Every docstring example of every tokviz module runs and holds (a failing one prints what it
got); a module without examples is reported as skipped, never counted as passing."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tokviz

#: every module but the entry points (`__main__` runs a program when imported as such)
MODULES = sorted(m.name for m in pkgutil.walk_packages(tokviz.__path__, "tokviz.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str, qapp) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    if not any(test.examples for test in finder.find(module)):
        pytest.skip(f"{name} has no docstring examples")
    failed, attempted = doctest.testmod(module)
    assert not failed, f"{failed} docstring examples of {name} fail (the output above says which)"
    if not attempted:
        pytest.skip(f"every docstring example of {name} is marked +SKIP")


def tried(prefix: str) -> int:
    return sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES if n.startswith(prefix))


def test_the_examples_are_found(qapp) -> None:
    assert {"tokviz.core.tokens", "tokviz.core.backends.chatglm", "tokviz.cli.errors", "tokviz.gui.work.inbox",
            "tokviz.service.protocol", "tokviz.core.encoding"} <= set(MODULES)
    assert tried("tokviz.core.") >= 10 and tried("tokviz.training.") > 10 and tried("tokviz.analysis.") >= 5
    assert tried("tokviz.cli.errors") >= 3 and tried("tokviz.gui.") >= 5
