"""Bad panels and prompt templates on the command line: one line "Error: ...", exit 1, no call.

Covers issue items 9.6 (strictly typed panels), 9.12 (a folder as panel, bad templates,
TOML datetimes in params), 9.14 (templates only from prompts folders, with the ballot
header) and 9.15 (two jurors that are one judge). The jurors point at a closed loopback
port: a case that got as far as calling one would fail on the exit code and message.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.badinput import Case, check_case

BASE = "http://127.0.0.1:9/v1"
JURORS = "".join(
    f'[[jurors]]\nname = "{n}"\nmodel = "openai/{n}"\nfamily = "{f}"\napi_base = "{BASE}"\n{{{n}}}\n'
    for n, f in (("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai"), ("je", "deepseek"))
)
BLIND = (Path(__file__).resolve().parent.parent / "prompts" / "adjudicate-blind-v1.md").read_text()
LAST = BLIND.count("\n") + 1  # the line a case appends to the shipped template


def panel(top: str = "", style: str = "blind", k: str = "k = 3", **juror_lines: str):
    """A five-juror panel file panel.toml with extra top-level lines and per-juror lines."""
    text = f'name = "p"\nballot_style = "{style}"\n{k}\n{top}\n\n' + JURORS.format(
        **{n: juror_lines.get(n, "") for n in ("ja", "jb", "jc", "jd", "je")}
    )

    def setup(tmp: Path) -> None:
        (tmp / "panel.toml").write_text(text)

    return setup


def also(*setups):
    def setup(tmp: Path) -> None:
        for s in setups:
            s(tmp)

    return setup


def template(name: str, content: bytes | str, folder: str = "prompts"):
    def setup(tmp: Path) -> None:
        (tmp / folder).mkdir(exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        (tmp / folder / name).write_bytes(data)

    return setup


def symlink(target: str, link: str):
    def setup(tmp: Path) -> None:
        (tmp / link).parent.mkdir(exist_ok=True)
        os.symlink(tmp / target, tmp / link)

    return setup


def mkdir(name: str):
    return lambda tmp: (tmp / name).mkdir()


ADJ = ["adjudicate", "run.jsonl", "--panel", "panel.toml"]
AUD = ["audit-gold", "gold.json", "--panel", "panel.toml"]

CASES = [
    # 9.6: values that validate as something else
    Case("k-true", ADJ, "panel.toml: k = true", panel(k="k = true")),
    Case("k-float", ADJ, "panel.toml: k = 3.0", panel(k="k = 3.0")),
    Case("show-evidence-string", ADJ, "show_evidence = 'no'", panel('show_evidence = "no"')),
    Case("show-preview-int", AUD, "show_preview = 1", panel("show_preview = 1", style="audit", k="")),
    Case("quorum-bool", AUD, "quorum = true", panel("quorum = true", style="audit", k="")),
    Case(
        "name-int",
        ADJ,
        "panel.toml: name = 5",
        lambda tmp: (tmp / "panel.toml").write_text("name = 5\nk = 3\n\n" + JURORS.format(ja="", jb="", jc="", jd="", je="")),
    ),
    Case("temperature-nan", ADJ, "juror 2 ('jb'): params.temperature = nan", panel(jb="params = { temperature = nan }")),
    Case("temperature-inf", ADJ, "params.temperature = inf", panel(jb="params = { temperature = inf }")),
    Case("concurrency-bool", ADJ, "juror 1 ('ja'): max_concurrency = true", panel(ja="max_concurrency = true")),
    Case("timeout-string", ADJ, "timeout_s = '30'", panel(jc='timeout_s = "30"')),
    Case("structured-string", ADJ, "structured_output = 'false'", panel(jd='structured_output = "false"')),
    Case("unknown-top-key", ADJ, "unknown panel key 'temperature'; allowed: name, ballot_style, k", panel("temperature = 0")),
    Case(
        "unknown-juror-key", ADJ, "juror 5 ('je'): unknown key 'temperature'; allowed: name, model", panel(je="temperature = 0")
    ),
    Case("k-above-jurors", ADJ, "k = 6 but the panel has 5 jurors", panel(k="k = 6")),
    # 9.12: folders, templates, datetimes
    Case("panel-is-folder", ["adjudicate", "run.jsonl", "--panel", "panels.d"], "panels.d: is a folder", mkdir("panels.d")),
    Case("audit-panel-is-folder", ["audit-gold", "gold.json", "--panel", "panels.d"], "panels.d: is a folder", mkdir("panels.d")),
    Case(
        "params-datetime",
        ADJ,
        "params.when = 1979-05-27 07:32:00+00:00: a datetime is not a JSON value",
        panel(ja="params = { when = 1979-05-27T07:32:00Z }"),
    ),
    Case("params-nested-time", ADJ, "params.extra_body.at = 07:32:00", panel(ja="params = { extra_body = { at = 07:32:00 } }")),
    Case(
        "template-unknown-field",
        ADJ,
        f"mine.md: line {LAST}: unknown placeholder $nosuchfield for a blind ballot",
        also(panel('prompt = "mine.md"'), template("mine.md", BLIND + "$nosuchfield\n")),
    ),
    Case(
        "template-bare-dollar",
        ADJ,
        f"mine.md: line {LAST}: '$ 5' is not a placeholder",
        also(panel('prompt = "mine.md"'), template("mine.md", BLIND + "costs $ 5\n")),
    ),
    Case(
        "template-not-utf8",
        ADJ,
        "mine.md: line 2: not valid UTF-8 (byte 0xff)",
        also(panel('prompt = "mine.md"'), template("mine.md", BLIND.encode().replace(b"You", b"\xffYou", 1))),
    ),
    Case(
        "template-audit-field-in-blind",
        ADJ,
        "unknown placeholder $preview_block for a blind ballot",
        also(panel('prompt = "mine.md"'), template("mine.md", BLIND + "$preview_block\n")),
    ),
    Case(
        "families-is-folder",
        ["adjudicate", "run.jsonl", "--families", "fam.d"],
        "fam.d: is a directory, expected a file",
        mkdir("fam.d"),
    ),
    # 9.14: where templates come from, and their header
    Case("prompt-etc-passwd", ADJ, "prompt = '/etc/passwd': give the file name of a template", panel('prompt = "/etc/passwd"')),
    Case(
        "prompt-parent",
        ADJ,
        "prompt = '../mine.md'",
        also(panel('prompt = "../mine.md"'), template("mine.md", BLIND, folder=".")),
    ),
    Case(
        "prompt-beside-panel-not-in-prompts",
        ADJ,
        "prompt template 'mine.md' not found in prompts",
        also(panel('prompt = "mine.md"'), template("mine.md", BLIND, folder=".")),
    ),
    Case(
        "prompt-symlink-out",
        ADJ,
        "prompts/mine.md leads outside prompts",
        also(panel('prompt = "mine.md"'), template("outside.md", BLIND, folder="."), symlink("outside.md", "prompts/mine.md")),
    ),
    Case(
        "prompt-no-header",
        ADJ,
        "line 1 must be the ballot header of blind templates",
        also(panel('prompt = "mine.md"'), template("mine.md", BLIND.split("\n", 1)[1])),
    ),
    Case(
        "prompt-audit-header-on-blind",
        ADJ,
        "line 1 must be the ballot header of blind templates",
        also(panel('prompt = "audit-v1.md"')),
    ),
    Case(
        "prompt-blind-template-on-audit",
        AUD,
        "line 1 must be the ballot header of audit templates",
        panel('prompt = "adjudicate-blind-v1.md"', style="audit", k=""),
    ),
    # 9.15: one judge twice
    Case(
        "same-model-twice",
        ADJ,
        "jurors 'ja' and 'je' are one judge: both ask 'openai/ja'",
        lambda tmp: (tmp / "panel.toml").write_text(
            'name = "p"\nk = 3\n\n'
            + JURORS.format(ja="", jb="", jc="", jd="", je="").replace('model = "openai/je"', 'model = "openai/ja"')
        ),
    ),
    Case(
        "same-model-other-temperature",
        AUD,
        "jurors 'ja' and 'je' are one judge",
        lambda tmp: (tmp / "panel.toml").write_text(
            'name = "p"\nballot_style = "audit"\n\n'
            + JURORS.format(ja="", jb="", jc="", jd="", je="params = { temperature = 0.7 }").replace(
                'model = "openai/je"', 'model = "openai/ja"'
            )
        ),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_panel(case, tmp_path):
    check_case(case, tmp_path)
    assert not (tmp_path / "verdicts").exists()
    if "--panel" in case.args:
        assert not (tmp_path / ".jury").exists()  # a panel is refused before the store is even opened
