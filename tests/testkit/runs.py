"""Run-engine test helpers: a scripted generator that counts its calls (:class:`FakeGenerator`),
a retriever that ranks a query's own pool backwards, a small run configuration, running it,
everything a run stores (for equality), and the ``mirage-tui run`` command as a subprocess."""

from __future__ import annotations

import subprocess
import sys

from engine.runs import RunConfig, execute, plan_run
from models.base import Generation, ModelIdentity, ModelUnusable
from testkit.paths import ROOT

SMOL = "smollm2-135m-instruct"


class FakeRendered:
    def __init__(self, text: str):
        self.text = text
        self.tokens = list(range(len(text) // 4 + 1))


class FakeGenerator:
    """Scripted: answers with the start of its first context chunk (or "I don't know"),
    counts calls, and raises ModelUnusable (a crash that stops the run) on the calls listed
    in ``fail_on``. Its identity names ``backend`` (``fake`` unless told)."""

    chat = True
    supports_label_probs = False
    device = "cpu"

    def __init__(self, name: str = "fake-gen", n_ctx: int = 8192, fail_on=(),
                 backend: str = "fake"):
        self.name, self.n_ctx, self.backend = name, n_ctx, backend
        self.fail_on = set(fail_on)
        self.calls: list[str] = []

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, "f" * 64, None, self.n_ctx, self.backend)

    def render(self, messages) -> FakeRendered:
        return FakeRendered("".join(f"<{m['role']}>{m['content']}" for m in messages))

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def generate(self, messages, params) -> Generation:
        text = self.render(messages).text
        self.calls.append(text)
        if len(self.calls) in self.fail_on:
            raise ModelUnusable(f"{self.name}: scripted crash on call {len(self.calls)}")
        _, _, context = text.partition("Context : ")
        answer = context.lstrip("1. ")[:60] if context else "I don't know"
        return Generation(text=answer, prompt_tokens=len(text) // 4 + 1, completion_tokens=7,
                          prompt_tokens_evaluated=len(text) // 8, seconds=0.001,
                          finish_reason="stop", device="cpu", prompt_text=text)


class BackwardsRetriever:
    """Ranks a query's own pool backwards (enough to give retrieved@k real chunks)."""

    def __init__(self, store, label="backwards#00000000"):
        self.store, self.label, self.calls = store, label, 0

    def retrieve(self, query_rowids, depth=5, progress=None, cancel=None):
        self.calls += 1
        out = {}
        for q in query_rowids:
            rows = self.store.query("SELECT chunk_rowid FROM pool WHERE query_rowid = ? AND "
                                    "position IS NOT NULL ORDER BY position DESC", (q,))
            out[q] = [(r[0], 1.0 - i / 10) for i, r in enumerate(rows)][:depth]
        return out


def config(**kw) -> RunConfig:
    base = dict(dataset="demo", generators=["fake-gen"], settings=["base", "oracle", "mixed"],
                sample=6, name="t")
    return RunConfig(**{**base, **kw})


def run(store, cfg, gens=None, **kw):
    gens = gens if gens is not None else {"fake-gen": FakeGenerator()}
    plan = plan_run(store, cfg, check_models=False)
    return plan, execute(store, plan, generators=gens, **kw)


def rows(store) -> dict:
    """Everything a run stores, minus timings and timestamps (for equality)."""
    return {
        "items": sorted(tuple(r) for r in store.query(
            "SELECT system, setting, query_rowid, generation_key, context, truncated, error "
            "FROM run_items")),
        "generations": sorted(tuple(r) for r in store.query(
            "SELECT key, model_key, prompt, params, text FROM generations")),
        "scores": sorted(tuple(r) for r in store.query(
            "SELECT generation_key, query_rowid, metric, value, detail FROM scores")),
    }


def mirage_cli() -> list[str]:
    """``python -m mirage_tui.cli``: the command a user types."""
    return [sys.executable, "-m", "mirage_tui.cli"]


def cli_run(*args, db, timeout=180, **kw):
    """``mirage-tui run --db DB ARGS`` in a subprocess, from the repository root."""
    return subprocess.run([*mirage_cli(), "run", "--db", str(db), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kw)
