"""Text checks on the repository's own files, run by .ci/run as a lint step (not tests: they
read source text, not behaviour). Each prints one line per finding, as file:line: problem,
and the script exits 1 when there is one.

- no module of jury/ but vocab.py spells a vocabulary name as a string literal (issue #10:
  jury/vocab.py is the one place those names are written);
- no text says the default quorum is a "majority of valid votes" (it counts the whole panel);
- every bash/console/python block of README.md and docs/ says where it runs ("# in ..." or
  "# from ..." on its first line).

Run: python .ci/text_checks.py (from anywhere; jury must be importable).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jury"


def vocabulary_only() -> set[str]:
    """Names that only ever mean a vocabulary member (words that are also ordinary output keys
    or statuses, like "strict", "error", "timeout", "near_miss" or "undecided", are left out; so is
    "subset", also a suite record's field: a PLSQLBench test set)."""
    from jury import vocab

    return {
        vocab.Verdict.GOLD_DEFECT,
        vocab.Verdict.GENUINE_ERROR,
        vocab.Verdict.NO_MAJORITY,
        vocab.BlindAnswer.ANSWER_1,
        vocab.BlindAnswer.ANSWER_2,
        vocab.BlindAnswer.BOTH,
        vocab.BlindAnswer.NEITHER,
        *(t for t in vocab.DEFECT_TYPES if t != vocab.DefectType.OTHER),  # "other" is an ordinary word
        vocab.Outcome.GOLD_ERROR,
        vocab.Outcome.MISROUTED,
        vocab.Outcome.MISMATCH,
        vocab.Comparator.BIRD,
        vocab.Comparator.RELAXED,
    }


def vocabulary_spelled_again() -> Iterator[str]:
    names = vocabulary_only()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "vocab.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                yield f"{path.relative_to(ROOT)}:{node.lineno}: spells the vocabulary name {node.value!r}: import it from jury.vocab"


def quorum_said_wrong() -> Iterator[str]:
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "panels").glob("*.toml"), *PACKAGE.rglob("*.py")]
    for path in texts:
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "majority of valid votes" in line:
                yield f"{path.relative_to(ROOT)}:{lineno}: the default quorum counts the whole panel, not a majority of valid votes"


def command_blocks_without_a_place() -> Iterator[str]:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"^[ \t]*```(bash|console|python)\n(.*?)^[ \t]*```", text, re.S | re.M):
            first = m.group(2).splitlines()[0].strip() if m.group(2) else ""
            if not re.match(r"# (in|from) ", first):
                lineno = text.count("\n", 0, m.start()) + 1
                yield f"{page.relative_to(ROOT)}:{lineno}: a {m.group(1)} block not saying where it runs: {first!r}"


def main() -> int:
    problems = [*vocabulary_spelled_again(), *quorum_said_wrong(), *command_blocks_without_a_place()]
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
