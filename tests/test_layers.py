"""The import layers of isrlab's packages, and no import circle (docs/architecture.md).

Every module's imports are read from its source (``ast``): those at module level, those
inside functions, and those under ``if TYPE_CHECKING:`` (a type-only import still ties the
two modules together for mypy and for the reader).  Each module belongs to one layer; a
layer may import only the layers ``ALLOWED`` lists, and the graph of imports between
modules has no circle.  ``python tests/test_layers.py`` prints the graph: every import
between two layers, then every import made inside a function, with its reason to be there.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "checker", "spec", "spark_explore", "proofs")
"""The folders the wheel installs as ``isrlab.<folder>`` (the checkout links them there)."""

APP = "application"
LAYERS = ("core", "checker", "spec", "spark_explore", "proofs", APP)
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset({"core"}),
    "checker": frozenset({"checker"}),
    "spec": frozenset({"core", "checker", "spec"}),
    "spark_explore": frozenset({"checker", "spark_explore"}),
    "proofs": frozenset({"core", "checker", "spec", "proofs"}),
    APP: frozenset(LAYERS),
}
"""What each layer may import.  core is Kafka's broker code and imports nothing else; the
checker is generic (it knows nothing of Kafka, so not core either); spec builds the models
from both; spark_explore is a second engine beside spec, built on the checker alone;
proofs state obligations over spec's encodings; the application layer (the ``isrlab``
package's own modules: cli, the ``*_cmd`` commands, api, demo, the explorer, the pytest
plugin, the model registry) may import every layer and nothing imports it."""

CORE_THIRD_PARTY = frozenset({"returns"})
"""The one library core/ may import beside the standard library (errors as values)."""


@dataclass(frozen=True, slots=True)
class Import:
    """One import of an isrlab module by another."""

    source: str
    target: str
    where: str  # "module", "function" or "typing" (under ``if TYPE_CHECKING:``)
    line: int


def module_files() -> dict[str, Path]:
    """Every isrlab module by its installed name (``isrlab.core.partition`` ...); stubs of
    compiled extensions (``_native.pyi``) name modules too."""
    files: dict[str, Path] = {}
    sources = [p for top in PACKAGES for p in sorted((ROOT / top).rglob("*.py*"))]
    sources += sorted((ROOT / "isrlab").glob("*.py"))
    sources += sorted((ROOT / "isrlab" / "services").glob("*.py"))
    for path in sources:
        if path.suffix not in (".py", ".pyi"):
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[0] == "isrlab":
            parts = parts[1:]
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        files.setdefault(".".join(["isrlab", *parts]), path)
    return files


def layer(module: str) -> str:
    """The layer of an isrlab module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else APP


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _raw_imports(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with where it is (module, function or typing)."""
    def walk(node: ast.AST, where: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner = "function"
            elif isinstance(child, ast.If) and where == "module" and _is_type_checking(child.test):
                yield from walk(ast.Module(body=child.body, type_ignores=[]), "typing")
                yield from walk(ast.Module(body=child.orelse, type_ignores=[]), "module")
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, where
            yield from walk(child, inner)
    yield from walk(tree, "module")


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is an isrlab module."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def imports_of(module: str, modules: dict[str, Path]) -> list[Import]:
    """The isrlab modules ``module`` imports (``from pkg import sub`` counts as ``pkg.sub``
    when ``sub`` is a module)."""
    path = modules[module]
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    out = []
    for node, where in _raw_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            target = _known(name, modules)
            if target is not None and target != module:
                out.append(Import(module, target, where, node.lineno))
    return out


def all_imports() -> list[Import]:
    """Every import between two isrlab modules."""
    modules = module_files()
    return [imp for module in sorted(modules) for imp in imports_of(module, modules)]


def circles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
        graph.setdefault(target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def _show(imp: Import) -> str:
    return f"{imp.source} -> {imp.target} ({imp.where}, line {imp.line})"


IMPORTS = all_imports()


def test_the_scan_sees_every_package() -> None:
    modules = module_files()
    assert {layer(m) for m in modules} == set(LAYERS)
    assert "isrlab.spec.tla._native" in modules  # a compiled extension, by its stub
    edges = {(i.source, i.target) for i in IMPORTS}
    # module-level, function-level and type-only imports are all read
    assert ("isrlab.cli", "isrlab.check_cmd") in edges
    assert {i.where for i in IMPORTS} == {"module", "function", "typing"}


def test_every_import_respects_the_layers() -> None:
    wrong = [_show(i) for i in IMPORTS
             if layer(i.target) not in ALLOWED[layer(i.source)]]
    assert not wrong, "imports against the layers (docs/architecture.md):\n" + "\n".join(wrong)


def _packages_of(module: str) -> set[str]:
    """The packages Python imports before ``module`` (``a.b`` and ``a`` for ``a.b.c``)."""
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def import_edges(imports: list[Import], modules: Iterable[str]) -> set[tuple[str, str]]:
    """Who imports whom: each import, and the packages of its target that are not packages of
    its source (importing ``a.b.c`` runs ``a/b/__init__.py`` first)."""
    known = set(modules)
    edges = {(i.source, i.target) for i in imports}
    for i in imports:
        for package in _packages_of(i.target) - _packages_of(i.source) - {i.source}:
            if package in known:
                edges.add((i.source, package))
    return edges


def test_no_import_circle() -> None:
    edges = import_edges(IMPORTS, module_files())
    found = circles(edges)
    lines = [" <-> ".join(c) + "\n    " + "\n    ".join(
        _show(i) for i in IMPORTS if i.source in c and i.target in c) for c in found]
    assert not found, "import circles:\n" + "\n".join(lines)


def test_a_package_init_counts_as_imported() -> None:
    """``isrlab.spec.invariants`` imports ``isrlab.spec.kafka.params``, which runs
    ``isrlab/spec/kafka/__init__.py`` first: an import of ``isrlab.spec.invariants`` there
    is a circle, though no module names the other."""
    imports = [Import("p.inv", "p.kafka.params", "module", 1),
               Import("p.kafka", "p.inv", "module", 1)]
    edges = import_edges(imports, ["p", "p.inv", "p.kafka", "p.kafka.params"])
    assert circles(edges) == [["p.inv", "p.kafka"]]


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]
    assert circles({("a", "b"), ("b", "c")}) == []


def test_the_root_package_imports_no_isrlab_module() -> None:
    # isrlab/__init__.py runs before any isrlab.<layer> module: it must stay below them all.
    assert [_show(i) for i in IMPORTS if i.source == "isrlab"] == []


def test_the_scan_reads_the_services() -> None:
    edges = {(i.source, i.target) for i in IMPORTS}
    assert ("isrlab.api", "isrlab.services.runs") in edges
    assert ("isrlab.services.runs", "isrlab.services.engines") in edges


def test_only_the_command_line_imports_a_command() -> None:
    # A command (isrlab/*_cmd.py) parses its options and prints; what it does beyond that
    # lives in isrlab.services, which the API, the explorer and the other commands share.
    wrong = [_show(i) for i in IMPORTS if i.target.endswith("_cmd") and i.source != "isrlab.cli"]
    assert wrong == []


def test_core_imports_only_the_standard_library_and_returns() -> None:
    modules = module_files()
    foreign = []
    for module, path in sorted(modules.items()):
        if layer(module) != "core" or path.suffix != ".py":
            continue
        for node, _ in _raw_imports(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [] if node.level else [node.module or ""])
            foreign += [f"{module}: {n}" for n in names
                        if n.split(".")[0] not in sys.stdlib_module_names | CORE_THIRD_PARTY
                        | {"isrlab"}]
    assert not foreign, "core/ imports beyond the standard library and returns:\n" + "\n".join(
        foreign)


@pytest.mark.parametrize("source", ["core", "checker", "spec", "spark_explore", "proofs"])
def test_a_layer_imports_no_application_module(source: str) -> None:
    # The rule ALLOWED states, spelled out per layer for a readable failure.
    up = [_show(i) for i in IMPORTS if layer(i.source) == source and layer(i.target) == APP]
    assert up == []


def main() -> None:
    """Print the imports between layers, then every import made inside a function."""
    between: dict[tuple[str, str], int] = {}
    for i in IMPORTS:
        pair = (layer(i.source), layer(i.target))
        if pair[0] != pair[1]:
            between[pair] = between.get(pair, 0) + 1
    print("imports between layers (source -> target: count)")
    for (source, target), count in sorted(between.items()):
        print(f"  {source} -> {target}: {count}")
    print("imports inside functions")
    for i in IMPORTS:
        if i.where == "function":
            print("  " + _show(i))
    print("circles:", circles({(i.source, i.target) for i in IMPORTS}) or "none")


if __name__ == "__main__":
    main()
