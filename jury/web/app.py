"""`jury review`'s web app: Starlette routes over the review queue and the decision store.

Safety: every request carries the per-launch token (in the printed URL once, then an
HttpOnly SameSite=Strict cookie); the Host header must be the address served (no DNS
rebinding); state-changing requests are POSTs that must carry the page's CSRF token and,
when the browser sends them, a same-origin Origin / Sec-Fetch-Site. Templates autoescape
everything, so a question or SQL holding ``<script>``, HTML or ``{{ template }}`` syntax is
shown as text. Nothing here writes to a benchmark database: corrected gold SQL runs
through the read-only executor with its timeout.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jury.vocab import BLIND_ANSWERS, DEFECT_TYPES, AuditVote, BlindAnswer, ReviewItemKind

HERE = Path(__file__).parent
COOKIE = "jury_review_token"
LOOPBACK_NAMES = ("localhost",)
CHOICE_LABELS = {
    BlindAnswer.ANSWER_1: "Answer 1 is right",
    BlindAnswer.ANSWER_2: "Answer 2 is right",
    BlindAnswer.BOTH: "Both are right",
    BlindAnswer.NEITHER: "Neither is right",
    BlindAnswer.AMBIGUOUS: "Ambiguous question",
}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def highlight_sql(sql: str):
    """SQL as escaped HTML with keywords, strings and numbers in spans (sqlglot's tokenizer)."""
    from markupsafe import Markup, escape
    from sqlglot.tokens import Tokenizer, TokenType

    try:
        tokens = Tokenizer().tokenize(sql)
    except Exception:  # sqlglot raises its own errors for text it cannot tokenize: show it plain
        return Markup(escape(sql))
    out, pos = [], 0
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

    def __init__(self, source, store, reviewer: str, *, host: str = "127.0.0.1", token: str | None = None):
        from jury.pipeline.review_queue import reviewer_order

        self.source, self.store, self.reviewer = source, store, reviewer
        self.items = reviewer_order(source.items, reviewer)
        self.token = token or secrets.token_urlsafe(24)
        self.csrf = secrets.token_urlsafe(24)
        self.hosts = {"127.0.0.1", "localhost", "::1", host.strip("[]")}
        self.shas = [d.content_sha256 for _p, d in source.verdict_files]

    def decisions(self) -> dict[str, dict]:
        from jury.pipeline.review_queue import ReviewItem

        mine = self.store.decisions(self.shas, self.reviewer)
        by = {(d["kind"], d["verdict_sha256"], d["model"], d["question_id"]): d for d in mine}

        def ident(it: ReviewItem) -> tuple:
            return (str(it.kind), it.verdict_sha256, it.model, it.question_id)

        return {it.key: by[ident(it)] for it in self.items if ident(it) in by}


def create_app(state: ReviewState):
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))
    env.filters["sql"] = highlight_sql

    def refused(why: str) -> Response:
        return PlainTextResponse(f"Forbidden: {why}", status_code=403)

    def check(request: Request) -> Response | None:
        host = urlsplit("//" + request.headers.get("host", "")).hostname or ""
        if host not in state.hosts:
            return refused("this page is served for 127.0.0.1 only (Host header refused)")
        given = request.cookies.get(COOKIE) or request.query_params.get("token") or ""
        if not hmac.compare_digest(given.encode(), state.token.encode()):
            return refused("open the URL `jury review` printed (it carries this launch's token)")
        return None

    async def check_post(request: Request) -> tuple[Response | None, Any]:
        bad = check(request)
        if bad is not None:
            return bad, None
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
            return refused("cross-site request (Origin)"), None
        if request.headers.get("sec-fetch-site") not in (None, "same-origin", "none"):
            return refused("cross-site request (Sec-Fetch-Site)"), None
        form = await request.form()
        if not hmac.compare_digest(str(form.get("csrf", "")).encode(), state.csrf.encode()):
            return refused("missing or wrong CSRF token"), None
        return None, form

    def page(name: str, **ctx) -> HTMLResponse:
        return HTMLResponse(env.get_template(name).render(reviewer=state.reviewer, csrf=state.csrf, **ctx))

    def home(request: Request) -> Response:
        bad = check(request)
        if bad is not None:
            return bad
        decided = state.decisions()
        nxt = next((i for i, it in enumerate(state.items) if it.key not in decided), None)
        resp = RedirectResponse("/done" if nxt is None else f"/item/{nxt}", status_code=303)
        if request.query_params.get("token"):
            resp.set_cookie(COOKIE, state.token, httponly=True, samesite="strict", path="/")
        return resp

    def render_item(n: int, extra: dict | None = None) -> Response:
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
            "next_open": next(
                (i for i in [*range(n + 1, len(state.items)), *range(n)] if state.items[i].key not in decided), None
            ),
            "defect_types": [str(d) for d in DEFECT_TYPES],
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
        return page("item.html", **ctx)

    def item_get(request: Request) -> Response:
        return check(request) or render_item(request.path_params["n"])

    async def item_post(request: Request) -> Response:
        bad, form = await check_post(request)
        if bad is not None:
            return bad
        n = request.path_params["n"]
        if not 0 <= n < len(state.items):
            return PlainTextResponse("no such item", status_code=404)
        item = state.items[n]
        choice = str(form.get("choice", ""))
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
            "note": str(form.get("note", "")).strip() or None,
            "jury_verdict": item.jury_verdict,
            "answer_key": item.answer_key,
            "gold_key": item.gold_key,
        }
        if item.kind == ReviewItemKind.ADJUDICATION:
            decision["item_order"] = item.order_for(state.reviewer)
        elif choice == AuditVote.DEFECTIVE:
            defect = str(form.get("defect_type", "")) or "other"
            if defect not in DEFECT_TYPES:
                return PlainTextResponse(f"defect type: one of {', '.join(DEFECT_TYPES)}", status_code=400)
            decision["defect_type"] = defect
            corrected = str(form.get("corrected_sql", "")).strip()
            if corrected:
                from jury.pipeline.review_queue import run_corrected

                _preview, decision["corrected_result"] = run_corrected(
                    item, corrected, state.source.timeout_s, state.source.row_cap
                )
                decision["corrected_sql"] = corrected
        from jury.verdicts.lock import utc_now

        decision["decided_at"] = utc_now()
        state.store.record(decision)  # committed before the page answers
        return RedirectResponse(f"/item/{n}", status_code=303)

    async def run_post(request: Request) -> Response:
        bad, form = await check_post(request)
        if bad is not None:
            return bad
        n = request.path_params["n"]
        if not 0 <= n < len(state.items) or state.items[n].kind != ReviewItemKind.GOLD:
            return PlainTextResponse("no such gold item", status_code=404)
        from jury.errors import JuryError
        from jury.pipeline.review_queue import run_corrected

        sql = str(form.get("corrected_sql", ""))
        try:
            shown, _summary = run_corrected(state.items[n], sql, state.source.timeout_s, state.source.row_cap)
        except JuryError as exc:
            shown = str(exc)
        return render_item(n, {"corrected_sql": sql, "corrected_preview": shown, "note": str(form.get("note", ""))})

    def done(request: Request) -> Response:
        bad = check(request)
        if bad is not None:
            return bad
        return page("done.html", total=len(state.items), done=len(state.decisions()))

    files = StaticFiles(directory=HERE / "static")

    async def guarded_static(scope, receive, send) -> None:
        bad = check(Request(scope))
        await (bad if bad is not None else files)(scope, receive, send)

    routes = [
        Route("/", home),
        Route("/item/{n:int}", item_get, methods=["GET"]),
        Route("/item/{n:int}", item_post, methods=["POST"]),
        Route("/item/{n:int}/run", run_post, methods=["POST"]),
        Route("/done", done),
        Mount("/static", app=guarded_static, name="static"),
    ]
    return Starlette(routes=routes)


def serve(state: ReviewState, host: str, port: int, announce) -> None:
    """Bind (port 0: any free port), announce the URL with the token, serve until interrupted."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(64)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    announce(f"http://{shown}:{bound}/?token={state.token}")
    config = uvicorn.Config(create_app(state), log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
