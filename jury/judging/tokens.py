"""litellm's prompt-token count for plan estimates, reproduced without importing litellm.

litellm.token_counter(model="gpt-4o", messages=...) (what jury.judging.providers.prices.estimate_call
counts every juror's prompt with) is, for plain messages of {role, content, name} strings, exact
arithmetic over tiktoken's o200k_base encoding: each text is encoded in chunks of 1024 characters
(litellm's TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS), each message adds 3 tokens (1 more for a name) and
the reply primer 3. `fast_count` does that sum (tiktoken is installed with litellm, and the
encoding is read from the copy litellm bundles, never from the network) and says None wherever
it would not be exactly litellm's number: other message shapes, litellm's knobs for that
arithmetic set in the environment, the encoding file absent. tests/test_plan_speed.py checks
the two against each other. This module never imports litellm (jury.judging.providers does).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from typing import Any

COUNTING_MODEL = "gpt-4o"
_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"  # tiktoken's cache key
_CHUNK_CHARS = 1024  # litellm's TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS default
_MAX_EXACT_CHARS = 4_000_000  # litellm's TOKEN_COUNTER_MAX_EXACT_CHARS default: longer texts are sampled
_LITELLM_KNOBS = ("TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS", "TOKEN_COUNTER_MAX_EXACT_CHARS", "CUSTOM_TIKTOKEN_CACHE_DIR")
_TOKENS_PER_MESSAGE, _TOKENS_PER_NAME, _REPLY_PRIMER_TOKENS = 3, 1, 3
_PLAIN_KEYS = frozenset({"role", "content", "name"})

enabled = True  # False: fast_count always says None (litellm counts; tests compare the two)


@functools.cache
def _o200k() -> Any:
    """o200k_base read from the copy bundled with litellm, where importing litellm points
    TIKTOKEN_CACHE_DIR too; None if that copy is absent (then litellm counts)."""

    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    bundled = os.path.join(list(spec.submodule_search_locations)[0], "litellm_core_utils", "tokenizers")
    if not os.path.isfile(os.path.join(bundled, hashlib.sha1(_O200K_URL.encode()).hexdigest())):
        return None
    os.environ["TIKTOKEN_CACHE_DIR"] = bundled  # the value litellm's import sets
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:  # then litellm counts, and says what is wrong if it cannot either
        return None


@functools.lru_cache(maxsize=65536)
def _text_tokens(text: str) -> int:
    """Tokens of one message text, counted as litellm does (cached: ballots share schema and question texts)."""
    encoding = _o200k()
    step = _CHUNK_CHARS
    return sum(len(encoding.encode(text[i : i + step], disallowed_special=())) for i in range(0, len(text), step))


def _plain(messages: list[dict[str, Any]]) -> bool:
    return all(
        isinstance(m, dict)
        and m.keys() <= _PLAIN_KEYS
        and all(v is None or (isinstance(v, str) and len(v) <= _MAX_EXACT_CHARS) for v in m.values())
        for m in messages
    )


def fast_count(messages: list[dict[str, Any]]) -> int | None:
    """litellm.token_counter(model="gpt-4o", messages=messages), or None where only litellm can tell."""
    if not (enabled and _plain(messages)) or any(os.environ.get(k) for k in _LITELLM_KNOBS):
        return None
    if getattr(sys.modules.get("litellm"), "disable_token_counter", False) or _o200k() is None:
        return None
    total = _REPLY_PRIMER_TOKENS
    for message in messages:
        total += _TOKENS_PER_MESSAGE
        for key, value in message.items():
            if value is not None:
                total += _text_tokens(value) + (_TOKENS_PER_NAME if key == "name" else 0)
    return total
