"""The demo pool the project ships: ~60 queries in English, Spanish and German, written for
mirage-tui (not taken from any dataset), in SQuAD layout under ``engine/datasets/demo/``. Each topic has
five paragraphs; each question's own paragraph is its oracle and the other four are same-topic
distractors. It is the default data on a fresh machine."""

from __future__ import annotations

from pathlib import Path

from engine.datasets.importing import ImportResult, import_path
from engine.store import Store
from engine.store.datasets import has_dataset_named

DEMO_NAME = "demo"
DEMO_DIR = Path(__file__).with_name("demo")


def ensure_demo(store: Store) -> ImportResult | None:
    """Import the demo pool unless a dataset named ``demo`` is already there."""
    if has_dataset_named(store, DEMO_NAME):
        return None
    return import_path(store, DEMO_DIR, format="squad", name=DEMO_NAME)
