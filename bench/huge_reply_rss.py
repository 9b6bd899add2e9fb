"""Peak memory of `jury adjudicate` when a juror sends a huge reply (issue 9.9).

One failure, three jurors on the loopback server; one juror's reply carries a `reasoning`
of --mb megabytes. Prints the jury process's peak RSS and the verdict file's size.

    LITELLM_LOCAL_MODEL_COST_MAP=True python bench/huge_reply_rss.py --mb 200
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
    args = ap.parse_args()

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


if __name__ == "__main__":
    main()
