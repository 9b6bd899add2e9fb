"""Suite-wide fixtures. Helpers live in the package tests.support (the repository root is on
sys.path through pyproject's `pythonpath`), imported as `from tests.support.jurytest import ...`."""

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from jury.inputs.io import load_gold
from tests.support.fakellm import fake_llm  # noqa: F401
from tests.support.helpers import EXAMPLE, make_db, write_gold
from tests.support.jurytest import copy_project, make_project
from tests.support.netguard import no_network, pytest_addoption, pytest_collection_modifyitems  # noqa: F401

# tests/support holds no tests; --doctest-modules would otherwise import its modules a second
# time under another name (support.fakellm beside tests.support.fakellm).
collect_ignore = ["support"]


@pytest.fixture(scope="session", autouse=True)
def jury_cache_dir(tmp_path_factory) -> Iterator[Path]:
    """jury's user cache folder (jury.judging.params_cache) for the whole run: never the real one."""
    folder = tmp_path_factory.mktemp("jury-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JURY_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """make_project's adjudication project (db, gold.json, run.jsonl) in tmp_path, the working directory."""
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def shop_gold(tmp_path: Path):
    """The shop database under tmp_path/dbs and its gold, loaded: (tmp_path, gold)."""
    make_db(tmp_path / "dbs")
    gold = load_gold(write_gold(tmp_path))
    return tmp_path, gold


@pytest.fixture(scope="session")
def reviewable_template(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """make_reviewable's project (verdicts/adj.json and verdicts/audit.json from the loopback
    panel), built once for the whole run; tests get a copy through `reviewable`."""
    from tests.support.fakellm import FakeLLMServer
    from tests.support.reviewtest import make_reviewable

    tmp = tmp_path_factory.mktemp("reviewable")
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        files = make_reviewable(tmp, server)
    return tmp, files


@pytest.fixture
def reviewable(reviewable_template, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Path]]:
    """(tmp_path, {"adj": ..., "audit": ...}): a copy of the reviewable project in tmp_path, the
    working directory (no review decisions stored yet)."""
    template, files = reviewable_template
    copy_project(template, tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path, {key: tmp_path / path.relative_to(template) for key, path in files.items()}


@pytest.fixture(scope="session")
def _warm_example_store(tmp_path_factory) -> Path:
    """The bundled example's store after one `jury score`: every execution of its 15 systems x
    129 questions, done once per test process instead of once per test."""
    import jury

    path = tmp_path_factory.mktemp("example-store") / "store.db"
    jury.score(EXAMPLE / "run.jsonl", gold=EXAMPLE / "dev.json", db_root=EXAMPLE / "databases", store=path)
    return path


@pytest.fixture
def example_store(_warm_example_store: Path, tmp_path: Path) -> Path:
    """A copy of the bundled example's warm store, tmp_path/s.db, the test's own to change (a
    warm store gives what a cold one gives: tests/test_api_score_report.py checks it)."""
    copy = tmp_path / "s.db"
    with sqlite3.connect(_warm_example_store) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    return copy
