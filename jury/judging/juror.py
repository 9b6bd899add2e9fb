"""Who a juror is and what one call to it came back with: JurorSpec and CallResult.

A JurorSpec names the model, where it is served, its generation params (checked to be JSON
values, and never the arguments the client sets itself) and its operational limits. A
CallResult is what JurorPool.call returns: the parsed reply or the one-line reason for an
abstention, with tokens, cost, latency and a log entry per HTTP attempt.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# The status of one HTTP attempt in CallResult.log.
AttemptStatus = Literal["ok", "rate_limited", "server_error", "timeout", "bad_output", "client_error"]

# acompletion arguments JurorPool sets itself; a juror's params may not override them.
RESERVED_PARAMS = frozenset(
    {
        "model",
        "messages",
        "api_base",
        "base_url",
        "api_key",
        "timeout",
        "num_retries",
        "max_retries",
        "response_format",
        "stream",
    }
)

# How a juror's reply is constrained to the ballot's JSON schema (JurorSpec.structured_output):
# json_schema: OpenAI's response_format {"type": "json_schema", ...} (litellm translates it for
# Anthropic, Gemini and Ollama); json_object: {"type": "json_object", "schema": ...}, llama.cpp's
# server; ollama: Ollama's own `format: <schema>`; vllm: vLLM's `guided_json`; off: nothing sent
# (the reply is parsed from text, with one repair turn). true and false are json_schema and off.
StructuredKind = Literal["json_schema", "json_object", "ollama", "vllm", "off"]
STRUCTURED_KINDS: tuple[str, ...] = ("json_schema", "json_object", "ollama", "vllm", "off")

# The key sent to a keyless local server (api_base set, no api_key_env), so that litellm never
# falls back to OPENAI_API_KEY and sends a real key there.
LOCAL_PLACEHOLDER_KEY = "no-key-needed"
BATCH_PROVIDERS = ("openai", "anthropic", "gemini")  # the batch APIs jury sends batches to (jury.judging.batch)


def _check_param_value(where: str, value: Any) -> None:
    """A generation param is sent as JSON: finite numbers, strings, booleans, null, lists, tables."""
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} = {value!r}: not a finite number")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_param_value(f"{where}[{i}]", item)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: key {key!r} is not a string")
            _check_param_value(f"{where}.{key}", item)
        return
    raise ValueError(
        f"{where} = {value}: a {type(value).__name__} is not a JSON value (use a number, string, boolean, list or table)"
    )


class JurorSpec(BaseModel):
    """One juror of a panel: which model, where, with which generation params and limits."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)  # panel-unique, e.g. "gpt-4.1"
    model: str = Field(min_length=1)  # litellm model string, e.g. "openai/gpt-4.1", "ollama_chat/qwen3"
    family: str = Field(min_length=1)
    api_base: str | None = Field(None, min_length=1)
    api_key_env: str | None = Field(None, min_length=1)  # NAME of the env var holding the key; the key is never stored
    params: dict[str, Any] = Field(default_factory=dict)  # generation params; temperature defaults to 0
    max_concurrency: int = Field(4, ge=1)
    rpm: int | None = Field(None, ge=1)  # requests per minute
    timeout_s: float = Field(120, gt=0)
    max_retries: int = Field(5, ge=0)
    # send the ballot's schema when one is given: true (= "json_schema"), false (= "off"), or a
    # StructuredKind; true and false stay booleans so existing request hashes do not change
    structured_output: bool | StructuredKind = True
    # A recorded judge (jury/judging/recorded.py): its votes come from this judgment file, no call is made.
    recorded: str | None = Field(None, min_length=1)
    judge: str | None = Field(None, min_length=1)  # with recorded: which judge of the file (default: its only one)
    recorded_sha256: str | None = None  # set when the panel is loaded: the file's content, bound into every request hash
    free: bool = False  # its calls cost nothing (a model on your own server): $0, not "unknown"; not in the request hash
    # send this juror's ballots through its provider's batch API (jury.judging.batch), as --batch does for
    # every juror: an operational knob, so not in public_dict nor any request hash (a batched vote is the same vote)
    batch: bool = False

    @field_validator("params")
    @classmethod
    def _no_reserved_params(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(value) & RESERVED_PARAMS)
        if clash:
            raise ValueError(f"params may not set {', '.join(clash)} (the juror's own fields set them)")
        for key, item in value.items():
            _check_param_value(f"params.{key}", item)
        return value

    @field_validator("structured_output", mode="before")
    @classmethod
    def _structured_kind(cls, value: Any) -> Any:
        if isinstance(value, bool) or (isinstance(value, str) and value in STRUCTURED_KINDS):
            return value
        raise ValueError(
            f"structured_output = {value!r}: use true, false or one of {', '.join(repr(k) for k in STRUCTURED_KINDS)}"
        )

    def structured_kind(self) -> StructuredKind:
        """How the reply is constrained: structured_output with true and false spelled out."""
        if isinstance(self.structured_output, bool):
            return "json_schema" if self.structured_output else "off"
        return self.structured_output

    def generation_params(self) -> dict[str, Any]:
        """The params sent with every request: `params` with temperature 0 unless it says otherwise."""
        return {"temperature": 0, **self.params}

    def public_dict(self) -> dict[str, Any]:
        """What identifies the juror's answers, for hashing and recording: name, model, family,
        api_base (without any user:password@), the generation params as sent, structured_output.
        Operational knobs (concurrency, rpm, timeout, retries) and the key's env var are left out:
        they do not change what the juror says."""
        out = {
            "name": self.name,
            "model": self.model,
            "family": self.family,
            "api_base": _strip_userinfo(self.api_base),
            "params": self.generation_params(),
            "structured_output": self.structured_output,
        }
        if self.recorded is not None:  # only then, so live jurors' bindings stay as they were
            out |= {"recorded_sha256": self.recorded_sha256, "judge": self.judge}
        return out

    @property
    def costs_nothing(self) -> bool:
        """A recorded judge, or a juror the panel declares `free` (a model on your own server,
        which no price map knows and nobody bills): its cost is $0, never "unknown"."""
        return self.free or self.recorded is not None

    def missing_key(self) -> str | None:
        """The env var's name if api_key_env is set but the variable is not (or is empty), else None."""
        if self.api_key_env and not os.environ.get(self.api_key_env):
            return self.api_key_env
        return None


class CallResult(BaseModel):
    """The outcome of one JurorPool.call. ok=False is an abstention; `error` says why in one line."""

    ok: bool
    parsed: dict[str, Any] | None = None  # the object the caller's parse function returned
    text: str | None = None  # last raw reply text (key scrubbed)
    error: str | None = None
    attempts: int = 0  # HTTP attempts, including retries, the repair turn and a response_format fallback
    prompt_tokens: int = 0  # summed over the attempts that returned usage
    completion_tokens: int = 0
    cost_usd: float = 0.0  # litellm's price of each reply summed (client.call_cost); 0.0 where litellm has no price
    latency_s: float = 0.0  # from taking a concurrency slot to the answer: retries and backoff included, queueing not
    log: list[dict[str, Any]] = Field(default_factory=list)  # per attempt: attempt, status, error, wait_s
    interrupted: bool = False  # the pool was told to stop before this call got an answer: not a vote


def _strip_userinfo(url: str | None) -> str | None:
    if not url:
        return url
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@", r"\1", url)


def batch_provider(juror: JurorSpec) -> str | None:
    """The batch API a juror's model is reached through (openai, anthropic), or None."""
    if juror.recorded is not None or "/" not in juror.model:
        return None
    prefix = juror.model.split("/", 1)[0]
    return prefix if prefix in BATCH_PROVIDERS else None
