"""Time jury's ballot throughput against a loopback juror that is not the bottleneck.

Every ballot goes through the real path: run_ballots -> JurorPool.call -> litellm.acompletion
-> HTTP on 127.0.0.1 -> bench/loopback_juror.py, an asyncio server (listen backlog 1024) in a
separate process that answers {"verdict": "both"} after the latency. The ballots are split
over 3 jurors, each with max_concurrency C, in groups of one ballot (early stop plays no part).
With every juror's C slots busy all the time the run would take

    ideal = ballots * latency / (jurors * C)

For each latency (0.2 s and 1 s) and each C (8 and 32) it prints:
  server ceiling  the lightest client (jurors x C keep-alive asyncio connections, each
                  sending its share of the same requests in turn): the fraction of ideal the
                  server itself allows;
  raw httpx       an httpx.AsyncClient sending the same requests, C per juror: its wall time
                  and CPU per call (what a bare HTTP client costs, for comparison);
  jury cold       a fresh store, every ballot one call: fraction of ideal (ideal/measured),
                  the fraction of the server ceiling, CPU per call (process time of this
                  process, which holds only the client), and the share of one core that CPU
                  needs at the ideal rate (calls/s at ideal x CPU per call);
  jury warm       the same ballots on the same store: 0 calls.
  jury, no litellm  jury cold again (runner, pool, send gate, store) with litellm.acompletion
                  replaced by a bare aiohttp POST returning the reply's content: what jury's own
                  machinery reaches, so the rest of the gap is litellm's per-call work.
  jury K procs    with --processes 1 K: the jury side as K subprocesses at once, process i
                  running shard i/K of the same ballots (run_ballots(..., shard=)) into its
                  own fresh store, each juror's C split as C/K per process (so the ideal is
                  unchanged: jurors x C in flight at most). Each child imports litellm and
                  makes its warm-up call before the clock starts; wall time runs from the
                  "go" sent to all of them to the last one's result; CPU is the children's
                  timed sections summed (and, for reference, their whole lives from os.wait4).
  before / after  with --before REV: jury cold as one such subprocess (shard 1/1) from the
                  tree of git revision REV (extracted with git archive into a temporary
                  directory) and one from this tree, alternated --repeats times against the
                  same server: fraction of ideal and CPU per call of each run, then the medians.
litellm's import and the first call's setup happen before any timing. Only 127.0.0.1 is
contacted: a socket guard refuses anything else and the count is printed. Exit 1 on wrong
call or vote counts (the fractions are printed, not asserted: they depend on the machine).

Usage: python bench/jury_throughput.py [--ballots 1000] [--latency 0.2 1] [--concurrency 8 32]
                                      [--listen-backlog 1024] [--processes 1 2]
                                      [--before REV [--repeats 3]]
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import argparse
import asyncio
import json
import multiprocessing
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loopback_juror import serve_forever
from jury.execution.store import Store
from jury.judging.ballots import REPLY_SCHEMAS, make_parser
from jury.judging.juror import JurorSpec
from jury.judging.plan import Ballot
from jury.judging.providers.pool import JurorPool
from jury.judging.providers.setup import import_litellm
from jury.judging.runner import run_ballots
from jury.judging.shards import parse_shard
from tests.support.netguard import _is_allowed

JURORS = ("a", "b", "c")
TEMPLATE_SHA256 = "0" * 64
refused: list[str] = []


def loopback_only() -> None:
    """Refuse (and record) any socket connect that is not loopback, for the whole process."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def connect(sock, address):
        if not _is_allowed(sock.family, address):
            refused.append(repr(address))
            raise OSError(f"bench: non-loopback connect refused: {address!r}")
        return real_connect(sock, address)

    def connect_ex(sock, address):
        if not _is_allowed(sock.family, address):
            refused.append(repr(address))
            raise OSError(f"bench: non-loopback connect refused: {address!r}")
        return real_connect_ex(sock, address)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex


def tcp_counters() -> dict[str, int]:
    """Kernel-wide TcpExt counters (Linux); empty where /proc/net/netstat is missing."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return {}
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            return dict(zip(names.split()[1:], map(int, values.split()[1:])))
    return {}


def make_groups(n: int, base_url: str, concurrency: int) -> list[list[Ballot]]:
    jurors = [
        JurorSpec(
            name=f"juror-{x}", model=f"openai/juror-{x}", family=f"family-{x}", api_base=base_url, max_concurrency=concurrency
        )
        for x in JURORS
    ]
    groups = []
    for i in range(n):
        juror = jurors[i % len(jurors)]  # 334 / 333 / 333 for n = 1000
        messages = [
            {"role": "system", "content": "You are a careful reviewer of SQL queries. Reply with one JSON object."},
            {"role": "user", "content": f"ballot {i}: Answer 1: SELECT {i}; Answer 2: SELECT {i} + 0. Same result?"},
        ]
        groups.append(
            [
                Ballot(
                    "adjudication",
                    i,
                    "model-under-test",
                    juror,
                    "blind",
                    messages,
                    TEMPLATE_SHA256,
                    {"order": "gold_first", "db_id": "x"},
                )
            ]
        )
    return groups


def label(r) -> str | None:
    return r.reply["verdict"] if r.reply else None


class Server:
    """The loopback juror in its own process (so this process's CPU time is the client's only)."""

    def __init__(self, latency_s: float, backlog: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        port_queue = ctx.Queue()
        self.proc = ctx.Process(target=serve_forever, args=(latency_s, backlog, port_queue), daemon=True)
        self.proc.start()
        self.port = port_queue.get(timeout=30)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _get(self, path: str, method: str = "GET") -> dict:
        import httpx

        return httpx.request(method, f"http://127.0.0.1:{self.port}{path}", timeout=10).json()

    def reset(self) -> None:
        self._get("/reset", "POST")

    def stats(self) -> dict:
        return self._get("/stats")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.join(10)


def warm_up(server) -> tuple[float, float]:
    """Import litellm and make one call outside the timed runs; returns (import_s, first_call_s)."""
    t0 = time.perf_counter()
    import_litellm()
    t_import = time.perf_counter() - t0
    spec = JurorSpec(name="warm-up", model="openai/warm-up", family="w", api_base=server.base_url)
    pool = JurorPool([spec])
    t0 = time.perf_counter()
    res = asyncio.run(
        pool.call("warm-up", [{"role": "user", "content": "warm up"}], schema=REPLY_SCHEMAS["blind"], parse=make_parser("blind"))
    )
    t_call = time.perf_counter() - t0
    if not res.ok:
        sys.exit(f"warm-up call failed: {res.error}")
    return t_import, t_call


def raw_ceiling(server: Server, groups, concurrency: int) -> tuple[float, float, int]:
    """(wall, cpu, ok replies) of a raw httpx client sending the same requests, C per juror."""
    import httpx

    async def main() -> int:
        slots = {j: asyncio.Semaphore(concurrency) for j in JURORS}
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        async with httpx.AsyncClient(limits=limits, timeout=60) as client:

            async def one(b: Ballot) -> bool:
                async with slots[b.juror.name[-1]]:
                    body = {"model": b.juror.model.split("/", 1)[1], "messages": b.messages, "temperature": 0}
                    r = await client.post(f"{server.base_url}/chat/completions", json=body)
                    return r.status_code == 200 and "both" in r.json()["choices"][0]["message"]["content"]

            done = await asyncio.gather(*(one(g[0]) for g in groups))
            return sum(done)

    server.reset()
    cpu0, t0 = time.process_time(), time.perf_counter()
    ok = asyncio.run(main())
    return time.perf_counter() - t0, time.process_time() - cpu0, ok


def stream_ceiling(server: Server, groups, concurrency: int) -> tuple[float, int]:
    """(wall, ok replies) of the lightest client: jurors x C keep-alive asyncio connections,
    each sending its share of the requests one after another (the server's own ceiling)."""
    bodies = [json.dumps({"model": g[0].juror.model.split("/", 1)[1], "messages": g[0].messages}).encode() for g in groups]

    async def worker(share: list[bytes]) -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        ok = 0
        for body in share:
            writer.write(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            reply = await reader.readexactly(length)
            ok += head.startswith(b"HTTP/1.1 200") and b"both" in reply
        writer.close()
        return ok

    async def main() -> int:
        slots = len(JURORS) * concurrency
        return sum(await asyncio.gather(*(worker(bodies[i::slots]) for i in range(slots))))

    server.reset()
    t0 = time.perf_counter()
    ok = asyncio.run(main())
    return time.perf_counter() - t0, ok


def timed_run(groups, store, server: Server):
    server.reset()
    net0 = tcp_counters()
    cpu0, t0 = time.process_time(), time.perf_counter()
    results, stats = run_ballots(groups, store, label)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    net1 = tcp_counters()
    net = {k: net1.get(k, 0) - net0.get(k, 0) for k in ("ListenOverflows", "TCPSynRetrans")} if net0 else None
    voted = sum(1 for g in results for r in g if r.status == "voted")
    verdicts = {label(r) for g in results for r in g}
    seen = server.stats()
    return wall, cpu, stats, voted, verdicts, seen["calls"], seen["peak"], net


def bare_run(groups, server: Server):
    """timed_run with litellm.acompletion replaced, for this run only, by a bare aiohttp POST (one
    session per event loop, no connection limit) whose reply carries only what the pool reads."""
    import aiohttp

    litellm = import_litellm()
    sessions: dict = {}  # loop -> (session, the async generator holding it open)

    async def held():  # closed by asyncio.run's shutdown_asyncgens, before its loop closes
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            yield session

    async def bare(model, messages, api_base, **_):
        loop = asyncio.get_running_loop()
        if loop not in sessions:
            gen = held()
            sessions[loop] = (await gen.__anext__(), gen)
        body = {"model": model.split("/", 1)[1], "messages": messages}
        async with sessions[loop][0].post(api_base + "/chat/completions", json=body) as r:
            msg = (await r.json())["choices"][0]["message"]
        message = SimpleNamespace(content=msg["content"], refusal=None)
        return SimpleNamespace(
            choices=[SimpleNamespace(message=message, finish_reason="stop")],
            usage=SimpleNamespace(prompt_tokens=1, completion_tokens=1),
            _hidden_params={},
        )

    real, litellm.acompletion = litellm.acompletion, bare
    try:
        with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store.db") as store:
            return timed_run(groups, store, server)
    finally:
        litellm.acompletion = real


def shard_worker(shard_text: str, n: int, base_url: str, concurrency: int) -> None:
    """A child of --processes: warm up, print "ready", wait for "go" on stdin, run this shard's
    ballots into a fresh store, print one JSON line of counts and timings."""
    loopback_only()
    shard = parse_shard(shard_text)
    warm_up(argparse.Namespace(base_url=base_url))
    groups = make_groups(n, base_url, concurrency)
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit("shard worker: expected go")
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store.db") as store:
        cpu0, t0 = time.process_time(), time.perf_counter()
        results, stats = run_ballots(groups, store, label, shard=shard)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    out = {
        "wall": wall,
        "cpu": cpu,
        "asked": stats.asked,
        "other_shard": stats.other_shard,
        "voted": sum(1 for g in results for r in g if r.status == "voted"),
        "verdicts": sorted({str(label(r)) for g in results for r in g if r.status != "not_asked"}),
        "refused": refused,
    }
    print(json.dumps(out), flush=True)


def sharded_run(k_procs: int, n: int, server: Server, concurrency: int, script: Path | None = None):
    """Run the jury side as k_procs shard workers at once (this bench script, or `script`: the same
    bench in another tree); (wall, timed cpu, whole-life cpu, per-child results)."""
    script = script or Path(__file__).resolve()
    cmd = [sys.executable, str(script), "--ballots", str(n), "--base-url", server.base_url]
    procs = [
        subprocess.Popen(
            [*cmd, "--shard-worker", f"{i}/{k_procs}", "--concurrency", str(concurrency // k_procs)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(1, k_procs + 1)
    ]
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            sys.exit("shard worker did not start")
    server.reset()
    t0 = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    children = [json.loads(p.stdout.readline()) for p in procs]
    wall = time.perf_counter() - t0
    life_cpu = 0.0
    for p in procs:
        _, status, usage = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit(f"shard worker exited with status {status}")
        life_cpu += usage.ru_utime + usage.ru_stime
    return wall, sum(c["cpu"] for c in children), life_cpu, children


def extract_tree(rev: str) -> Path:
    """git revision `rev` of this repository as files in a temporary directory (git archive)."""
    repo = Path(__file__).resolve().parents[1]
    tree = Path(tempfile.mkdtemp(prefix="jury-before-")) / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ballots", type=int, default=1000)
    ap.add_argument("--latency", type=float, nargs="+", default=[0.2, 1.0], help="server delay per reply, seconds")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 32], help="max_concurrency per juror")
    ap.add_argument("--listen-backlog", type=int, default=1024, help="listen backlog of the loopback server")
    ap.add_argument(
        "--processes",
        type=int,
        nargs="+",
        default=[1],
        help="also run the jury side as K shard processes at once (1 = this process only, always run)",
    )
    ap.add_argument(
        "--before",
        metavar="REV",
        help="also run jury cold from git revision REV's tree, alternated with this tree's (one subprocess each)",
    )
    ap.add_argument("--repeats", type=int, default=3, help="with --before: runs of each tree, alternated")
    ap.add_argument("--shard-worker", help=argparse.SUPPRESS)  # internal: a child of --processes
    ap.add_argument("--base-url", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.shard_worker:
        shard_worker(args.shard_worker, args.ballots, args.base_url, args.concurrency[0])
        return
    multi = sorted({p for p in args.processes if p > 1})
    for p in multi:
        for c in args.concurrency:
            if c % p:
                ap.error(f"--processes {p}: every --concurrency must be a multiple of it (C is split as C/K), got {c}")
    loopback_only()
    n, k = args.ballots, len(JURORS)
    failed = False
    summary = []
    multi_summary = []
    before_summary = []
    before_tree = extract_tree(args.before) if args.before else None
    first = True
    for lat in args.latency:
        server = Server(lat, args.listen_backlog)
        try:
            if first:
                t_import, t_first = warm_up(server)
                print(
                    f"{n} ballots, {k} jurors, loopback juror in its own process (asyncio, listen backlog "
                    f"{args.listen_backlog}), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
                )
                print(f"not timed: litellm import {t_import:.2f} s, first call (warm-up, not stored) {t_first:.2f} s")
                first = False
            for c in args.concurrency:
                ideal = n * lat / (k * c)
                groups = make_groups(n, server.base_url, c)
                raw_wall, raw_cpu, raw_ok = raw_ceiling(server, groups, c)
                srv_wall, srv_ok = stream_ceiling(server, groups, c)
                raw_ok = min(raw_ok, srv_ok)
                with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store.db") as store:
                    wall, cpu, stats, voted, verdicts, calls, peak, net = timed_run(groups, store, server)
                    wall2, _, stats2, voted2, _, calls2, _, _ = timed_run(groups, store, server)
                rate = n / ideal  # calls per second at the ideal
                print(f"\nlatency {lat:g} s, C={c} per juror ({k * c} in flight at most), ideal {ideal:.2f} s")
                print(
                    f"  server ceiling (asyncio)    {srv_wall:6.2f} s  fraction of ideal {ideal / srv_wall:.2f}"
                    + ("" if raw_ok == n else f"  FAILED: {raw_ok} of {n} replies ok")
                )
                print(
                    f"  raw httpx client            {raw_wall:6.2f} s  fraction of ideal {ideal / raw_wall:.2f}  "
                    f"cpu {1000 * raw_cpu / n:.2f} ms/call ({rate * raw_cpu / n:.0%} of a core at the ideal rate)"
                )
                print(
                    f"  jury cold                   {wall:6.2f} s  fraction of ideal {ideal / wall:.2f}  "
                    f"of the server ceiling {srv_wall / wall:.2f}  cpu {1000 * cpu / n:.2f} ms/call "
                    f"({rate * cpu / n:.0%} of a core at the ideal rate)"
                )
                print(
                    f"      server saw {calls} calls (expected {n}), peak in flight {peak} of {k * c}; asked {stats.asked}, "
                    f"voted {voted}"
                    + (
                        f"; kernel: {net['ListenOverflows']} listen-queue overflows, {net['TCPSynRetrans']} SYN retransmits"
                        if net is not None
                        else ""
                    )
                )
                print(f"  jury warm                   {wall2:6.2f} s  {calls2} calls, {stats2.reused} reused")
                b_wall, b_cpu, b_stats, b_voted, _, b_calls, _, _ = bare_run(groups, server)
                print(
                    f"  jury, no litellm            {b_wall:6.2f} s  fraction of ideal {ideal / b_wall:.2f}  "
                    f"cpu {1000 * b_cpu / n:.2f} ms/call (litellm.acompletion replaced by a bare aiohttp POST)"
                )
                ok = calls == n and stats.asked == n and voted == n and verdicts == {"both"} and raw_ok == n
                ok = ok and calls2 == 0 and stats2.reused == n and voted2 == n
                ok = ok and b_calls == n and b_stats.asked == n and b_voted == n
                if not ok:
                    print("  FAILED: unexpected call or vote counts")
                    failed = True
                summary.append(
                    (lat, c, ideal / wall, ideal / raw_wall, ideal / srv_wall, 1000 * cpu / n, 1000 * raw_cpu / n, rate * cpu / n)
                )
                for kp in multi:
                    m_wall, m_cpu, life_cpu, children = sharded_run(kp, n, server, c)
                    seen = server.stats()
                    asked = sum(ch["asked"] for ch in children)
                    voted_m = sum(ch["voted"] for ch in children)
                    refused.extend(r for ch in children for r in ch["refused"])
                    print(
                        f"  jury cold, {kp} processes     {m_wall:6.2f} s  fraction of ideal {ideal / m_wall:.2f}  "
                        f"of the server ceiling {srv_wall / m_wall:.2f}  cpu {1000 * m_cpu / n:.2f} ms/call "
                        f"({rate * m_cpu / n:.0%} of a core at the ideal rate; whole processes incl. litellm import "
                        f"{life_cpu:.1f} s)"
                    )
                    print(
                        f"      C/{kp} = {c // kp} per juror per process; shards asked "
                        f"{' + '.join(str(ch['asked']) for ch in children)} = {asked}, slowest shard "
                        f"{max(ch['wall'] for ch in children):.2f} s; server saw {seen['calls']} calls, peak in flight "
                        f"{seen['peak']} of {k * c}"
                    )
                    okm = asked == n and voted_m == n and seen["calls"] == n
                    okm = okm and all(ch["verdicts"] == ["both"] and ch["other_shard"] == n - ch["asked"] for ch in children)
                    if not okm:
                        print(f"  FAILED: unexpected call or vote counts with {kp} processes")
                        failed = True
                    multi_summary.append((lat, c, kp, ideal / m_wall, 1000 * m_cpu / n, ideal / wall))
                if before_tree is not None:
                    runs: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
                    for r in range(args.repeats):
                        for name, script in (("before", before_tree / "bench" / "jury_throughput.py"), ("after", None)):
                            b_wall, b_cpu, _, children = sharded_run(1, n, server, c, script=script)
                            seen = server.stats()
                            okb = seen["calls"] == n and sum(ch["voted"] for ch in children) == n
                            runs[name].append((ideal / b_wall, 1000 * b_cpu / n))
                            print(
                                f"  jury cold, {name:6s} run {r + 1}   {b_wall:6.2f} s  fraction of ideal {ideal / b_wall:.2f}  "
                                f"cpu {1000 * b_cpu / n:.2f} ms/call  load average {os.getloadavg()[0]:.2f}"
                                + ("" if okb else "  FAILED: unexpected call or vote counts")
                            )
                            failed = failed or not okb
                    before_summary.append((lat, c, runs))
        finally:
            server.stop()
    print(
        "\nsummary (fraction of ideal and CPU per call, jury through litellm beside a raw httpx client, same run)"
        f", load average now {os.getloadavg()[0]:.2f}:"
    )
    print("  latency  C      jury  raw httpx  server ceiling   jury ms cpu/call  raw httpx ms cpu/call  jury core share")
    for lat, c, f, raw_f, ceiling, cpu_ms, raw_ms, share in summary:
        print(f"  {lat:4g} s  C={c:<3d}  {f:.2f}  {raw_f:9.2f}  {ceiling:14.2f}   {cpu_ms:16.2f}  {raw_ms:21.2f}  {share:15.0%}")
    if multi_summary:
        print("\nsummary, K processes: latency, C, K, fraction of ideal (1 process), ms cpu/call summed over processes")
        for lat, c, kp, f, cpu_ms, f1 in multi_summary:
            print(f"  {lat:4g} s  C={c:<3d} K={kp}  {f:.2f} ({f1:.2f})  {cpu_ms:.2f}")
    if before_summary:
        print(f"\nsummary, --before {args.before} (its tree) and this tree, medians of {args.repeats} alternated runs:")
        print("  latency  C      before: fraction  ms cpu/call   after: fraction  ms cpu/call")
        for lat, c, runs in before_summary:
            (bf, bc), (af, ac) = (
                (statistics.median(x[0] for x in runs[w]), statistics.median(x[1] for x in runs[w])) for w in ("before", "after")
            )
            print(f"  {lat:4g} s  C={c:<3d}  {bf:16.2f}  {bc:11.2f}  {af:15.2f}  {ac:11.2f}")
        shutil.rmtree(before_tree.parent, ignore_errors=True)
    print(f"\nnon-loopback connection attempts refused: {len(refused)}" + (f" {refused}" if refused else ""))
    if failed or refused:
        sys.exit(1)


if __name__ == "__main__":
    main()
