"""Time jury's ballot throughput against the loopback fake OpenAI-compatible server.

Every ballot goes through the real path: run_ballots -> JurorPool.call -> litellm.acompletion
-> HTTP on 127.0.0.1 -> tests/support/fakellm.py, which answers {"verdict": "both"} after --latency s.
The ballots are split over 3 jurors, each with its own max_concurrency C, in groups of one
ballot (so early stop plays no part). With every juror's C slots busy all the time the run
would take

    ideal = ballots * latency / (jurors * C)

and the script prints ideal/measured as the fraction of that throughput jury reaches. For
each C it runs:
  cold  a fresh store: every ballot is a call (the server must see exactly --ballots calls);
  warm  the same ballots on the same store: every vote comes from the store, 0 calls.

litellm's first import (~3 s) and the first call's setup are done before any timing. The fake
server runs as threads in this process, so it shares the GIL (and the 2 cores) with the
client; its own peak in-flight count is printed next to the client's limit jurors * C, and
on Linux the kernel's listen-queue overflows and SYN retransmits during each run are printed
too: the fake server listens with socketserver's default backlog of 5, so at high
concurrency connections are dropped and retried by the kernel after ~1 s. That is the fake
server's limit, not jury's; --listen-backlog N (bench only) reruns with a deeper queue.
Only 127.0.0.1 is contacted: a socket guard refuses anything else and the count is printed.

Usage: python bench/jury_throughput.py [--ballots 1000] [--latency 0.2] [--concurrency 8 32]
                                      [--listen-backlog N]
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import argparse
import asyncio
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jury.execution.store import Store
from jury.judging.ballots import REPLY_SCHEMAS, make_parser
from jury.judging.client import JurorPool, JurorSpec, _import_litellm
from jury.judging.runner import Ballot, run_ballots
from tests.support import fakellm
from tests.support.fakellm import FakeLLMServer, ballot_reply
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


def warm_up(server: FakeLLMServer) -> tuple[float, float]:
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
    server.reset()
    return t_import, t_call


def timed_run(groups, store, server: FakeLLMServer):
    server.reset()
    net0 = tcp_counters()
    cpu0, t0 = time.process_time(), time.perf_counter()
    results, stats = run_ballots(groups, store, label)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    net1 = tcp_counters()
    net = {k: net1.get(k, 0) - net0.get(k, 0) for k in ("ListenOverflows", "TCPSynRetrans")} if net0 else None
    voted = sum(1 for g in results for r in g if r.status == "voted")
    verdicts = {label(r) for g in results for r in g}
    return wall, cpu, stats, voted, verdicts, server.calls(), server.max_in_flight(), net


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ballots", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.2, help="fake server's delay per reply, seconds")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 32], help="max_concurrency per juror")
    ap.add_argument(
        "--listen-backlog",
        type=int,
        default=None,
        help="listen backlog of the fake server (default: socketserver's 5, as in the tests)",
    )
    args = ap.parse_args()
    if args.listen_backlog:
        fakellm._HTTPServer.request_queue_size = args.listen_backlog  # socketserver reads it in listen()
    loopback_only()
    n, lat, k = args.ballots, args.latency, len(JURORS)

    server = FakeLLMServer(latency_s=lat, default=ballot_reply("both")).start()
    failed = False
    try:
        t_import, t_first = warm_up(server)
        print(
            f"{n} ballots, {k} jurors, latency {lat:g} s, fake server {server.base_url} "
            f"(in-process threads, listen backlog {fakellm._HTTPServer.request_queue_size}), {os.cpu_count()} CPUs"
        )
        print(f"not timed: litellm import {t_import:.2f} s, first call (warm-up, not stored) {t_first:.2f} s")
        for c in args.concurrency:
            ideal = n * lat / (k * c)
            groups = make_groups(n, server.base_url, c)
            with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store.db") as store:
                wall, cpu, stats, voted, verdicts, calls, peak, net = timed_run(groups, store, server)
                print(f"\nC={c} per juror ({k * c} in flight at most)")
                print(
                    f"  cold   ideal {ideal:6.2f} s  measured {wall:6.2f} s  fraction ideal/measured {ideal / wall:.2f}"
                    f"  ({n / wall:.0f} ballots/s, ideal {n / ideal:.0f})"
                )
                print(
                    f"         server saw {calls} calls (expected {n}), server peak in flight {peak} of {k * c}; "
                    f"asked {stats.asked}, voted {voted}, verdicts {sorted(map(str, verdicts))}"
                )
                cycle = wall * k * c / n
                print(
                    f"         each slot cycled every {1000 * cycle:.0f} ms on average: {1000 * lat:.0f} ms server latency"
                    f" + {1000 * (cycle - lat):.0f} ms client, connection and event-loop overhead"
                )
                print(
                    f"         process CPU {cpu:.2f} s = {1000 * cpu / n:.2f} ms per ballot "
                    f"(client + in-process server; {cpu / wall:.0%} of one core)"
                )
                if cpu > ideal:
                    print(
                        f"         one GIL-bound process needs at least its CPU time, {cpu:.2f} s > ideal {ideal:.2f} s: "
                        f"at most {ideal / cpu:.2f} of ideal is reachable here"
                    )
                ok = calls == n and stats.asked == n and voted == n and verdicts == {"both"}
                if net is not None:
                    print(
                        f"         kernel (system-wide) during the run: {net['ListenOverflows']} listen-queue overflows, "
                        f"{net['TCPSynRetrans']} SYN retransmits (each costs a connection ~1 s)"
                    )
                wall2, _, stats2, voted2, _, calls2, _, _ = timed_run(groups, store, server)
                print(
                    f"  warm   rerun on the same store: {calls2} calls, {stats2.reused} reused, "
                    f"{wall2:.2f} s ({1000 * wall2 / n:.2f} ms per ballot)"
                )
                ok = ok and calls2 == 0 and stats2.reused == n and voted2 == n
                if peak < k * c:
                    print(
                        f"  note: the server never held more than {peak} requests at once although the client "
                        f"allows {k * c}: the other slots were waiting in the client (event loop, GIL shared with the "
                        f"server) or for a TCP connection"
                    )
                if net and net["ListenOverflows"]:
                    print(
                        f"  note: the fake server's listen queue (backlog {fakellm._HTTPServer.request_queue_size}) "
                        f"overflowed: part of the gap to ideal is the fake server, not jury (try --listen-backlog 1024)"
                    )
                if not ok:
                    print("  FAILED: unexpected call or vote counts")
                    failed = True
    finally:
        server.stop()
    print(f"\nnon-loopback connection attempts refused: {len(refused)}" + (f" {refused}" if refused else ""))
    if failed or refused:
        sys.exit(1)


if __name__ == "__main__":
    main()
