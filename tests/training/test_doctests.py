"""Every docstring example in tokviz.training runs and holds (a failing one prints what it got)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tokviz.training

MODULES = sorted(m.name for m in pkgutil.walk_packages(tokviz.training.__path__, "tokviz.training."))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    failed, _ = doctest.testmod(importlib.import_module(name))
    assert not failed, f"{failed} docstring examples of {name} fail (the output above says which)"


def test_the_examples_are_found() -> None:
    tried = sum(doctest.testmod(importlib.import_module(name)).attempted for name in MODULES)
    assert "tokviz.training._educational" in MODULES and "tokviz.training.extend" in MODULES and tried > 10
