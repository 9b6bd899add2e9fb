"""Keeping API keys out of everything jury returns, logs and stores, and bounding what it stores.

`clean` makes one line of an error with the juror's key scrubbed (scrubbed before it is
shortened, so a cut never leaves part of a key behind). `for_store` is the one gate a reply
passes before it is stored: the juror's key and anything that looks like a bearer token or a
provider key redacted in every string, over-long reasoning and reply text cut with a marker.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

from jury.judging.juror import CallResult, JurorSpec

MAX_ERROR_CHARS = 300
MIN_SECRET_CHARS = 4  # shorter "keys" (placeholders such as "x") are not scrubbed
MAX_STORED_REASONING_CHARS = 20_000  # a vote's reasoning longer than this is cut, with a marker
MAX_STORED_TEXT_CHARS = 100_000  # a call's raw reply text likewise
CUT_MARKER = " …[cut by jury: {n:,} characters in all]"
_BEARER = re.compile(r"(?i)\b(bearer|authorization:?)(\s+)([A-Za-z0-9._~+/=-]{8,})")
# The keys of the model providers jury calls (Anthropic, OpenAI, Google, xAI), which the
# maintained set below does not all know; every other kind of secret comes from that set.
_KEY_LIKE = re.compile(r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|xai-[A-Za-z0-9]{20,})")
# detect-secrets detectors left out: public IP addresses are not secrets (and show up in text).
_NOT_SECRETS = frozenset({"IPPublicDetector"})
_DELIMITERS = " \t\r\n\"'=:"


@functools.cache
def maintained_patterns() -> tuple[re.Pattern[str], ...]:
    """The regular expressions of Yelp's detect-secrets (its regex-based detectors: AWS, GitHub,
    GitLab, Slack, Stripe, private keys, JWTs, PyPI and npm tokens, ...), loaded once."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    patterns: list[re.Pattern[str]] = []
    detectors: list[type] = list(get_mapping_from_secret_type_to_class().values())
    for cls in detectors:
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in _NOT_SECRETS:
            patterns.extend(cls().denylist)
    return tuple(patterns)


def _redact_span(match: re.Match[str]) -> str:
    """The whole match redacted, keeping the delimiters some detectors match around a secret."""
    text = match.group(0)
    core = text.strip(_DELIMITERS)
    if not core:
        return text
    start = text.index(core)
    return text[:start] + "[redacted]" + text[start + len(core) :]


def one_line(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def scrub(text: str | None, secrets: list[str]) -> str | None:
    """`text` with each secret (of at least MIN_SECRET_CHARS) replaced by [redacted]."""
    if text is None:
        return None
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_CHARS:
            text = text.replace(secret, "[redacted]")
    return text


def clean(text: str, secrets: list[str], limit: int = MAX_ERROR_CHARS) -> str:
    """Scrub first, then shorten: truncation must never leave part of a key behind."""
    return one_line(scrub(str(text), secrets) or "", limit)


def secrets_of(spec: JurorSpec) -> list[str]:
    """The juror's API key, from the environment variable it names ([] if none or too short)."""
    key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    return [key] if key and len(key) >= MIN_SECRET_CHARS else []


def redact(text: str, secrets: list[str]) -> str:
    """The juror's key, and anything that looks like a bearer token, a provider key or any
    secret detect-secrets' patterns know, replaced.

    >>> redact("token ghp_" + "a" * 36 + " and key AKIAIOSFODNN7EXAMPLE", [])
    'token [redacted] and key [redacted]'
    """
    text = scrub(text, secrets) or ""
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)
    text = _KEY_LIKE.sub("[redacted]", text)
    for pattern in maintained_patterns():
        text = pattern.sub(_redact_span, text)
    return text


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + CUT_MARKER.format(n=len(text))


def clean_value(value: Any, secrets: list[str], key: str | None = None) -> Any:
    if isinstance(value, str):
        value = redact(value, secrets)
        return _cut(value, MAX_STORED_REASONING_CHARS) if key != "verdict" else value
    if isinstance(value, dict):
        return {k: clean_value(v, secrets, k) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v, secrets) for v in value]
    return value


def for_store(result: CallResult, spec: JurorSpec) -> CallResult:
    """The one gate a reply passes before it is stored (and so before any verdict file, which
    is built from stored votes): secrets redacted in every string (text, parsed reply, error,
    log); the parsed reply's strings (reasoning) cut at MAX_STORED_REASONING_CHARS and the raw
    text at MAX_STORED_TEXT_CHARS, each with a marker saying how long it was."""
    secrets = secrets_of(spec)
    return result.model_copy(
        update={
            "text": None if result.text is None else _cut(redact(result.text, secrets), MAX_STORED_TEXT_CHARS),
            "parsed": clean_value(result.parsed, secrets),
            "error": None if result.error is None else redact(result.error, secrets),
            "log": clean_value(result.log, secrets),
        }
    )
