"""The shape of the package, beyond the import contract.

The layers, which packages may import Qt, and no cycles between the subpackages or modules of one
package are the import contract in pyproject.toml (`lint-imports`, which scripts/test.sh runs
before the tests). Here: no import cycle between any two modules, wherever they live, and the
Qt-free parts stay Qt-free when they run (the contract reads imports; this imports the modules and
looks at what got loaded).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import grimp

# Cycles still to be removed, as (importer, imported) of one import on each; keep in step with the
# contract's ignore_imports in pyproject.toml.
KNOWN_CYCLES: set[tuple[str, str]] = set()


def cycle_imports(graph: grimp.ImportGraph) -> Iterator[tuple[str, str]]:
    """Yield each direct import `(importer, imported)` that lies on a cycle: `imported` leads back."""
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported != importer and graph.chain_exists(importer=imported, imported=importer):
                yield importer, imported


def test_cycle_imports_are_the_imports_on_a_loop():
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.e", "p.a")]:
        graph.add_import(importer=importer, imported=imported)
    assert sorted(cycle_imports(graph)) == [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a")]
    graph.remove_import(importer="p.c", imported="p.a")
    assert list(cycle_imports(graph)) == []


def test_no_import_cycles():
    # Imports inside functions and under TYPE_CHECKING count: a lazy import is still a dependency,
    # and a cycle held together by one is still a cycle.
    graph = grimp.build_graph("tokviz")
    for importer, imported in KNOWN_CYCLES:
        graph.remove_import(importer=importer, imported=imported)
    found = []
    for importer, imported in cycle_imports(graph):
        lines = sorted({d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)})
        found.append(f"{importer} -> {imported} (line {', '.join(map(str, lines))})")
    assert not found, "imports on a cycle:\n" + "\n".join(found)


def test_core_and_cli_do_not_import_qt():
    code = (
        "import sys, tokviz.core.catalog, tokviz.core.fetch, tokviz.core.decoding, tokviz.cli, "
        "tokviz.core.backends.tiktoken_backend\n"
        "import tokviz.training, tokviz.analysis.vocabulary, tokviz.analysis.replay, tokviz.analysis.pipeline\n"
        "import tokviz.service.client, tokviz.service.server, tokviz.core.encoding, tokviz.model.compare\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'superqt'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
