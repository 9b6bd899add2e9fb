"""Signed verdict files (issue #8.8): --sign KEY writes <file>.sig in OpenSSH's SSHSIG format,
`jury verify --trusted-key PUB` proves who locked a file, and a re-locked edit is caught."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_audit import FIVE, audit_juror
from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.documents import LOCK_KEY
from jury.verdicts.lock import content_hash, load_locked
from jury.verdicts.signing import NAMESPACE, load_signer, parse_signature, sign_file
from tests.support.badinput import Case, check_case
from tests.support.fakellm import FakeLLMServer
from tests.support.jurytest import copy_project, make_project, says, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
SSH_KEYGEN = shutil.which("ssh-keygen")


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def make_key(folder: Path, name: str, kind: str = "ed25519") -> Path:
    """An OpenSSH private key written with cryptography (no ssh-keygen needed); .pub beside it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

    key = ed25519.Ed25519PrivateKey.generate() if kind == "ed25519" else rsa.generate_private_key(65537, 2048)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    )
    pub = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    (folder / f"{name}.pub").write_bytes(pub + f" {name}@test\n".encode())
    return path


@pytest.fixture
def keys(tmp_path):
    folder = tmp_path / "keys"
    return {"alice": make_key(folder, "alice"), "mallory": make_key(folder, "mallory")}


@pytest.fixture(scope="module")
def signed_template(tmp_path_factory):
    """An adjudication written and signed by alice (keys/alice), built once for this module."""
    tmp = tmp_path_factory.mktemp("signed")
    make_project(tmp)
    alice = make_key(tmp / "keys", "alice")
    make_key(tmp / "keys", "mallory")
    with FakeLLMServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name, _ in FOUR:
            server.script(name, says("genuine_error"))
        panel = write_panel(tmp, server.base_url, FOUR)
        res = invoke("adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json", "--sign", str(alice))
    assert res.exit_code == 0, res.output
    assert "signed verdicts/adj.json" in " ".join(res.output.split())
    return tmp


@pytest.fixture
def signed(signed_template, tmp_path, monkeypatch, keys):
    """A copy of the signed adjudication in tmp_path, the working directory; `keys` are its keys."""
    copy_project(signed_template, tmp_path)  # the template's keys replace the ones `keys` made, at the same paths
    monkeypatch.chdir(tmp_path)
    return tmp_path


def flip_and_relock(path: Path) -> None:
    """What the lock alone cannot stop: a consistent forgery. Every vote of one record now
    picks the model's answer (gold defect), the verdict, credit and summary follow, and
    content_sha256 is recomputed."""
    data = json.loads(path.read_text())
    rec = data["records"][0]
    assert not rec["credited"]
    for v in rec["votes"]:
        v["raw_verdict"] = "answer_2" if v["order"] == "gold_first" else "answer_1"
        v["category"] = "gold_defect"
    rec["verdict"], rec["credited"] = "gold_defect", True
    data["summary"]["credited"] += 1
    data[LOCK_KEY] = content_hash(data)
    path.write_text(json.dumps(data, indent=2))


def test_a_flipped_and_relocked_verdict_fails_verify(signed, keys):
    adj = signed / "verdicts" / "adj.json"
    sig = signed / "verdicts" / "adj.json.sig"
    assert sig.is_file() and parse_signature(sig.read_text()).namespace == NAMESPACE
    pub = str(keys["alice"]) + ".pub"
    res = invoke("verify", "verdicts/adj.json", "--trusted-key", pub)
    assert res.exit_code == 0 and "signed by trusted key SHA256:" in res.output, res.output

    flip_and_relock(adj)
    assert load_locked(adj).records[0].credited  # the lock alone is fooled: a valid content_sha256
    for args in ((), ("--trusted-key", pub)):
        res = invoke("verify", "verdicts/adj.json", *args)
        assert res.exit_code == 1, (args, res.output)
        assert "FAILED verdicts/adj.json" in res.output and "invalid signature" in res.output


def test_trusted_key_requires_a_signature_by_that_key(signed, keys):
    other = signed / "verdicts" / "other.json"
    shutil.copy(signed / "verdicts" / "adj.json", other)  # same bytes, no signature beside it
    res = invoke("verify", str(other), "--trusted-key", str(keys["alice"]) + ".pub")
    assert res.exit_code == 1 and "no signature" in res.output and "other.json" in res.output
    res = invoke("verify", str(other))  # without --trusted-key an unsigned file is fine
    assert res.exit_code == 0 and "signed" not in res.output

    res = invoke("verify", "verdicts/adj.json", "--trusted-key", str(keys["mallory"]) + ".pub")
    assert res.exit_code == 1 and "not a trusted key" in res.output and "adj.json" in res.output
    # several trusted keys: any one of them will do
    res = invoke(
        "verify",
        "verdicts/adj.json",
        "--trusted-key",
        str(keys["mallory"]) + ".pub",
        "--trusted-key",
        str(keys["alice"]) + ".pub",
    )
    assert res.exit_code == 0, res.output


def test_without_trusted_key_verify_names_the_signing_key(signed, keys):
    fp = load_signer(keys["alice"]).fingerprint
    res = invoke("verify", "verdicts/adj.json")
    assert res.exit_code == 0 and f"signed by {fp}" in res.output, res.output


def test_a_reused_file_keeps_its_signature_and_another_key_never_overwrites_it(tmp_path, monkeypatch, fake_llm, keys):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = str(write_panel(tmp_path, fake_llm.base_url, FOUR))
    assert invoke("adjudicate", "run.jsonl", "--panel", panel).exit_code == 0  # unsigned
    (path,) = (tmp_path / "verdicts").glob("adjudication-*.json")
    sig = path.with_name(path.name + ".sig")
    assert not sig.exists()
    res = invoke("adjudicate", "run.jsonl", "--panel", panel, "--sign", str(keys["alice"]))
    assert res.exit_code == 0 and sig.is_file(), res.output  # a reused file with no signature: signed now
    before = sig.read_bytes()
    res = invoke("adjudicate", "run.jsonl", "--panel", panel, "--sign", str(keys["alice"]))
    assert res.exit_code == 0 and "already signed by this key" in res.output
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", panel, "--sign", str(keys["mallory"])])
    assert res.exit_code == 1 and "not overwritten" in res.output and "another key" in res.output
    assert sig.read_bytes() == before
    assert list((tmp_path / "verdicts").glob("*.json")) == [path]


def test_audit_gold_and_reaudit_sign_what_they_write(tmp_path, monkeypatch, fake_llm, keys):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({2}))
    fake_llm.script("je2", audit_juror({1}))
    panel = write_panel(tmp_path, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    res = invoke("audit-gold", "gold.json", "--panel", str(panel), "--sign", str(keys["alice"]))
    assert res.exit_code == 0, res.output
    (old,) = (tmp_path / "verdicts").glob("audit-*.json")
    assert old.with_name(old.name + ".sig").is_file()
    panel.write_text(panel.read_text().replace('name = "je"\nmodel = "openai/je"', 'name = "je2"\nmodel = "openai/je2"'))
    res = invoke("reaudit", "--sign", str(keys["alice"]))
    assert res.exit_code == 0, res.output
    new = next(p for p in (tmp_path / "verdicts").glob("audit-*.json") if p != old)
    assert new.with_name(new.name + ".sig").is_file()
    res = invoke("verify", str(new), "--trusted-key", str(keys["alice"]) + ".pub")
    assert res.exit_code == 0 and "trusted key" in res.output, res.output


def test_a_bad_key_stops_before_any_call(tmp_path, monkeypatch, fake_llm):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    panel = str(write_panel(tmp_path, fake_llm.base_url, FOUR))
    rsa = make_key(tmp_path / "keys", "rsa", kind="rsa")
    for key, message in (
        (tmp_path / "nope", "no such signing key file"),
        (rsa, "Ed25519 keys only"),
        (Path(str(rsa) + ".pub"), "not a private key"),
    ):
        res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", panel, "--sign", str(key)])
        assert res.exit_code == 1 and message in res.output, (key, res.output)
    assert fake_llm.calls() == 0 and not (tmp_path / "verdicts").exists()


# ------------------------------------------------------------------ OpenSSH interoperability


@pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen is not installed")
def test_ssh_keygen_verifies_jury_signatures_and_jury_verifies_ssh_keygens(signed, keys, tmp_path):
    adj = signed / "verdicts" / "adj.json"
    pub = (Path(str(keys["alice"]) + ".pub")).read_text().split()
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"alice@test {pub[0]} {pub[1]}\n")
    proc = subprocess.run(
        [SSH_KEYGEN, "-Y", "verify", "-f", str(allowed), "-I", "alice@test", "-n", NAMESPACE, "-s", str(adj) + ".sig"],
        input=adj.read_bytes(),
        capture_output=True,
    )
    assert proc.returncode == 0 and b"Good" in proc.stdout + proc.stderr, proc.stderr
    # and the other way: ssh-keygen signs an (unsigned) audit-style copy, jury verifies it
    copy = signed / "verdicts" / "copy.json"
    shutil.copy(adj, copy)
    key = tmp_path / "sshkey"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "bob@test", "-f", str(key)], check=True)
    subprocess.run([SSH_KEYGEN, "-Y", "sign", "-q", "-f", str(key), "-n", NAMESPACE, str(copy)], check=True, capture_output=True)
    res = invoke("verify", str(copy), "--trusted-key", str(key) + ".pub")
    assert res.exit_code == 0 and "trusted key" in res.output, res.output
    res = invoke("verify", str(copy), "--trusted-key", str(keys["alice"]) + ".pub")
    assert res.exit_code == 1  # bob signed it, not alice
    # and a key ssh-keygen wrote is a key jury signs with
    copy2 = signed / "verdicts" / "copy2.json"
    shutil.copy(adj, copy2)
    sign_file(copy2, load_signer(key))
    proc = subprocess.run(
        [SSH_KEYGEN, "-Y", "check-novalidate", "-n", NAMESPACE, "-s", str(copy2) + ".sig"],
        input=copy2.read_bytes(),
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_sign_file_refuses_an_unlocked_or_tampered_file(tmp_path, keys):
    path = tmp_path / "x.json"
    path.write_text('{"kind": "adjudication"}')
    from jury.errors import VerdictError

    with pytest.raises(VerdictError, match="not locked"):
        sign_file(path, load_signer(keys["alice"]))
    assert not (tmp_path / "x.json.sig").exists()


# ------------------------------------------------------------------ bad input (subprocess, one line)


def _untrusted_pub(tmp: Path) -> None:
    (tmp / "empty.pub").write_text("# no keys here\n")
    (tmp / "bad.pub").write_text("ssh-ed25519 not-base64!!\n")
    (tmp / "dummy.json").write_text("{}")


BAD = [
    Case(
        "verify-trusted-key-missing",
        ["verify", "dummy.json", "--trusted-key", "nope.pub"],
        "nope.pub: no such trusted key file",
        setup=_untrusted_pub,
    ),
    Case(
        "verify-trusted-key-empty",
        ["verify", "dummy.json", "--trusted-key", "empty.pub"],
        "empty.pub: no ssh-ed25519 public key",
        setup=_untrusted_pub,
    ),
    Case(
        "verify-trusted-key-garbled",
        ["verify", "dummy.json", "--trusted-key", "bad.pub"],
        "bad.pub:1: not a valid ssh-ed25519 public key",
        setup=_untrusted_pub,
    ),
    Case("adjudicate-sign-missing-key", ["adjudicate", "run.jsonl", "--sign", "nokey"], "nokey: no such signing key file"),
    Case("audit-sign-missing-key", ["audit-gold", "--sign", "nokey"], "nokey: no such signing key file"),
    Case("reaudit-sign-missing-key", ["reaudit", "--sign", "nokey"], "nokey: no such signing key file"),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_signing_input_is_one_line(case, tmp_path):
    check_case(case, tmp_path)


# ------------------------------------------------------------------ supersede chains under --trusted-key


def _forged_successor(adj: Path, name: str = "zz.json") -> Path:
    """What anyone can write without a key: a copy of a locked file naming it in `supersedes`,
    re-locked (content_sha256 recomputed), with no signature."""
    data = json.loads(adj.read_text())
    data["supersedes"] = data[LOCK_KEY]
    data[LOCK_KEY] = content_hash(data)
    out = adj.with_name(name)
    out.write_text(json.dumps(data, indent=2))
    return out


def test_an_unsigned_successor_does_not_hide_changed_inputs(signed, keys):
    pub = str(keys["alice"]) + ".pub"
    (signed / "gold.json").write_text((signed / "gold.json").read_text() + "\n")  # an input changed after signing
    res = invoke("verify", "verdicts/adj.json", "--trusted-key", pub)
    assert res.exit_code == 1 and "gold" in res.output, res.output
    _forged_successor(signed / "verdicts" / "adj.json")
    res = invoke("verify", "verdicts/adj.json", "--trusted-key", pub)
    out = " ".join(res.output.split())
    assert res.exit_code == 1, out  # on main: 0, "valid, superseded by verdicts/zz.json; ... signed by trusted key"
    assert "zz.json" in out and "not signed" in out and "gold ../gold.json changed" in out, out
    # without --trusted-key the successor is named, and so is what it leaves unexplained
    res = invoke("verify", "verdicts/adj.json")
    out = " ".join(res.output.split())
    assert res.exit_code == 0 and "superseded by verdicts/zz.json (unsigned)" in out, out
    assert "1 bound input changed since (gold ../gold.json)" in out, out


def test_a_signed_successor_of_another_job_does_not_supersede(signed, keys):
    pub = str(keys["alice"]) + ".pub"
    adj = signed / "verdicts" / "adj.json"
    data = json.loads(adj.read_text())
    data["supersedes"] = data[LOCK_KEY]
    data["inputs"]["gold"]["path"] = "../other-gold.json"  # another gold file: not a re-run of this job
    data[LOCK_KEY] = content_hash(data)
    other = adj.with_name("zz.json")
    other.write_text(json.dumps(data, indent=2))
    sign_file(other, load_signer(keys["alice"]))
    (signed / "gold.json").write_text((signed / "gold.json").read_text() + "\n")
    res = invoke("verify", "verdicts/adj.json", "--trusted-key", pub)
    out = " ".join(res.output.split())
    assert res.exit_code == 1 and "not a successor of the same job" in out and "inputs.gold" in out, out


def test_a_signed_reaudit_chain_verifies_under_the_trusted_key(tmp_path, monkeypatch, fake_llm, keys):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({2}))
    fake_llm.script("je2", audit_juror({1}))
    panel = write_panel(tmp_path, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    assert invoke("audit-gold", "gold.json", "--panel", str(panel), "--sign", str(keys["alice"])).exit_code == 0
    (old,) = (tmp_path / "verdicts").glob("audit-*.json")
    panel.write_text(panel.read_text().replace('name = "je"\nmodel = "openai/je"', 'name = "je2"\nmodel = "openai/je2"'))
    assert invoke("reaudit").exit_code == 0  # the successor is not signed
    new = next(p for p in (tmp_path / "verdicts").glob("audit-*.json") if p != old)
    pub = str(keys["alice"]) + ".pub"
    res = invoke("verify", str(old), "--trusted-key", pub)
    assert res.exit_code == 1 and "not signed" in res.output and new.name in res.output, res.output
    sign_file(new, load_signer(keys["alice"]))
    res = invoke("verify", str(old), "--trusted-key", pub)
    out = " ".join(res.output.split())
    assert res.exit_code == 0 and f"superseded by {new} (signed by trusted key" in out, out
    assert "1 bound input changed since (panel" in out, out


# ------------------------------------------------------------------ allowed_signers options, as ssh-keygen reads them


def _allowed(tmp: Path, key: Path, options: str) -> Path:
    kind, blob = Path(str(key) + ".pub").read_text().split()[:2]
    path = tmp / "allowed_signers"
    path.write_text(f"alice@test {options} {kind} {blob}\n".replace("  ", " "))
    return path


def _ssh_keygen_accepts(allowed: Path, adj: Path) -> bool:
    proc = subprocess.run(
        [SSH_KEYGEN, "-Y", "verify", "-f", str(allowed), "-I", "alice@test", "-n", NAMESPACE, "-s", str(adj) + ".sig"],
        input=adj.read_bytes(),
        capture_output=True,
    )
    return proc.returncode == 0


ALLOWED_CASES = [
    ('namespaces="git"', False, "namespaces"),
    ('valid-before="20000101"', False, "expired"),
    ("cert-authority", False, "cert-authority"),
    ('valid-after="20000101",valid-before="29991231",namespaces="git,jury-*"', True, ""),
    ('namespaces="*,!jury-verdict"', False, "namespaces"),
    ('valid-after="29990101Z"', False, "not yet valid"),
    ("", True, ""),
]


@pytest.mark.parametrize(("options", "accepted", "why"), ALLOWED_CASES, ids=[c[0] or "plain" for c in ALLOWED_CASES])
def test_trusted_key_honours_allowed_signers_options_as_ssh_keygen_does(signed, keys, tmp_path, options, accepted, why):
    adj = signed / "verdicts" / "adj.json"
    allowed = _allowed(tmp_path, keys["alice"], options)
    if SSH_KEYGEN is not None:  # the reference
        assert _ssh_keygen_accepts(allowed, adj) is accepted
    res = invoke("verify", str(adj), "--trusted-key", str(allowed))
    out = " ".join(res.output.split())
    assert res.exit_code == (0 if accepted else 1), out
    assert why in out, out


def test_an_unknown_allowed_signers_option_is_a_one_line_error(signed, keys, tmp_path):
    allowed = _allowed(tmp_path, keys["alice"], "no-touch-required")
    res = runner.invoke(app, ["verify", "verdicts/adj.json", "--trusted-key", str(allowed)])
    assert res.exit_code == 1 and "allowed_signers:1" in res.output and "no-touch-required" in res.output, res.output
    if SSH_KEYGEN is not None:
        assert not _ssh_keygen_accepts(allowed, signed / "verdicts" / "adj.json")


# ------------------------------------------------------------------ devices, pipes and huge files are refused, not read


def _limited():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))  # 1.5 GiB: an unbounded read would fail loudly


def _run_limited(args, cwd: Path):
    import os
    import sys

    return subprocess.run(
        [sys.executable, "-m", "jury", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
        env=dict(os.environ, COLUMNS="200"),
    )


def _special(path: Path, what: str) -> None:
    import os

    path.unlink(missing_ok=True)
    if what == "zero":
        path.symlink_to("/dev/zero")
    elif what == "fifo":
        os.mkfifo(path)
    else:  # a sparse file of 1.5 GiB
        with open(path, "wb") as fh:
            fh.truncate(3 << 29)


@pytest.mark.slow
@pytest.mark.parametrize("what", ["zero", "fifo", "sparse"])
def test_a_signature_that_is_no_regular_small_file_is_refused_at_once(signed, keys, what):
    _special(signed / "verdicts" / "adj.json.sig", what)
    proc = _run_limited(["verify", "verdicts/adj.json", "--trusted-key", str(keys["alice"]) + ".pub"], signed)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "adj.json.sig" in proc.stdout and any(
        why in proc.stdout for why in ("not a regular file", "larger than", "a link to a file outside its own folder")
    ), proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("what", ["zero", "fifo"])
def test_a_bound_database_that_is_a_device_or_pipe_is_refused_at_once(signed, what):
    _special(signed / "dbs" / "shop" / "shop.sqlite", what)
    proc = _run_limited(["verify", "verdicts/adj.json"], signed)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "databases[shop]" in proc.stdout and "not a regular file" in proc.stdout, proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("what", ["zero", "fifo", "sparse"])
@pytest.mark.parametrize("option", ["--sign", "--trusted-key"])
def test_a_key_file_that_is_no_regular_small_file_is_one_line(signed, what, option):
    key = signed / "keys" / "odd"
    _special(key, what)
    args = (
        ["adjudicate", "run.jsonl", "--panel", "panel.toml", "-o", "verdicts/adj.json"]
        if option == "--sign"
        else ["verify", "verdicts/adj.json"]
    )
    proc = _run_limited([*args, option, str(key)], signed)
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(key) in lines[0] and any(
        why in lines[0] for why in ("not a regular file", "larger than", "a link to a file outside its own folder")
    ), lines[0]
