"""Trusted-key lines, as ``ssh-keygen -Y verify`` reads them: OpenSSH public key lines
(``ssh-ed25519 AAAA... comment``) and allowed_signers lines (``principals [options] ssh-ed25519
AAAA...``), whose options (cert-authority, namespaces, valid-after, valid-before) limit what the
key may sign and when. jury.verdicts.signing loads the files and checks signatures against them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypedDict


@dataclass(frozen=True)
class TrustedKey:
    """One trusted-key line: where it is, and the allowed_signers options that limit it."""

    where: str  # "file:line"
    principals: str | None = None  # allowed_signers: the principals field (None: a plain public key line)
    namespaces: str | None = None  # namespaces="..." (an OpenSSH pattern list), None: any
    valid_after: int | None = None  # valid-after="...", seconds since the epoch
    valid_before: int | None = None  # valid-before="..."
    cert_authority: bool = False  # cert-authority: trusts certificates the key signed, never the key itself

    def refusal(self, namespace: str, now: float) -> str | None:
        """Why this line does not let its key sign in ``namespace`` at ``now`` (as ``ssh-keygen -Y
        verify`` decides), or None when it does."""
        if self.cert_authority:
            return f"{self.where} is a cert-authority line (it trusts certificates, which jury does not verify)"
        if self.namespaces is not None and _match_pattern_list(namespace, self.namespaces) != 1:
            return f"{self.where}: namespaces={self.namespaces!r} does not allow {namespace!r}"
        if self.valid_after is not None and now < self.valid_after:
            return f"{self.where}: the key is not yet valid (valid-after {_shown_time(self.valid_after)})"
        if self.valid_before is not None and now > self.valid_before:
            return f"{self.where}: the key has expired (valid-before {_shown_time(self.valid_before)})"
        return None


def _shown_time(t: int) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _match_pattern(text: str, pattern: str) -> bool:
    """OpenSSH's match_pattern: ``*`` and ``?`` wildcards, nothing else special."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.S) is not None


def _match_pattern_list(text: str, patterns: str) -> int:
    """OpenSSH's match_pattern_list: -1 if a negated pattern (``!p``) matches, 1 if a pattern
    matches, 0 if none does."""
    got = 0
    for pattern in patterns.split(","):
        negated = pattern.startswith("!")
        if _match_pattern(text, pattern[1:] if negated else pattern):
            if negated:
                return -1
            got = 1
    return got


def _absolute_time(value: str) -> int:
    """OpenSSH's parse_absolute_time: YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, local time
    unless it ends in ``Z`` or ``UTC``; ValueError otherwise."""
    utc = False
    if len(value) > 1 and value[-1:].upper() == "Z":
        utc, value = True, value[:-1]
    elif len(value) > 3 and value[-3:].upper() == "UTC":
        utc, value = True, value[:-3]
    formats = {8: "%Y%m%d", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}
    if len(value) not in formats or not value.isdigit():
        raise ValueError("not a time of the form YYYYMMDD[HHMM[SS]][Z]")
    when = datetime.strptime(value, formats[len(value)])
    return int((when.replace(tzinfo=UTC) if utc else when).timestamp())


def _dequote(opts: str, pos: int) -> tuple[str, int]:
    """OpenSSH's opt_dequote: a double-quoted value (``\\"`` escapes a quote) from ``pos``."""
    if pos >= len(opts) or opts[pos] != '"':
        raise ValueError("missing start quote")
    out, pos = [], pos + 1
    while pos < len(opts) and opts[pos] != '"':
        if opts[pos] == "\\" and opts[pos + 1 : pos + 2] == '"':
            pos += 1
        out.append(opts[pos])
        pos += 1
    if pos >= len(opts):
        raise ValueError("missing end quote")
    return "".join(out), pos + 1


class SignerOptions(TypedDict, total=False):
    """The allowed_signers options of one line, as TrustedKey's keyword arguments."""

    cert_authority: bool
    namespaces: str
    valid_after: int
    valid_before: int


def parse_options(opts: str) -> SignerOptions:
    """allowed_signers options as OpenSSH's sshsigopt_parse reads them (case-insensitive names:
    cert-authority, namespaces, valid-after, valid-before); ValueError names a bad one."""
    out: SignerOptions = {}
    pos = 0
    while pos < len(opts):
        rest = opts[pos:]
        low = rest.lower()
        if low.startswith("cert-authority") and rest[14:15] in ("", ","):
            out["cert_authority"] = True
            pos += 14
        else:
            name = next((n for n in ("namespaces", "valid-after", "valid-before") if low.startswith(n + "=")), None)
            if name is None:
                raise ValueError(
                    f"unknown option {rest.split(',')[0]!r} (allowed_signers has cert-authority, namespaces, valid-after, valid-before)"
                )
            key = name.replace("-", "_")
            if key in out:
                raise ValueError(f'more than one "{name}"')
            value, pos = _dequote(opts, pos + len(name) + 1)
            if key == "namespaces":
                out["namespaces"] = value
            else:
                try:
                    when = _absolute_time(value)
                except ValueError as exc:
                    raise ValueError(f'{name}="{value}": {exc}') from None
                if key == "valid_after":
                    out["valid_after"] = when
                else:
                    out["valid_before"] = when
        if pos < len(opts):
            if opts[pos] != ",":
                raise ValueError(f"unexpected {opts[pos:]!r} after an option")
            pos += 1
            if pos == len(opts):
                raise ValueError("unexpected end of the options")
    if out.get("valid_after") is not None and out.get("valid_before") is not None and out["valid_before"] <= out["valid_after"]:
        raise ValueError('"valid-before" is not after "valid-after"')
    return out


def _next_field(text: str) -> tuple[str, str]:
    """The first whitespace-delimited field of ``text`` (double quotes protect spaces) and the rest."""
    text = text.lstrip()
    quoted, i = False, 0
    while i < len(text) and (quoted or not text[i].isspace()):
        if text[i] == '"':
            quoted = not quoted
        i += 1
    return text[:i], text[i:].lstrip()


def key_line(line: str, key_type: str) -> tuple[str | None, str, str, str] | None:
    """(principals, options, key type, base64 key) of a public key line (``ssh-ed25519 AAAA...``,
    as in id_ed25519.pub) or an allowed_signers line (``principals [options] ssh-ed25519 AAAA...``);
    None for a line without a key of type ``key_type`` (jury's)."""
    first, rest = _next_field(line)
    if first == key_type:
        blob, _ = _next_field(rest)
        return None, "", first, blob
    principals = first
    field_, rest = _next_field(rest)
    options = ""
    if field_ != key_type:
        options, (field_, rest) = field_, _next_field(rest)
    if field_ != key_type:
        return None
    blob, _ = _next_field(rest)
    return principals, options, field_, blob
