"""Ballots: what a juror is shown, in which order, and how its reply maps back.

The blind ballot shows two answers as "Answer 1" and "Answer 2" and never says which is
the gold or names any model. Which answer comes first is drawn per (question, model,
juror) from the seed, so a ballot is reproducible and its order is recorded.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from jury.errors import ConfigError
from jury.inputs.reader import MAX_CONFIG_BYTES, read_bounded
from jury.inputs.records import ExecResult, GoldItem
from jury.vocab import (
    AUDIT_VOTES,
    BLIND_ANSWERS,
    CATEGORIES,
    CLASSIFY_STYLE,
    DEFECT_TYPES,
    NONE_FITS,
    SUITE_ANSWERS,
    TOUCHED_DEFECT_TYPES,
    AuditVote,
    BlindAnswer,
    DefectType,
    SuiteAnswer,
    Verdict,
)

PREVIEW_ROWS = 50
PREVIEW_CHARS = 4000
# The $schema_heading of an audit-v2 ballot per panel `schema` view, and the $defect_types lines
TOUCHED_HEADING = "Columns of the tables the gold query touches:"
SCHEMA_HEADINGS = {
    "touched": TOUCHED_HEADING,
    "database": "Every table and column of the database (types, keys and, where the benchmark ships them, "
    "descriptions of columns and values):",
    "linked": "The tables the gold query touches and the tables the question's words name (types, keys and, "
    "where the benchmark ships them, descriptions of columns and values):",
}
DEFECT_MEANINGS: dict[str, str] = {
    DefectType.SQL_VS_QUESTION: "the query does not compute what the question asks",
    DefectType.SQL_VS_DATA: "the query misreads the data (wrong column, wrong value encoding, wrong join key)",
    DefectType.DOMAIN_KNOWLEDGE: "the query or the hint applies a wrong formula or fact",
    DefectType.AMBIGUOUS_QUESTION: "the question is too ambiguous for one gold answer",
    DefectType.OTHER: "any other defect",
    DefectType.WRONG_TABLE: "the query reads a table other than the one the question is about, "
    "when the database holds a table that fits the question",
}
SYSTEM_PROMPT = "You are a careful reviewer of SQL queries. Reply with one JSON object and nothing else."


def _schema(verdicts: tuple[str, ...], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {"reasoning": {"type": "string"}, "verdict": {"type": "string", "enum": [str(v) for v in verdicts]}}
    props.update(extra or {})
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


REPLY_SCHEMAS = {
    "blind": _schema(BLIND_ANSWERS),
    "labelled": _schema(CATEGORIES),
    "audit": _schema(
        AUDIT_VOTES,
        {"defect_type": {"type": ["string", "null"], "enum": [*map(str, TOUCHED_DEFECT_TYPES), None]}},
    ),
    "suite": _schema(SUITE_ANSWERS),
}


@dataclass(frozen=True)
class AuditDefectTypes:
    """An audit ballot's `taxonomy`: the defect types its reply may name, when they are not
    TOUCHED_DEFECT_TYPES (a panel whose `schema` view shows the whole database offers wrong_table)."""

    ids: tuple[str, ...] = tuple(map(str, DEFECT_TYPES))


class Offered(Protocol):
    """What a ballot reads of its taxonomy: the ids a reply may name (a
    jury.judging.taxonomies.Taxonomy, or an audit ballot's AuditDefectTypes)."""

    @property
    def ids(self) -> tuple[str, ...]: ...


def _required(taxonomy: Offered | None, style: str) -> Offered:
    """A `jury suites --classify` ballot's taxonomy (its callers always pass one)."""
    if taxonomy is None:
        raise ValueError(f"a {style} ballot needs a taxonomy")
    return taxonomy


def reply_schema(style: str, taxonomy: Offered | None = None) -> dict[str, Any]:
    """The reply schema of a ballot: with a taxonomy (jury.judging.taxonomies), an
    `error_category` constrained to its ids (or null); without, exactly REPLY_SCHEMAS[style].
    An audit ballot's taxonomy is an AuditDefectTypes: the defect types its reply may name."""
    if style == "audit" and taxonomy is not None:
        return _schema(AUDIT_VOTES, {"defect_type": {"type": ["string", "null"], "enum": [*taxonomy.ids, None]}})
    if style == CLASSIFY_STYLE:  # `jury suites --classify`: the verdict is a category id, or none_fits
        return _schema((*_required(taxonomy, style).ids, NONE_FITS))
    if taxonomy is None:
        return REPLY_SCHEMAS[style]
    return _schema(
        {"blind": BLIND_ANSWERS, "labelled": CATEGORIES}[style],
        {"error_category": {"type": ["string", "null"], "enum": [*taxonomy.ids, None]}},
    )


@dataclass(frozen=True)
class Template:
    """A versioned prompt template file; its exact bytes are hashed into every verdict."""

    path: Path
    text: str
    sha256: str

    @classmethod
    def load(cls, path: str | Path) -> Template:
        raw = read_bounded(path, MAX_CONFIG_BYTES, what="a prompt template", error=ConfigError)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise ConfigError(
                f"{path}: line {line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the template as UTF-8"
            ) from None
        return cls(Path(path), text, hashlib.sha256(raw).hexdigest())

    @property
    def name(self) -> str:
        return self.path.stem

    def render(self, **fields: str) -> str:
        return string.Template(self.text).substitute(fields)


# The placeholders each ballot style fills, and those a template of the style must use (a
# ballot that never shows the question or one of the answers cannot be judged).
TEMPLATE_FIELDS = {
    "blind": ("question", "evidence_block", "schema", "sql_1", "result_1", "sql_2", "result_2", "taxonomy_block"),
    "labelled": (
        "question",
        "evidence_block",
        "schema",
        "label_1",
        "sql_1",
        "result_1",
        "label_2",
        "sql_2",
        "result_2",
        "taxonomy_block",
    ),
    "audit": ("question", "evidence_block", "schema", "sql", "preview_block", "checks_block", "schema_heading", "defect_types"),
    "suite": ("question", "test", "output_1", "output_2"),
    CLASSIFY_STYLE: ("question", "test", "expected", "error", "categories"),
}
TEMPLATE_REQUIRED = {
    "blind": ("question", "sql_1", "result_1", "sql_2", "result_2"),
    "labelled": ("question", "label_1", "sql_1", "result_1", "label_2", "sql_2", "result_2"),
    "audit": ("question", "sql"),
    "suite": ("test", "output_1", "output_2"),
    CLASSIFY_STYLE: ("test", "error", "categories"),
}
# The ballot header: the first line of every template names what it is, e.g.
# "<!-- jury ballot: adjudicate, blind, version 1 -->". The kind must be the panel's style's
# (an optional parenthesised note may follow it); the version is a whole number.
HEADER_KINDS = {
    "blind": "adjudicate, blind",
    "labelled": "adjudicate, labelled",
    "audit": "gold audit",
    "suite": "adjudicate, test suite",
    CLASSIFY_STYLE: "classify error",
}
_HEADER = re.compile(r"<!-- jury ballot: (?P<kind>[^\n]+?), version (?P<version>\d+) -->")


def check_template(template: Template, style: str) -> None:
    """Refuse a template that cannot make a ballot of `style`: without the style's ballot
    header on its first line, with a placeholder the style does not fill (or a bare "$"), or
    without one the style needs. ConfigError naming the template file, line and value."""
    where = template.path
    kind = HEADER_KINDS[style]
    first = template.text.split("\n", 1)[0].rstrip("\r")
    m = _HEADER.fullmatch(first)
    if m is None or not (m["kind"] == kind or m["kind"].startswith(kind + " (")):
        raise ConfigError(
            f"{where}: line 1 must be the ballot header of {style} templates, "
            f"'<!-- jury ballot: {kind}, version N -->'; got {first[:80]!r}"
        )
    text = template.text
    allowed = TEMPLATE_FIELDS[style]
    used: set[str] = set()
    for match in string.Template.pattern.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if match.group("invalid") is not None:
            snippet = text[match.start() : match.start() + 12].split("\n", 1)[0]
            raise ConfigError(
                f"{where}: line {line}: {snippet!r} is not a placeholder "
                "(write $$ for a literal dollar sign, $name or ${name} for a field)"
            )
        name = match.group("named") or match.group("braced")
        if name is None:  # "$$"
            continue
        if name not in allowed:
            raise ConfigError(
                f"{where}: line {line}: unknown placeholder ${name} for a {style} ballot; "
                f"known: {', '.join('$' + f for f in allowed)}"
            )
        used.add(name)
    missing = [f for f in TEMPLATE_REQUIRED[style] if f not in used]
    if missing:
        raise ConfigError(
            f"{where}: a {style} template must use {', '.join('$' + f for f in missing)} (a ballot without them cannot be judged)"
        )


# A "<" that could begin a tag, closing tag, comment or processing instruction: followed by
# a letter, "_", "!", "?" or "/" (spaces allowed before the "/"). Comparisons such as
# "a < b", "x<3" and "a<>b" never match.
_TAG_START = re.compile(r"<(?=\s*/|[!?]|[^\W\d])")


def fence(text: str) -> str:
    """Neutralise every tag inside untrusted text so that it can neither end its own block nor
    open (or forge) another: "<" before a tag name, "/", "!" or "?" becomes "<\\"
    ("<sql_2>" -> "<\\sql_2>", "</sql_1>" -> "<\\/sql_1>")."""
    return _TAG_START.sub("<\\\\", text)


def draw_order(seed: int, question_id: int | str, model: str, juror: str, repeat: int = 0) -> str:
    """'gold_first' or 'candidate_first', from a hash of the seed and the ballot's identity.
    ``repeat`` (--repeats): repeat r > 0 draws its own order from (seed, r); repeat 0 draws
    exactly the order a panel asked once draws."""
    tail = f"|repeat={repeat}" if repeat else ""
    digest = hashlib.sha256(f"{seed}|{question_id}|{model}|{juror}{tail}".encode()).digest()
    return "gold_first" if digest[0] % 2 == 0 else "candidate_first"


def preview(result: ExecResult, max_rows: int = PREVIEW_ROWS, max_chars: int = PREVIEW_CHARS) -> str:
    """At most `max_rows` rows and `max_chars` characters, with the true row count."""
    if result.recorded_preview is not None:  # recorded elsewhere, known only as text
        return fence(_clip(result.recorded_preview, max_chars) + "\n(result as recorded by another evaluation)")
    if not result.ok:
        return fence(f"(the query failed: {result.status}: {result.error})")
    lines = [_clip(" | ".join(_cell(c) for c in result.columns), max_chars // 2)]
    shown = 0
    size = len(lines[0])
    for row in result.rows[:max_rows]:
        line = _clip(
            " | ".join("NULL" if v is None else _cell(v.hex() if isinstance(v, bytes) else v) for v in row), max_chars // 4
        )  # a very wide row is cut, not dropped
        if size + len(line) + 1 > max_chars:
            break
        lines.append(line)
        size += len(line) + 1
        shown += 1
    total = result.row_count
    note = f"({total} row{'s' if total != 1 else ''} in total"
    note += f"; showing the first {shown})" if shown < total else ")"
    return fence("\n".join(lines) + "\n" + note)


CELL_CHARS = 200


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(value: object) -> str:
    """One value on one line: newlines and the column separator escaped, long text cut."""
    text = str(value).replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("|", "\\|")
    return _clip(text, CELL_CHARS)


def _evidence_block(item: GoldItem, show: bool) -> str:
    if not show or not item.evidence.strip():
        return ""
    return f"\nHint that came with the question:\n<evidence>\n{fence(item.evidence)}\n</evidence>\n"


def adjudication_messages(
    template: Template,
    style: str,
    item: GoldItem,
    schema_text: str,
    gold_sql: str,
    gold_result: ExecResult,
    pred_sql: str,
    pred_result: ExecResult,
    order: str,
    show_evidence: bool,
    taxonomy_block: str = "",
    previews: tuple[str, str] | None = None,
) -> list[dict[str, Any]]:
    """taxonomy_block (--taxonomy): fills $taxonomy_block, or follows the ballot when the
    template has no such placeholder; empty, the messages are exactly as without it.
    previews: preview(gold_result) and preview(pred_result), when the caller has them already."""
    gold_preview, pred_preview = previews if previews is not None else (preview(gold_result), preview(pred_result))
    gold = (gold_sql, gold_preview, "Gold (reference) answer")
    cand = (pred_sql, pred_preview, "Model answer")
    first, second = (gold, cand) if order == "gold_first" else (cand, gold)
    fields = {
        "question": fence(item.question),
        "evidence_block": _evidence_block(item, show_evidence),
        "schema": fence(schema_text),
        "sql_1": fence(first[0]),
        "result_1": first[1],
        "sql_2": fence(second[0]),
        "result_2": second[1],
    }
    if style == "labelled":
        fields["label_1"], fields["label_2"] = first[2], second[2]
    fields["taxonomy_block"] = taxonomy_block
    text = template.render(**fields)
    if taxonomy_block and not re.search(r"\$(taxonomy_block\b|\{taxonomy_block\})", template.text):
        text = text.rstrip("\n") + "\n" + taxonomy_block
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": text},
    ]


def audit_messages(
    template: Template,
    item: GoldItem,
    schema_text: str,
    show_evidence: bool,
    gold_result: ExecResult | None = None,
    checks_block: str = "",
    schema_heading: str = TOUCHED_HEADING,
    defect_types: tuple[str, ...] = tuple(TOUCHED_DEFECT_TYPES),
) -> list[dict[str, Any]]:
    """checks_block (panel show_checks): fills $checks_block, or follows the ballot when the
    template has no such placeholder; empty, the messages are exactly as without it.
    schema_heading and defect_types fill $schema_heading and $defect_types (audit-v2.md: the
    panel's `schema` view); audit-v1.md has neither, its text is as it always was."""
    block = ""
    if gold_result is not None:
        block = f"\nResult of the gold query:\n<gold_result>\n{preview(gold_result)}\n</gold_result>\n"
    text = template.render(
        question=fence(item.question),
        evidence_block=_evidence_block(item, show_evidence),
        schema=fence(schema_text),
        sql=fence(item.sql),
        preview_block=block,
        checks_block=checks_block,
        schema_heading=schema_heading,
        defect_types="\n".join(f'- "{t}": {DEFECT_MEANINGS[t]}' for t in defect_types),
    )
    if checks_block and not re.search(r"\$(checks_block\b|\{checks_block\})", template.text):
        text = text.rstrip("\n") + "\n" + checks_block
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]


# ------------------------------------------------------------------ replies


def make_parser(style: str, taxonomy: Offered | None = None) -> Callable[[str], dict[str, Any]]:
    """A parse function for the juror client: text -> validated reply dict (ValueError if bad).
    With a taxonomy the reply also holds `error_category`: one of its ids, or None."""
    from jury.judging.replies import extract_json_object

    if style == CLASSIFY_STYLE:
        return _classify_parser(_required(taxonomy, style))
    allowed = {"blind": BLIND_ANSWERS, "labelled": CATEGORIES, "audit": AUDIT_VOTES, "suite": SUITE_ANSWERS}[style]
    offered = taxonomy.ids if (style == "audit" and taxonomy is not None) else TOUCHED_DEFECT_TYPES

    def parse(text: str) -> dict[str, Any]:
        obj = extract_json_object(text)
        verdict = obj.get("verdict")
        if isinstance(verdict, str):
            verdict = verdict.strip().lower()
        if verdict not in allowed:
            raise ValueError(f"verdict must be one of {', '.join(allowed)}; got {json.dumps(verdict)[:40]}")
        reply: dict[str, Any] = {"reasoning": str(obj.get("reasoning") or ""), "verdict": verdict}
        if style == "audit":
            dt = obj.get("defect_type")
            if verdict == AuditVote.DEFECTIVE:
                reply["defect_type"] = dt if dt in offered else DefectType.OTHER.value
            else:
                reply["defect_type"] = None
            return reply
        if taxonomy is not None:
            cat = obj.get("error_category")
            if cat is not None and cat not in taxonomy.ids:
                raise ValueError(f"error_category must be one of {', '.join(taxonomy.ids)} or null; got {json.dumps(cat)[:40]}")
            reply["error_category"] = cat
        return reply

    return parse


def _classify_parser(taxonomy: Offered) -> Callable[[str], dict[str, Any]]:
    """`jury suites --classify`: the verdict names one category id of the taxonomy (letter case
    aside) or none_fits; the reply is {"reasoning", "verdict"} with the id as the taxonomy spells it."""
    from jury.judging.replies import extract_json_object

    allowed = (*taxonomy.ids, NONE_FITS)
    folded: dict[str, list[str]] = {}
    for c in allowed:
        folded.setdefault(c.lower(), []).append(c)

    def parse(text: str) -> dict[str, Any]:
        obj = extract_json_object(text)
        verdict = obj.get("verdict")
        got = verdict.strip() if isinstance(verdict, str) else None
        if got is not None and got not in allowed and len(folded.get(got.lower(), [])) == 1:
            got = folded[got.lower()][0]
        if got not in allowed:
            raise ValueError(f"verdict must be one of {', '.join(allowed)}; got {json.dumps(verdict)[:40]}")
        return {"reasoning": str(obj.get("reasoning") or ""), "verdict": got}

    return parse


SUITE_CATEGORIES: dict[str, Verdict] = {
    SuiteAnswer.EQUIVALENT: Verdict.FORMAT_EQUIVALENCE,
    SuiteAnswer.DIFFERENT: Verdict.GENUINE_ERROR,
    SuiteAnswer.AMBIGUOUS: Verdict.AMBIGUOUS,
}
"""A test-suite format ballot's answer -> the category it counts as (order plays no part)."""


def blind_category(verdict: str, order: str) -> tuple[str, bool]:
    """Map a blind verdict back through the drawn order: (category, gold_also_wrong)."""
    if verdict == BlindAnswer.AMBIGUOUS:
        return Verdict.AMBIGUOUS.value, False
    if verdict == BlindAnswer.BOTH:
        return Verdict.FORMAT_EQUIVALENCE.value, False
    if verdict == BlindAnswer.NEITHER:
        return Verdict.GENUINE_ERROR.value, True
    gold_position = BlindAnswer.ANSWER_1 if order == "gold_first" else BlindAnswer.ANSWER_2
    return (Verdict.GENUINE_ERROR.value, False) if verdict == gold_position else (Verdict.GOLD_DEFECT.value, False)
