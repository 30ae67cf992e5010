"""The models a run uses, loaded once each and recorded in its header: generators (with the
context an endpoint named before), retrievers (with the reranker) and the top-k retrieval of
the items not finished yet. A part of :class:`engine.runs.execute._Runner` (a mixin): it uses
the runner's ``store``, ``plan``, ``config``, ``header``, ``generators``, ``retrievers``,
``recorded``, ``finished``, ``cancel``, ``emit``, ``check_cancel``, ``_key``, ``_log`` and
``_write_run``."""

from __future__ import annotations

import time
from collections import defaultdict

from engine.jobs import JobEvent, Stop, model_errors
from engine.runs.contexts import apply_learned_context
from engine.runs.plan import PlanItem


class RunModels:
    """Loading and recording the models of a run (module docstring)."""

    def _generator(self, name: str):
        generator = self.generators.get(name)
        if generator is None:
            from models.catalog import load_generator
            from models.check import is_local, warm_up

            self.emit(force=True, message=f"loading {name}")

            def load():
                with model_errors(name, "cannot load generator {model!r}: {error}"):
                    model = load_generator(name, n_ctx=self.config.n_ctx,
                                           n_threads=self.config.threads)
                    if is_local(model):       # warm, so the first item's pace is its own
                        warm_up(model)
                    return model

            generator = self._logged_load("generator", name, load)
            self.generators[name] = generator
        if name not in self.recorded:
            learned = apply_learned_context(self.store, generator)
            if learned:
                self._log("context", f"{name}: prompts fitted to {learned} tokens, the context "
                                     "its server named before")
            problem = self.header.model_problem(name, generator)
            if problem:
                raise Stop("failed", problem)
            self.header = self.header.with_model(name, generator)
            self.recorded.add(name)
            self._write_run()
        return generator

    def _retrieve(self, items: list[PlanItem]) -> dict[str, dict[int, list[int]]]:
        """Top-k chunk rowids per retriever and query, for the items not finished yet."""
        pending: dict[str, list[int]] = defaultdict(list)
        for item in items:
            if item.kind == "retrieved" and not self.finished.get(self._key(item)):
                if item.query_rowid not in pending[item.retriever]:
                    pending[item.retriever].append(item.query_rowid)
        out = {}
        depth = max(self.config.top_k or [0])
        for name, queries in pending.items():
            retriever = self._retriever(name)

            def progress(event: JobEvent) -> None:
                """Indexing's and retrieval's events as the run's message (the steps this
                call works, the stored ones left out)."""
                if event.status == "running":
                    total = None if event.total is None else event.total - event.cached
                    self.emit(message=f"{event.message or event.working_on or ''} "
                                      f"{event.done - event.cached}/{total or '?'}")

            with model_errors(name, "retriever {model!r} failed: {type}: {error}"):
                ranked = retriever.retrieve(queries, depth=depth, progress=progress,
                                            cancel=self.cancel)
            self.check_cancel("cancelled while retrieving; run it again to resume")
            out[name] = {q: [c for c, _ in ranked.get(q, [])] for q in queries}
        return out

    def _retriever(self, name: str):
        retriever = self.retrievers.get(name)
        if retriever is None:
            retriever = self._load_retriever(name)
            self.retrievers[name] = retriever
        label = getattr(retriever, "label", None) or self.plan.retriever_labels[name]
        problem = self.header.retriever_problem(name, label)
        if problem:
            raise Stop("failed", problem)
        self.plan.retriever_labels[name] = label
        if name not in self.header.retrievers:
            self.header = self.header.with_retriever(name, label,
                                                     getattr(retriever, "embedder", None))
            self._write_run()
        return retriever

    def _load_retriever(self, name: str):
        from engine.retrieval import Retriever
        from models.catalog import load_embedder

        self.emit(force=True, message=f"loading retriever {name}")

        def load():
            with model_errors(name, "cannot load retriever {model!r}: {type}: {error}"):
                return Retriever(self.store, self.plan.dataset, load_embedder(name),
                                 reranker=self._reranker(),
                                 rerank_depth=self.config.rerank_depth)

        return self._logged_load("retriever", name, load)

    def _logged_load(self, what: str, name: str, load):
        """``load()``, with its time (or why it failed) in the run's log."""
        started = time.perf_counter()
        try:
            model = load()
        except Stop as exc:
            self._log("load", f"could not load {what} {name}: {exc.message}")
            raise
        self._log("load", f"loaded {what} {name} in {time.perf_counter() - started:.1f}s")
        return model

    def _reranker(self):
        spec = self.config.reranker
        if not spec:
            return None
        from models.rerankers import RerankerSpec

        parsed = RerankerSpec.parse(spec)
        reranker = parsed.open(**({"n_threads": self.config.threads}
                                  if parsed.kind == "judge" else {}))
        self.header = self.header.with_reranker(spec, reranker, self.config.rerank_depth)
        return reranker
