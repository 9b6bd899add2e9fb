"""The schema text of an audit ballot under a panel's `schema` view other than "touched"
(`database`, `linked`: jury.execution.schema_views), with its token budget counted as --plan
counts a ballot's prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jury.errors import ConfigError
from jury.execution import engine_urls
from jury.execution.schema import tables_in
from jury.execution.schema_views import describe_view
from jury.inputs.records import GoldItem

if TYPE_CHECKING:
    from jury.judging.panels import Panel


def count_tokens(text: str) -> int:
    """Tokens of a text: tiktoken's o200k_base, as litellm counts gpt-4o prompts (what --plan
    prices; jury.judging.tokens); where that count is unavailable, one token per 4 characters."""
    from jury.judging.tokens import fast_count

    n = fast_count([{"role": "user", "content": text}])
    return n - 7 if n is not None else -(-len(text) // 4)  # 7: the message (3), its role "user" (1), the reply primer (3)


def schema_view(item: GoldItem, databases: engine_urls.Databases, panel: Panel) -> str:
    """The item's own `schema_text` when it has one (the benchmark's whole schema), else the
    panel's view of its SQLite database within panel.schema_budget tokens."""
    if item.schema_text is not None:
        return item.schema_text
    if item.db_id not in databases:
        return "(no schema available: the database is not here and the gold item has no schema_text)"
    path = databases[item.db_id][0]
    if engine_urls.is_url(str(path)):
        raise ConfigError(
            f"panel {panel.name!r}: schema = {panel.schema!r} reads SQLite databases; {item.db_id} is an engine URL "
            '(use schema = "touched")'
        )
    return describe_view(path, panel.schema, item.question, tables_in(item.sql), panel.schema_budget, count_tokens)
