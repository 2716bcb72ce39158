"""The two tables as Parquet, written by DuckDB (which also lets users query them: see the README).

Rows go through a JSON Lines file read with the tables' declared types, so a column that is
empty in every row still has its type, and an empty run still writes both tables.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from ctxtop.tui.commands.fleet.extra import need


def write_parquet(rows: Sequence[dict[str, Any]], columns: dict[str, str], target: Path) -> None:
    """``rows`` (each with every column) to the Parquet file ``target``."""
    duckdb = need("duckdb")
    with tempfile.TemporaryDirectory(prefix="ctxtop-tables-") as folder:
        lines = Path(folder) / "rows.jsonl"
        lines.write_bytes(b"".join(orjson.dumps({name: row.get(name) for name in columns}) + b"\n" for row in rows))
        types = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in columns.items()) + "}"
        with duckdb.connect(":memory:") as connection:
            # Paths are ours (a private temporary folder, the output folder); quotes doubled all the same.
            source, out = str(lines).replace("'", "''"), str(target).replace("'", "''")
            connection.execute(f"copy (select * from read_json('{source}', format='newline_delimited', columns={types})) "
                               f"to '{out}' (format parquet, compression zstd)")


def read_parquet(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file, as dicts (for tests and reports)."""
    duckdb = need("duckdb")
    with duckdb.connect(":memory:") as connection:
        cursor = connection.execute(f"select * from read_parquet('{str(path).replace(chr(39), chr(39) * 2)}')")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
