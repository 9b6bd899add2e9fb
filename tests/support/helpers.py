"""Builders for small, hand-checkable inputs shared by tests."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "bird-superhero"
SHARED_BIRD = REPO.parent / "shared" / "data" / "bird"


def make_db(root: Path, db_id: str = "shop") -> Path:
    """<root>/<db_id>/<db_id>.sqlite with a few hand-checkable rows."""
    path = root / db_id / f"{db_id}.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, price REAL, colour TEXT);
        INSERT INTO item VALUES (1,'apple',1.5,'red'),(2,'pear',2.0,'green'),
                                (3,'plum',0.5,'red'),(4,'fig',3.25,NULL);
        """
    )
    conn.commit()
    conn.close()
    return path


GOLD = [
    {
        "question_id": 1,
        "db_id": "shop",
        "question": "Names of red items?",
        "evidence": "",
        "SQL": "SELECT name FROM item WHERE colour = 'red'",
        "difficulty": "simple",
    },
    {
        "question_id": 2,
        "db_id": "shop",
        "question": "Items by price, cheapest first?",
        "evidence": "",
        "SQL": "SELECT name FROM item ORDER BY price",
        "difficulty": "moderate",
    },
    {
        "question_id": 3,
        "db_id": "shop",
        "question": "How many items?",
        "evidence": "",
        "SQL": "SELECT count(*) FROM item",
        "difficulty": "simple",
    },
    {
        "question_id": 4,
        "db_id": "shop",
        "question": "Broken gold",
        "evidence": "",
        "SQL": "SELECT nope FROM item",
        "difficulty": "challenging",
    },
]


def write_gold(tmp: Path, items=None) -> Path:
    path = tmp / "gold.json"
    path.write_text(json.dumps(items if items is not None else GOLD))
    return path


def write_runs(tmp: Path, records, name: str = "run.jsonl") -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
