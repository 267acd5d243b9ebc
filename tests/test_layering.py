"""The package layering of docs/architecture.md, checked on the source: lower layers never
import higher ones, and nothing hides an import inside a function."""

from __future__ import annotations

import ast
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


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py"))


def _package_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py") if rel.parts else ""


def _imported_packages(path: Path, tree: ast.AST) -> set[str]:
    """Top-level kubesched packages ``path`` imports."""
    rel = path.relative_to(ROOT)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = list(rel.parts[:-1])
                up = node.level - 1
                parts = base[: len(base) - up] if up else base
                target = parts + (node.module.split(".") if node.module else [])
                if not target:  # ``from .. import x`` at the top: x is the package
                    found.update(alias.name for alias in node.names if not alias.name.startswith("__"))
                else:
                    found.add(target[0])
            elif node.module and node.module.startswith("kubesched."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kubesched."):
                    found.add(alias.name.split(".")[1])
    return found


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
    package = _package_of(path)
    if package not in ALLOWED:
        return  # kubesched/__init__.py, conformance.py: top-level glue
    tree = ast.parse(path.read_text(), str(path))
    imported = _imported_packages(path, tree) - {package}
    forbidden = imported - ALLOWED[package]
    assert not forbidden, f"{package} may not import {sorted(forbidden)}"


CONTRACT_MODULES = ("interfaces", "handle", "views", "cycle_state", "events", "queued_pod", "status", "registry", "scoring")


@pytest.mark.parametrize("module", CONTRACT_MODULES)
def test_the_public_contract_has_no_any(module: str) -> None:
    tree = ast.parse((ROOT / "framework" / f"{module}.py").read_text())
    uses = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "Any"]
    uses += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "Any"]
    assert not uses, f"framework/{module}.py uses Any at lines {uses}"
