"""Every input jury reads goes through the one bounded reader (`jury.inputs.reader`, issue 43.1).

This test lists each place in jury/ that opens or reads a file some other way — `open(`,
`os.open(`, `os.fdopen(`, `.read_text(`, `.read_bytes(`, `.open(`, `csv.reader(`,
`csv.DictReader(`, `json.load(`, `tomllib.load(`, `pickle.load(` — and fails on any that is
not in the allow-list below, each entry with its reason. A new reader of a user's file must
use `jury.inputs.reader` (`read_bounded`, `open_input`, `csv_rows`/`csv_records`) or
`jury.inputs.io.read_text`; an entry here is only for what is not a user's input.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

JURY = Path(__file__).resolve().parents[1] / "jury"
READER = "inputs/reader.py"  # the bounded reader itself

# (file under jury/, enclosing function, call) -> why it is not a user's input read around the reader.
ALLOWED: dict[tuple[str, str, str], str] = {
    # outputs: the one writer (its own rules: lstat, temp file and rename, O_NOFOLLOW appends)
    ("inputs/writer.py", "open_append", "os.fdopen"): "an output opened for appending",
    ("inputs/writer.py", "open_append", "os.open"): "an output opened for appending",
    ("inputs/writer.py", "_open_through", "os.open"): "an output written through (a device or FIFO)",
    ("inputs/writer.py", "_staged", "os.fdopen"): "an output's temporary file, renamed over it",
    ("inputs/writer.py", "_source", "open"): "an output's own temporary file, read back to write it through after a retry",
    ("inputs/writer.py", "_sync_folder", "os.open"): "the output's folder, opened to fsync it",
    ("execution/backends.py", "_quiet_stderr", "open"): "os.devnull opened for writing (Ray's noise)",
    # jury's own files: shipped with it, or written by it
    (
        "options/__init__.py",
        "_top_level_classes",
        ".open",
    ): "jury's own source (an options module), parsed for its field docstrings",
    ("results/site/build.py", "_site_files", ".read_bytes"): "the site's assets shipped inside jury (importlib.resources)",
    ("compare/gold_check_store.py", "check_code_version", ".read_bytes"): "jury's own module sources, hashed as a cache key",
    ("jobs/report.py", "charts", ".read_bytes"): "the plots jury just wrote into its own temporary folder",
    ("jobs/local_juror.py", "_read_state", "os.open"): "jury's own state file (O_NOFOLLOW|O_NONBLOCK, S_ISREG, size cap)",
    ("jobs/local_juror.py", "_read_state", "os.fdopen"): "jury's own state file (as above)",
    ("jobs/local_juror.py", "_tail", ".read_text"): "the log of the llama.cpp server jury started",
    # the kernel's own files
    ("jobs/local_juror.py", "_identity", ".read_bytes"): "/proc/<pid>/stat and cmdline: a process's identity",
    ("compare/efficiency.py", "cpu_model", "open"): "/proc/cpuinfo",
    # names that are no file reads
    ("execution/loader.py", "load", ".open"): "_Target.open: a database connection, not a file",
}

CALLS = {"open", "os.open", "os.fdopen", "io.open", "csv.reader", "csv.DictReader", "json.load", "tomllib.load", "pickle.load"}
METHODS = {"read_text", "read_bytes", "open"}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def readers() -> Counter[tuple[str, str, str]]:
    found: Counter[tuple[str, str, str]] = Counter()
    for path in sorted(JURY.rglob("*.py")):
        rel = path.relative_to(JURY).as_posix()
        if rel == READER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, where: str, rel: str = rel) -> None:
            for child in ast.iter_child_nodes(node):
                inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else where
                if isinstance(child, ast.Call):
                    name = _name(child.func)
                    if name in CALLS:
                        found[(rel, where, name)] += 1
                    elif isinstance(child.func, ast.Attribute) and child.func.attr in METHODS and name != "webbrowser.open":
                        found[(rel, where, f".{child.func.attr}")] += 1
                visit(child, inner)

        visit(tree, "<module>")
    return found


def test_every_file_read_goes_through_the_bounded_reader():
    found = readers()
    new = sorted(set(found) - set(ALLOWED))
    assert not new, (
        "read around the bounded reader (use jury.inputs.reader / jury.inputs.io.read_text, "
        f"or add the place to ALLOWED with its reason): {new}"
    )


def test_the_allow_list_has_no_stale_entries():
    stale = sorted(set(ALLOWED) - set(readers()))
    assert not stale, f"ALLOWED names places that no longer read a file: {stale}"


def test_the_scan_sees_a_plain_open(tmp_path):
    """The scan itself: a plain open() of a file is found."""
    tree = ast.parse("def f(p):\n    with open(p) as fh:\n        return fh.read()\n")
    calls = [_name(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert "open" in calls
