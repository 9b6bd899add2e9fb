"""Are jury's outputs on the bundled example the same at two revisions? Byte for byte, apart
from provenance (jury's git revision, the time a verdict file was locked and its lock) and
matplotlib's random SVG ids.

    python bench/output_parity.py --before 6036f22            # against the working tree
    python bench/output_parity.py --before A --after B

Each side runs in a fresh copy of examples/bird-superhero with its own store, through the
command line (``python -m jury``) of that revision's code. The jurors are the loopback scripted
test double of tests/test_notebook.py (a hash of the ballot picks the verdict): what they say
is no measurement of anything; it only makes the two sides' verdict files comparable. The
commands: score (every format, --wide, --per-question), check-gold, adjudicate and audit-gold
(their stdout and verdict files, compared), then score, report (every format, and the html site)
and verify, both sides on the *before* side's verdict files so they read the same bytes. Prints one line per output
(same / DIFFERENT) and a unified diff of the first lines of each difference; exits 1 on any.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.fakellm import FakeLLMServer  # noqa: E402
from tests.support.jurytest import hashed_verdicts, write_panel  # noqa: E402

MODELS = ("ta-sql-gpt4", "codes-1b", "gsr")
FIVE = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai"), ("je", "deepseek")]
VOLATILE = {"lock", "content_sha256", "created_at", "provenance", "git_revision", "jury_version", "litellm_version"}


def checkout(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-f", str(into), rev], check=True, capture_output=True)
    return into


def commands(base_url: str, project: Path) -> list[tuple[str, list[str], list[str]]]:
    """(name, argv, files written) of each output compared."""
    adj = write_panel(project, base_url, FIVE[:4])
    aud = write_panel(project, base_url, FIVE, style="audit", k=5, name="audit-panel.toml")
    both = ["--audit", "verdicts/audit.json", "--verdicts", "verdicts/adj.json"]
    out = [(f"score-{f}", ["score", "run.jsonl", "-f", f], []) for f in ("table", "csv", "json", "md")]
    out += [
        ("score-wide", ["score", "run.jsonl", "--wide", "--per-question", "pq.jsonl"], ["pq.jsonl"]),
        ("check-gold", ["check-gold", "-f", "json"], []),
        ("adjudicate", ["adjudicate", "run3.jsonl", "--panel", str(adj), "-o", "verdicts/adj.json"], ["verdicts/adj.json"]),
        ("audit-gold", ["audit-gold", "--panel", str(aud), "-o", "verdicts/audit.json"], ["verdicts/audit.json"]),
        ("score-verdicts", ["score", "run3.jsonl", *both, "-f", "json"], []),
    ]
    out += [(f"report-{f}", ["report", "run3.jsonl", *both, "-f", f], []) for f in ("table", "csv", "json", "md")]
    out += [
        ("report-csv-file", ["report", "run3.jsonl", *both, "-f", "csv", "-o", "report.csv"], ["report.csv"]),
        ("report-html", ["report", "run3.jsonl", *both, "-f", "html", "-o", "site"], ["site"]),
        ("verify", ["verify", "verdicts/adj.json"], []),
    ]
    return out


def normal(text: str, project: Path) -> str:
    """Volatile fields dropped (JSON), the project's folder written as <project>."""
    text = text.replace(str(project), "<project>")
    text = re.sub(
        r"\b(c\d+-)[pm][0-9a-f]{10}\b", r"\1<svg id>", text
    )  # matplotlib's SVG ids: random in trees before svg.hashsalt was set
    try:
        return json.dumps(_drop(json.loads(text)), indent=1, sort_keys=True)
    except ValueError:
        text = re.sub(r"git revision <code>[0-9a-f]{40}</code>", "git revision <code>…</code>", text)  # the site's
        return re.sub(r"git_revision[^\n,]*", "git_revision", text)


def _manifest_names(text: str) -> str:
    """The site manifest with each file's sha256 replaced by a mark: every file it lists is
    compared itself, after its volatile parts (jury's git revision, which index.html and
    report.json hold) are normalised, so the raw hashes of those files would differ between two
    revisions of the same code. The file names and the generator line are still compared."""
    try:
        doc = json.loads(text)
        doc["files"] = {name: "<compared on its own>" for name in doc.get("files", {})}
    except (ValueError, AttributeError, TypeError):
        return text
    return json.dumps(doc)


def _drop(obj):
    if isinstance(obj, dict):
        return {k: _drop(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_drop(v) for v in obj]
    return obj


def run_side(code: Path, base_url: str, work: Path, shared: Path | None) -> dict[str, str]:
    project = work / "bird-superhero"
    shutil.copytree(REPO / "examples" / "bird-superhero", project, ignore=shutil.ignore_patterns(".jury", "verdicts"))
    lines = [x for x in (project / "run.jsonl").read_text().splitlines() if json.loads(x)["model"] in MODELS]
    (project / "run3.jsonl").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PYTHONPATH": str(code), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "200"}
    outputs: dict[str, str] = {}
    for name, argv, files in commands(base_url, project):
        if name == "score-verdicts" and shared is not None:  # from here on, read the before side's files
            for f in ("adj.json", "audit.json"):
                (project / "verdicts" / f).unlink()
                shutil.copy2(shared / f, project / "verdicts" / f)
        res = subprocess.run([sys.executable, "-m", "jury", *argv], cwd=project, env=env, capture_output=True, text=True)
        outputs[name] = f"exit {res.returncode}\n" + normal(res.stdout, project)
        for f in files:
            path = project / f
            if path.is_dir():
                for p in sorted(path.rglob("*")):
                    if p.is_file():
                        text = p.read_text(errors="replace")
                        if p.name == ".jury-site.json":  # the site's manifest: sha256 of files compared on their own
                            text = _manifest_names(text)
                        outputs[f"{name}:{p.relative_to(project)}"] = normal(text, project)
            elif path.exists():
                outputs[f"{name}:{f}"] = normal(path.read_text(), project)
    return outputs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="git revision of the before side")
    ap.add_argument("--after", help="git revision of the after side (default: the working tree)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name, FakeLLMServer(default=hashed_verdicts) as server:
        tmp = Path(tmp_name)
        before_code = checkout(args.before, tmp / "before-code")
        after_code = checkout(args.after, tmp / "after-code") if args.after else REPO
        try:
            before = run_side(before_code, server.base_url, tmp / "before", None)
            after = run_side(after_code, server.base_url, tmp / "after", tmp / "before" / "bird-superhero" / "verdicts")
        finally:
            for code in (before_code, after_code):
                if code != REPO:
                    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(code)], capture_output=True)
    names = list(before)
    differ = 0
    for name in names:
        same = before[name] == after.get(name)
        differ += not same
        print(f"{'same     ' if same else 'DIFFERENT'} {name}")
        if not same:
            diff = difflib.unified_diff(
                before[name].splitlines(), (after.get(name) or "").splitlines(), "before", "after", n=1, lineterm=""
            )
            print("\n".join(list(diff)[:20]))
    print(f"{len(names) - differ} of {len(names)} outputs the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
