"""The package reads as the pipeline: stages as folders, small modules, imports only going down."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "jury"
STAGES = ["inputs", "execution", "compare", "judging", "verdicts", "results", "pipeline", "web", "jobs", "cli"]
# the packages below every stage, not stages of the pipeline: the statistics and the options
# models (issue 45: each job's options, read by the library and the command line alike)
BELOW = ["stats", "options"]
# the statistics: one package
STATS = ["agreement", "core", "correction", "dependence", "latent", "panels", "repeats", "sampling", "uncertainty"]


def test_every_stage_is_a_package_and_nothing_else_is():
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted([*STAGES, *BELOW])
    for stage in [*STAGES, *BELOW]:
        assert (PACKAGE / stage / "__init__.py").is_file(), stage
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "errors.py", "plugins.py", "progress.py", "version.py", "vocab.py"]


def test_the_statistics_are_one_package_that_re_exports_nothing():
    """jury/stats/ holds its modules and an __init__ that is only a docstring naming each of them."""
    import ast

    stats = PACKAGE / "stats"
    assert sorted(p.stem for p in stats.glob("*.py") if p.name != "__init__.py") == STATS
    assert not [p for p in stats.iterdir() if p.is_dir() and p.name != "__pycache__"]
    init = ast.parse((stats / "__init__.py").read_text(encoding="utf-8"))
    assert len(init.body) == 1 and isinstance(init.body[0], ast.Expr), "jury/stats/__init__.py holds only its docstring"
    doc = ast.get_docstring(init) or ""
    assert all(f":mod:`jury.stats.{name}`" in doc for name in STATS), doc


def test_import_contract_holds():
    """lint-imports of the interpreter running the tests, whatever PATH says: the script beside
    sys.executable, else the same entry point run by it (a virtualenv borrowing its packages).
    import-linter is a dev dependency, so a missing one fails rather than skips."""
    exe = Path(sys.executable).parent / "lint-imports"
    entry = "import sys; from importlinter.cli import lint_imports_command; sys.argv = ['lint-imports']; lint_imports_command()"
    cmd = [str(exe)] if exe.is_file() else [sys.executable, "-c", entry]
    proc = subprocess.run(cmd, cwd=PACKAGE.parent, capture_output=True, text=True)
    assert "No module named 'importlinter'" not in proc.stderr, f"import-linter is not installed for {sys.executable}"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " kept, 0 broken" in proc.stdout


# ------------------------------------------------------------------ cohesion (issue 31)
# A module is one responsibility, whatever its length: no two modules import each other (not even
# through others), no module reaches into another's `_private` names, and a name is imported
# from the module that defines it (no re-export shims; the checks below catch the private ones).


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one node, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_circle_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _strongly_connected(graph) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_between_modules():
    import grimp

    g = grimp.build_graph("jury")  # every import, TYPE_CHECKING and function-level ones too
    graph = {m: {d for d in g.find_modules_directly_imported_by(m) if d.startswith("jury")} for m in g.modules}
    assert _strongly_connected(graph) == []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent / dotted.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def private_imports(path: Path) -> list[str]:
    """`from jury.x import _y` and `x._y` (x a jury module) in the module at `path`, x not itself."""
    import ast

    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}  # local name -> the jury module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            if not source.startswith("jury"):
                continue
            for alias in node.names:
                if _is_private(alias.name) and source != here:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: from {source} import {alias.name}")
                elif _is_module(f"{source}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("jury") and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name):
            target = modules.get(node.value.id)
            if target is not None and target != here:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {target}.{node.attr}")
    return found


def test_the_private_import_check_sees_both_forms(tmp_path, monkeypatch):
    fake = PACKAGE / "judging" / "runner.py"  # a real module's path, its text replaced
    text = (
        "from jury.execution.store import _holder\n"
        "from jury.judging.runner import _own\n"
        "from jury.execution import engines\n"
        "engines._secret\n"
        "from . import plan as p\n"
        "p._thing\n"
        "store_object._attribute\n"
    )
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: text if self == fake else "")
    assert private_imports(fake) == [
        "jury/judging/runner.py:1: from jury.execution.store import _holder",
        "jury/judging/runner.py:4: jury.execution.engines._secret",
        "jury/judging/runner.py:6: jury.judging.plan._thing",
    ]


def test_no_module_imports_another_modules_private_names():
    found = [line for path in sorted(PACKAGE.rglob("*.py")) for line in private_imports(path)]
    assert found == []


# classes two modules still both name (issue 45: one class per name), each with why; the list may only shrink
SHARED_CLASS_NAMES = {
    "GoldCheck": "jury.vocab's check names beside jury.check_gold's result (both public)",
    "_Model": "each result model module's private pydantic base (never imported elsewhere)",
}


def test_one_class_per_name():
    """A class name is defined in one module of jury/ (a reader who meets `Report` knows which),
    but the ones SHARED_CLASS_NAMES lists with their reason."""
    import ast
    from collections import defaultdict

    where: defaultdict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(path.relative_to(PACKAGE)))
    shared = {name: modules for name, modules in where.items() if len(modules) > 1}
    assert set(shared) <= set(SHARED_CLASS_NAMES), {n: m for n, m in shared.items() if n not in SHARED_CLASS_NAMES}
    assert set(SHARED_CLASS_NAMES) <= set(shared), f"no longer shared, so off the list: {set(SHARED_CLASS_NAMES) - set(shared)}"


# ------------------------------------------------------------------ imports at module level (issue 45)
# An import sits in a function body only when it saves start-up: the module it names is not
# already loaded by importing the module around it, or loading it there would close a circle.


def _jury_targets(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The jury modules an import statement loads (a package's modules with their packages)."""
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    if isinstance(node, ast.ImportFrom) and node.module:
        names += [f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}")]
    out = set()
    for name in names:
        parts = name.split(".")
        out |= {
            ".".join(parts[: i + 1]) for i in range(len(parts)) if parts[0] == "jury" and _is_module(".".join(parts[: i + 1]))
        }
    return out


def _imports_by_place(path: Path) -> tuple[set[str], list[tuple[int, set[str]]]]:
    """(the jury modules imported when the module is, [(line, modules) of each import in a function
    body, outside try: optional ones stay where their absence is handled]), TYPE_CHECKING left out."""
    at_import: set[str] = set()
    deferred: list[tuple[int, set[str]]] = []

    def visit(node: ast.AST, in_function: bool, in_try: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                if not in_function:
                    at_import.update(_jury_targets(child))
                elif not in_try and _jury_targets(child):
                    deferred.append((child.lineno, _jury_targets(child)))
                continue
            visit(
                child,
                in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
                in_try or isinstance(child, ast.Try),
            )

    visit(ast.parse(path.read_text(encoding="utf-8")), False, False)
    return at_import, deferred


def test_a_function_imports_a_jury_module_only_to_save_start_up():
    """A jury module imported in a function body is one its module does not load anyway (else the
    import belongs at the top), unless loading it there would close a circle (it loads this one)."""
    places = {_module_name(p): _imports_by_place(p) for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__main__.py"}

    def closure(module: str) -> set[str]:
        seen, todo = set(), [module]
        while todo:
            for dep in places.get(todo.pop(), (set(), []))[0]:
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen

    loads = {m: closure(m) for m in places}
    found = [
        f"{m}:{line}: {', '.join(sorted(targets))}"
        for m, (_, deferred) in places.items()
        for line, targets in deferred
        if targets <= loads[m] and not any(m in loads.get(t, set()) for t in targets) and m not in targets
    ]
    assert found == []


MAX_FUNCTION_LINES = 60  # issue 45: a function a reader takes in at once


def test_no_function_in_jury_is_over_60_lines():
    """Every function and method of jury/, decorators aside, from its ``def`` line to its last."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, "functions over 60 lines:\n" + "\n".join(long)
