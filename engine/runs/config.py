"""What a run is asked to do: ``RunConfig``, from TOML or from the command line's flags.

A run is a plan of systems × settings × queries. A *system* is a generator with a prompt
template; the settings are ``base`` (no context), ``oracle`` (the query's oracle chunk),
``mixed`` (the query's own pool, in pool order) and ``retrieved@k`` (a retriever's top k over
the whole pool, attached collections included), one series per configured retriever.

A run file (every key but ``dataset`` and ``generators`` is optional)::

    name = "demo-smol"
    dataset = "demo"                      # NAME or NAME@VERSION
    generators = ["smollm2-135m-instruct"]
    settings = ["base", "oracle", "mixed", "retrieved@1", "retrieved@3", "retrieved@5"]
    retrievers = ["minilm-l6-v2", "e5-small-q4"]
    reranker = "judge:smollm2-135m-instruct"   # or "cross-encoder:/path/to/folder"
    rerank_depth = 20
    template = "mirage"                   # mirage | bergen | mirage-bench (or an id: mirage@1)
    sample = 200                          # a seeded sample stratified by source and language
    seed = 0
    adaptive_target = 0.03                # sample until every 95% CI half-width is below
    budget = 1000                         # ... or this many queries were used
    max_tokens = 64
    thinking = "auto"                     # auto | on | off, or "on,off" (each generator both)
    thinking_budget = 1024                # tokens of a generator that thinks (default 1024)
    n_ctx = 4096
    threads = 2
    concurrency = 4                       # requests in flight (default: from the generator)
    max_errors = "10%"                    # error budget: a count, a fraction or a percentage
    gold = "oracle"                       # oracle | oracle+answer-match (retrieval)
    language_rule = "mirage-tui"          # mirage-tui | bergen (correct language)
    language_detector = "langid"          # langid | fasttext
    # parity = "bergen"                   # mirage | bergen: fixes the choices above to the
                                          # reference's (asking for others is an error)

Thinking (:mod:`models.thinking`): each generator runs once per mode of ``thinking``; a
mode other than ``auto`` uses the model's own switch and names the system
(``qwen3/mirage@1 | no-think``), so one run compares a model thinking and not. A generator
that thinks (its chat template opens a think block, or ``on`` was asked) gets
``thinking_budget`` new tokens (default :data:`DEFAULT_THINKING_BUDGET`, or ``max_tokens``
when that is larger) instead of ``max_tokens``, the answer budget of models that do not think.
``auto`` and no budget leave the run's name, key and stored configuration as they were.

Re-running a run of the same name resumes it when the fields that decide its results
(:data:`IDENTITY_FIELDS`) are the same; ``threads``, ``concurrency``, ``max_errors``,
``adaptive_target``, ``adaptive_batch`` and ``budget`` may change between sessions (they decide
how fast and how far it goes, not what any item is). So may the report choices ``parity``,
``gold``, ``language_rule`` and ``language_detector`` (:mod:`engine.metrics.definitions`):
every item is scored under every choice, and these only record which one the run's report
shows. A resume that names one replaces the recorded one (``parity = "none"`` clears a
recorded parity); one it does not name keeps what the run recorded.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from engine.inflight import parse_max_errors
from engine.metrics.definitions import DefinitionError, resolve as resolve_definitions
from engine.prompts import get_template
from engine.suggest import did_you_mean
from models.endpoints import without_credentials
from models.rerankers import RerankerSpec
from models.thinking import MODES as THINKING_MODES

BASIC_SETTINGS = ("base", "oracle", "mixed")
_RETRIEVED = re.compile(r"^retrieved@(\d+)$")
IDENTITY_FIELDS = ("dataset", "generators", "settings", "retrievers", "reranker",
                   "rerank_depth", "template", "sample", "seed", "max_tokens", "n_ctx")
THINKING_FIELDS = ("thinking", "thinking_budget")
"""Identity fields that count only when set (``auto``, no budget): a run that asks for no
thinking mode is named and checked as before they existed."""


class ConfigError(ValueError):
    """A run configuration that cannot be run, with what is wrong in the message."""


def _as_list(value, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what}: expected a list of names, got {value!r}")
    return list(dict.fromkeys(v.strip() for v in value if v.strip()))


def _retrieved_k(setting: str) -> int | None:
    """k of a ``retrieved@k`` setting name, else None."""
    match = _RETRIEVED.match(setting)
    return int(match.group(1)) if match else None


DEFAULT_MAX_TOKENS = 64
"""New tokens per answer unless a run says otherwise: New run's field, the quick comparison and
``run --max-tokens`` start here (32 cut the quick comparison's answers short)."""


@dataclass
class RunConfig:
    dataset: str
    generators: list[str]
    settings: list[str] = field(default_factory=lambda: list(BASIC_SETTINGS))
    name: str | None = None
    retrievers: list[str] = field(default_factory=list)
    reranker: str | None = None
    rerank_depth: int = 20
    template: str = "mirage"
    sample: int | None = None
    seed: int = 0
    adaptive_target: float | None = None
    adaptive_until: str | None = None     # 'precision' (default) or 'difference'
    adaptive_batch: int | None = None
    budget: int | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    thinking: str = "auto"
    thinking_budget: int | None = None
    n_ctx: int | None = None
    threads: int | None = None
    concurrency: int | None = None
    max_errors: int | float | str | None = None
    parity: str | None = None
    gold: str | None = None
    language_rule: str | None = None
    language_detector: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.dataset, str) or not self.dataset.strip():
            raise ConfigError("dataset: a dataset name is required")
        self.dataset = self.dataset.strip()
        # a key written into an endpoint's URL is used in this process, never stored
        self.generators = [without_credentials(g) for g in _as_list(self.generators,
                                                                     "generators")]
        if not self.generators:
            raise ConfigError("generators: at least one generator is required")
        self.settings = _as_list(self.settings, "settings")
        if not self.settings:
            raise ConfigError("settings: at least one setting is required")
        for s in self.settings:
            if s not in BASIC_SETTINGS and (_retrieved_k(s) or 0) < 1:
                near = ("" if str(s).startswith("retrieved@") else
                        did_you_mean(str(s), [*BASIC_SETTINGS, "retrieved@5"]))
                raise ConfigError(f"settings: unknown setting {s!r}{near} (use base, oracle, "
                                  "mixed or retrieved@k with k >= 1)")
        self.settings = canonical_settings(self.settings)
        self.retrievers = _as_list(self.retrievers, "retrievers")
        if self.top_k and not self.retrievers:
            raise ConfigError("settings: retrieved@k needs at least one retriever "
                              "(retrievers = [...] or --retriever NAME)")
        if self.retrievers and not self.top_k:
            raise ConfigError("retrievers are given but no retrieved@k setting uses them")
        if self.reranker is not None:
            if isinstance(self.reranker, str):
                self.reranker = self.reranker.strip() or None
            if self.reranker is not None:
                try:
                    RerankerSpec.parse(self.reranker)
                except ValueError as exc:
                    raise ConfigError(str(exc)) from None
        if self.reranker and not self.retrievers:
            raise ConfigError("reranker: a reranker needs a retriever to rerank")
        if not isinstance(self.template, str):
            raise ConfigError(f"template: expected a name such as 'mirage', got "
                              f"{self.template!r}")
        self.template = get_template(self.template).id
        for name in ("rerank_depth", "max_tokens"):
            self._positive(name)
        if self.reranker and self.top_k and max(self.top_k) > self.rerank_depth:
            raise ConfigError(f"rerank_depth {self.rerank_depth} is smaller than the largest "
                              f"k ({max(self.top_k)}): the reranker keeps only its candidates")
        try:
            self.max_errors = parse_max_errors(self.max_errors)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.thinking = ",".join(thinking_modes(self.thinking))
        for name in ("sample", "budget", "adaptive_batch", "n_ctx", "threads", "concurrency",
                     "thinking_budget"):
            if getattr(self, name) is not None:
                self._positive(name)
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ConfigError(f"seed: expected an integer, got {self.seed!r}")
        self._in_range("seed")
        if self.adaptive_target is not None:
            target = self.adaptive_target
            if isinstance(target, bool) or not isinstance(target, (int, float)) \
                    or not 0 < target < 1:
                raise ConfigError(f"adaptive_target: expected a CI half-width between 0 and 1 "
                                  f"(e.g. 0.03), got {target!r}")
            self.adaptive_target = float(target)
        if self.adaptive_until not in (None, "precision", "difference"):
            raise ConfigError(f"adaptive_until: expected 'precision' or 'difference', got "
                              f"{self.adaptive_until!r}")
        if self.adaptive_until == "difference" and len(self.generators) < 2:
            raise ConfigError("adaptive_until 'difference': needs two generators (it samples "
                              "until the second one's EM difference from the first is decided)")
        try:
            resolve_definitions(None, **self.definition_choices())
        except DefinitionError as exc:
            raise ConfigError(str(exc)) from None
        if self.name is not None:
            self.name = str(self.name).strip() or None
        if self.name is None:
            self.name = self.default_name()

    def _positive(self, name: str) -> None:
        value = getattr(self, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name}: expected a positive integer, got {value!r}")
        self._in_range(name)

    def _in_range(self, name: str) -> None:
        """A count of the run file within its range (engine/counts.py), before any work."""
        from engine.counts import ANY_COUNT, RUN_FILE_COUNTS, CountError, check_count

        try:
            check_count(getattr(self, name), RUN_FILE_COUNTS.get(name, ANY_COUNT))
        except CountError as exc:
            raise ConfigError(f"{name}: {exc}") from None

    # ----------------------------------------------------------------------- derived

    @property
    def top_k(self) -> list[int]:
        """The k of every retrieved@k setting, ascending."""
        return sorted({k for s in self.settings if (k := _retrieved_k(s))})

    def definition_choices(self) -> dict:
        """The report choices this run records (None: not chosen)."""
        return {"parity": self.parity, "gold": self.gold, "language_rule": self.language_rule,
                "language_detector": self.language_detector}

    @property
    def adaptive(self) -> bool:
        return self.adaptive_target is not None or self.adaptive_until == "difference"

    @property
    def thinking_modes(self) -> list[str]:
        """The thinking modes each generator runs in (``["auto"]`` unless asked)."""
        return self.thinking.split(",")

    def identity(self) -> dict:
        """The fields that decide what every item of the run is (compared on resume); the
        thinking fields only when set (:data:`THINKING_FIELDS`)."""
        out = {name: getattr(self, name) for name in IDENTITY_FIELDS}
        out.update({name: getattr(self, name) for name in THINKING_FIELDS
                    if getattr(self, name) != _default(name)})
        return out

    def default_name(self) -> str:
        """The run's name when none is given: :func:`run_name` of its identity."""
        return run_name(self.identity())

    def as_json(self) -> dict:
        """Every field; the thinking fields only when set (stored configurations of runs
        that ask for no mode stay as they were)."""
        out = asdict(self)
        for name in THINKING_FIELDS:
            if out[name] == _default(name):
                del out[name]
        return out

    def differences(self, stored: dict) -> list[str]:
        """Identity fields whose stored value differs from this config's (settings compared
        in their canonical order: an older run may have stored them as typed)."""
        mine = {k: getattr(self, k) for k in IDENTITY_FIELDS + THINKING_FIELDS}
        theirs = {k: stored.get(k, _default(k)) for k in IDENTITY_FIELDS + THINKING_FIELDS}
        if isinstance(theirs["settings"], list):
            try:
                theirs["settings"] = canonical_settings(theirs["settings"])
            except (TypeError, ValueError):
                pass
        return [k for k in IDENTITY_FIELDS + THINKING_FIELDS if theirs[k] != mine[k]]

    # ----------------------------------------------------------------------- loading

    @classmethod
    def from_dict(cls, data: dict, **overrides) -> "RunConfig":
        """From a TOML table or JSON object; ``overrides`` (not None) replace its keys."""
        known = {f.name for f in fields(cls)}
        merged = {**data, **{k: v for k, v in overrides.items() if v is not None}}
        unknown = sorted(set(merged) - known)
        if unknown:
            raise ConfigError(f"unknown key(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(known))}")
        for key in ("dataset", "generators"):
            if key not in merged:
                raise ConfigError(f"{key}: required")
        return cls(**merged)

    @classmethod
    def from_toml(cls, path: str | Path, **overrides) -> "RunConfig":
        path = Path(path).expanduser()
        try:
            if not stat.S_ISREG(path.stat().st_mode):   # a FIFO would wait forever
                raise ConfigError(f"{path}: cannot read the run file (not a regular file)")
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the run file ({exc.strerror})") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                              f"offset {exc.start})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
        except RecursionError:          # tomllib recurses once per nested array or table
            raise ConfigError(f"{path}: not valid TOML (nested too deeply)") from None
        try:
            return cls.from_dict(data, **overrides)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None


DEFAULT_THINKING_BUDGET = 1024
"""New tokens of a generator that thinks when the run sets no ``thinking_budget``: room for
the few hundred tokens small reasoning models think on a RAG question, then the answer."""


def thinking_modes(value) -> list[str]:
    """The modes of a ``thinking`` value (``"on,off"``, a list, ``"auto"``), each once, in
    one order whatever order they were given in (auto, on, off: ``off,on`` and ``on,off`` are
    one run); ConfigError naming the value, with a did-you-mean, for an unknown one."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"thinking: expected auto, on, off or a list of them, got {value!r}")
    modes = list(dict.fromkeys(v.strip().lower() for v in value if v.strip()))
    if not modes:
        raise ConfigError("thinking: expected auto, on, off or a list of them (got nothing)")
    for mode in modes:
        if mode not in THINKING_MODES:
            raise ConfigError(f"thinking: unknown mode {mode!r}"
                              f"{did_you_mean(mode, THINKING_MODES)} (use "
                              f"{', '.join(THINKING_MODES)}; a list such as on,off runs each "
                              "generator in both)")
    return sorted(modes, key=THINKING_MODES.index)


def canonical_settings(settings: list[str]) -> list[str]:
    """Settings in one order whatever order they were given in: base, oracle, mixed, then
    retrieved@k by k (the form and ``--settings mixed,base`` make the same run)."""
    def rank(setting: str) -> tuple[int, int]:
        if setting in BASIC_SETTINGS:
            return BASIC_SETTINGS.index(setting), 0
        return len(BASIC_SETTINGS), _retrieved_k(setting) or 0
    return sorted(settings, key=rank)


def run_name(identity: dict) -> str:
    """The one naming rule for a run's configuration, used by the CLI and the TUI alike:
    ``{dataset}-{generators}-{hash8}``, the hash over the identity fields
    (:data:`IDENTITY_FIELDS`). The same plan gets the same name however it was made, so
    starting it again (from either) resumes it; the dataset should be given the way
    :func:`engine.runs.plan.dataset_reference` writes it (``demo`` for the newest version)."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode())
    return f"{identity['dataset']}-{'+'.join(identity['generators'])}-{digest.hexdigest()[:8]}"


def _default(name: str):
    for f in fields(RunConfig):
        if f.name == name:
            return f.default_factory() if callable(f.default_factory) else f.default
    return None


def config_toml(config: RunConfig, comment: str = "") -> str:
    """``config`` as the run file ``mirage-tui run --config`` reads back into an equal
    RunConfig: every key that is set, in the order of the fields (``comment``: a first line)."""
    lines = [f"# {line}" for line in comment.splitlines()]
    for f in fields(RunConfig):
        value = getattr(config, f.name)
        if value is None or (isinstance(value, list) and not value and f.name != "settings"):
            continue
        if f.name in THINKING_FIELDS and value == _default(f.name):
            continue
        lines.append(f"{f.name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)     # a TOML basic string
    return "[" + ", ".join(_toml_value(v) for v in value) + "]"
