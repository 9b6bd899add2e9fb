"""Is a stored vote what jury's parser makes of its stored reply? (`jury store merge`)

A store from another machine is untrusted input: anyone can edit a vote's reply with sqlite3.
Every vote of a store being merged is checked against its own call log: an answered vote
must equal what the live run's code path (``ballots.make_parser`` for the ballot's style,
then ``redaction.for_store``'s caps and redaction) makes of the call's stored reply text; an
abstention must be a call that ended unparseable, with the same error. The ballot's style is
not stored with the vote, so every style its kind can have is tried: a vote passes if one of
them yields it exactly (the styles' verdict words differ, so this admits no other answer).
A taxonomy's ids are not stored either: the vote's own ``error_category`` (or, for a
``classify`` ballot, its verdict) is the one id the parser accepts, so the reply text must
name that same category.

The limits a live run applies before anything is stored (reply text and reasoning cut at
``redaction``'s caps) are applied here too: a call text longer than the cap, or a vote whose
reasoning is longer than a live run would have stored, is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from jury.judging.ballots import make_parser
from jury.judging.redaction import CUT_MARKER, MAX_STORED_REASONING_CHARS, MAX_STORED_TEXT_CHARS, clean_value
from jury.vocab import CLASSIFY_STYLE, NONE_FITS

# the styles a vote of each kind can come from (jury.judging.adjudication, suite_ballots,
# suite_classify, gold_audit)
STYLES_BY_KIND = {"adjudication": ("blind", "labelled", "suite", CLASSIFY_STYLE), "audit": ("audit",)}
_MARKER_ROOM = len(CUT_MARKER.format(n=10**15))  # the cut marker's longest form


@dataclass(frozen=True)
class VoteCheck:
    """What `jury.execution.merge` needs from the judging layer (which it may not import):
    the live run's caps and the parser check."""

    text_cap: int = MAX_STORED_TEXT_CHARS + _MARKER_ROOM  # a call's stored reply text, characters
    # a vote's stored reply JSON, bytes: the reasoning at its cap, each character escaped
    # (\\uXXXX twice for one outside the BMP: 12 bytes), plus the short fields
    reply_cap: int = (MAX_STORED_REASONING_CHARS + _MARKER_ROOM) * 12 + 4096

    def check(self, vote: dict[str, Any], calls: list[dict[str, Any]]) -> str | None:
        return check_vote(vote, calls)


def _stand_in_taxonomy(ids: Iterable[object]) -> SimpleNamespace:
    return SimpleNamespace(ids=tuple(i for i in ids if isinstance(i, str)))


def _parsers(kind: str, reply: dict[str, Any]) -> Iterator[tuple[str, Callable[[str], dict[str, Any]]]]:
    """(style, parse) for every style a vote of `kind` with this reply could have been parsed by."""
    for style in STYLES_BY_KIND.get(kind, (*STYLES_BY_KIND["adjudication"], "audit")):
        if style == CLASSIFY_STYLE:
            verdict = reply.get("verdict")
            yield style, make_parser(style, _stand_in_taxonomy([] if verdict == NONE_FITS else [verdict]))
        elif "error_category" in reply and style != "audit":
            yield style, make_parser(style, _stand_in_taxonomy([reply["error_category"]]))
        else:
            yield style, make_parser(style)


def expected_reply(kind: str, reply: dict[str, Any], text: str) -> dict[str, Any] | None:
    """The reply a live run stores for a call whose reply text is `text`, of the style that
    makes `reply` if any does; else the first style's reading (None if none parses it)."""
    first: dict[str, Any] | None = None
    for _, parse in _parsers(kind, reply):
        try:
            got: dict[str, Any] = clean_value(parse(text), [])  # for_store's gate: redaction and the reasoning cap
        except ValueError:
            continue
        if got == reply:
            return got
        first = first if first is not None else got
    return first


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_vote(vote: dict[str, Any], calls: list[dict[str, Any]]) -> str | None:
    """None if `vote` (a votes row: ok, reply and error decoded) is what a live run stores for
    one of `calls` (the call-log rows of its request, linked one first); else why not."""
    if not calls:
        return "it has no call log to check it against (a vote without its call cannot be verified)"
    reasons = []
    for call in calls:
        if call.get("juror") != vote.get("juror"):
            reasons.append(f"call {call['id']} is juror {_short(call.get('juror'))}, not {_short(vote.get('juror'))}")
            continue
        if not vote["ok"]:
            last = (call.get("log") or [{}])[-1] if isinstance(call.get("log"), list) else {}
            if call.get("ok") or not isinstance(last, dict) or last.get("status") != "bad_output":
                reasons.append(f"call {call['id']} did not end in an unparseable reply")
            elif call.get("error") != vote.get("error"):
                reasons.append(f"call {call['id']} ended with error {_short(call.get('error'))}")
            else:
                return None
            continue
        if not call.get("ok"):
            reasons.append(f"call {call['id']} has no answer (ok = 0)")
            continue
        text = call.get("text")
        if not isinstance(text, str):
            reasons.append(f"call {call['id']} has no reply text")
            continue
        reply = vote["reply"]
        reasoning = reply.get("reasoning")
        if isinstance(reasoning, str) and len(reasoning) > MAX_STORED_REASONING_CHARS + _MARKER_ROOM:
            return f"its reasoning is {len(reasoning):,} characters, more than a live run stores ({MAX_STORED_REASONING_CHARS:,})"
        want = expected_reply(vote.get("kind") or "", reply, text)
        if want == reply:
            return None
        reasons.append(
            f"call {call['id']}'s reply parses to {_short(want)}"
            if want is not None
            else f"call {call['id']}'s reply does not parse as a ballot reply"
        )
    return "; ".join(reasons)
