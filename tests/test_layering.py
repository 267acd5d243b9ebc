"""The package layering of docs/architecture.md, checked on the source: lower layers never
import higher ones, no modules import each other in a circle, and nothing hides an import
inside a function.

What a module imports is read from every import statement in it (they are all at module
level, which ``test_no_module_imports_inside_a_function`` holds), those under
``if TYPE_CHECKING:`` included: a circle of annotations is still a circle for a reader, and
one moved import away from a circle at run time. ``import a.b.c`` names the module ``a.b.c``;
``from p import n`` names ``p``, whose namespace it reads, and ``p.n`` when that is a module
(so a module that takes a sibling through ``from . import sibling`` depends on its package's
face, and closes a circle when that face imports the module).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "kubesched"

# What each package may import from kubesched (besides itself).
ALLOWED: dict[str, set[str]] = {
    "objects": set(),
    "clock": set(),
    "framework": {"objects", "clock"},
    # Kubernetes' CEL (issue 28): framework only for apimachinery's field-error wording (``args.go_quote``).
    "cel": {"objects", "framework"},
    # The structured device allocator (issue 28): upstream's dynamic-resource-allocation/structured.
    "structured": {"objects", "cel"},
    "plugins": {"framework", "objects", "cel", "structured"},
    "cache": {"framework", "objects"},
    "queue": {"framework", "objects", "clock"},
    "scheduler": {"framework", "objects", "clock", "cel", "structured", "cache", "queue", "plugins"},
    "cluster": {"framework", "objects", "clock", "cel", "structured", "cache", "queue", "plugins", "scheduler"},
    "testing": {"framework", "objects", "clock", "cel", "structured", "cache", "queue", "plugins", "scheduler", "cluster"},
    "cli": {"framework", "objects", "clock", "cel", "structured", "cache", "queue", "plugins", "scheduler", "cluster"},
}
# Capacity planning and config comparison (issue 10) sit on the simulator; the commands use them.
ALLOWED["planning"] = {"framework", "objects", "clock", "cel", "structured", "cache", "queue", "plugins", "scheduler", "cluster"}
ALLOWED["cli"] = ALLOWED["cli"] | {"planning"}
# Trace replay and the FGD paper's experiment (issue 10) sit on the simulator too; `kubesched replay` uses them.
ALLOWED["replay"] = {"framework", "objects", "clock", "cel", "structured", "cache", "queue", "plugins", "scheduler", "cluster"}
ALLOWED["cli"] = ALLOWED["cli"] | {"replay"}
# Sweeps (issue 10) run replays and comparisons on Dask: above both, below the commands.
ALLOWED["sweep"] = ALLOWED["replay"] | {"replay", "planning"}
ALLOWED["cli"] = ALLOWED["cli"] | {"sweep"}
# The research API (issue 19): simulations and replays from Python, as tables; the commands write its tables.
ALLOWED["research"] = ALLOWED["replay"] | {"replay", "planning"}
ALLOWED["cli"] = ALLOWED["cli"] | {"research"}


def _modules(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in root.rglob("*.py"))


def _package_of(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root)
    return rel.parts[0].removesuffix(".py") if rel.parts else ""


def module_name(path: Path, root: Path = ROOT) -> str:
    """``kubesched.plugins.dynamicresources`` for ``kubesched/plugins/dynamicresources/__init__.py``."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def named_modules(path: Path, tree: ast.AST, root: Path = ROOT) -> set[str]:
    """What ``path``'s import statements name inside ``root``'s package (see the module's
    docstring); ``from p import n`` also gives ``p.n`` whether or not ``n`` is a module."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = package[: len(package) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names if not alias.name.startswith("__"))
    return {m for m in found if m.startswith(root.name + ".")}


def _imported_packages(path: Path, tree: ast.AST, root: Path = ROOT) -> set[str]:
    """Top-level packages of ``root`` that ``path`` imports."""
    return {m.split(".")[1] for m in named_modules(path, tree, root)}


def forbidden_imports(path: Path, allowed: Mapping[str, set[str]], root: Path = ROOT) -> set[str]:
    """The packages ``path`` imports that its own package may not (empty for top-level glue)."""
    package = _package_of(path, root)
    if package not in allowed:
        return set()  # kubesched/__init__.py, conformance.py: top-level glue
    tree = ast.parse(path.read_text(), str(path))
    return _imported_packages(path, tree, root) - {package} - allowed[package]


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of ``root``'s package and the modules of it that it imports."""
    paths = {module_name(p, root): p for p in _modules(root)}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = {m for m in named_modules(path, tree, root) if m in paths and m != name}
    return graph


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan's algorithm, iteratively),
    each sorted, sorted by their first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return sorted(found)


def _describe(circle: list[str], graph: Mapping[str, Iterable[str]]) -> str:
    inside = set(circle)
    arrows = [f"  {m} -> {t}" for m in circle for t in sorted(graph[m]) if t in inside]
    return "\n".join([f"{len(circle)} modules:", *arrows])


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_inside_a_function(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    hidden = [
        f"line {inner.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for inner in ast.walk(node)
        if isinstance(inner, (ast.Import, ast.ImportFrom))
    ]
    assert not hidden, f"{path.name}: imports inside functions at {', '.join(hidden)}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_lower_layers_do_not_import_higher_ones(path: Path) -> None:
    forbidden = forbidden_imports(path, ALLOWED)
    assert not forbidden, f"{_package_of(path)} may not import {sorted(forbidden)}"


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles (move what both sides share down):\n" + "\n".join(_describe(c, graph) for c in found)


# -- the checks themselves, on small trees ---------------------------------------------------------

def _tree(base: Path, files: Mapping[str, str]) -> Path:
    """A package ``kubesched`` under ``base`` with ``files`` (path inside it -> source)."""
    root = base / "kubesched"
    for rel, source in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root


def test_the_circle_check_finds_two_modules_importing_each_other_through_type_checking(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/search.py": "from .exhausted import pool_exhausted\n",
        "pkg/exhausted.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from .search import Attempt
            """,
    })
    assert circles(import_graph(root)) == [["kubesched.pkg.exhausted", "kubesched.pkg.search"]]


def test_the_circle_check_finds_a_circle_of_three_across_packages(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "a/__init__.py": "",
        "a/one.py": "import kubesched.b.two\n",
        "b/__init__.py": "",
        "b/two.py": "from ..c import three\n",
        "c/__init__.py": "",
        "c/three.py": "from kubesched.a.one import X\n",
    })
    assert circles(import_graph(root)) == [["kubesched.a.one", "kubesched.b.two", "kubesched.c.three"]]


def test_the_circle_check_finds_a_module_reading_its_package_face_that_imports_it(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "cel/__init__.py": "from .checker import check\n",
        "cel/celtypes.py": "",
        "cel/checker.py": "from . import celtypes as t\n",
    })
    assert circles(import_graph(root)) == [["kubesched.cel", "kubesched.cel.checker"]]


def test_the_circle_check_passes_a_tree_whose_imports_only_go_down(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "cel/__init__.py": "from .checker import check\n",
        "cel/celtypes.py": "",
        "cel/checker.py": "import kubesched.cel.celtypes as t\nfrom .celtypes import CelType\n",
        "structured/__init__.py": "from .allocator import Allocator\n",
        "structured/allocator.py": "from kubesched.cel import check\nfrom .search import Attempt\n",
        "structured/search.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .records import State\n",
        "structured/records.py": "from ..cel.celtypes import CelType\n",
    })
    assert circles(import_graph(root)) == []


def test_the_layer_check_reports_an_arrow_up_even_under_type_checking(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "structured/__init__.py": "",
        "structured/search.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..plugins.dynamicresources import state\n",
        "plugins/__init__.py": "",
        "plugins/dynamicresources/__init__.py": "",
        "plugins/dynamicresources/state.py": "",
    })
    assert forbidden_imports(root / "structured" / "search.py", ALLOWED, root) == {"plugins"}


def test_the_layer_check_lets_a_layer_import_those_below_it(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "plugins/__init__.py": "",
        "plugins/dra.py": "from ..structured import Allocator\nfrom kubesched.cel import CelCache\nfrom .. import objects\n",
    })
    assert forbidden_imports(root / "plugins" / "dra.py", ALLOWED, root) == set()


CONTRACT_MODULES = ("interfaces", "handle", "views", "cycle_state", "events", "queued_pod", "status", "registry", "scoring")


@pytest.mark.parametrize("module", CONTRACT_MODULES)
def test_the_public_contract_has_no_any(module: str) -> None:
    tree = ast.parse((ROOT / "framework" / f"{module}.py").read_text())
    uses = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "Any"]
    uses += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "Any"]
    assert not uses, f"framework/{module}.py uses Any at lines {uses}"
