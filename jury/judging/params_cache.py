"""litellm's supported OpenAI params per juror, remembered between processes (for --plan).

jury.judging.providers.params.unknown_params warns of a juror param litellm does not know for its
provider (a typo such as `temprature`): it asks litellm.get_llm_provider and
get_supported_openai_params, which only an imported litellm (~3 s) can answer. Every answer
litellm gives is written here, per (litellm version, model, api_base, litellm's LITELLM_*
environment), in `litellm-params.json` in jury's user cache folder: $JURY_CACHE_DIR, else
$XDG_CACHE_HOME/jury, else ~/.cache/jury. A real run always asks litellm (it imports it anyway)
and so fills the file; a plan reads it and asks litellm only for a juror it has no answer for.
The file is read only where jury.judging.price_map reads litellm's map (litellm not imported in
this process, its bundled map in force): with litellm imported, litellm answers (a user may
have registered providers). A file that cannot be read or written is no error: litellm answers.
This module never imports litellm.
"""

from __future__ import annotations

import functools
import json
import os
from importlib import metadata
from typing import Any

from jury.inputs.user_cache import read_entries, write_entries
from jury.judging import price_map

FILE_NAME = "litellm-params.json"
MAX_CACHE_BYTES = 4 * 1024 * 1024  # a cache larger than this is not jury's: ignored
_FORMAT = 1
_JURY_DEFAULTS = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True"}  # import_litellm's

enabled = True  # False: lookup finds nothing (litellm answers); remember still writes


@functools.cache
def _litellm_version() -> str | None:

    try:
        return metadata.version("litellm")
    except metadata.PackageNotFoundError:
        return None


def _key(model: str, api_base: str | None) -> str:
    env = {**_JURY_DEFAULTS, **{k: v for k, v in os.environ.items() if k.upper().startswith(("LITELLM", "USE_LITELLM"))}}
    return json.dumps([model, api_base or "", sorted(env.items())])


def _read() -> dict[str, Any]:
    stamp = {"format": _FORMAT, "litellm": _litellm_version()}
    return read_entries(FILE_NAME, MAX_CACHE_BYTES, "jury's cache of litellm's answers", stamp, "answers")


def lookup(model: str, api_base: str | None) -> tuple[bool, list[str] | None]:
    """(found, litellm's supported params for the juror or None where it could not tell)."""
    if not enabled or _litellm_version() is None or price_map.local_map() is None:
        return False, None
    key = _key(model, api_base)
    answers = _read()
    if key not in answers:
        return False, None
    known = answers[key]
    if known is None or (isinstance(known, list) and all(isinstance(p, str) for p in known)):
        return True, known
    return False, None


def remember(model: str, api_base: str | None, known: list[str] | None) -> None:
    """Write litellm's answer for the juror (best effort: a cache that cannot be written is skipped)."""
    version = _litellm_version()
    if version is None or os.environ.get(price_map.LOCAL_MAP_ENV, "True").lower() != "true":
        return  # litellm's answer may depend on a map fetched from elsewhere: not kept
    key = _key(model, api_base)
    answers = _read()
    if answers.get(key, 0) == known:
        return
    answers[key] = known
    write_entries(FILE_NAME, {"format": _FORMAT, "litellm": version}, "answers", answers)
