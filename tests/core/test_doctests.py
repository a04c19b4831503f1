"""Every docstring example in tokviz.core runs and holds (a failing one prints what it got)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tokviz.core

MODULES = sorted(m.name for m in pkgutil.walk_packages(tokviz.core.__path__, "tokviz.core."))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    failed, _ = doctest.testmod(importlib.import_module(name))
    assert not failed, f"{failed} docstring examples of {name} fail (the output above says which)"


def test_the_examples_are_found() -> None:
    tried = sum(doctest.testmod(importlib.import_module(name)).attempted for name in MODULES)
    assert "tokviz.core.tokens" in MODULES and "tokviz.core.backends.chatglm" in MODULES and tried >= 10
