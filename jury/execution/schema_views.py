"""What an audit juror sees of a database beyond the tables the gold touches (panel `schema`).

- ``database``: every table and column of the database with its declared type, primary key
  and foreign keys (``PRAGMA table_info`` / ``foreign_key_list`` on a read-only connection)
  and, where the benchmark ships them, BIRD's column and value descriptions
  (``<db_root>/<db_id>/database_description/<table>.csv`` beside ``<db_id>.sqlite``).
- ``linked``: the tables the gold touches plus the tables the question's words link to
  (`linked_tables`).

Either view is capped by a token budget (`fit_budget`): value descriptions go first, then
column descriptions, then whole tables (the touched ones are kept longest), and the text ends
with a line saying what was cut. The counting function is the caller's (jury.judging).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from jury.execution.sqlite import open_readonly
from jury.inputs.reader import csv_records, decoded, read_bounded

MAX_DESCRIPTION_BYTES = 4 * 1024 * 1024  # one description CSV; BIRD's largest is ~60 KB
DESCRIPTION_FOLDER = "database_description"


@dataclass
class SchemaColumn:
    name: str
    type: str
    primary_key: bool = False
    references: str | None = None  # "table(column)" of a foreign key
    description: str = ""
    values: str = ""  # BIRD's value_description


@dataclass
class Table:
    name: str
    columns: list[SchemaColumn] = field(default_factory=list)

    def words(self) -> set[str]:
        """The linker's words of a table: its name's parts, its columns' names and descriptions."""
        text = " ".join([self.name, *(f"{c.name} {c.description}" for c in self.columns)])
        return set(words_of(text))


_STOP_WORDS = """the a an of in on at to for by and or is are was were be been with from as that this which
what who whom whose how many much list all each every their its his her they them it give show please among than
there have has had do does did not no any most least more less also only refers refer name names"""
_STOP = frozenset(_STOP_WORDS.split())


def words_of(text: str) -> list[str]:
    """Lower-case words of three or more letters, stop words out, a plural -s/-es stripped.

    >>> words_of("How many superheroes have the super power of Flight?")
    ['superhero', 'super', 'power', 'flight']
    >>> words_of("hero_power.power_id")
    ['hero', 'power', 'power']
    """
    out = []
    for w in re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()):
        if len(w) < 3 or w in _STOP:
            continue
        if w.endswith("es") and len(w) > 4 and w[:-2].endswith(("s", "x", "ch", "sh", "o")):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
            w = w[:-1]
        out.append(w)
    return out


def database_tables(db_path: str | Path) -> list[Table]:
    """Every table of a SQLite database (views too), alphabetically, with declared types and keys."""
    conn = open_readonly(db_path)
    try:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'")
        ]
        tables = []
        for name in sorted(names, key=str.lower):
            quoted = name.replace('"', '""')
            refs = {r[3]: f"{r[2]}({r[4]})" if r[4] else r[2] for r in conn.execute(f'PRAGMA foreign_key_list("{quoted}")')}
            cols = [
                SchemaColumn(r[1], r[2] or "", bool(r[5]), refs.get(r[1])) for r in conn.execute(f'PRAGMA table_info("{quoted}")')
            ]
            tables.append(Table(name, cols))
        return tables
    finally:
        conn.close()


def _read_csv(p: Path, folder: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """A description CSV's rows through the bounded reader: a regular file inside the database's
    ``folder`` (a link out of it is refused before it is read), at most MAX_DESCRIPTION_BYTES,
    UTF-8 (a BOM dropped) else Windows-1252, as BIRD ships a few; malformed CSV is one line
    (a row of another width is padded or cut, as BIRD's rows sometimes are)."""
    data = read_bounded(p, MAX_DESCRIPTION_BYTES, what="a database description", within=folder)
    return csv_records(p, decoded(p, data, fallback="cp1252"), strict=False)


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def add_descriptions(db_path: str | Path, tables: list[Table]) -> bool:
    """Fill each column's description and value description from BIRD's
    ``database_description/<table>.csv`` beside the database file (matched case-insensitively,
    by original_column_name). False when the database has no such folder."""
    database_folder = Path(db_path).parent
    folder = database_folder / DESCRIPTION_FOLDER
    if not folder.is_dir():
        return False
    files = {p.stem.lower(): p for p in folder.glob("*.csv")}
    for table in tables:
        p = files.get(table.name.lower())
        if p is None:
            continue
        rows: dict[str, dict[str, str]] = {}
        for _, row in _read_csv(p, database_folder):
            key = _clean(row.get("original_column_name")).lower()
            if key:
                rows.setdefault(key, row)
        for col in table.columns:
            found = rows.get(col.name.lower())
            if found is not None:
                col.description = _clean(found.get("column_description"))
                col.values = _clean(found.get("value_description"))
    return True


def linked_tables(question: str, tables: list[Table], touched: Iterable[str]) -> list[str]:
    """The linker: the tables the gold touches, plus every table one of whose words (the parts
    of its name, its columns' names, its columns' descriptions: `Table.words`) is one of the
    question's words (`words_of`: lower case, three letters or more, stop words out, plural
    -s/-es stripped). Names as the database spells them, alphabetically."""
    asked = set(words_of(question))
    keep = {t.lower() for t in touched}
    return [t.name for t in tables if t.name.lower() in keep or (asked & t.words())]


def render_table(table: Table, *, descriptions: bool = True, values: bool = True) -> str:
    lines = [f"table {table.name}"]
    for c in table.columns:
        head = " ".join(x for x in (c.name, c.type, "PRIMARY KEY" if c.primary_key else "") if x)
        if c.references:
            head += f" REFERENCES {c.references}"
        if descriptions and c.description:
            head += f": {c.description}"
        if values and c.values:
            head += f" (values: {c.values})"
        lines.append(f"- {head}")
    return "\n".join(lines)


def fit_budget(tables: list[Table], keep_first: Iterable[str], budget: int, count: Callable[[str], int]) -> str:
    """The tables' text within `budget` tokens (as `count` counts them). Cuts, in order, until
    it fits: every value description; every column description; then whole tables, the last
    alphabetically first, those named in `keep_first` (the gold's) last. A cut ends the text
    with a line starting "(cut to the schema budget", naming what was left out."""
    full = "\n\n".join(render_table(t) for t in tables)
    if count(full) <= budget:
        return full
    text = "\n\n".join(render_table(t, values=False) for t in tables) + _notice(budget, ["value descriptions"])
    if count(text) <= budget:
        return text
    keep = {k.lower() for k in keep_first}
    shown = sorted(tables, key=lambda t: (t.name.lower() not in keep, t.name.lower()))
    dropped: list[str] = []
    while True:
        cuts = ["value and column descriptions"]
        if dropped:
            names = ", ".join(sorted(dropped, key=str.lower))
            cuts.append(f"{len(dropped)} table{'s' if len(dropped) != 1 else ''} ({names})")
        body = "\n\n".join(render_table(t, descriptions=False) for t in sorted(shown, key=lambda t: t.name.lower()))
        text = body + _notice(budget, cuts)
        if len(shown) == 1 or count(text) <= budget:
            return text
        dropped.append(shown.pop().name)


def _notice(budget: int, cuts: list[str]) -> str:
    return f"\n\n(cut to the schema budget of {budget} tokens: left out {'; '.join(cuts)})"


def describe_view(
    db_path: str | Path,
    view: str,
    question: str,
    touched: list[str],
    budget: int,
    count: Callable[[str], int],
) -> str:
    """The schema text of a `database` or `linked` view of a SQLite database (see the module)."""
    tables = database_tables(db_path)
    add_descriptions(db_path, tables)
    if view == "linked":
        names = set(linked_tables(question, tables, touched))
        tables = [t for t in tables if t.name in names]
    if not tables:
        return "(the database has no tables)"
    return fit_budget(tables, touched, budget, count)
