"""Store checks shared by the import tests."""

from __future__ import annotations

TABLES = ("datasets", "label_pairs", "human_labels", "queries", "chunks", "pool", "imports")


def row_counts(store) -> dict[str, int]:
    """Rows in each dataset table: what a failed import must leave unchanged."""
    return {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in TABLES}
