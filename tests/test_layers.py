"""The house: align's modules form no import cycle, and an import inside a function is there only to keep start-up
fast. The layers themselves are pyproject.toml's import-linter contract, which `.ci/run` checks (`lint-imports`);
docs/architecture.md draws them.

Imports are read from the source (the ast), as import-linter reads them: an import under `if TYPE_CHECKING:` is an
annotation's and does not count; an import inside a function counts like any other for cycles.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import grimp
import pytest

from .conftest import ROOT

PACKAGE = ROOT / "align"
STANDARD = set(sys.stdlib_module_names) | {"__future__"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@dataclass(frozen=True)
class Import:
    module: str
    """The importing module."""
    line: int
    end_line: int
    targets: tuple[str, ...]
    """What the statement imports: modules of align (a package's submodule named in `from P import m` too) and
    other packages, by their full names."""


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> tuple[str, ...]:
    if isinstance(node, ast.Import):
        return tuple(a.name for a in node.names)
    if node.level:
        base = module.split(".")
        if MODULES[module].name != "__init__.py":
            base = base[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    return (target, *(f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES))


@cache
def _imports(module: str) -> tuple[tuple[Import, ...], tuple[Import, ...]]:
    """(the module-level imports, the imports inside functions) of one module."""
    top: list[Import] = []
    inner: list[Import] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    walk_one(other, in_function)
            else:
                walk_one(child, in_function)

    def walk_one(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found = Import(module, node.lineno, node.end_lineno or node.lineno, _targets(module, node))
            (inner if in_function else top).append(found)
        else:
            walk(node, in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(MODULES[module].read_text(encoding="utf-8")), False)
    return tuple(top), tuple(inner)


def _module_of(target: str) -> str | None:
    while target not in MODULES and "." in target:
        target = target.rsplit(".", 1)[0]
    return target if target in MODULES else None


def _outside(targets: tuple[str, ...]) -> set[str]:
    return {t.split(".")[0] for t in targets if not t.startswith("align") and t.split(".")[0] not in STANDARD}


def _inside(targets: tuple[str, ...]) -> set[str]:
    return {m for t in targets if t.startswith("align") and (m := _module_of(t)) is not None}


@cache
def _all_loads() -> dict[str, frozenset[str]]:
    """For each module, the packages outside align and Python's standard library that `import module` loads:
    its module-level imports', transitively, and its parent packages' (a least fixed point: packages and their
    children import each other)."""
    direct: dict[str, tuple[set[str], set[str]]] = {}
    for module in MODULES:
        targets = tuple(t for i in _imports(module)[0] for t in i.targets)
        parts = module.split(".")
        parents = {".".join(parts[:i]) for i in range(1, len(parts))} & set(MODULES)
        direct[module] = (_outside(targets), (_inside(targets) | parents) - {module})
    loads = {m: frozenset(libs) for m, (libs, _) in direct.items()}
    changed = True
    while changed:
        changed = False
        for module, (_, deps) in direct.items():
            grown = loads[module].union(*(loads[d] for d in deps))
            if grown != loads[module]:
                loads[module], changed = grown, True
    return loads


def _loads(module: str) -> frozenset[str]:
    return _all_loads()[module]


def _libraries(targets: tuple[str, ...]) -> frozenset[str]:
    """The packages outside align and the standard library that these imports load."""
    return frozenset(_outside(targets)).union(*(_loads(m) for m in _inside(targets)))


def test_no_module_of_align_is_on_an_import_cycle():
    graph = grimp.build_graph("align", exclude_type_checking_imports=True)
    on_cycles = sorted(m for m in graph.modules
                       if any(graph.find_shortest_chain(importer=d, imported=m) is not None
                              for d in graph.find_modules_directly_imported_by(m)))
    assert on_cycles == []


def test_an_import_inside_a_function_defers_a_library_and_says_so():
    """An import inside a function is lazy for a reason: it loads a library (z3, sympy, numpy, lark ...) that its
    module does not load, so that a command which never calls the function starts without it; and the comment
    above it (`# lazy: loads ...`) names them. Any other import belongs at the top of the module."""
    needless, undocumented = [], []
    for module, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        inner = _imports(module)[1]
        for i, found in enumerate(inner):
            deferred = _libraries(found.targets) - _loads(module)
            if not deferred:
                needless.append(f"{path.relative_to(ROOT)}:{found.line}")
                continue
            first = found
            for earlier in reversed(inner[:i]):  # the first import of this group of consecutive ones
                if earlier.end_line + 1 != first.line:
                    break
                first = earlier
            comment = lines[first.line - 2].strip()
            if not (comment.startswith("# lazy: loads ") and all(lib in comment for lib in deferred)):
                undocumented.append(f"{path.relative_to(ROOT)}:{found.line} ({', '.join(sorted(deferred))})")
    assert needless == [], "these imports load nothing their module does not: move them to the top"
    assert undocumented == [], "say what each lazy import defers: `# lazy: loads LIBRARY ...` above its group"


@pytest.mark.parametrize("argv", [
    ["--help"], ["explain", "usage"], ["check", "specs/freegap/alg2_svt_gap.dp"],
    *(["check", "--output-format", f, "specs/freegap/alg2_svt_gap.dp"] for f in ("json", "sarif", "github")),
], ids=lambda argv: " ".join(argv[:3]))
def test_the_commands_that_prove_nothing_load_no_solver(argv, tmp_path):
    """`align check` and `align explain` (the pre-commit hook, an editor) start without z3, sympy, numpy and
    scipy: python -X importtime shows them as most of a start-up."""
    probe = ("import contextlib, io, sys\nfrom align.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main(sys.argv[1:])\n"
             "    except SystemExit:\n        pass\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'z3', 'sympy', 'numpy', 'scipy'}))")
    env = {"ALIGN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=ROOT, capture_output=True, text=True, env=env,
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (a module's, a class's, a function's, an attribute's)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for statement in body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    found.add(id(statement.value))
    return found


def test_no_obligation_is_named_by_a_string_outside_its_registry():
    """An obligation is `ObligationId.C4A`, never "C4a", outside align/obligations.py: each back end's table is
    keyed by the enum and checked complete at import, so adding an obligation is a row in the registry and an
    entry in the tables that assert it (not a search for strings)."""
    from align.obligations import ObligationId

    names = {o.value for o in ObligationId}
    found = []
    for module, path in MODULES.items():
        if module == "align.obligations":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings]
    assert found == []
