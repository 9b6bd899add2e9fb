"""What a juror's reply says: its text, finish reason and refusal, and the JSON object in it.

Models wrap JSON in ```json fences and prose, or get cut off; `extract_json_object` finds the
first JSON object and otherwise raises ValueError with a short reason, which the client sends
back in its one repair turn (REPAIR_PROMPT).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

REPAIR_PROMPT = "Your reply was not valid JSON for the required schema: {reason}. Reply with only the JSON object."


def _find_balanced_objects(text: str, limit: int = 20) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of top-level {...} spans, honouring JSON strings and escapes."""
    found = 0
    i = text.find("{")
    while i != -1 and found < limit:
        depth = 0
        in_string = False
        escaped = False
        end = -1
        for j in range(i, len(text)):
            ch = text[j]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    end = j + 1
                    break
        if end == -1:
            yield i, -1
            return
        found += 1
        yield i, end
        i = text.find("{", end)


_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)


# Reasoning that open-weight models (qwen3, DeepSeek-R1, their distills) write into the reply
# itself when the server does not split it out: <think>...</think> blocks before the answer.
# An unclosed block (the model was cut off while thinking) leaves no answer at all.
_LEADING_THINK = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """The reply without the <think>/<thinking>/<reasoning> blocks it opens with, so that JSON
    written while thinking (a draft verdict) is never taken for the answer."""
    while (match := _LEADING_THINK.match(text)) is not None:
        text = text[match.end() :]
    return text


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a model's reply: ```json fences and surrounding prose are ignored.

    Leading <think> blocks are skipped (strip_reasoning); then looks inside a fenced block first,
    then in the whole text; takes the first balanced top-level {...} that json.loads accepts.
    Raises ValueError with a short reason otherwise.
    """
    if not isinstance(text, str):
        raise ValueError(f"reply is not text but {type(text).__name__}")
    text = strip_reasoning(text)  # a draft verdict written while thinking is not the answer
    if not text.strip():
        raise ValueError("empty reply")
    regions = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    first_error: str | None = None
    for region in regions:
        for start, end in _find_balanced_objects(region):
            if end == -1:
                first_error = first_error or "JSON object is not closed (unbalanced braces; reply cut off?)"
                break
            try:
                value = json.loads(region[start:end])
            except json.JSONDecodeError as exc:
                first_error = first_error or f"invalid JSON: {exc.msg} at char {exc.pos}"
                continue
            except RecursionError:  # absurdly deep nesting: a bad reply, not a crash
                first_error = first_error or "JSON nested too deeply"
                continue
            if isinstance(value, dict):
                return value
    raise ValueError(first_error or "no JSON object found in reply")


def reply_parts(response: Any) -> tuple[str | None, str | None, str | None]:
    """(content, finish_reason, refusal) of the first choice; Nones where absent."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return None, None, None
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    refusal = getattr(message, "refusal", None)
    return content, getattr(choice, "finish_reason", None), refusal if isinstance(refusal, str) and refusal else None
