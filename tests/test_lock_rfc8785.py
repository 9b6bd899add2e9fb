"""Verdict locks use RFC 8785 (format_version 2); format_version 1 files still verify; the
request hash (which keys stored votes) never changes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import rfc8785

from jury.errors import VerdictError
from jury.inputs.io import canonical_v1
from jury.judging.juror import JurorSpec
from jury.judging.plan import Ballot
from jury.verdicts.documents import LOCK_KEY
from jury.verdicts.lock import content_hash, load_locked, lock, write_locked
from jury.verdicts.verify import verify_file
from tests.support.badinput import Case, check_case, run_jury
from tests.test_verdicts import make_doc

# Values whose canonical forms differ: Python writes 0.0 and 1e-07, RFC 8785 writes 0 and
# 1e-7; Python sorts keys by code point (U+FFFF before U+1F600), RFC 8785 by UTF-16 code
# units (U+1F600 is D83D DE00, before FFFF).
DIFFERING = {"zero": 0.0, "tiny": 1e-7, "\uffff-bmp": 1, "\U0001f600-astral": 2}


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def body(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != LOCK_KEY}


def old_canonical(obj) -> bytes:
    """jury's format 1 canonical JSON, spelled out here independently of the code."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def v1_file(tmp_path: Path, kind: str = "adjudication", **settings) -> Path:
    """A verdict file as jury wrote it before RFC 8785: format_version 1, locked over the
    old canonical JSON, pretty-printed the same way."""
    doc = lock(make_doc(kind, tmp_path))  # a valid, fully dumped document
    doc.update({"format_version": 1, "$schema": f"schema/{kind}-v1.schema.json"})
    doc["settings"].update(settings)
    doc.pop(LOCK_KEY)
    doc[LOCK_KEY] = sha(old_canonical(doc))
    path = tmp_path / "verdicts" / "old.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------ (a) v2 is RFC 8785


@pytest.mark.parametrize("kind", ["adjudication", "audit"])
def test_new_files_are_format_2_locked_with_rfc8785(tmp_path, kind):
    path = write_locked(make_doc(kind, tmp_path), tmp_path / "verdicts" / "v.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format_version"] == 2
    assert data["$schema"] == f"schema/{kind}-v2.schema.json"
    assert data[LOCK_KEY] == sha(rfc8785.dumps(body(data)))
    assert load_locked(path).format_version == 2
    assert verify_file(path).ok


def test_lock_writes_the_current_format_even_when_given_format_1(tmp_path):
    doc = {**make_doc("audit", tmp_path), "format_version": 1}
    locked = lock(doc)
    assert locked["format_version"] == 2 and locked[LOCK_KEY] == sha(rfc8785.dumps(body(locked)))


# ------------------------------------------------------------------ (c) where the forms differ


def test_values_where_the_forms_differ_lock_per_rfc8785(tmp_path):
    doc = make_doc("adjudication", tmp_path)
    doc["settings"].update(DIFFERING)
    path = write_locked(doc, tmp_path / "verdicts" / "v.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    jcs = rfc8785.dumps(body(data))
    assert b'"zero":0,' in jcs and b'"tiny":1e-7' in jcs
    assert jcs.index("\U0001f600".encode()) < jcs.index("\uffff".encode())
    assert old_canonical(body(data)) != jcs  # the forms do differ on this document...
    assert data[LOCK_KEY] == sha(jcs) != sha(old_canonical(body(data)))  # ...and the lock is RFC 8785's
    loaded = load_locked(path)  # read back (0.0 and 1e-07 as Python writes them), the lock holds
    assert loaded.settings["tiny"] == 1e-7 and lock(loaded)[LOCK_KEY] == data[LOCK_KEY]
    path.write_text(path.read_text(encoding="utf-8").replace("1e-07", "1e-06"), encoding="utf-8")
    with pytest.raises(VerdictError, match="content hash mismatch"):
        load_locked(path)


def test_what_rfc8785_cannot_represent_is_one_line_error(tmp_path):
    doc = make_doc("adjudication", tmp_path)
    doc["settings"]["seed"] = 2**60  # beyond IEEE 754 doubles' exact integers: not I-JSON
    with pytest.raises(VerdictError, match=r"not canonical JSON \(RFC 8785\): .*exceeds safe integer") as err:
        write_locked(doc, tmp_path / "verdicts" / "v.json")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "verdicts" / "v.json").exists()


# ------------------------------------------------------------------ (b) format 1 still verifies


def test_a_format_1_file_still_verifies_with_the_old_canonical_form(tmp_path):
    path = v1_file(tmp_path, **DIFFERING)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data[LOCK_KEY] != sha(rfc8785.dumps(body(data)))  # only the old form gives its lock
    doc = load_locked(path)
    assert doc.format_version == 1 and doc.settings["zero"] == 0.0
    report = verify_file(path)
    assert report.ok and report.lock_ok and report.checked, report.messages
    proc = run_jury(["verify", str(path)], tmp_path)
    assert proc.returncode == 0 and f"OK {path}" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "old, new", [('"seed": 7', '"seed": 8'), ('"zero": 0.0', '"zero": 0.5'), ('"format_version": 1', '"format_version": 2')]
)
def test_a_changed_format_1_file_is_still_refused(tmp_path, old, new):
    path = v1_file(tmp_path, **DIFFERING)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(VerdictError, match="content hash mismatch"):
        load_locked(path)
    report = verify_file(path)
    assert not report.ok and not report.lock_ok
    proc = run_jury(["verify", str(path)], tmp_path)
    assert proc.returncode == 1 and f"FAILED {path}: content hash mismatch" in proc.stdout
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ (d) unknown format_version


@pytest.mark.parametrize("version", [3, 0, True, "2", None])
def test_unknown_format_version_is_one_line_error(tmp_path, version):
    data = lock(make_doc("audit", tmp_path))
    data["format_version"] = version
    data[LOCK_KEY] = sha(rfc8785.dumps(body(data)))  # even "locked", jury cannot tell how to check it
    path = tmp_path / "verdicts" / "future.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(VerdictError, match=r"format_version: .* is not a format this jury can check \(it reads 1, 2\)") as err:
        load_locked(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)
    proc = run_jury(["verify", str(path)], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"FAILED {path}: format_version: {version!r} is not a format" in proc.stdout


def _future_file(tmp: Path) -> None:
    data = lock(make_doc("adjudication", tmp / "p"))
    data["format_version"] = 3
    (tmp / "future.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


BAD = [
    Case(
        "report-format-3",
        ["report", "run.jsonl", "--verdicts", "future.json"],
        "future.json: format_version: 3 is not a format this jury can check (it reads 1, 2)",
        setup=_future_file,
        unchanged=["future.json"],
    ),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_bad_input(case, tmp_path):
    check_case(case, tmp_path)


# ------------------------------------------------------------------ request hashes never change


def test_request_hash_is_pinned():
    """Stored votes are keyed by this hash: a change here re-asks (and re-pays) every juror."""
    juror = JurorSpec(
        name="a", model="openai/gpt-4o-mini", family="openai", api_base="http://127.0.0.1:9/v1", params={"top_p": 0.5, "seed": 3}
    )
    messages = [{"role": "system", "content": "Judge. é ✓ \U0001f600"}, {"role": "user", "content": "Q: 0.0 vs 1e-7"}]
    hashes = {
        style: Ballot(
            kind="adjudication",
            question_id=717,
            model="m",
            juror=juror,
            style=style,
            messages=messages,
            template_sha256="ab" * 32,
        ).request_sha256
        for style in ("blind", "audit")
    }
    assert hashes == {
        "blind": "c7159158e6aa5f6e83396451572ea7c3c1e9697f7dff680fe9cdfd2abb47cab4",
        "audit": "cd8d61d5082d2604b003a57ad2dd0600367b495003e350bffabf3ef3fe5719b9",
    }


def test_canonical_v1_is_the_old_form():
    obj = {"b": [1, 0.0, 1e-7, "é"], "a": {"\U0001f600": 2, "\uffff": 1}, "n": None}
    assert canonical_v1(obj) == old_canonical(obj)
    assert canonical_v1(obj) == '{"a":{"\uffff":1,"\U0001f600":2},"b":[1,0.0,1e-07,"é"],"n":null}'.encode()
    with pytest.raises(ValueError):
        canonical_v1({"x": float("nan")})


def test_one_canonical_v1_in_the_package():
    """Request hashes and format 1 locks use the same function (jury/inputs/io.py)."""
    import jury.judging.plan as plan
    import jury.verdicts.lock as lock_mod

    assert plan.canonical_v1 is canonical_v1 and lock_mod.CANONICAL_FORMS[1] is canonical_v1
    assert content_hash({"format_version": 1, "x": 0.0}) == sha(b'{"format_version":1,"x":0.0}')
    assert content_hash({"format_version": 2, "x": 0.0}) == sha(b'{"format_version":2,"x":0}')


def test_readme_snippet_checks_a_file_where_the_forms_differ(tmp_path):
    """verdicts/README.md's by-hand check is RFC 8785's, so it holds where the old form would not."""
    import re
    import subprocess
    import sys

    from tests.support.helpers import REPO

    doc = make_doc("adjudication", tmp_path)
    doc["settings"].update(DIFFERING)
    path = write_locked(doc, tmp_path / "verdicts" / "v.json")
    snippet = re.search(r"```python\n(.*?)```", (REPO / "verdicts" / "README.md").read_text(encoding="utf-8"), re.S).group(1)
    run = subprocess.run([sys.executable, "-c", snippet, str(path)], capture_output=True, text=True, check=True)
    assert run.stdout == "OK\n"


def _random_value(rng, depth: int):
    """A random JSON-ish value: every kind the lock may meet, and some it must refuse."""
    chars = ["a", "Z", "0", " ", '"', "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "\u2028", "\ud7ff", "\ue000",
             "\uffff", "\U0001f600", "\ud800", "/", "<"]  # fmt: skip
    scalars = [None, True, False, 0, -1, 2**53 - 1, -(2**53 - 1), 2**53, 0.0, -0.0, 1.0, 1.5, 1e-7, 1e-6, 1e21, 1e20,
               123456789012345680000.0, 5e-324, -2.5e-5, float("nan"), float("inf")]  # fmt: skip
    pick = rng.random()
    if depth > 3 or pick < 0.35:
        return rng.choice(scalars)
    if pick < 0.6:
        return "".join(rng.choice(chars) for _ in range(rng.randrange(6)))
    if pick < 0.8:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if pick < 0.82:
        return (1, "t")
    keys = ["".join(rng.choice(chars) for _ in range(rng.randrange(1, 3))) for _ in range(rng.randrange(4))]
    if rng.random() < 0.03:
        keys.append(7)
    return {k: _random_value(rng, depth + 1) for k in keys}


def test_canonical_form_is_the_rfc8785_packages_bytes_or_its_refusal():
    """canonical_rfc8785 goes through json.dumps where that gives the same bytes (issue 46): on
    random documents (every escape, characters on both sides of U+D800, a lone surrogate,
    floats of every form, integers at 2**53, NaN, a tuple, a non-string key) it returns the
    package's bytes, or raises the package's error."""
    import random

    from jury.verdicts.lock import canonical_rfc8785

    rng = random.Random(46)
    for _ in range(3000):
        doc = {"records": [_random_value(rng, 0) for _ in range(3)], "totals": {"cost_usd": rng.choice([0.0, 1.25, 3])}}
        try:
            expected: bytes | str = rfc8785.dumps(doc)
        except ValueError as exc:
            expected = repr(exc)
        try:
            got: bytes | str = canonical_rfc8785(doc)
        except ValueError as exc:
            got = repr(exc)
        assert got == expected, doc


def test_canonical_chunks_join_to_the_rfc8785_packages_bytes():
    """content_hash hashes canonical_chunks as they come (issue 46): joined, they are the
    package's bytes (long lists split in groups, keys on both sides of U+D800, a non-dict, the
    format 1 form), and what the package refuses is refused."""
    import random

    from jury.verdicts.lock import canonical_chunks

    rng = random.Random(4646)

    def encodable(depth: int):  # a random value the package encodes (most of _random_value's do not, in bulk)
        while True:
            value = _random_value(rng, depth)
            try:
                rfc8785.dumps(value)
            except ValueError:
                continue
            return value

    for n in (0, 1, 255, 256, 257, 600):
        for key in ("\ue000k", "\U0001f600k", "zz", "a"):  # a key from U+D800 up: the object is encoded whole
            doc = {"records": [encodable(1) for _ in range(n)], "kind": "adjudication", key: [encodable(2) for _ in range(300)]}
            assert b"".join(canonical_chunks(doc)) == rfc8785.dumps(doc)
            refused = {**doc, "records": [*doc["records"], float("nan")]}
            with pytest.raises(ValueError):
                rfc8785.dumps(refused)
            with pytest.raises(ValueError):
                b"".join(canonical_chunks(refused))
    assert b"".join(canonical_chunks([1.5, "x"])) == rfc8785.dumps([1.5, "x"])
    assert b"".join(canonical_chunks({"x": 0.0, "r": list(range(300))}, 1)) == canonical_v1({"x": 0.0, "r": list(range(300))})


def test_a_locked_file_is_written_in_chunks_with_the_bytes_of_one_text(tmp_path):
    """write_locked writes pretty_chunks (issue 46): the same bytes as dumps_pretty of the locked
    document, whatever the chunk size; what RFC 8785 refuses is still refused, nothing written."""
    import random

    from jury.verdicts.documents import dumps_pretty, pretty_chunks

    rng = random.Random(7)
    for _ in range(200):
        value = {"records": [_random_value(rng, 1) for _ in range(rng.randrange(40))]}
        try:
            expected = dumps_pretty(value).encode("utf-8")
        except (ValueError, TypeError, UnicodeEncodeError):
            continue
        for size in (1, 50, 1 << 20):
            assert b"".join(pretty_chunks(value, size)) == expected
    doc = make_doc("adjudication", tmp_path)
    doc["records"] = [{**r, "question_id": 1000 * n + r["question_id"]} for n in range(300) for r in doc["records"]]
    path = write_locked(doc, tmp_path / "verdicts" / "big.json")
    assert path.read_bytes() == dumps_pretty(lock(doc)).encode("utf-8")
    from pydantic import BaseModel, ConfigDict

    class Loose(BaseModel):  # keeps what it is given: the lone surrogate reaches the lock
        model_config = ConfigDict(extra="allow")

    with pytest.raises(VerdictError, match="not canonical JSON"):
        write_locked({"records": ["a"] * 600 + ["\ud800"]}, tmp_path / "verdicts" / "refused.json", Loose.model_validate)
    assert sorted(p.name for p in (tmp_path / "verdicts").iterdir()) == ["big.json"]  # nothing else, no temporary file


def test_a_verdict_file_is_checked_hashed_and_written_a_record_at_a_time(tmp_path, monkeypatch):
    """write_locked never validates or dumps a verdict document's records all at once (issue 46):
    the document is validated without them, each record apart; its lock and its text (records
    in groups, quotes, newlines, U+2028, astral characters and empty lists in them) are the bytes
    of the whole locked document; a record that does not validate, or repeats another, is refused
    as the whole document's validation words it; a VerdictFile given is locked the same."""
    from jury.verdicts import documents
    from jury.verdicts.documents import RecordDumps, dumps_pretty, pretty_chunks
    from jury.verdicts.lock import _locked, canonical_chunks

    doc = make_doc("adjudication", tmp_path)
    odd = 'a "quoted"\nline\u2028\U0001f600 \\ é\t'
    doc["records"] = [
        {**r, "question_id": 1000 * n + r["question_id"], "families": [] if n % 7 else r["families"]}
        for n in range(300)
        for r in doc["records"]
    ]
    doc["records"][5]["votes"][0]["reasoning"] = odd
    expected = lock(doc)
    seen: list[int] = []
    adapter = documents._ADAPTER

    class Spy:
        def validate_python(self, data):
            seen.append(len(data["records"]))
            return adapter.validate_python(data)

    monkeypatch.setattr(documents, "_ADAPTER", Spy())
    streamed = _locked(doc, documents.validate_document)
    assert isinstance(streamed["records"], RecordDumps) and streamed["records"].records is doc["records"]
    assert streamed[LOCK_KEY] == expected[LOCK_KEY]
    path = write_locked(doc, tmp_path / "verdicts" / "v.json")
    assert seen == [0, 0]  # the header alone, each time
    assert path.read_bytes() == dumps_pretty(expected).encode("utf-8")
    for size in (1, 4096):
        assert b"".join(pretty_chunks(streamed, size)) == dumps_pretty(expected).encode("utf-8")
    body = {k: v for k, v in streamed.items() if k != LOCK_KEY}
    assert b"".join(canonical_chunks(body)) == rfc8785.dumps({k: v for k, v in expected.items() if k != LOCK_KEY})
    assert lock(documents.validate_document(json.loads(path.read_text()))) == expected  # a VerdictFile given
    empty = {**doc, "records": []}
    assert b"".join(pretty_chunks(_locked(empty, documents.validate_document))) == dumps_pretty(lock(empty)).encode()

    monkeypatch.setattr(documents, "_ADAPTER", adapter)
    bad = {**doc, "records": [*doc["records"][:3], {**doc["records"][3], "credited": "maybe"}]}
    with pytest.raises(VerdictError, match=r"^verdict document: records\.3\.credited: "):
        write_locked(bad, tmp_path / "verdicts" / "bad.json")
    twice = {**doc, "records": [*doc["records"][:3], doc["records"][1]]}
    with pytest.raises(VerdictError, match=r"records\.3 repeats records\.1"):
        write_locked(twice, tmp_path / "verdicts" / "twice.json")
    assert sorted(p.name for p in (tmp_path / "verdicts").glob("*.json")) == ["v.json"]


def test_the_verdict_file_just_written_is_not_read_back_for_its_totals(tmp_path, monkeypatch):
    """locked_head (issue 46): the file write_locked last wrote gives its JSON dict without its
    records from memory; a copy of it elsewhere (another inode) is read and checked; both agree."""
    import shutil

    from jury.verdicts import lock as lock_module
    from jury.verdicts.lock import locked_head

    path = write_locked(make_doc("adjudication", tmp_path), tmp_path / "verdicts" / "v.json")
    copy = shutil.copy(path, tmp_path / "verdicts" / "copy.json")
    read = locked_head(copy)
    assert "records" not in read and read[LOCK_KEY] == json.loads(path.read_text())[LOCK_KEY]

    def refuse(p):
        raise AssertionError(f"read back: {p}")

    monkeypatch.setattr(lock_module, "load_locked", refuse)
    assert locked_head(path) == read
    with pytest.raises(AssertionError, match="read back"):
        locked_head(copy)
