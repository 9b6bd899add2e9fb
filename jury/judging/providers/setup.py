"""litellm's setup, once per process: imported on first use, offline (its local price map) and
quiet (no debug banners, no logging payloads while no callback is registered), and the httpx session
that stops reading a provider's response past MAX_RESPONSE_BYTES."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import ssl
from collections.abc import Iterator
from typing import Any

from jury.judging.response_cap import capped_http_client


def import_litellm() -> Any:
    """Import litellm on first use, offline (local price map) and without its stdout chatter."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm would otherwise fetch Anthropic's beta-header table from GitHub on the first
    # anthropic/ call: jury talks to no host but the juror's own (the bundled table is used).
    os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")
    import litellm

    if not getattr(litellm, "_jury_configured", False):
        _quiet(litellm)
    return litellm


def _quiet(litellm: Any) -> None:
    """Once per process: litellm logs and calls back nothing for jury (jury keeps its own call
    log). No debug banners and no streaming logs; calls are sent unlogged while no callback is
    registered (:func:`unlogged`). A user who registers a callback after this still gets every
    call, messages included (litellm reads the lists per call; jury leaves
    ``turn_off_message_logging`` as the user set it)."""
    litellm.suppress_debug_info = True
    litellm.disable_streaming_logging = True
    _skip_unused_costing(litellm)
    litellm._jury_configured = True


# Set while jury sends a request unlogged (no callback registered, no litellm.max_budget):
# litellm's own pricing of the response is then skipped (see _skip_unused_costing).
_uncosted: contextvars.ContextVar[bool] = contextvars.ContextVar("jury_uncosted", default=False)


_cost_wrapper: Any = None  # the wrapper _skip_unused_costing installed, so it is installed once


def _skip_unused_costing(litellm: Any) -> None:
    """litellm prices every response for its hidden params (response_cost), which only its
    logging callbacks and budget read: jury prices a call itself (prices.call_cost, from the
    usage). For an unpriced model (a local server) that search through litellm's price map
    and its zero-cost diagnostic were ~a fifth of litellm's CPU per call. While :data:`_uncosted`
    is set, litellm's ``response_cost_calculator`` answers None (no cost known, as for a model
    it cannot price); every other caller, and every call a callback or budget watches, gets
    litellm's own."""
    global _cost_wrapper
    real = getattr(litellm, "response_cost_calculator", None)
    if real is None or real is _cost_wrapper:
        return

    def response_cost_calculator(*args: Any, **kwargs: Any) -> Any:
        if _uncosted.get():
            return None
        return real(*args, **kwargs)

    litellm.response_cost_calculator = _cost_wrapper = response_cost_calculator


_CALLBACK_LISTS = ("callbacks", "success_callback", "failure_callback", "_async_success_callback", "_async_failure_callback")


def unlogged(litellm: Any) -> Any:
    """The context a request is sent in: litellm's own marker for a call whose logging and
    billing someone else does (internal_sub_call), which skips its success and failure
    logging (building a logging payload and queueing it on its logging worker for every call,
    with no callback to hand it to), and no pricing of the response by litellm
    (:func:`_skip_unused_costing`; jury prices it). Only while no callback is registered and
    no litellm.max_budget is set: a user's callback still sees every call, priced. A plain
    context where litellm has no such marker."""
    if any(getattr(litellm, name, None) for name in _CALLBACK_LISTS) or getattr(litellm, "max_budget", None):
        return contextlib.nullcontext()
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:
        return contextlib.nullcontext()
    return _unlogged(internal_sub_call)


@contextlib.contextmanager
def _unlogged(internal_sub_call: Any) -> Iterator[None]:
    token = _uncosted.set(True)
    try:
        with internal_sub_call():
            yield
    finally:
        _uncosted.reset(token)


MAX_RESPONSE_BYTES = 16 * 1024 * 1024  # a provider response body larger than this is not read on


_session_loop: Any = None


def install_capped_session(litellm: Any) -> None:
    """Give litellm (its OpenAI-compatible providers read through litellm.aclient_session) an
    httpx client that stops reading a body past MAX_RESPONSE_BYTES, one per event loop (litellm
    caches its SDK clients per loop too). A session the user installed is left alone; other
    providers are bounded only by the max_tokens sent."""
    global _session_loop
    loop = asyncio.get_running_loop()
    current = getattr(litellm, "aclient_session", None)
    if current is not None and not getattr(current, "_jury_capped", False):
        return
    if current is not None and _session_loop is loop:
        return
    litellm.aclient_session = capped_http_client(MAX_RESPONSE_BYTES, _litellm_transport())
    _session_loop = loop


def _litellm_transport() -> Any:
    """The transport litellm itself would give its OpenAI-compatible clients (its
    ``_get_async_http_client``): aiohttp's, unless ``litellm.disable_aiohttp_transport`` (or
    DISABLE_AIOHTTP_TRANSPORT, LITELLM_HTTP2) says httpx; the SSL settings (SSL_VERIFY,
    SSL_CERT_FILE) as litellm reads them. None (jury's own httpx transport) where this litellm
    has no such factory."""

    try:
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler, get_ssl_configuration
    except ImportError:
        return None
    import httpx

    ssl_config = get_ssl_configuration()
    return AsyncHTTPHandler.create_async_transport(
        ssl_context=ssl_config if isinstance(ssl_config, ssl.SSLContext) else None,
        ssl_verify=ssl_config if isinstance(ssl_config, bool) else None,
        # where litellm builds an httpx transport (force_ipv4): every connection kept, as with
        # jury's own (response_cap.capped_http_client); each juror's max_concurrency bounds them
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
    )
