"""Suite-wide fixtures. Helpers live in the package tests.support (the repository root is on
sys.path through pyproject's `pythonpath`), imported as `from tests.support.jurytest import ...`."""

from pathlib import Path

import pytest

from jury.inputs.io import load_gold
from tests.support.fakellm import fake_llm  # noqa: F401
from tests.support.helpers import make_db, write_gold
from tests.support.jurytest import make_project
from tests.support.netguard import no_network, pytest_addoption, pytest_collection_modifyitems  # noqa: F401

# tests/support holds no tests; --doctest-modules would otherwise import its modules a second
# time under another name (support.fakellm beside tests.support.fakellm).
collect_ignore = ["support"]


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
