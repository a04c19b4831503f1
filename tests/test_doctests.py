"""Every docstring example of every tokviz module runs and holds (a failing one prints what it
got); a module without examples is reported as skipped, never counted as passing."""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import tokviz


def guarded(source: str) -> bool:
    """Whether importing a module's `source` only defines things: its program, if any, runs under
    `if __name__ == "__main__":`."""
    main_guard = ast.dump(ast.parse('__name__ == "__main__"', mode="eval").body)
    definitions = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
                   ast.AnnAssign)

    def defines(node: ast.stmt) -> bool:
        if isinstance(node, ast.If):
            return ast.dump(node.test) == main_guard and not node.orelse
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        return docstring or isinstance(node, definitions)

    return all(defines(node) for node in ast.parse(source).body)


def importable(name: str) -> bool:
    """Every module but an entry point (`__main__`) that runs its program when imported."""
    if not name.endswith("__main__"):
        return True
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.origin is not None and guarded(Path(spec.origin).read_text("utf-8"))


#: every module whose import runs no program
MODULES = sorted(m.name for m in pkgutil.walk_packages(tokviz.__path__, "tokviz.") if importable(m.name))


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
            "tokviz.service.protocol", "tokviz.core.encoding", "tokviz.__main__"} <= set(MODULES)
    assert tried("tokviz.core.") >= 10 and tried("tokviz.training.") > 10 and tried("tokviz.analysis.") >= 5
    assert tried("tokviz.cli.errors") >= 3 and tried("tokviz.gui.") >= 5


@pytest.mark.parametrize("source, expected", [
    ('"""Doc."""\nimport sys\ndef main(): ...\nif __name__ == "__main__":\n    sys.exit(main())', True),
    ("import sys\nsys.exit(main())", False),  # runs on import
    ('if __name__ != "__main__":\n    main()', False),
    ('if __name__ == "__main__":\n    main()\nelse:\n    other()', False),
])
def test_an_entry_point_is_imported_only_when_its_program_is_guarded(source, expected) -> None:
    assert guarded(source) is expected
