"""Every docstring example in tokviz.core, tokviz.analysis and tokviz.training runs and holds (a failing one prints
what it got)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tokviz.analysis
import tokviz.core
import tokviz.training

MODULES = sorted(
    m.name for package in (tokviz.core, tokviz.analysis, tokviz.training)
    for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    failed, _ = doctest.testmod(importlib.import_module(name))
    assert not failed, f"{failed} docstring examples of {name} fail (the output above says which)"


def tried(prefix: str) -> int:
    return sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES if n.startswith(prefix))


def test_the_examples_are_found() -> None:
    assert "tokviz.core.tokens" in MODULES and "tokviz.core.backends.chatglm" in MODULES and tried("tokviz.core.") >= 10
    assert "tokviz.training._educational" in MODULES and "tokviz.training.extend" in MODULES
    assert tried("tokviz.training.") > 10 and tried("tokviz.analysis.") >= 5
