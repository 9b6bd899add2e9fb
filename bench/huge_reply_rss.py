"""Peak memory of `jury adjudicate` when a juror sends a huge reply (issue 9.9), or when a
batch's output file holds one (--batch, issue 29.8).

One failure, three jurors on the loopback server; one juror's reply carries a `reasoning`
of --mb megabytes. Prints the jury process's peak RSS and the verdict file's size. With
--batch the jurors go through the loopback OpenAI Batches API (tests/support/batch_server.py)
and the reply is one line of that juror's output file, streamed by the server without being
built; the peak is the jury process's own VmHWM (read at its exit).

    LITELLM_LOCAL_MODEL_COST_MAP=True python bench/huge_reply_rss.py --mb 200
    LITELLM_LOCAL_MODEL_COST_MAP=True python bench/huge_reply_rss.py --mb 300 --batch
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.fakellm import FakeLLMServer, Reply
from tests.support.jurytest import make_project, says, write_panel


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--batch", action="store_true", help="through the batch API: one line of the output file")
    args = ap.parse_args()
    if args.batch:
        batch(args.mb)
        return

    # built on request, after the jury process has started: a forked child would otherwise
    # count the parent's copy of the body in its peak RSS
    def huge(_request):
        return Reply(content=json.dumps({"reasoning": "x" * (args.mb * 1024 * 1024), "verdict": "both"}))

    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server:
        root = Path(tmp)
        make_project(root)
        (root / "run.jsonl").write_text('{"model": "gpt-x", "question_id": 3, "sql": "SELECT 99"}\n')
        for name in ("jb", "jd"):
            server.script(name, says("gold_defect"))
        server.script("jc", huge)
        panel = write_panel(root, server.base_url, [("jb", "anthropic"), ("jc", "google"), ("jd", "xai")])
        panel.write_text(panel.read_text().replace("timeout_s = 5", "timeout_s = 300"))  # a big body takes a while to build
        env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
        start = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "jury", "adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/v.json"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        out = root / "verdicts" / "v.json"
        size = out.stat().st_size / 1e6 if out.exists() else None
        print(
            f"reply {args.mb} MB: exit {done.returncode}, peak RSS {peak_mb:.0f} MB, "
            f"verdict file {'none' if size is None else f'{size:.2f} MB'}, {time.monotonic() - start:.1f} s"
        )
        if done.returncode:
            print(done.stderr[-500:])
        if out.exists():
            for rec in json.loads(out.read_text())["records"]:
                for v in rec["votes"]:
                    print(f"  {v['juror']}: {v['category'] or 'abstained'} {(v['reason'] or '')[:120]}")


_PEAK = (
    "import atexit, sys\n"
    "def peak():\n"
    "    hwm = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
    "    open('peak.txt', 'w').write(hwm)\n"
    "atexit.register(peak)\n"
    "from jury.cli import main\n"
    "main(sys.argv[1:])\n"
)


def batch(mb: int) -> None:
    from tests.support.batch_server import BatchServer, Huge

    def tamper(kind, b, lines):
        if kind != "output" or b["lines"][0]["model"] != "jc":
            return lines
        text = json.dumps(lines[0])
        cut = text.index('\\"reasoning\\": \\"') + len('\\"reasoning\\": \\"')
        return [Huge(mb * 1024 * 1024, head=text[:cut].encode(), tail=(text[cut:] + "\n").encode()), *lines[1:]]

    with tempfile.TemporaryDirectory() as tmp, BatchServer() as server:
        root = Path(tmp)
        make_project(root)
        (root / "run.jsonl").write_text('{"model": "gpt-x", "question_id": 3, "sql": "SELECT 99"}\n')
        for name in ("jb", "jc", "jd"):
            server.script(name, says("gold_defect"))
        server.tamper = tamper
        panel = write_panel(root, server.base_url, [("jb", "anthropic"), ("jc", "google"), ("jd", "xai")])
        env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        start = time.monotonic()
        args = ["adjudicate", "run.jsonl", "--panel", str(panel), "--batch", "-o", "verdicts/v.json"]
        done = subprocess.run([sys.executable, "-c", _PEAK, *args], cwd=root, env=env, capture_output=True, text=True)
        peak = root / "peak.txt"
        peak_mb = int(peak.read_text()) / 1024 if peak.exists() else float("nan")
        out = root / "verdicts" / "v.json"
        print(
            f"batch output line {mb} MB: exit {done.returncode}, peak RSS (VmHWM) {peak_mb:.0f} MB, "
            f"verdict file {'written' if out.exists() else 'none'}, {time.monotonic() - start:.1f} s"
        )
        if done.returncode:
            print(done.stderr[-800:])
        if out.exists():
            for rec in json.loads(out.read_text())["records"]:
                for v in rec["votes"]:
                    print(f"  {v['juror']}: {v['category'] or 'abstained'} {(v['reason'] or '')[:120]}")


if __name__ == "__main__":
    main()
