"""The executor seam (jury/execution/backends.py): `--executor local|ray`.

Ray tests run on one local Ray runtime for the module (starting one costs seconds) and are
skipped when Ray is not installed (`pip install 'jury-sql[ray]'`); the bad-input cases run the
real CLI in this process, those about Ray itself in a subprocess.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from jury.compare.outcomes import Settings, evaluate, run_executions
from jury.errors import InputError, JuryError
from jury.execution import backends
from jury.execution.backends import RayExecutor, execute_verified_chunk
from jury.execution.store import Store, execution_key
from jury.inputs.io import load_gold, load_runs
from tests.support.badinput import Case, check_case, run_jury_process
from tests.support.helpers import EXAMPLE

SUPERHERO = EXAMPLE / "databases" / "superhero" / "superhero.sqlite"

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False

needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install 'jury-sql[ray]')")


def _no_ray(tmp: Path) -> None:
    """A `ray` module that fails to import, first on the path: Ray as if not installed."""
    (tmp / "noray").mkdir()
    (tmp / "noray" / "ray.py").write_text("raise ImportError(\"No module named 'ray'\")\n")


CASES = [
    Case(
        "executor-unknown-flag",
        ["score", "run.jsonl", "--executor", "spark"],
        "unknown executor 'spark'; choose one of: local, ray",
    ),
    Case(
        "executor-unknown-toml",
        ["score", "run.jsonl"],
        "jury.toml: executor must be one of local, ray, got 'dask'",
        setup=lambda tmp: (tmp / "jury.toml").write_text((tmp / "jury.toml").read_text() + 'executor = "dask"\n'),
    ),
    Case(
        "executor-ray-missing",
        ["score", "run.jsonl", "--executor", "ray"],
        "executor 'ray' needs ray: pip install 'jury-sql[ray]'",
        setup=_no_ray,
        env={"PYTHONPATH": "noray"},
        process=True,
    ),
]
if HAVE_RAY:
    CASES.append(
        Case(
            "executor-ray-unreachable",
            ["score", "run.jsonl", "--executor", "ray", "--ray-address", "127.0.0.1:1"],
            "cannot connect to the Ray cluster at '127.0.0.1:1'",
            process=True,
        )
    )


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=pytest.mark.slow) if c.id == "executor-ray-unreachable" else c for c in CASES],  # starts Ray
    ids=[c.id for c in CASES],
)
def test_bad_executor_input_is_one_line(case, tmp_path):
    check_case(case, tmp_path)


def test_ray_missing_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(JuryError, match=r"^executor 'ray' needs ray: pip install 'jury-sql\[ray\]'$"):
        RayExecutor(workers=1).run([("k", str(SUPERHERO), "0" * 64, "SELECT 1", 5.0, 10)], lambda chunk: None)


def test_settings_describe_leaves_the_executor_out():
    """The executor runs the same code, so a verdict file binds the same settings either way."""
    assert Settings(workers=1).describe() == Settings(workers=1, executor="ray", ray_address="x:1").describe()
    with pytest.raises(InputError, match="unknown executor 'spark'"):
        Settings(executor="spark")


# --------------------------------------------------------------------------- on a local Ray runtime


@pytest.fixture(scope="module")
def ray_runtime(tmp_path_factory):
    if not HAVE_RAY:
        pytest.skip("Ray is not installed (pip install 'jury-sql[ray]')")
    import ray

    temp = Path("/tmp") / f"jray-test-{os.getpid()}"  # short: Ray's socket paths are limited
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=str(temp), logging_level="ERROR")
    yield ray
    ray.shutdown()
    import shutil

    shutil.rmtree(temp, ignore_errors=True)


def _stored(path: Path) -> dict[str, tuple]:
    """key -> the stored execution without its timing."""
    with sqlite3.connect(path) as conn:
        cur = conn.execute("SELECT * FROM executions")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, row)) for row in cur.fetchall()]
    conn.close()
    return {r["key"]: tuple(v for c, v in r.items() if c not in ("elapsed_s", "created_at")) for r in rows}


@pytest.mark.slow
@needs_ray
def test_ray_outcomes_equal_local_on_the_bundled_example(ray_runtime, tmp_path):
    gold = load_gold(EXAMPLE / "dev.json")
    records = load_runs([EXAMPLE / "run.jsonl"], gold)
    models = sorted({r.model for r in records})[:6]
    records = [r for r in records if r.model in models]
    evaluations = {}
    for name in ("local", "ray"):
        with Store(tmp_path / f"{name}.db") as store:
            evaluations[name] = evaluate(gold, records, EXAMPLE / "databases", store, Settings(workers=2, executor=name))
    local, on_ray = evaluations["local"], evaluations["ray"]
    assert local.executed == on_ray.executed > 100
    assert [asdict(p) for p in local.pairs] == [asdict(p) for p in on_ray.pairs]
    assert _stored(tmp_path / "local.db") == _stored(tmp_path / "ray.db")


@needs_ray
@pytest.mark.slow  # a Ray runtime: the second CI step
def test_a_database_with_another_sha256_is_refused_naming_it(ray_runtime, tmp_path):
    wrong = "0" * 64  # what the driver believes the file hashes to
    sql = "SELECT count(*) FROM superhero"
    jobs = {execution_key(wrong, sql): ("superhero", sql)}
    refused = r"superhero\.sqlite: the database a Ray worker on .* has sha256 .*, not 000000000000"
    with Store(tmp_path / "store.db") as store, pytest.raises(InputError, match=refused):
        run_executions(jobs, {"superhero": (SUPERHERO, wrong)}, store, Settings(workers=2, executor="ray"))
    assert _stored(tmp_path / "store.db") == {}  # nothing executed, nothing written


@needs_ray
@pytest.mark.slow
def test_a_killed_workers_batch_is_retried_and_each_key_saved_once(ray_runtime, tmp_path):
    from jury.inputs.io import sha256_file

    sha = sha256_file(SUPERHERO)
    jobs = [(f"k{i}", str(SUPERHERO), sha, f"SELECT id, {i} FROM superhero WHERE id < {i % 40}", 10.0, 1000) for i in range(120)]
    marker = tmp_path / "killed-once"

    def dies_on_its_first_attempt(chunk):  # nested: Ray pickles it by value
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return execute_verified_chunk(chunk)
        os._exit(1)  # the worker process dies without a reply: Ray runs the task again

    saved: list[str] = []
    RayExecutor(workers=2, task=dies_on_its_first_attempt).run(jobs, lambda chunk: saved.extend(k for k, _ in chunk))
    assert marker.exists()  # one task's worker was killed
    assert sorted(saved) == sorted(k for k, *_ in jobs)  # every key once: none lost, none twice


@needs_ray
@pytest.mark.slow
def test_a_task_killed_more_than_max_retries_is_one_line(ray_runtime, tmp_path):
    def always_dies(chunk):
        os._exit(1)

    job = ("k", str(SUPERHERO), "0" * 64, "SELECT 1", 5.0, 10)
    with pytest.raises(JuryError, match=r"^a Ray task failed \(after up to 1 retries\): [^\n]+$"):
        RayExecutor(workers=1, max_retries=1, task=always_dies).run([job], lambda chunk: None)


@needs_ray
@pytest.mark.slow
def test_score_executor_ray_prints_what_local_prints(tmp_path):
    """The CLI end to end: its own local Ray runtime (started and stopped by the command)."""
    args = ["score", str(EXAMPLE / "run.jsonl"), "--gold", str(EXAMPLE / "dev.json"), "--db-root", str(EXAMPLE / "databases")]
    args += ["-f", "json", "--workers", "2"]
    local = run_jury_process([*args, "--store", "local.db"], tmp_path)
    on_ray = run_jury_process([*args, "--store", "ray.db", "--executor", "ray"], tmp_path)
    assert local.returncode == on_ray.returncode == 0, on_ray.stderr
    assert json.loads(local.stdout) == json.loads(on_ray.stdout)
    assert on_ray.stderr == ""
    assert _stored(tmp_path / "local.db") == _stored(tmp_path / "ray.db")


def test_the_local_executor_is_the_default_and_imports_no_ray(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # any `import ray` would fail
    assert isinstance(backends.make_executor(Settings().executor, 2), backends.LocalExecutor)
    from jury.inputs.io import sha256_file

    sha = sha256_file(SUPERHERO)
    sql = "SELECT count(*) FROM superhero"
    with Store(tmp_path / "store.db") as store:
        assert (
            run_executions({execution_key(sha, sql): ("superhero", sql)}, {"superhero": (SUPERHERO, sha)}, store, Settings()) == 1
        )


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def token_cluster(tmp_path):
    """A Ray head with Ray's token authentication on (RAY_AUTH_MODE=token), started for this
    test in its own session (`ray start --block`) and stopped by that session's process group,
    so no other Ray on the machine is touched. Yields (address, token)."""
    import secrets
    import shutil
    import signal
    import socket
    import subprocess
    import time

    token, port = secrets.token_hex(32), _free_port()
    temp = Path("/tmp") / f"jray-auth-{os.getpid()}"  # short: Ray's socket paths are limited
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
    ray_cli = Path(sys.executable).with_name("ray")
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
         f"--temp-dir={temp}", "--disable-usage-stats"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if head.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the token-authenticated Ray head did not start (exit {head.poll()})")
                time.sleep(0.5)
        time.sleep(3)  # the raylet registers after the GCS listens
        yield f"127.0.0.1:{port}", token
    finally:
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
            try:
                os.killpg(head.pid, sig)
            except ProcessLookupError:
                break
            try:
                head.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            time.sleep(2)  # the group's other members (GCS, raylet) end after the head
        shutil.rmtree(temp, ignore_errors=True)


@needs_ray
@pytest.mark.slow
def test_a_cluster_that_refuses_the_token_is_reported_with_its_cause(token_cluster, tmp_path):
    """Ray's token authentication: a client without the cluster's token (or with another) got
    "cannot connect" after a minute of Ray's retries, without the cause; it now gets Ray's cause
    and what to set, at once. With the token the same command scores on the cluster."""
    address, token = token_cluster
    args = ["score", str(EXAMPLE / "run.jsonl"), "--gold", str(EXAMPLE / "dev.json"), "--db-root", str(EXAMPLE / "databases")]
    args += ["--executor", "ray", "--ray-address", address, "-f", "json"]
    bare = {
        k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH") and k != "COLUMNS"
    }  # run_jury_process sets COLUMNS
    home = tmp_path / "home"  # no ~/.ray/auth_token
    home.mkdir()
    cases = {
        "no token": {**bare, "HOME": str(home)},
        "another token": {**bare, "HOME": str(home), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "ab" * 32},
        "token mode, none given": {**bare, "HOME": str(home), "RAY_AUTH_MODE": "token"},
    }
    for name, env in cases.items():
        proc = run_jury_process([*args, "--store", f"{name}.db"], tmp_path, env=env)
        assert proc.returncode == 1, (name, proc.stderr)
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"Error: cannot connect to the Ray cluster at {address!r}: authentication failed ("), name
        assert "InvalidAuthToken" in line or "no authentication token was found" in line, (name, line)
        assert "RAY_AUTH_TOKEN" in line and "docs/execution.md" in line, name
    one = [line for line in (EXAMPLE / "run.jsonl").read_text().splitlines() if '"model": "gsr"' in line]
    (tmp_path / "gsr.jsonl").write_text("\n".join(one) + "\n")  # one model: a light job for the 1-CPU cluster
    args[1] = str(tmp_path / "gsr.jsonl")
    ok = run_jury_process(
        [*args, "--store", "ok.db"],
        tmp_path,
        env={**bare, "HOME": str(home), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token},
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr
    assert [m["model"] for m in json.loads(ok.stdout)["models"]] == ["gsr"]
