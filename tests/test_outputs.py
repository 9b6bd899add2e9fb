"""Every output of every command goes through one writer (jury/inputs/writer.py), which never
replaces what is not a regular file: a device stays a device, a FIFO gets the bytes, a link
stays a link, a directory or a socket is a one-line refusal.

The options walked are derived from the command tree: every option declared ``writable``
(what names a file or folder jury writes) is tried against each kind of thing a path can be;
an output option without a recipe below fails the test, and so does a Path option whose name
or help says it writes but that is not declared writable.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer

from jury.cli import app
from tests.support.clirun import run_jury_inprocess
from tests.support.jurytest import copy_project

ROOT = os.geteuid() == 0

# ------------------------------------------------------------------ the options, from the command tree


def path_options() -> dict[str, tuple[bool, str, str]]:
    """Every Path option: "<command> <longest flag>" -> (declared writable, parameter name, help)."""
    out = {}

    def walk(cmd, path):
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])
        for p in getattr(cmd, "params", []):
            if "Path" not in str(p.type_descriptor.annotation):
                continue
            info = p.type_descriptor.parameter_info
            flag = max(p.opts, key=len)
            out[f"{' '.join(path)} {flag}"] = (bool(getattr(info, "writable", False)), p.name or "", p.help or "")

    walk(typer.main.get_command(app), [])
    return out


def output_options() -> list[str]:
    return sorted(k for k, (writable, _name, _help) in path_options().items() if writable)


# Each output option: the arguments that make the command write it (OUT is replaced by the
# target), and what it is: "file" (jury's writer), "new" (a verdict or review file: only ever
# created), "store" (a SQLite store), "folder" (a folder jury fills).
RECIPES: dict[str, list[tuple[str, list[str]]]] = {
    "score --output": [
        ("file", ["score", "run.jsonl", "-o", "OUT"]),
        ("file", ["score", "run.jsonl", "-f", "json", "-o", "OUT"]),
    ],
    "score --per-question": [("file", ["score", "run.jsonl", "--per-question", "OUT"])],
    "score --error-sample": [("file", ["score", "run.jsonl", "--error-sample", "OUT", "--group", "all=gpt-x"])],
    "report --output": [
        ("file", ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-o", "OUT"]),
        ("file", ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "json", "-o", "OUT"]),
        ("folder", ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "html", "-o", "OUT"]),
    ],
    "report --plots": [("folder", ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "--plots", "OUT"])],
    "check-gold --output": [("file", ["check-gold", "gold.json", "-o", "OUT"])],
    "compare-panels --output": [("file", ["compare-panels", "verdicts/adj.json", "verdicts/adj.json", "-o", "OUT"])],
    "calibrate --json": [("file", ["calibrate", "--labels", "labels.jsonl", "--runs", "run.jsonl", "--json", "OUT"])],
    "calibrate --csv": [("file", ["calibrate", "--labels", "labels.jsonl", "--runs", "run.jsonl", "--csv", "OUT"])],
    "calibrate --markdown": [("file", ["calibrate", "--labels", "labels.jsonl", "--runs", "run.jsonl", "--markdown", "OUT"])],
    "suites --output": [("file", ["suites", "suite.jsonl", "-o", "OUT"])],
    "suites --verdicts-out": [
        ("new", ["suites", "suite.jsonl", "--adjudicate", "--panel", "panel.toml", "--verdicts-out", "OUT"])
    ],
    "import bird-predictions --output": [("file", ["import", "bird-predictions", "pred.json", "--model", "x", "-o", "OUT"])],
    "import with --output": [("file", ["import", "with", "bird-predictions", "pred.json", "--model", "x", "-o", "OUT"])],
    "labels import --output": [
        ("file", ["labels", "import", "flex-agreement", *["fn.jsonl", "fp.jsonl", "agree.csv"], "-o", "OUT"])
    ],
    "labels import --runs-out": [
        ("file", ["labels", "import", "flex-agreement", "fn.jsonl", "fp.jsonl", "agree.csv", "--runs-out", "OUT"])
    ],
    "labels import --gold-out": [
        ("file", ["labels", "import", "flex-agreement", "fn.jsonl", "fp.jsonl", "agree.csv", "--gold-out", "OUT"])
    ],
    "review export --output": [("file", ["review", "export", "--verdicts", "verdicts/adj.json", "-o", "OUT"])],
    "review lock --output": [("new", ["review", "lock", "--verdicts", "verdicts/adj.json", "-o", "OUT"])],
    "review sample --output": [("new", ["review", "sample", "--verdicts", "verdicts/adj.json", "--n", "2", "-o", "OUT"])],
    # refused for the existing output before the review files are read (so any two files do)
    "review settle --output": [
        ("new", ["review", "settle", "verdicts/adj.json", "verdicts/adj.json", "--decisions", "labels.jsonl", "-o", "OUT"])
    ],
    "adjudicate --output": [("new", ["adjudicate", "run.jsonl", "--panel", "panel.toml", "-o", "OUT"])],
    "audit-gold --output": [("new", ["audit-gold", "gold.json", "--panel", "audit.toml", "-o", "OUT"])],
    "store merge --output": [("store", ["store", "merge", ".jury/store.db", "-o", "OUT"])],
}


WRITES = r"^(also )?write\b|\bto write\b|\bwrite\b[^.:;]*\b(here|to this)\b"  # "Write the report to this file", "Verdict file to write"


def test_every_output_option_has_a_recipe_and_every_writing_option_is_declared():
    options = path_options()
    missing = [o for o in output_options() if o not in RECIPES]
    assert not missing, f"an output option without a recipe in tests/test_outputs.py: {missing}"
    assert not [o for o in RECIPES if o not in output_options()], "a recipe for an option that is not an output"
    says_it_writes = [
        key
        for key, (writable, name, help_) in options.items()
        if not writable and (name == "output" or name.endswith("_out") or re.search(WRITES, help_, re.IGNORECASE))
    ]
    assert not says_it_writes, f"options that write but are not declared writable=True: {says_it_writes}"


# ------------------------------------------------------------------ the project the recipes run in


def _flex_pair(ex: int) -> dict:
    return {
        "index": 1, "schema": "Database: shop\nCREATE TABLE item (id INTEGER)", "question": "Names of red items?",
        "hint": "", "pred_sql": "SELECT 1", "pred_exec": "| 1 |\nshape=(1, 1)",
        "gt_sql": "SELECT name FROM item WHERE colour = 'red'", "gt_exec": "| 1 |\nshape=(1, 1)", "hardness": "simple", "ex": ex,
    }  # fmt: skip


@pytest.fixture(scope="module")
def project(reviewable_template, tmp_path_factory) -> Path:
    """The reviewable project (run, gold, database, locked adjudication and audit, store), with
    a label file, a test-suite run, a BIRD prediction file and a FLEX agreement set beside it."""
    template, _files = reviewable_template
    tmp = copy_project(template, tmp_path_factory.mktemp("outputs"))
    labels = [{"question_id": q, "model": "gpt-x", "label": "incorrect", "annotator": "A", "source": "s"} for q in (1, 2, 3)]
    (tmp / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    (tmp / "suite.jsonl").write_text(
        json.dumps({"model": "m", "question_id": 1, "tests": [{"name": "t", "passed": True}]}) + "\n"
    )
    (tmp / "pred.json").write_text(json.dumps({"0": "SELECT 1\t----- bird -----\tshop"}))
    (tmp / "fn.jsonl").write_text(json.dumps(_flex_pair(1)) + "\n")
    (tmp / "fp.jsonl").write_text(json.dumps(_flex_pair(0)) + "\n")
    header = "Index,FN_consensus,FN_avg,FN_A,FN_B,FN_C,FP_consensus,FP_avg,FP_A,FP_B,FP_C\n"
    (tmp / "agree.csv").write_text(header + "0,0,0,0,0,0,1,1,1,1,1\n")
    (tmp / "t").mkdir()
    return tmp


# ------------------------------------------------------------------ what a path can be


class Drain:
    """A reader that collects what arrives on a descriptor until every writer closes."""

    def __init__(self, fd: int):
        self.fd, self.data = fd, bytearray()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while chunk := os.read(self.fd, 1 << 16):
            self.data += chunk

    def finish(self) -> bytes:
        self.thread.join(30)
        os.close(self.fd)
        return bytes(self.data)


@dataclass
class Target:
    kind: str
    path: Path
    check: object  # called after the command: what must still hold
    received: object = None  # called after the command: the bytes a stream got (None: not a stream)


def make_target(kind: str, folder: Path) -> Target:
    path = folder / "out"
    if kind == "chardev":  # what /dev/null is: major 1, minor 3
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))

        def check():
            st = os.lstat(path)
            assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3), "the device was replaced"

        return Target(kind, path, check)
    if kind == "blockdev":  # major 60: reserved for local use, no driver here; only ever stat'ed
        os.mknod(path, stat.S_IFBLK | 0o600, os.makedev(60, 0))
        return Target(kind, path, lambda: stat.S_ISBLK(os.lstat(path).st_mode) or pytest.fail("the block device was replaced"))
    if kind == "fifo":  # with a reader, which keeps one writer of its own until the command is done
        os.mkfifo(path)
        rfd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        keep = os.open(path, os.O_WRONLY)
        os.set_blocking(rfd, True)
        drain = Drain(rfd)

        def received() -> bytes:
            os.close(keep)
            return drain.finish()

        return Target(kind, path, lambda: stat.S_ISFIFO(os.lstat(path).st_mode) or pytest.fail("the FIFO was replaced"), received)
    if kind == "link-file":  # a symlink to a regular file: followed, the link kept
        victim = folder / "target.txt"
        victim.write_text("old content\n")
        path.symlink_to("target.txt")

        def check():
            assert path.is_symlink() and os.readlink(path) == "target.txt", "the link was replaced"

        return Target(kind, path, check, lambda: victim.read_bytes() if victim.read_text() != "old content\n" else b"")
    if kind == "link-fd-pipe":  # what /dev/stdout is when stdout is a pipe: /proc/self/fd/N
        rfd, wfd = os.pipe()
        drain = Drain(rfd)
        path.symlink_to(f"/proc/self/fd/{wfd}")

        def received() -> bytes:
            os.close(wfd)
            return drain.finish()

        return Target(kind, path, lambda: path.is_symlink() or pytest.fail("the link was replaced"), received)
    if kind == "link-fd-file":  # /dev/stdout after `>> log.txt`: appended to, never replaced
        log = folder / "log.txt"
        log.write_text("before\n")
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        inode = os.stat(log).st_ino
        path.symlink_to(f"/proc/self/fd/{fd}")

        def received() -> bytes:
            os.close(fd)
            assert os.stat(log).st_ino == inode, "the log was replaced, not appended to"
            text = log.read_bytes()
            assert text.startswith(b"before\n"), "what was in the log is gone"
            return text.removeprefix(b"before\n")

        return Target(kind, path, lambda: path.is_symlink() or pytest.fail("the link was replaced"), received)
    if kind == "dir":
        path.mkdir()
        (path / "keep.txt").write_text("mine")

        def check():
            assert path.is_dir() and not path.is_symlink() and (path / "keep.txt").read_text() == "mine"

        return Target(kind, path, check)
    if kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))

        def check():
            sock.close()
            assert stat.S_ISSOCK(os.lstat(path).st_mode), "the socket was replaced"

        return Target(kind, path, check)
    raise AssertionError(kind)


KINDS = ["chardev", "blockdev", "fifo", "link-file", "link-fd-pipe", "link-fd-file", "dir", "socket"]
STREAMS = {"chardev", "fifo", "link-file", "link-fd-pipe", "link-fd-file"}  # what a file output writes to
CASES = [(option, i, kind) for option in sorted(RECIPES) for i in range(len(RECIPES[option])) for kind in KINDS]


_REFERENCE: dict[tuple[str, int], bytes] = {}


def reference(project: Path, option: str, index: int) -> bytes:
    """What a recipe writes to a path where nothing is yet: a regular file (run once per recipe)."""
    key = (option, index)
    if key not in _REFERENCE:
        folder = project / "t" / f"{option.replace(' ', '_')}-{index}-reference"
        folder.mkdir()
        argv = [str((folder / "out").relative_to(project)) if a == "OUT" else a for a in RECIPES[option][index][1]]
        res = run_jury_inprocess(argv, project)
        assert res.returncode == 0 and stat.S_ISREG(os.lstat(folder / "out").st_mode), res.stderr
        _REFERENCE[key] = (folder / "out").read_bytes()
    return _REFERENCE[key]


def expected_ok(what: str, kind: str) -> bool:
    if what == "file":
        return kind in STREAMS
    if what == "folder":
        return kind == "dir"  # an existing folder: it must then be empty or a jury site; here it holds keep.txt
    return False  # a verdict, review or store file is never written over anything that exists


@pytest.mark.parametrize(("option", "index", "kind"), CASES, ids=[f"{o}-{i}-{k}".replace(" ", "_") for o, i, k in CASES])
def test_an_output_never_replaces_what_is_not_a_regular_file(project, option, index, kind):
    if kind in ("chardev", "blockdev") and not ROOT:
        pytest.skip("mknod needs root")
    what, args = RECIPES[option][index]
    folder = project / "t" / f"{option.replace(' ', '_')}-{index}-{kind}"
    folder.mkdir()
    target = make_target(kind, folder)
    ok = expected_ok(what, kind)
    if what == "folder" and kind == "dir":
        (target.path / "keep.txt").unlink()  # an empty folder: the site and the plots go there
    argv = [str(target.path.relative_to(project)) if a == "OUT" else a for a in args]
    res = run_jury_inprocess(argv, project)
    got = target.received() if target.received is not None else None
    assert "Traceback" not in res.stderr
    if ok:
        assert res.returncode == 0, res.stderr
        if got is not None and what == "file":  # as many bytes as the command writes to a new regular file
            assert len(got) == len(reference(project, option, index)), f"{kind}: the output's bytes did not all arrive"
    else:
        assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
        lines = [
            line for line in res.stderr.strip().splitlines() if not line.startswith("warning: ")
        ]  # a coverage note may come first
        assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
        assert not got, f"{kind}: bytes were written before the refusal"
    if what == "folder" and kind == "dir":
        assert any(target.path.iterdir())
    else:
        target.check()


# ------------------------------------------------------------------ more spellings, through `jury score -o`


def score_to(project: Path, out: Path):
    return run_jury_inprocess(["score", "run.jsonl", "-o", str(out)], project)


def one_line_refusal(res, needle: str) -> None:
    lines = [
        line for line in res.stderr.strip().splitlines() if not line.startswith("warning: ")
    ]  # a coverage note may come first
    assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: ") and needle in lines[0], res.stderr


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
def test_a_hard_link_to_a_device_and_a_chain_of_links_to_one_stay_what_they_are(project, tmp_path):
    dev = tmp_path / "null"
    os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.link(dev, tmp_path / "hard")  # another name of the same device node
    (tmp_path / "hop2").symlink_to("null")
    (tmp_path / "hop1").symlink_to("hop2")
    (tmp_path / "sub").mkdir()
    (tmp_path / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    for out in (tmp_path / "hard", tmp_path / "hop1", tmp_path / "sub" / ".." / "hop1", tmp_path / "dirlink" / "null"):
        res = score_to(project, out)
        assert res.returncode == 0, res.stderr
        assert stat.S_ISCHR(os.lstat(dev).st_mode) and os.lstat(dev).st_rdev == os.makedev(1, 3)
        assert stat.S_ISCHR(os.lstat(tmp_path / "hard").st_mode) and os.readlink(tmp_path / "hop1") == "hop2"


def test_a_chain_of_links_to_a_file_replaces_the_file_and_keeps_every_link(project, tmp_path):
    (tmp_path / "real.txt").write_text("old\n")
    os.chmod(tmp_path / "real.txt", 0o640)
    (tmp_path / "b").symlink_to("real.txt")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    res = score_to(project, tmp_path / "a")
    assert res.returncode == 0, res.stderr
    assert os.readlink(tmp_path / "a") == str(tmp_path / "b") and os.readlink(tmp_path / "b") == "real.txt"
    assert (tmp_path / "real.txt").read_text() == reference(project, "score --output", 0).decode()
    assert stat.S_IMODE(os.stat(tmp_path / "real.txt").st_mode) == 0o640  # a replaced file keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "real.txt"]  # no temporary file left


def test_a_dangling_link_and_a_link_loop_are_refused_and_nothing_is_created(project, tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "x.txt")
    one_line_refusal(score_to(project, tmp_path / "dangling"), "is a symlink to nothing")
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    one_line_refusal(score_to(project, tmp_path / "loop1"), "is a symlink jury cannot follow")
    assert os.readlink(tmp_path / "loop1") == "loop2"


def test_links_to_a_folder_and_a_socket_and_a_path_under_a_file_are_refused(project, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "to-dir").symlink_to("d")
    one_line_refusal(score_to(project, tmp_path / "to-dir"), "is a symlink to a directory")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s"))
    (tmp_path / "to-sock").symlink_to("s")
    one_line_refusal(score_to(project, tmp_path / "to-sock"), "is a symlink to a socket")
    sock.close()
    (tmp_path / "f.txt").write_text("x")
    one_line_refusal(score_to(project, tmp_path / "f.txt" / "out"), "cannot write")
    assert (tmp_path / "f.txt").read_text() == "x" and list((tmp_path / "d").iterdir()) == []


def test_a_fifo_without_a_reader_is_one_line_not_a_hang(project, tmp_path):
    os.mkfifo(tmp_path / "p")
    (tmp_path / "to-p").symlink_to("p")
    for out in (tmp_path / "p", tmp_path / "to-p"):
        one_line_refusal(score_to(project, out), "is a FIFO with no reader")
        assert stat.S_ISFIFO(os.lstat(tmp_path / "p").st_mode)


def test_dev_stdout_is_written_through(project):
    res = score_to(project, Path("/dev/stdout"))
    assert res.returncode == 0, res.stderr
    assert os.path.islink("/dev/stdout") or stat.S_ISCHR(os.lstat("/dev/stdout").st_mode)


def test_an_output_written_from_chunks_is_staged_then_renamed(tmp_path):
    """write_output takes an iterable of chunks (a generator of lines), consumed once into the
    temporary file: the whole output appears at the end, the replaced file's mode is kept, and a
    generator that fails leaves the old file as it was, with no temporary file left."""
    from jury.inputs.writer import write_output

    out = tmp_path / "out.jsonl"
    write_output(out, (f"{i}\n" for i in range(1000)))
    assert out.read_text() == "".join(f"{i}\n" for i in range(1000))
    os.chmod(out, 0o640)

    def failing():
        yield b"half\n"
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_output(out, failing())
    assert out.read_text().startswith("0\n1\n") and os.listdir(tmp_path) == ["out.jsonl"]
    write_output(out, iter(["a\n", b"b\n"]))
    assert out.read_text() == "a\nb\n" and (out.stat().st_mode & 0o777) == 0o640


def test_many_outputs_fsync_each_file_and_each_folder_once(tmp_path, monkeypatch):
    """write_outputs (the html site's pages, issue 46): every file is staged, its data fsynced
    and renamed as write_output does, and each folder is fsynced once, after every rename in
    it, instead of once per file; a replaced file keeps its mode."""
    from jury.inputs import writer

    site = tmp_path / "site"
    (site / "questions").mkdir(parents=True)
    (site / "index.html").write_text("old")
    os.chmod(site / "index.html", 0o640)
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    pages = [(site / "index.html", "new"), *((site / "questions" / f"{i}.html", f"q{i}".encode()) for i in range(5))]
    writer.write_outputs(pages, within=site)
    assert (site / "index.html").read_text() == "new" and (site / "index.html").stat().st_mode & 0o777 == 0o640
    assert [(site / "questions" / f"{i}.html").read_text() for i in range(5)] == [f"q{i}" for i in range(5)]
    assert synced == ["file"] * 6 + ["folder"] * 2  # site/ and site/questions/, after every rename
    assert sorted(os.listdir(site)) == ["index.html", "questions"]  # no temporary file left
