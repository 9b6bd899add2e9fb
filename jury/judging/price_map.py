"""litellm's bundled price map, read without importing litellm (importing it takes ~3 s).

jury.judging.providers prices plans, has_price and the reply token cap from litellm.model_cost,
which litellm loads, with LITELLM_LOCAL_MODEL_COST_MAP set (jury sets it unless the user did),
from the JSON file it ships (model_prices_and_context_window_backup.json). `local_map` reads
that file; it says None, and the client imports litellm as before, wherever litellm.model_cost
could be something else: litellm already imported in this process (a user may have registered
models: then litellm.model_cost is the answer), LITELLM_LOCAL_MODEL_COST_MAP set to anything but
true (litellm would fetch a remote map), the file absent or unreadable, or `enabled` False.

`entry` resolves a model name the way has_price and litellm.cost_per_token do (the whole
string, then the string after its provider prefix) and declines a name that litellm's loading
rewrites (alias rows). `linear_price` is litellm.cost_per_token for plain prompt and completion
counts where litellm's price is a rate per token: only for providers whose cost_per_token was
read (PROVIDERS) and entries whose every other price applies to what plain counts never have
(cached, audio, image or reasoning tokens, a service tier, a batch, a tool); a rate above N
tokens is accepted only while the call is below N. Anything else (tiers, off-peak prices,
per-character prices, ...) says None and litellm prices it. tests/test_price_map.py checks all
three against litellm for every chat model of the map. This module never imports litellm.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import sys
from typing import Any

from jury.errors import JuryError
from jury.inputs.reader import read_bounded

MAX_PRICE_MAP_BYTES = 64 * 1024 * 1024  # litellm's file is about 3.5 MB
PRICE_FILE = "model_prices_and_context_window_backup.json"
_NOT_MODELS = frozenset({"fallback_generalizations"})  # rows litellm's loading takes out of the map
LOCAL_MAP_ENV = "LITELLM_LOCAL_MODEL_COST_MAP"

enabled = True  # False: local_map always says None (litellm answers; tests compare the two)

# providers whose branch of litellm.cost_per_token was read: generic per-token pricing, with
# provider logic only for cache, reasoning, audio or service-tier tokens and above-N tiers
PROVIDERS = frozenset({"openai", "anthropic", "gemini", "xai", "deepseek"})
_RATES = ("input_cost_per_token", "output_cost_per_token")
_ABOVE = re.compile(r"^(?:input|output)_cost_per_token_above_(\d+)k_tokens$")
# prices of what a plain prompt/completion count never has: cached tokens, other modalities,
# reasoning tokens, a service tier, a batch, tools; and multipliers for a data residency
_NOT_PLAIN = re.compile(
    r"^cache_|_cache_hit$|audio|image|video|reasoning|_(?:batches|flex|priority|ultrafast|decisions|balanced)$"
    r"|^(?:search_context|google_maps_grounding|code_interpreter)_cost|uplift_multiplier"
)
_PRICE_WORDS = ("cost", "pric", "tier", "peak", "multiplier")


def _package_dir() -> str | None:

    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


@functools.cache
def _bundled() -> tuple[dict[str, Any], frozenset[str]] | None:
    """(the bundled map, the names litellm's loading rewrites), or None if it cannot be read."""
    folder = _package_dir()
    if folder is None:
        return None
    try:
        prices = json.loads(read_bounded(os.path.join(folder, PRICE_FILE), MAX_PRICE_MAP_BYTES, what="litellm's price map"))
    except (JuryError, OSError, ValueError):  # then litellm reads it itself
        return None
    if not isinstance(prices, dict):
        return None
    rewritten: set[str] = set(_NOT_MODELS)
    for name, info in prices.items():
        if not isinstance(info, dict) or "alias_of" in info:
            rewritten.add(name)
        elif isinstance(info.get("aliases"), list):
            rewritten.update(a for a in info["aliases"] if isinstance(a, str))
    return prices, frozenset(rewritten)


def litellm_imported() -> bool:
    return "litellm" in sys.modules


def local_map() -> tuple[dict[str, Any], frozenset[str]] | None:
    """The map litellm would load, read from its file, or None where only litellm can tell."""
    if not enabled or litellm_imported():
        return None
    if os.environ.get(LOCAL_MAP_ENV, "True").lower() != "true":  # jury sets "True" unless the user set it
        return None
    return _bundled()


UNKNOWN: dict[str, Any] = {}  # entry's answer for a name litellm has no price for (compare with `is`)


def entry(model: str) -> dict[str, Any] | None:
    """litellm.model_cost's entry for `model` (the whole name, else the name after its provider
    prefix); UNKNOWN when litellm has none; None where only litellm can tell."""
    loaded = local_map()
    if loaded is None:
        return None
    prices, rewritten = loaded
    for name in (model, model.split("/", 1)[1] if "/" in model else None):
        if name is None:
            continue
        if name in rewritten:
            return None
        if name in prices:
            found: dict[str, Any] = prices[name]  # an entry of litellm's JSON price map
            return found
    return UNKNOWN


def _bool(*values: Any) -> bool:
    return any(isinstance(v, bool) for v in values)


def linear_price(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, float] | None:
    """litellm.cost_per_token(model=model, prompt_tokens=..., completion_tokens=...) where it is a
    rate per token for these counts; None where only litellm can tell."""
    provider = model.split("/", 1)[0] if "/" in model else None
    if provider not in PROVIDERS:
        return None
    info = entry(model)
    if info is None or info is UNKNOWN or info.get("litellm_provider") != provider or info.get("mode") != "chat":
        return None
    rate_in, rate_out = info.get(_RATES[0]), info.get(_RATES[1])
    if not (isinstance(rate_in, (int, float)) and isinstance(rate_out, (int, float))) or _bool(rate_in, rate_out):
        return None
    for key in info:
        if key in _RATES or not any(word in key for word in _PRICE_WORDS):
            continue
        above = _ABOVE.match(key)
        if above is not None:
            if prompt_tokens + completion_tokens < int(above.group(1)) * 1000:
                continue  # litellm applies it from N prompt tokens on (xAI: from N inclusive)
            return None
        if _NOT_PLAIN.search(key):
            continue
        return None
    return prompt_tokens * rate_in, completion_tokens * rate_out
