"""`jury review`'s web app: Starlette routes over the review queue and the decision store.

Safety: every page lives under a per-launch path (``/<launch>/``, 16 hex of the token's
hash) and every request carries the per-launch token: in the printed URL once, then an
HttpOnly SameSite=Strict cookie named after the launch and scoped to that path, so a
cookie of an earlier launch (cookies ignore ports) never shadows a fresh URL and the
cookie is not sent to other services on 127.0.0.1. The Host header must be the address
served (no DNS rebinding). State-changing requests are POSTs that must carry the page's
CSRF token in the URL (checked before any of the body is read), a same-origin Origin /
Sec-Fetch-Site when the browser sends them, and a urlencoded body of at most
``MAX_BODY`` bytes (413 otherwise, counted while streaming). Templates autoescape
everything, so a question or SQL holding ``<script>``, HTML or ``{{ template }}`` syntax is
shown as text. Nothing here writes to a benchmark database: corrected gold SQL runs
through the read-only executor with its timeout, in a worker thread so the page stays
responsive while it runs.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from jury.errors import InputError, JuryError, MissingExtra, need_extra
from jury.vocab import BLIND_ANSWERS, DEFECT_TYPES, AuditVote, BlindAnswer, DefectType, ReviewItemKind, Verdict

if TYPE_CHECKING:
    from markupsafe import Markup

    from jury.execution.reviews import Decision, ReviewStore
    from jury.pipeline.review_queue import ReviewItem, ReviewSource

# The [web] extra: starlette (the app), uvicorn (the server), jinja2 (the pages) and python-multipart
# (the decision form: module python_multipart, `multipart` before 0.0.13). Checked when this module is
# imported (only to serve the page), so a missing one is one line before any work.
REVIEW_PAGE = "the review page"
for _module in ("starlette", "uvicorn", "jinja2"):
    need_extra(_module, "web", REVIEW_PAGE)
try:
    need_extra("python_multipart", "web", REVIEW_PAGE, package="python-multipart")
except MissingExtra:
    need_extra("multipart", "web", REVIEW_PAGE, package="python-multipart")

# after the check above, so a missing one is MissingExtra's line, never an ImportError
from jinja2 import Environment, FileSystemLoader, select_autoescape  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.requests import ClientDisconnect, Request  # noqa: E402
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402

HERE = Path(__file__).parent
LOOPBACK_NAMES = ("localhost",)
MAX_BODY = 256 * 1024  # a decision form: a choice, a note and a corrected SQL
MAX_FIELDS = 16
CHOICE_LABELS: dict[str, str] = {
    BlindAnswer.ANSWER_1: "Answer 1 is right",
    BlindAnswer.ANSWER_2: "Answer 2 is right",
    BlindAnswer.BOTH: "Both are right",
    BlindAnswer.NEITHER: "Neither is right",
    BlindAnswer.AMBIGUOUS: "Ambiguous question",
}
# What the page says for the jury's internal tokens (shown only after the reviewer decided,
# when the answers are unblinded anyway).
WORDS: dict[str, str] = {
    **{str(c): label for c, label in CHOICE_LABELS.items()},  # a juror's reply, where a category is not known
    Verdict.GOLD_DEFECT: "gold defect (the model's answer is right, the gold is not)",
    Verdict.FORMAT_EQUIVALENCE: "format equivalence (both answer the question)",
    Verdict.GENUINE_ERROR: "genuine error (the model's answer is wrong)",
    Verdict.AMBIGUOUS: "ambiguous question",
    Verdict.NO_MAJORITY: "no majority",
    Verdict.UNDECIDED: "undecided (abstentions could have made a majority)",
    AuditVote.VALID: "gold SQL is valid",
    AuditVote.DEFECTIVE: "gold SQL is defective",
    "flagged": "flagged as defective",
    "not_flagged": "not flagged",
    "abstained": "abstained",
    "skipped": "skipped",
}
DEFECT_WORDS: dict[str, str] = {
    DefectType.SQL_VS_QUESTION: "the SQL does not answer the question",
    DefectType.SQL_VS_DATA: "the SQL does not fit the data",
    DefectType.DOMAIN_KNOWLEDGE: "wrong domain knowledge",
    DefectType.AMBIGUOUS_QUESTION: "the question is ambiguous",
    DefectType.OTHER: "other",
    DefectType.WRONG_TABLE: "the SQL reads the wrong table",
}


def words(token: str | None) -> str:
    """Human words for a verdict, vote, choice or defect type (the token itself if unknown)."""
    if token is None:
        return ""
    return WORDS.get(token) or DEFECT_WORDS.get(token) or token.replace("_", " ")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def highlight_sql(sql: str) -> Markup:
    """SQL as escaped HTML with keywords, strings and numbers in spans (sqlglot's tokenizer)."""
    from markupsafe import Markup, escape
    from sqlglot import Tokenizer, TokenType

    try:
        tokens = Tokenizer().tokenize(sql)
    except Exception:  # sqlglot raises its own errors for text it cannot tokenize: show it plain
        return Markup(escape(sql))
    out: list[str] = []
    pos = 0
    for t in tokens:
        start, end = t.start, t.end + 1
        if start < pos or end > len(sql):
            continue
        cls = (
            "s"
            if t.token_type == TokenType.STRING
            else "n"
            if t.token_type == TokenType.NUMBER
            else "k"
            if t.text.upper() in Tokenizer.KEYWORDS
            else None
        )
        out.append(str(escape(sql[pos:start])))
        text = str(escape(sql[start:end]))
        out.append(f'<span class="{cls}">{text}</span>' if cls else text)
        pos = end
    out.append(str(escape(sql[pos:])))
    return Markup("".join(out))


class ReviewState:
    """One launch: the queue, the store, this reviewer, and the launch's secrets."""

    def __init__(
        self,
        source: ReviewSource,
        store: ReviewStore,
        reviewer: str,
        *,
        host: str = "127.0.0.1",
        token: str | None = None,
        blind: bool = False,
    ) -> None:
        from jury.pipeline.review_queue import reviewer_order

        self.source, self.store, self.reviewer = source, store, reviewer
        self.blind = blind  # a sample's blind review: the panel's votes and verdict never reach the page
        self.items = reviewer_order(source.items, reviewer)
        self.token = token or secrets.token_urlsafe(24)
        self.launch = hashlib.sha256(self.token.encode()).hexdigest()[:16]
        self.root = f"/{self.launch}"  # every page lives under it; the cookie is scoped to it
        self.cookie = f"jury_review_{self.launch}"
        self.csrf = secrets.token_urlsafe(24)
        self.hosts = {"127.0.0.1", "localhost", "::1", host.strip("[]")}
        self.shas = source.verdict_shas

    def decisions(self) -> dict[str, Decision]:
        mine = self.store.decisions(self.shas, self.reviewer)
        by = {(d["kind"], d["verdict_sha256"], d["model"], d["question_id"]): d for d in mine}

        def ident(it: ReviewItem) -> tuple[str, str, str | None, object]:
            return (str(it.kind), it.verdict_sha256, it.model, it.question_id)

        return {it.key: by[ident(it)] for it in self.items if ident(it) in by}


# --------------------------------------------------------------------------- the app
# The routes are module-level handlers; what one launch serves (its ReviewState, its templates,
# its static files) is in ``request.app.state``, set once by create_app.


def create_app(state: ReviewState) -> Starlette:
    """The review page of one launch: its routes under ``state.root``, a 404 elsewhere."""
    pages = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))
    pages.filters["sql"] = highlight_sql
    pages.filters["words"] = words
    pages.filters["choice"] = lambda c: CHOICE_LABELS.get(c) or words(c)
    routes = [
        Route("/", home),
        Route("/item/{n:int}", item_get, methods=["GET"]),
        Route("/item/{n:int}", item_post, methods=["POST"]),
        Route("/item/{n:int}/run", run_post, methods=["POST"]),
        Route("/done", done),
        Mount("/static", app=guarded_static, name="static"),
    ]
    app = Starlette(routes=[Mount(state.root, routes=routes), Route("/{path:path}", elsewhere)])
    app.state.review = state
    app.state.pages = pages
    app.state.static = StaticFiles(directory=HERE / "static")
    return app


def _review(request: Request) -> ReviewState:
    review: ReviewState = request.app.state.review
    return review


def refused(why: str) -> Response:
    return PlainTextResponse(f"Forbidden: {why}", status_code=403)


def same(given: str | None, secret: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), secret.encode())


def check(request: Request) -> Response | None:
    """The refusal of a request not addressed to the host served or without this launch's token, or None."""
    state = _review(request)
    host = urlsplit("//" + request.headers.get("host", "")).hostname or ""
    if host not in state.hosts:
        return refused("this page is served for 127.0.0.1 only (Host header refused)")
    # a fresh ?token= of this launch wins; otherwise this launch's own cookie (an earlier
    # launch's cookie has another name and path, so it is never consulted)
    if not (same(request.query_params.get("token"), state.token) or same(request.cookies.get(state.cookie), state.token)):
        return refused("open the URL `jury review` printed (it carries this launch's token)")
    return None


def _cross_site(request: Request) -> Response | None:
    """The refusal of a POST from another site or without the page's CSRF token, or None."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        return refused("cross-site request (Origin)")
    if request.headers.get("sec-fetch-site") not in (None, "same-origin", "none"):
        return refused("cross-site request (Sec-Fetch-Site)")
    if not same(request.query_params.get("csrf") or request.headers.get("x-csrf-token"), _review(request).csrf):
        return refused("missing or wrong CSRF token")
    return None


async def check_post(request: Request) -> tuple[Response | None, dict[str, str]]:
    """Token, Host, Origin and the CSRF token (in the URL) first; only then read a capped body."""
    bad = check(request) or _cross_site(request)
    if bad is not None:
        return bad, {}
    too_big = PlainTextResponse(f"request body over {MAX_BODY} bytes", status_code=413)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        return PlainTextResponse("send the page's form (application/x-www-form-urlencoded)", status_code=415), {}
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return too_big, {}
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return too_big, {}
    except ClientDisconnect:
        return PlainTextResponse("the request was cut off", status_code=400), {}
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        return PlainTextResponse("malformed form (not UTF-8, or too many fields)", status_code=400), {}
    return None, dict(pairs)


def page(request: Request, name: str, **ctx: Any) -> HTMLResponse:
    state = _review(request)
    template = request.app.state.pages.get_template(name)
    return HTMLResponse(template.render(reviewer=state.reviewer, csrf=state.csrf, root=state.root, blind=state.blind, **ctx))


def home(request: Request) -> Response:
    bad = check(request)
    if bad is not None:
        return bad
    state = _review(request)
    decided = state.decisions()
    nxt = next((i for i, it in enumerate(state.items) if it.key not in decided), None)
    resp = RedirectResponse(f"{state.root}/done" if nxt is None else f"{state.root}/item/{nxt}", status_code=303)
    if same(request.query_params.get("token"), state.token):
        resp.set_cookie(state.cookie, state.token, httponly=True, samesite="strict", path=state.root)
    return resp


def render_item(request: Request, n: int, extra: Mapping[str, object] | None = None) -> Response:
    state = _review(request)
    if not 0 <= n < len(state.items):
        return PlainTextResponse("no such item", status_code=404)
    item = state.items[n]
    decided = state.decisions()
    decision = decided.get(item.key)
    ctx: dict[str, Any] = {
        "item": item,
        "n": n,
        "total": len(state.items),
        "done": len(decided),
        "decision": decision,
        "next_open": next((i for i in [*range(n + 1, len(state.items)), *range(n)] if state.items[i].key not in decided), None),
        "defect_types": [(str(d), DEFECT_WORDS[d]) for d in DEFECT_TYPES],
        "choices": [(str(c), CHOICE_LABELS[c]) for c in BLIND_ANSWERS],
        "gold_choices": [(str(AuditVote.VALID), "Gold SQL is valid"), (str(AuditVote.DEFECTIVE), "Gold SQL is defective")],
        **(extra or {}),
    }
    if item.kind == ReviewItemKind.ADJUDICATION:
        order = item.order_for(state.reviewer)
        gold = {"sql": item.gold_sql, "preview": item.gold_preview, "is_gold": True}
        cand = {"sql": item.cand_sql or "", "preview": item.cand_preview or "", "is_gold": False}
        ctx["answers"] = [gold, cand] if order == "gold_first" else [cand, gold]
        ctx["order"] = order
        if decision is not None:
            from jury.judging.ballots import blind_category

            ctx["category"] = blind_category(decision["choice"], decision["item_order"])[0]
    return page(request, "item.html", **ctx)


def item_get(request: Request) -> Response:
    return check(request) or render_item(request, request.path_params["n"])


async def _posted(request: Request, *, gold: bool = False) -> Response | tuple[dict[str, str], ReviewState, int]:
    """A form posted about item ``n`` of the queue (a gold item with ``gold``): (form, state, n),
    else the response refusing it (check_post's, or a 404 for no such item)."""
    bad, form = await check_post(request)
    if bad is not None:
        return bad
    state = _review(request)
    n = request.path_params["n"]
    if not 0 <= n < len(state.items) or (gold and state.items[n].kind != ReviewItemKind.GOLD):
        return PlainTextResponse("no such gold item" if gold else "no such item", status_code=404)
    return form, state, n


async def item_post(request: Request) -> Response:
    posted = await _posted(request)
    if isinstance(posted, Response):
        return posted
    form, state, n = posted
    item = state.items[n]
    choice = form.get("choice", "")
    allowed = BLIND_ANSWERS if item.kind == ReviewItemKind.ADJUDICATION else tuple(AuditVote)
    if choice not in allowed:
        return PlainTextResponse(f"choose one of: {', '.join(allowed)}", status_code=400)
    decision: dict[str, Any] = {
        "verdict_sha256": item.verdict_sha256,
        "kind": str(item.kind),
        "model": item.model,
        "question_id": item.question_id,
        "db_id": item.db_id,
        "reviewer": state.reviewer,
        "choice": choice,
        "note": form.get("note", "").strip() or None,
        "jury_verdict": item.jury_verdict,
        "answer_key": item.answer_key,
        "gold_key": item.gold_key,
    }
    if item.kind == ReviewItemKind.ADJUDICATION:
        decision["item_order"] = item.order_for(state.reviewer)
    elif choice == AuditVote.DEFECTIVE:
        bad = await _gold_defect(state, item, form, decision)
        if bad is not None:
            return bad
    from jury.verdicts.lock import utc_now

    decision["decided_at"] = utc_now()
    await run_in_threadpool(state.store.record, decision)  # committed before the page answers
    return RedirectResponse(f"{state.root}/item/{n}", status_code=303)


async def _gold_defect(state: ReviewState, item: ReviewItem, form: dict[str, str], decision: dict[str, Any]) -> Response | None:
    """A gold item decided defective: its defect type and corrected SQL (run read-only) into
    ``decision``; a 400 for a defect type that is none of DEFECT_TYPES."""
    defect = form.get("defect_type", "")
    if defect and defect not in DEFECT_TYPES:
        return PlainTextResponse(f"defect type: one of {', '.join(DEFECT_TYPES)}", status_code=400)
    decision["defect_type"] = defect or None  # not chosen: not given (never a default)
    corrected = form.get("corrected_sql", "").strip()
    if corrected:
        from jury.pipeline.review_queue import run_corrected

        _preview, decision["corrected_result"] = await run_in_threadpool(
            run_corrected, item, corrected, state.source.timeout_s, state.source.row_cap
        )
        decision["corrected_sql"] = corrected
    return None


async def run_post(request: Request) -> Response:
    posted = await _posted(request, gold=True)
    if isinstance(posted, Response):
        return posted
    form, state, n = posted
    from jury.pipeline.review_queue import run_corrected

    sql = form.get("corrected_sql", "")
    try:  # off the event loop: a runaway query (bounded by the executor's timeout) blocks no other request
        shown, _summary = await run_in_threadpool(
            run_corrected, state.items[n], sql, state.source.timeout_s, state.source.row_cap
        )
    except JuryError as exc:
        shown = str(exc)
    extra = {"corrected_sql": sql, "corrected_preview": shown, "note": form.get("note", "")}
    return await run_in_threadpool(render_item, request, n, extra)


def done(request: Request) -> Response:
    bad = check(request)
    if bad is not None:
        return bad
    state = _review(request)
    return page(request, "done.html", total=len(state.items), done=len(state.decisions()))


def elsewhere(request: Request) -> Response:
    return PlainTextResponse("Not found: open the URL `jury review` printed", status_code=404)


async def guarded_static(scope: Any, receive: Any, send: Any) -> None:
    """The static files, behind the same Host and token check as every page."""
    request = Request(scope)
    bad = check(request)
    await (bad if bad is not None else request.app.state.static)(scope, receive, send)


#: A socket address socket.getaddrinfo gives: IPv4's, IPv6's, IPv6's on a Python built with --disable-ipv6.
SockAddr = tuple[str, int] | tuple[str, int, int, int] | tuple[int, bytes]


def bind_address(host: str, port: int) -> tuple[int, SockAddr]:
    """(address family, socket address) to bind for --host/--port; InputError for one the page cannot serve."""

    name = host.strip("[]")
    if ":" in name or name.replace(".", "").isdigit():  # written as an address: no name lookup
        try:
            ipaddress.ip_address(name.split("%")[0])
        except ValueError:
            raise InputError(f"host {host}: not a valid IP address") from None
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        why = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise InputError(f"host {host}: not an address this machine can serve on ({why})") from None
    family, _type, _proto, _canon, sockaddr = infos[0]
    if ipaddress.ip_address(str(sockaddr[0]).split("%")[0]).is_unspecified:
        raise InputError(
            f"host {host}: binding every interface is refused, since the page answers only requests addressed "
            "to the one host it serves (its guard against DNS rebinding); give this machine's address on that "
            "network, e.g. --host 192.168.1.5"
        )
    return family, sockaddr


def serve(state: ReviewState, host: str, port: int, announce: Callable[[str], None]) -> None:
    """Bind (port 0: any free port), announce the URL with the token, serve until interrupted."""

    import uvicorn

    family, sockaddr = bind_address(host, port)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise InputError(f"host {host} port {port}: cannot listen there ({exc.strerror or exc})") from None
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    announce(f"http://{shown}:{bound}{state.root}/?token={state.token}")
    config = uvicorn.Config(create_app(state), log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
