"""The optional extras are declared, in `dev` too, and the docs name the install command."""

import tomllib

from tests.support.helpers import REPO


def test_notebook_extra_is_declared_and_in_dev():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    names = {d.split(">")[0].split("=")[0] for d in extras["notebook"]}
    assert {"nbclient", "nbformat", "ipykernel"} <= names
    assert "jury-sql[notebook]" in extras["dev"]
    assert "pip install -e '.[notebook]'" in (REPO / "README.md").read_text()
