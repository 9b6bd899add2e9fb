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
litellm's import and the first call's setup happen before any timing. Only 127.0.0.1 is
contacted: a socket guard refuses anything else and the count is printed. Exit 1 on wrong
call or vote counts (the fractions are printed, not asserted: they depend on the machine).

Usage: python bench/jury_throughput.py [--ballots 1000] [--latency 0.2 1] [--concurrency 8 32]
                                      [--listen-backlog 1024]
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import argparse
import asyncio
import json
import multiprocessing
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loopback_juror import serve_forever
from jury.execution.store import Store
from jury.judging.ballots import REPLY_SCHEMAS, make_parser
from jury.judging.client import JurorPool, JurorSpec, _import_litellm
from jury.judging.runner import Ballot, run_ballots
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


def warm_up(server: Server) -> tuple[float, float]:
    """Import litellm and make one call outside the timed runs; returns (import_s, first_call_s)."""
    t0 = time.perf_counter()
    _import_litellm()
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ballots", type=int, default=1000)
    ap.add_argument("--latency", type=float, nargs="+", default=[0.2, 1.0], help="server delay per reply, seconds")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 32], help="max_concurrency per juror")
    ap.add_argument("--listen-backlog", type=int, default=1024, help="listen backlog of the loopback server")
    args = ap.parse_args()
    loopback_only()
    n, k = args.ballots, len(JURORS)
    failed = False
    summary = []
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
                ok = calls == n and stats.asked == n and voted == n and verdicts == {"both"} and raw_ok == n
                ok = ok and calls2 == 0 and stats2.reused == n and voted2 == n
                if not ok:
                    print("  FAILED: unexpected call or vote counts")
                    failed = True
                summary.append((lat, c, ideal / wall, ideal / srv_wall, 1000 * cpu / n, 1000 * raw_cpu / n, rate * cpu / n))
        finally:
            server.stop()
    print("\nsummary: latency, C, jury fraction of ideal, server ceiling, jury ms cpu/call, raw httpx ms cpu/call, core share")
    for lat, c, f, ceiling, cpu_ms, raw_ms, share in summary:
        print(f"  {lat:4g} s  C={c:<3d} {f:.2f}  {ceiling:.2f}  {cpu_ms:.2f}  {raw_ms:.2f}  {share:.0%}")
    print(f"\nnon-loopback connection attempts refused: {len(refused)}" + (f" {refused}" if refused else ""))
    if failed or refused:
        sys.exit(1)


if __name__ == "__main__":
    main()
