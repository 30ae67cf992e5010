"""A run's plan: systems × settings × queries, in the order that shares prompt prefixes.

One idea: what a run will do before it does it (its items in order, the models they need) —
kept whole: it reads in one sitting, and the TUI's tests patch its model checks here. The time
it should take is :mod:`engine.runs.estimates`'s.

Work is grouped by generator (each model is loaded once), then by query, and within a query
the settings go in :data:`SETTING_ORDER`: base, then each retriever's retrieved@1, @3, @5 (in
ascending k), then mixed, then oracle. With MIRAGE's template every context prompt starts with
the system prompt and ``Question : {query}\\n\\nContext : ``, and retrieved@k's prompt starts
with retrieved@k−1's chunks, so consecutive prompts share the query and the first chunks and
llama.cpp's prompt cache evaluates only the new tail (``benchmarks/bench_runs.py`` measures
it: tokens evaluated and time against the same prompts grouped by setting).

Nothing here writes to the store or loads a model; ``plan_run`` only checks that the dataset
and the named models exist (naming what is available when one does not) and that a stored run
it is given may be resumed with this configuration (:func:`check_same_run`).

Thinking (:mod:`models.thinking`): each generator is planned once per thinking mode of the
configuration; its switch is read from its chat template (:func:`generator_switch`, the GGUF
header only), which decides whether it thinks and so its budget (:meth:`Plan.max_tokens`);
:func:`thinking_notes` and :func:`thinking_lines` are what the plan says about it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from engine.datasets.catalog import DatasetNotFound, resolve
from engine.model_speeds import model_names
from engine.runs.config import (BASIC_SETTINGS, DEFAULT_THINKING_BUDGET, ConfigError,
                                RunConfig)
from engine.runs.prompting import sampling_params
from engine.runs.sampling import adaptive_batch_size, stratified_order
from engine.store import Store
from engine.store import runs as run_table
from engine.store.generations import measured_thinking
from engine.store.run_items import dataset_queries
from models.base import SamplingParams
from models.rerankers import RerankerSpec
from models.thinking import LABELS as THINKING_LABELS, NO_SWITCH, ThinkingSwitch

if TYPE_CHECKING:      # lookup plans a run (plan_named): it imports this module
    from engine.runs.lookup import RunInfo

SETTING_ORDER = ("base", "retrieved", "mixed", "oracle")


class RunConfigMismatch(ConfigError):
    """A run of this name exists with a different configuration."""


@dataclass(frozen=True)
class System:
    generator: str
    template: str            # template id, e.g. 'mirage@1'
    thinking: str = "auto"   # the thinking mode it is asked in (models.thinking)

    @property
    def label(self) -> str:
        """``generator/template``, and `` | think`` or `` | no-think`` for a mode other than
        auto (what its items are stored under)."""
        label = f"{self.generator}/{self.template}"
        return label if self.thinking == "auto" else f"{label} | {THINKING_LABELS[self.thinking]}"


@dataclass(frozen=True)
class PlanItem:
    system: System
    kind: str                # 'base', 'oracle', 'mixed' or 'retrieved'
    query_rowid: int
    k: int | None = None
    retriever: str | None = None   # the configured retriever (embedder) name


@dataclass
class Plan:
    config: RunConfig
    dataset_id: int
    dataset: str             # name@version
    dataset_hash: str
    dataset_queries: int     # queries in the whole dataset
    systems: list[System]
    queries: list[int]       # every query the run may use, in sample order
    first_batch: int         # queries of the first (or only) batch
    batch_size: int
    retriever_labels: dict[str, str] = field(default_factory=dict)
    existing_run: RunInfo | None = None   # the stored run of this name, as looked up
    replace_existing: bool = False
    switches: dict[str, ThinkingSwitch] = field(default_factory=dict)   # generator -> its
    #                                     thinking switch, read from its chat template

    def thinks(self, system: System) -> bool | None:
        """Whether ``system`` thinks: its chat template opens a think block in its mode, or
        ``on`` was asked of a model with a switch; None when not known before its replies (an
        endpoint in auto)."""
        switch = self.switches.get(system.generator)
        if switch is None:
            return None
        return switch.thinks_in(system.thinking)

    def max_tokens(self, system: System) -> int:
        """New tokens an answer of ``system`` may take: the thinking budget when it thinks
        (``thinking_budget``, else the larger of ``max_tokens`` and
        :data:`DEFAULT_THINKING_BUDGET`), else ``max_tokens``. A resumed run keeps the budget
        its header recorded for the system (a header from before thinking budgets: the run's
        ``max_tokens``), so its items are all asked alike."""
        config = self.config
        run = None if self.replace_existing else self.existing_run
        if run is not None:
            recorded = run.header.thinking.get(system.label)
            return recorded.max_tokens if recorded and recorded.max_tokens else \
                config.max_tokens
        if self.thinks(system):
            return config.thinking_budget or max(config.max_tokens, DEFAULT_THINKING_BUDGET)
        return config.max_tokens

    def params(self, system: System) -> SamplingParams:
        """The sampling ``system``'s items are generated (and cached) with."""
        return sampling_params(self.max_tokens(system), self.config.seed, system.thinking)

    def setting_of(self, item: PlanItem) -> str:
        """The stored setting name: ``base``, ``oracle``, ``mixed``, ``retrieved@k:{label}``."""
        if item.kind != "retrieved":
            return item.kind
        return f"retrieved@{item.k}:{self.retriever_labels[item.retriever]}"

    def items_for(self, query_rowids: Iterable[int]) -> list[PlanItem]:
        """The items of these queries, in execution order (generator, query, setting)."""
        queries = list(query_rowids)
        ks = self.config.top_k
        basic = [s for s in BASIC_SETTINGS if s in self.config.settings]
        out = []
        for system in self.systems:
            for q in queries:
                for kind in SETTING_ORDER:
                    if kind == "retrieved":
                        out += [PlanItem(system, "retrieved", q, k, r)
                                for r in self.config.retrievers for k in ks]
                    elif kind in basic:
                        out.append(PlanItem(system, kind, q))
        return out

    @property
    def items(self) -> list[PlanItem]:
        """The items of the first batch (all items, unless the run is adaptive)."""
        return self.items_for(self.queries[:self.first_batch])

    @property
    def count(self) -> int:
        return self.first_batch * self.items_per_query

    @property
    def max_count(self) -> int:
        """Items if every query the run may use is used (the adaptive budget)."""
        return len(self.queries) * self.items_per_query

    @property
    def items_per_query(self) -> int:
        return len(self.systems) * len(self.settings)

    @property
    def settings(self) -> list[str]:
        """Every stored setting name of the run, in execution order."""
        if not self.systems or not self.queries:
            return []
        return [self.setting_of(i) for i in self.items_for(self.queries[:1])
                if i.system == self.systems[0]]

    def batches(self) -> list[list[int]]:
        """The query batches: one for a plain run; for an adaptive run, the first batch and
        then ``batch_size`` at a time until the budget."""
        if not self.config.adaptive:
            return [self.queries]
        out = [self.queries[:self.first_batch]]
        for start in range(self.first_batch, len(self.queries), self.batch_size):
            out.append(self.queries[start:start + self.batch_size])
        return out

    def summary(self) -> dict:
        return {"name": self.config.name, "dataset": self.dataset,
                "systems": [s.label for s in self.systems], "settings": self.settings,
                "queries": self.first_batch, "dataset_queries": self.dataset_queries,
                "count": self.count, "adaptive": self.config.adaptive,
                "max_queries": len(self.queries), "max_count": self.max_count,
                "batch_size": self.batch_size if self.config.adaptive else None}


# --------------------------------------------------------------------------- planning

def dataset_reference(store: Store, ref: str) -> str:
    """How a run's configuration names dataset ``ref``: the bare name when ``ref`` is the
    newest version (``demo@1`` → ``demo`` while 1 is the newest), else ``name@version``. The
    New-run form and ``mirage-tui run`` both pass their dataset through here before the
    run is named (:func:`engine.runs.config.run_name`), so one plan gets one name. A name
    the store does not know is returned as given (``plan_run`` reports it)."""
    name, _, version = ref.strip().rpartition("@")
    if not name or not version.isdigit():
        return ref.strip()
    newest = run_table.newest_dataset_version(store, name)
    return name if newest == int(version) else ref.strip()


def with_canonical_names(store: Store, config: RunConfig) -> RunConfig:
    """``config`` as the store keeps it: its dataset written as :func:`dataset_reference`
    writes it, its models (generators, retrievers, a judge reranker's generator) by their one
    spelling (:func:`models.catalog.model_name`: ``smollm2`` is ``smollm2-135m-instruct``), so
    a run's name and system labels do not depend on how they were typed. A name that matches
    several models is kept as given (the plan refuses it). A name derived from the
    configuration is derived again, a given one is kept."""
    changed = {"dataset": dataset_reference(store, config.dataset),
               "generators": [_model_name(g) for g in config.generators],
               "retrievers": [_model_name(r) for r in config.retrievers]}
    if config.reranker:
        spec = RerankerSpec.parse(config.reranker)
        if spec.kind == "judge":
            changed["reranker"] = str(replace(spec, target=_model_name(spec.target)))
    changed = {k: v for k, v in changed.items() if v != getattr(config, k)}
    if not changed:
        return config
    derived = config.name == config.default_name()
    return replace(config, **changed, name=None if derived else config.name)


def _model_name(text: str) -> str:
    from models.base import ModelError
    from models.catalog import model_name

    try:
        return model_name(text)
    except ModelError:
        return text


def plan_run(store: Store, config: RunConfig, run: RunInfo | None, *, force_new: bool = False,
             check_models: bool = True) -> Plan:
    """The plan for ``config``: resolves the dataset, selects the queries and checks the
    models exist. ``run`` is the stored run of ``config.name`` as the command looked it up
    (:func:`engine.runs.lookup.find_run`, or ``load_run`` for a resume), None for a new run:
    the plan does not look it up again, and opening it (:func:`engine.runs.rows.open_run`)
    claims or inserts it without reading it back. A stored run must have the same
    configuration (:func:`check_same_run`, else :class:`RunConfigMismatch`), unless
    ``force_new`` (execution then replaces it). A plan is executed once."""
    if run is not None and run.name != config.name:
        raise ValueError(f"plan_run: run {run.name!r} given for configuration {config.name!r}")
    try:
        dataset_id = resolve(store, config.dataset)
    except DatasetNotFound as exc:
        raise DatasetNotFound(f"dataset: {exc}") from None
    d = run_table.dataset_facts(store, dataset_id)
    rows = dataset_queries(store, dataset_id)
    if not rows:
        raise ConfigError(f"dataset {d['name']}@{d['version']} has no queries (a "
                          f"{d['kind']}); a run needs a QA dataset")
    if check_models:
        check_run_models(config)
    rowids = [r["id"] for r in rows]
    sampled = config.sample is not None or config.adaptive
    if sampled:
        order = stratified_order([(r["source"], r["language"]) for r in rows], config.seed)
        rowids = [rowids[i] for i in order]
    if config.adaptive:
        budget = min(config.budget or config.sample or len(rowids), len(rowids))
        batch = adaptive_batch_size(budget, config.adaptive_batch)
        queries, first = rowids[:budget], min(batch, budget)
    else:
        queries = rowids[:config.sample] if config.sample else rowids
        batch = first = len(queries)
    if run is not None and not force_new:
        check_same_run(config, run, dataset_id)
    return Plan(config=config, dataset_id=dataset_id, dataset=f"{d['name']}@{d['version']}",
                dataset_hash=d["content_hash"], dataset_queries=len(rows),
                systems=[System(g, config.template, mode) for g in config.generators
                         for mode in config.thinking_modes],
                queries=queries, first_batch=first, batch_size=batch,
                retriever_labels=retriever_labels(config, None if force_new else run),
                existing_run=run, replace_existing=force_new,
                switches={g: generator_switch(g) for g in config.generators})


def check_same_run(config: RunConfig, run: RunInfo, dataset_id: int) -> None:
    """The one check that ``config`` may resume the stored ``run``: the same identity
    (:meth:`RunConfig.differences`) on the same dataset version; :class:`RunConfigMismatch`
    naming what differs otherwise."""
    differs = config.differences(run.config)
    if run.dataset_id != dataset_id and "dataset" not in differs:
        differs.append("dataset (a newer version was imported)")
    if differs:
        raise RunConfigMismatch(
            f"a run named {config.name!r} exists with a different configuration "
            f"(differs in: {', '.join(differs)}); run it again with the same settings to "
            f"resume, or use --force-new to replace it or --name to start another run")


def retriever_labels(config: RunConfig, run: RunInfo | None) -> dict[str, str]:
    """Each configured retriever's label, the one place a plan's labels are decided: the
    label ``run`` recorded for it (with its models' hashes: what its stored items are keyed
    by), else :func:`_planned_retriever_label`. Execution reads them; a retriever it loads
    for the first time records its own label (:mod:`engine.runs.run_models`)."""
    recorded = run.header.retrievers if run is not None else {}
    return {name: getattr(recorded.get(name), "label", None)
            or _planned_retriever_label(name, config) for name in config.retrievers}


def _planned_retriever_label(embedder: str, config: RunConfig) -> str:
    """The retriever's readable label before its models are loaded: the embedder name, plus
    ``+{reranker}@{depth}`` with a reranker. Execution replaces it with
    :func:`engine.retrieval.retriever_label` (which adds ``#hash8`` of the models' identities)
    and the run header keeps that one, so a resumed run finds its stored items."""
    if config.reranker:
        return f"{embedder}+{RerankerSpec.parse(config.reranker).label}@{config.rerank_depth}"
    return embedder


# --------------------------------------------------------------------------- model checks

def _generator_names() -> list[str]:
    from models.catalog import list_models

    return [e.name for e in list_models(include_embedders=False)
            if e.kind == "generator" and e.installed]


def check_generator(name: str, what: str = "generator") -> None:
    """Raises LookupError naming ``name`` and listing the installed generators when it is
    neither an endpoint spec, a packaged model, a model the catalog finds, nor a GGUF file
    (:func:`models.catalog.resolve_model` reads the name)."""
    from models.base import ModelError
    from models.catalog import resolve_model, unknown_model

    try:
        ref = resolve_model(name)
    except ModelError as exc:
        raise LookupError(f"{what} {name!r}: {exc}") from None
    if ref.kind == "packaged" and not ref.entry.installed:
        raise LookupError(f"{what} {name!r} is not installed; install it with "
                          f"`{ref.spec.install}`")
    if ref.kind in ("endpoint", "packaged") or (ref.kind == "file" and ref.path.is_file()):
        return              # an endpoint is reached when the run loads it
    entry = ref.entry
    if entry is not None and entry.kind == "generator" and entry.installed:
        return
    reason = (entry.error or f"it is an {entry.kind}") if entry else "no such model"
    near = unknown_model(name, "generator") if entry is None else ""
    raise LookupError(f"{what} {name!r}: {reason}" + (near or "; available generators: "
                      f"{', '.join(_generator_names()) or 'none'}"))


def check_embedder(name: str) -> None:
    """Raises LookupError naming ``name`` and listing the installed embedders when it names no
    installed embedder of the catalog (:func:`models.catalog.embedder_named`) and no folder."""
    from models.catalog import embedder_entries, embedder_named, unknown_model

    entry = embedder_named(name)
    if (entry is not None and entry.installed) or Path(name).expanduser().is_dir():
        return
    names = sorted(e.name for e in embedder_entries() if e.installed)
    raise LookupError(f"retriever {name!r}: no such embedder" + (
        unknown_model(name, "embedder") or "; available embedders: "
        f"{', '.join(names) or 'none'}"))


def generator_switch(name: str) -> ThinkingSwitch:
    """The thinking switch of generator ``name`` (:func:`models.catalog.thinking_switch`: its
    GGUF's chat template, or an endpoint's request field); no switch for a name that names no
    model (the model check says so)."""
    from models.base import ModelError
    from models.catalog import thinking_switch

    try:
        return thinking_switch(name)
    except (ModelError, OSError, ValueError):
        return NO_SWITCH


def check_run_models(config: RunConfig) -> None:
    for name in config.generators:
        check_generator(name)
    for name in config.retrievers:
        check_embedder(name)
    reranker = RerankerSpec.parse(config.reranker) if config.reranker else None
    if reranker is not None and reranker.kind == "judge":
        check_generator(reranker.target, "reranker judge")
    elif reranker is not None and not Path(reranker.target).expanduser().is_dir():
        raise LookupError(f"reranker {config.reranker!r}: no such folder")

# --------------------------------------------------------------------------- thinking

# What a plan says about thinking (``run --dry-run``'s text and JSON, New run's preview): for
# each system whether its model thinks (its chat template, or for an endpoint its stored
# replies), the switch a mode uses, its budget (:meth:`Plan.max_tokens`), and a warning when
# the model thinks and the budget is under MIN_THINKING_BUDGET, or under the mean reasoning
# tokens its stored generations of that mode measured plus ANSWER_ROOM. A plan whose systems
# neither think nor ask for a mode says nothing (its output is as before modes existed).

MIN_THINKING_BUDGET = 256
"""Fewer new tokens than this rarely hold a small reasoning model's thinking and answer."""

ANSWER_ROOM = 32
"""Tokens left for the answer after the measured thinking."""


@dataclass(frozen=True)
class ThinkingNote:
    system: str                     # the system's label
    generator: str
    mode: str                       # auto | on | off
    switch: str | None              # models.thinking.SWITCHES, None when not read
    thinks: bool | None             # None: not known before its first replies
    max_tokens: int                 # the budget of new tokens it gets
    measured: int                   # stored generations of this model in this mode
    measured_thinking: int          # ... that thought
    mean_reasoning_tokens: float | None
    cut_while_thinking: int
    warning: str | None

    def as_json(self) -> dict:
        return asdict(self)


def thinking_notes(store: Store | None, plan: Plan) -> list[ThinkingNote]:
    """One note per system, when any system thinks (or was seen thinking) or asks a mode;
    an empty list otherwise."""
    notes = [_note(store, plan, system) for system in plan.systems]
    if all(n.mode == "auto" and not n.thinks and not n.measured_thinking for n in notes):
        return []
    return notes


def _note(store: Store | None, plan: Plan, system: System) -> ThinkingNote:
    switch = plan.switches.get(system.generator)
    planned = thinks = plan.thinks(system)
    budget = plan.max_tokens(system)
    n, seen, mean, cut = thinking_measured(store, system)
    if seen:
        thinks = True                     # what its replies showed beats what was planned
    elif thinks is None and n:
        thinks = False                    # an endpoint that has not thought in its replies
    return ThinkingNote(system.label, system.generator, system.thinking,
                        switch.kind if switch else None, thinks, budget, n, seen, mean, cut,
                        _warning(system, switch, planned, thinks, budget, mean))


def thinking_measured(store: Store | None, system: System
                      ) -> tuple[int, int, float | None, int]:
    """What ``system``'s model thought in its mode so far: ``(stored generations, those that
    thought, their mean reasoning tokens, cut while thinking)``; zeros without a store."""
    if store is not None:
        for name in model_names(system.generator):
            found = measured_thinking(store, name, system.thinking)
            if found[0]:
                return found
    return 0, 0, None, 0


def _warning(system: System, switch, planned, thinks, budget: int, mean) -> str | None:
    """Why the plan's thinking for ``system`` may go wrong (None: nothing seen): a mode that
    the model has no switch for; replies that thought although the plan said the system would
    not (a server that ignores the switch); a budget likely too small to finish thinking."""
    name = system.generator
    if system.thinking != "auto" and switch is not None and not switch.switchable:
        return f"{name}: no thinking switch in its chat template; --thinking " \
               f"{system.thinking} has no effect"
    if not thinks:
        return None
    flag = "--thinking-budget" if planned else "--max-tokens"
    thought = f"its stored replies thought ~{mean:.0f} tokens" if mean is not None else \
        "its stored replies thought"
    if planned is False:
        thought += (f" although --thinking {system.thinking} should stop it (its server may "
                    "ignore the switch)")
    too_small = (mean is not None and budget < mean + ANSWER_ROOM) or \
        budget < MIN_THINKING_BUDGET
    if too_small:
        why = thought if mean is not None or planned is False else "it thinks"
        return (f"{name}: {why}; a budget of {budget} tokens is likely too small to finish "
                f"thinking (default {DEFAULT_THINKING_BUDGET} for a model that thinks; raise "
                f"{flag})")
    return f"{name}: {thought}" if planned is False else None
