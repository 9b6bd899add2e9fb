"""`jury report -f html -o DIR` removes only what its manifest (DIR/.jury-site.json) says it
wrote: relative names inside DIR, regular files, whose content still has the recorded sha256.
Anything else a manifest lists is a one-line refusal before anything is written or removed,
and nothing outside DIR is ever touched."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from tests.support.clirun import run_jury_inprocess
from tests.support.jurytest import copy_project

MARKER = ".jury-site.json"
REPORT = ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "html", "-o", "site"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(folder: Path) -> dict[str, tuple[str, str]]:
    """Every entry under folder: (kind, content hash or link target), read without following links."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[str(p.relative_to(folder))] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[str(p.relative_to(folder))] = ("file", sha(p))
            else:
                out[str(p.relative_to(folder))] = (stat.filemode(st.st_mode)[0], "")
    return out


@pytest.fixture(scope="module")
def built(reviewable_template, tmp_path_factory) -> Path:
    """The reviewable project with a site built into site/ (once for the module)."""
    template, _files = reviewable_template
    tmp = copy_project(template, tmp_path_factory.mktemp("site-manifest"))
    res = run_jury_inprocess(REPORT, tmp)
    assert res.returncode == 0, res.stderr
    return tmp


@pytest.fixture
def site(built, tmp_path, monkeypatch) -> Path:
    """A copy of the built project for one test to forge at will, and a victim folder beside it."""
    copy_project(built, tmp_path)
    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("not jury's\n")
    return tmp_path


def manifest(tmp: Path) -> dict:
    return json.loads((tmp / "site" / MARKER).read_text())


def forge(tmp: Path, **files) -> None:
    data = manifest(tmp)
    data["files"].update(files)
    (tmp / "site" / MARKER).write_text(json.dumps(data))


def test_the_manifest_records_the_hash_of_every_file_written(site):
    files = manifest(site)["files"]
    on_disk = {k: h for k, (kind, h) in tree(site / "site").items() if kind == "file" and k != MARKER}
    assert files == on_disk and "index.html" in files and all(len(h) == 64 for h in files.values())


def refused(tmp: Path, *needles: str) -> None:
    """The build refuses in one line and touches nothing: the site, the victim, the manifest."""
    before_site, before_victim = tree(tmp / "site"), tree(tmp / "victim")
    res = run_jury_inprocess(REPORT, tmp)
    lines = [
        line for line in res.stderr.strip().splitlines() if not line.startswith("warning: ")
    ]  # a coverage note may come first
    assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    assert "Traceback" not in res.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert tree(tmp / "site") == before_site and tree(tmp / "victim") == before_victim
    assert (tmp / "victim" / "keep.txt").read_text() == "not jury's\n"


def victim_hash(tmp: Path) -> str:
    return sha(tmp / "victim" / "keep.txt")


@pytest.mark.parametrize(
    "name",
    [
        "ABSOLUTE",  # the victim's absolute path
        "../victim/keep.txt",
        "models/../../victim/keep.txt",
        "./../site/../victim/keep.txt",  # a relative path through the site folder itself
        "./index.html",
        "questions/",
        "",
        ".hidden",
        "..\\victim\\keep.txt",
        "\u2024\u2024/victim/keep.txt",  # one-dot leaders that look like ..
        "index.html\x00../victim",
        "/" + "a" * 5000,
    ],
    ids=repr,
)
def test_a_name_no_build_writes_is_refused(site, name):
    name = str(site / "victim" / "keep.txt") if name == "ABSOLUTE" else name
    forge(site, **{name: victim_hash(site)})
    refused(site, "not a name a site build writes")


def test_a_symlink_inside_the_folder_pointing_out_is_refused(site):
    (site / "site" / "evil.html").symlink_to(site / "victim" / "keep.txt")
    forge(site, **{"evil.html": victim_hash(site)})  # even with the victim's own hash
    refused(site, "'evil.html', which is a symlink")


def test_a_folder_link_leading_out_is_refused(site):
    (site / "site" / "old").symlink_to(site / "victim", target_is_directory=True)
    forge(site, **{"old/keep.txt": victim_hash(site)})
    refused(site, "a folder link leads out")


def test_a_symlink_chain_is_refused(site):
    (site / "site" / "hop").symlink_to("hop2")
    (site / "site" / "hop2").symlink_to(site / "victim" / "keep.txt")
    forge(site, hop=victim_hash(site))
    refused(site, "which is a symlink")


def test_a_folder_and_a_device_are_refused(site):
    forge(site, models=hashlib.sha256(b"").hexdigest())
    refused(site, "'models', which is a folder")
    data = manifest(site)
    del data["files"]["models"]
    (site / "site" / MARKER).write_text(json.dumps(data))
    os.mkfifo(site / "site" / "pipe.html")
    forge(site, **{"pipe.html": hashlib.sha256(b"").hexdigest()})
    refused(site, "'pipe.html', which is not a regular file")


def test_a_changed_file_is_refused_not_removed(site):
    (site / "site" / "stale.html").write_text("edited by hand")
    forge(site, **{"stale.html": hashlib.sha256(b"what jury wrote").hexdigest()})
    refused(site, "'stale.html', whose content changed")


@pytest.mark.parametrize(
    "marker",
    [
        "{not json",
        json.dumps({"files": "index.html"}),
        json.dumps({"files": {"index.html": "not-a-hash"}}),
        json.dumps({"files": [1, 2]}),
        json.dumps([]),
        "[" * 200 + "]" * 200,
    ],
)
def test_a_manifest_jury_does_not_write_is_refused(site, marker):
    (site / "site" / MARKER).write_text(marker)
    refused(site, MARKER)


def test_a_manifest_that_is_a_symlink_is_refused(site):
    elsewhere = site / "victim" / "manifest.json"
    elsewhere.write_text(json.dumps({"files": {"../victim/keep.txt": victim_hash(site)}}))
    (site / "site" / MARKER).unlink()
    (site / "site" / MARKER).symlink_to(elsewhere)
    refused(site, "not a regular file")


def test_a_stale_page_with_its_recorded_hash_is_removed_and_a_hard_link_only_loses_its_name(site):
    (site / "site" / "questions" / "99.html").write_text("stale")
    os.link(site / "victim" / "keep.txt", site / "site" / "hard.html")  # a hard link to a file outside
    forge(site, **{"questions/99.html": hashlib.sha256(b"stale").hexdigest(), "hard.html": victim_hash(site)})
    res = run_jury_inprocess(REPORT, site)
    assert res.returncode == 0, res.stderr
    assert not (site / "site" / "questions" / "99.html").exists() and not (site / "site" / "hard.html").exists()
    assert (site / "victim" / "keep.txt").read_text() == "not jury's\n"  # the other name of the file is untouched
    assert "questions/99.html" not in manifest(site)["files"]


def test_an_older_manifest_without_hashes_removes_nothing(site):
    (site / "site" / "questions" / "99.html").write_text("stale")
    names = [*manifest(site)["files"], "questions/99.html"]
    (site / "site" / MARKER).write_text(json.dumps({"generator": "jury 0.1", "files": names}))
    res = run_jury_inprocess(REPORT, site)
    assert res.returncode == 0, res.stderr
    assert (site / "site" / "questions" / "99.html").read_text() == "stale"
    assert "kept 1 files an older jury's manifest listed without a hash" in res.stderr
    assert "questions/99.html" not in manifest(site)["files"] and all(len(h) == 64 for h in manifest(site)["files"].values())


def test_a_page_the_build_writes_is_never_written_through_a_link(site):
    """A page the build writes again (index.html) replaced by a symlink to a file outside: the
    build refuses before writing anything, rather than replacing the file the link points to."""
    data = manifest(site)
    del data["files"]["index.html"]  # not listed: the manifest check does not see it, the writer does
    (site / "site" / MARKER).write_text(json.dumps(data))
    (site / "site" / "index.html").unlink()
    (site / "site" / "index.html").symlink_to(site / "victim" / "keep.txt")
    refused(site, "index.html: is a symlink inside site")


def test_the_folder_spelled_through_dot_dot_is_the_same_folder(site):
    """-o ./site/../site is the site folder: a forged entry is refused all the same."""
    forge(site, **{"../victim/keep.txt": victim_hash(site)})
    res = run_jury_inprocess([*REPORT[:-1], "./site/../site"], site)
    assert res.returncode == 1 and "not a name a site build writes" in res.stderr
    assert (site / "victim" / "keep.txt").read_text() == "not jury's\n"


def test_a_page_folder_replaced_by_a_link_out_is_refused_before_anything_is_written(site):
    """site/assets replaced by a link to a folder outside: the build would write site.css
    there; it refuses instead, and writes nothing anywhere."""
    import shutil

    shutil.rmtree(site / "site" / "assets")
    (site / "site" / "assets").symlink_to(site / "victim", target_is_directory=True)
    refused(site, "leads out of site")
    assert sorted(p.name for p in (site / "victim").iterdir()) == ["keep.txt"]
