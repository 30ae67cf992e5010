"""What a model runs at on this machine, as measured in this workspace: the speeds every time
estimate starts from (:mod:`engine.runs.estimates` for runs, :mod:`engine.arena.judging.estimate`
for judging, :mod:`engine.runs.live_eta` while a run goes), apart from the estimating itself.

A model's speed (:class:`Speed`) is the newest measurement of it in this workspace, under
any of its names (:func:`model_names`: ``smollm2`` is ``smollm2-135m-instruct``; a check is
stored under the model's one spelling, :func:`stored_name`, and one stored under another
spelling before is still read, :func:`checked_names`):

- its latest model check (``c`` on Models, ``mirage-tui models check``: one short generation,
  prompt and generated tokens per second), kept in the ``model_checks`` table
  (:func:`record_model_check`, :func:`latest_model_speed`); or
- its stored generations (runs, the running one included: every item is stored as it
  finishes): those of the run that made the newest one (the last :data:`RECENT` of any run
  when it has fewer than :data:`MIN_MEASURED`), prompt and generated rates fitted together
  (least squares of seconds ≈ evaluated / prompt_tps + generated / gen_tps); or
- its judge calls (arena judging, judge calibration: the ``judgments`` cache keeps each call's
  seconds and the texts it was shown): the prompt rate over their prompts' tokens (their texts'
  bytes at the model's bytes a token, plus the template, :data:`JUDGE_TEMPLATE_TOKENS`) and
  their verdicts; or
- defaults for a 100 MB model file on an idle machine, scaled down for bigger files.

Whichever is newest wins. Each measurement keeps the machine's load it was made under (a model
check's result, a run's or an arena's session in its header); :func:`at_load` corrects the
speed for the load now (:mod:`engine.machine_load`: ×1.5 with one of two cores busy) and
says so (:attr:`Speed.load_note`).

:func:`planned_backend` says what will serve a model (an endpoint, llama-server, our own host)
and :func:`prompt_cache` whether it keeps the previous prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping

from engine import machine_load
from engine.machine_load import MachineLoad
from engine.store import Store
from engine.store import speeds as speed_rows

DEFAULT_PROMPT_TPS = 600.0
DEFAULT_GEN_TPS = 70.0
DEFAULT_SPEED_SIZE = 100e6
"""The default speeds are for a model file of about this size (SmolLM2-135M Q4_1 is 98 MB);
bigger files get them scaled down in proportion to their size."""
CHARS_PER_TOKEN = 4.0   # UTF-8 bytes per token, for estimates before any model is loaded
RECENT = 500            # stored generations a model's speed is measured on
MIN_MEASURED = 3        # fewer stored generations than this: not a measurement
JUDGE_TEMPLATE_TOKENS = 150   # the pairwise template's own words, roughly
JUDGE_TAIL_TOKENS = 60
"""A judge call on the query of the call before it (the next battle of that query, the other
order of the same battle) evaluates only what follows the query and its documents: the two
answers and the template's tail, about this many tokens, plus the part of the prompt cache's
last block (64 tokens, ``models.llama.generator.PROMPT_BLOCK``) that is evaluated again."""



@dataclass(frozen=True)
class Speed:
    prompt_tps: float
    gen_tps: float
    source: str              # 'measured (N generations in the store)', 'model check …', 'default …'
    answer_tokens: float | None = None     # measured mean tokens an answer (None: max_tokens)
    prompt_tokens: Mapping[str, float] = field(default_factory=dict)
    """Measured mean prompt tokens evaluated an item, by setting (``base``, ``retrieved@3``)."""
    bytes_per_token: float | None = None   # the model's prompts' UTF-8 bytes a token, measured
    load: MachineLoad | None = None        # the machine's load when it was measured
    factor: float = 1.0                    # × the seconds for the load now (:func:`at_load`)
    load_note: str = ""                    # what the estimate says of the load

    @property
    def text_bytes_per_token(self) -> float:
        """Bytes a token to size a prompt by: measured, else :data:`CHARS_PER_TOKEN`."""
        return self.bytes_per_token or CHARS_PER_TOKEN


# --------------------------------------------------------------------------- model checks read back

def latest_model_check(store: Store, model: str) -> dict | None:
    """The newest stored check of ``model`` (under any of :func:`checked_names`): its result
    dict plus ``checked_at``."""
    row = speed_rows.newest_check(store, checked_names(store, model))
    if row is None:
        return None
    return {**json.loads(row["result"]), "checked_at": row["checked_at"]}


def latest_model_checks(store: Store) -> dict[str, dict]:
    """Every checked model's newest check, by its one spelling (:func:`stored_name`): its
    result dict plus ``checked_at`` (the Models screen shows them after a relaunch)."""
    out: dict[str, dict] = {}
    for r in speed_rows.newest_checks(store):
        name = stored_name(r["model"])
        if name not in out or r["checked_at"] > out[name]["checked_at"]:
            out[name] = {**json.loads(r["result"]), "checked_at": r["checked_at"]}
    return out


def latest_model_speed(store: Store, model_key: str) -> tuple[Speed, str] | None:
    """``(speed, checked_at)`` from the newest successful check of generator ``model_key``
    (its catalog name, a path or an endpoint spec, as a run names it), or None."""
    r = speed_rows.newest_speed_check(store, checked_names(store, model_key))
    if r is None:
        return None
    gen_tps = float(r["gen_tps"])
    prompt_tps = float(r["prompt_tps"] or gen_tps * DEFAULT_PROMPT_TPS / DEFAULT_GEN_TPS)
    where = f" · {r['device']}" if r["device"] else ""
    try:
        load = MachineLoad.from_json(json.loads(r["result"]).get("machine_load"))
    except (TypeError, ValueError, AttributeError):
        load = None
    return (Speed(prompt_tps, gen_tps, f"model check {r['checked_at']}{where}", load=load),
            r["checked_at"])


def model_names(name: str) -> tuple[str, ...]:
    """The names ``name``'s measurements may be stored under: its one spelling, the name a
    loaded model of it calls itself (:attr:`models.catalog.ModelRef.stored_names`: a GGUF
    file's stem, an endpoint's model id), then the text as given; the text alone when it
    matches several models or the catalog cannot be read."""
    from models.catalog import resolve_model

    try:
        names = resolve_model(name.strip()).stored_names
    except Exception:  # noqa: BLE001 - several models match, a bad catalog: as typed only
        names = ()
    return tuple(dict.fromkeys(n for n in (*names, name) if n))


def stored_name(name: str) -> str:
    """The one name a measurement of the model ``name`` is stored under: its one spelling
    (:func:`models.catalog.model_name`), the text as given when it matches several models or
    the catalog cannot be read."""
    from models.catalog import model_name

    try:
        return model_name(name)
    except Exception:  # noqa: BLE001 - several models match, a bad catalog: as typed
        return name


def checked_names(store: Store, name: str) -> tuple[str, ...]:
    """:func:`model_names` of ``name``, and every other name its model checks are stored under
    that spells the same model (checks were once stored as the name was typed: ``models check
    smollm2`` kept ``smollm2``)."""
    names = model_names(name)               # its one spelling first
    if not names:
        return (name,)
    return names + tuple(m for m in speed_rows.checked_models(store)
                         if m not in names and stored_name(m) == names[0])


# --------------------------------------------------------------------------- defaults, backends

def model_file_size(name: str) -> int | None:
    """Bytes of generator ``name``'s GGUF file (a packaged model's whole size even before its
    parts are assembled into one file), or None."""
    from models.base import ModelError
    from models.catalog import resolve_model

    try:
        ref = resolve_model(name)
        if ref.kind == "packaged":
            header = ref.spec.header_source()
            return header[1] if header is not None else None
        path = ref.path if ref.kind in ("file", "catalog") else None
        return path.stat().st_size if path is not None and path.is_file() else None
    except (OSError, ModelError):
        return None


def _default_speed(name: str) -> Speed:
    size = model_file_size(name)
    scale = min(1.0, DEFAULT_SPEED_SIZE / size) if size else 1.0
    return Speed(DEFAULT_PROMPT_TPS * scale, DEFAULT_GEN_TPS * scale,
                 f"assumed {DEFAULT_PROMPT_TPS:.0f}/{DEFAULT_GEN_TPS:.0f} tok/s for a 100 MB "
                 "model on an idle machine"
                 + (f", ×{scale:.2f} for its {size / 1e6:.0f} MB" if scale < 1 else "")
                 + " (no check, run or judging of it here yet; its first item's speed replaces this)")


def planned_backend(name: str) -> tuple[str, int]:
    """``(backend, slots)`` that generator ``name`` will run on: ``http`` (an endpoint: its
    server's slots are unknown, :data:`~engine.inflight.DEFAULT_ENDPOINT_CONCURRENCY`),
    ``llama-server`` (:data:`LLAMA_SERVER_SLOTS`), else our own host or an in-process model
    (``llama.cpp``, one request at a time)."""
    import os

    from engine.inflight import DEFAULT_ENDPOINT_CONCURRENCY
    from models.catalog import resolved_endpoint
    from models.host.supervisor import host_backend

    try:
        if resolved_endpoint(name) is not None:          # no catalog scan
            return "http", DEFAULT_ENDPOINT_CONCURRENCY
        if os.environ.get("MIRAGE_HOSTING", "").strip().lower() == "in-process":
            return "llama.cpp", 1
        backend = host_backend()
    except Exception:  # noqa: BLE001 - a malformed endpoints file: the run will say so
        return "llama.cpp", 1
    return (backend, LLAMA_SERVER_SLOTS) if backend == "llama-server" else (backend, 1)


LLAMA_SERVER_SLOTS = 4        # models/host/server.py's --slots default


# --------------------------------------------------------------------------- measured

def _setting_key(setting: str | None) -> str | None:
    """``retrieved@3:label#hash`` → ``retrieved@3``; base/oracle/mixed as they are."""
    return setting.split(":", 1)[0] if setting else None


def _fitted(rows: list, name: str) -> Speed:
    """Both rates from stored rows of (evaluated, generated, seconds); see the module doc.
    A robust fit: :func:`scipy.optimize.least_squares` with the Cauchy loss (an M-estimator:
    residuals beyond its scale, half the median item's seconds, count about logarithmically),
    from the median row's seconds per token. An item that ran while the machine stalled (a
    burst of other work, a model's first call) then barely moves the rates, where under plain
    least squares one such item of six tripled the time estimated for the next run.
    When the rows are too alike to tell the two rates apart, a generated token is taken to
    cost as much as 600/70 prompt tokens (the defaults' ratio)."""
    import numpy as np
    from scipy.optimize import least_squares

    data = np.array([[r[0] or 0, r[1] or 0, r[2]] for r in rows], dtype=float)
    source = f"measured ({len(data)} generations in the store)"
    ratio = DEFAULT_PROMPT_TPS / DEFAULT_GEN_TPS
    weighted = data[:, 0] + ratio * data[:, 1]
    unit = float(np.median(data[:, 2][weighted > 0] / weighted[weighted > 0])) \
        if (weighted > 0).any() else 0.0
    if np.linalg.matrix_rank(data[:, :2]) == 2 and unit > 0:
        fit = least_squares(lambda w: data[:, :2] @ w - data[:, 2], x0=[unit, unit * ratio],
                            bounds=([1e-12, 1e-12], [np.inf, np.inf]), loss="cauchy",
                            f_scale=max(1e-3, 0.5 * float(np.median(data[:, 2]))))
        per_prompt, per_gen = fit.x
        if per_prompt > 1e-9 and per_gen > 1e-9:
            return Speed(1 / per_prompt, 1 / per_gen, source)
    rate = (data[:, 0].sum() + ratio * data[:, 1].sum()) / data[:, 2].sum()
    return Speed(rate, rate / ratio, source)


def _stamp(text: str | None) -> str:
    """A stored time as ``YYYY-MM-DD HH:MM:SS`` (judge calls keep ISO 8601 with a ``T``), so
    the measurements' times compare."""
    return (text or "")[:19].replace("T", " ")


def _session_load(loads: list) -> MachineLoad | None:
    """The machine load the newest session of a run's or an arena's header started under
    (``loads``: each session's, newest first, as :func:`engine.store.speeds.session_loads`
    reads them)."""
    return next((load for load in map(MachineLoad.from_json, loads) if load is not None), None)


def _text_bytes(value) -> int:
    """UTF-8 bytes of the texts in a judge call's fields (strings, lists, dicts)."""
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, dict):
        return sum(_text_bytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_text_bytes(v) for v in value)
    return 0


def judge_call_tokens(text_bytes: float, bytes_per_token: float, cached_bytes: float = 0.0
                      ) -> float:
    """A judge call's prompt tokens evaluated: its texts (query, documents, answers) at the
    model's bytes a token, plus the template's own words (:data:`JUDGE_TEMPLATE_TOKENS`);
    with ``cached_bytes`` (the query and documents of the call before it, in the model's
    prompt cache) only the rest and the template's tail (:data:`JUDGE_TAIL_TOKENS`)."""
    if cached_bytes:
        return max(0.0, text_bytes - cached_bytes) / bytes_per_token + JUDGE_TAIL_TOKENS
    return text_bytes / bytes_per_token + JUDGE_TEMPLATE_TOKENS


def judge_prefix_bytes(query: str | None, documents) -> int:
    """UTF-8 bytes of what a judge prompt shares with the next call on the same query: the
    query and its documents (a list of dicts with ``text``, or the formatted text)."""
    if isinstance(documents, (list, tuple)):
        documents = [d.get("text") if isinstance(d, dict) else d for d in documents]
    return _text_bytes(query or "") + _text_bytes(documents or "")


def prompt_cache(name: str) -> bool:
    """Whether ``name``'s backend keeps the previous prompt (our host and llama-server: a
    judge's next call on the same query evaluates only its answers); an endpoint: not known,
    so no."""
    return planned_backend(name)[0] != "http"


def _judged(store: Store, names: tuple[str, ...], bytes_per_token: float, cached: bool
            ) -> tuple[Speed, str] | None:
    """``(speed, when)`` from the judge's newest :data:`RECENT` timed calls (module doc): the
    prompt rate over their prompts' tokens evaluated (``cached``: a call on the query of the
    call before it evaluates only its answers, :func:`judge_call_tokens`), each verdict's
    tokens counted at the defaults' prompt/generated ratio (a label read from probabilities
    is one token)."""
    rows = speed_rows.timed_judgments(store, names, RECENT)
    if len(rows) < MIN_MEASURED:
        return None
    ratio = DEFAULT_PROMPT_TPS / DEFAULT_GEN_TPS
    work = seconds = 0.0
    before = None                               # the query of the call before, in time
    for r in reversed(rows):
        try:
            fields = json.loads(r["fields"])
        except (TypeError, ValueError):
            continue
        verdict = (1 if r["method"] == "logits"
                   else max(1.0, len(r["raw"] or "") / CHARS_PER_TOKEN))
        query = fields.get("query") if isinstance(fields, dict) else None
        shared = (judge_prefix_bytes(query, fields.get("documents"))
                  if cached and query is not None and query == before else 0)
        before = query
        work += judge_call_tokens(_text_bytes(fields), bytes_per_token, shared) + ratio * verdict
        seconds += r["seconds"]
    if seconds <= 0.5 or work <= 0:
        return None
    rate = work / seconds
    load = _session_load(speed_rows.newest_arena_session_loads(store, names))
    return (Speed(rate, rate / ratio, f"measured judging ({len(rows)} judge calls in the "
                                      "store)", load=load), _stamp(rows[0]["created_at"]))


def _judging(speed: Speed) -> bool:
    """A speed read from judge calls (their prompts timed; a verdict is one token)."""
    return speed.source.startswith("measured judging")


def _generated(store: Store, rows: list) -> tuple[Speed, str] | None:
    """``(speed, when)`` fitted on the stored generations ``rows`` (newest first) of the run
    that made the newest one (all of them when it has too few), with that run's load."""
    if len(rows) < MIN_MEASURED or sum(r[2] for r in rows) <= 0.5:
        return None
    newest_run = rows[0][5]
    own = [r for r in rows if r[5] == newest_run] if newest_run is not None else []
    own = own if len(own) >= MIN_MEASURED and sum(r[2] for r in own) > 0.5 else rows
    speed = _fitted(own, "")
    load = (_session_load(speed_rows.run_session_loads(store, newest_run))
            if newest_run is not None else None)
    return Speed(speed.prompt_tps, speed.gen_tps, speed.source, load=load), _stamp(rows[0][3])


def measured_speeds(store: Store, generators: Iterable[str]) -> dict[str, Speed]:
    """Each generator's :class:`Speed`: the newest of its latest model check, its stored
    generations and its judge calls, else defaults; with the token counts its stored
    generations show. Not corrected for the load now (:func:`at_load`)."""
    out = {}
    for name in generators:
        names = model_names(name)
        # per name, the newest first down the generations_by_model index: no scan, no sort
        rows = sorted((r for model in names
                       for r in speed_rows.timed_generations(store, model, RECENT)),
                      key=lambda r: r[3], reverse=True)[:RECENT]
        sized = [(r[6], r[7]) for r in rows if r[6] and r[7]]
        per_token = (sum(b for b, _ in sized) / sum(t for _, t in sized)
                     if len(sized) >= MIN_MEASURED else None)
        found = [m for m in (latest_model_speed(store, name), _generated(store, rows),
                             _judged(store, names, per_token or CHARS_PER_TOKEN,
                                     prompt_cache(name)))
                 if m is not None]
        found.sort(key=lambda m: _stamp(m[1]), reverse=True)       # the newest first
        speed = found[0][0] if found else _default_speed(name)
        generating = next((m[0] for m in found if not _judging(m[0])), None)
        if _judging(speed) and generating is not None:
            # judge calls time the prompt only: the generation rate is the newest run's or
            # check's, at the judging's pace against its prompt rate
            speed = replace(speed, gen_tps=generating.gen_tps * speed.prompt_tps
                            / generating.prompt_tps)
        extra: dict = {"bytes_per_token": per_token}
        if len(rows) >= MIN_MEASURED:
            by_setting: dict[str, list[float]] = {}
            for r in rows:
                if r[4] is not None and r[0] is not None:
                    by_setting.setdefault(_setting_key(r[4]), []).append(r[0])
            extra.update(answer_tokens=sum(r[1] or 0 for r in rows) / len(rows),
                         prompt_tokens={k: sum(v) / len(v) for k, v in by_setting.items()
                                        if len(v) >= MIN_MEASURED})
        out[name] = replace(speed, **extra)
    return out


def at_load(speeds: Mapping[str, Speed], load: MachineLoad | None) -> dict[str, Speed]:
    """``speeds`` corrected for the machine's load ``load`` (now): each slowed by
    :func:`engine.machine_load.correction` against the load it was measured under, with
    the words the estimate shows (:attr:`Speed.load_note`)."""
    out = {}
    for name, speed in speeds.items():
        factor = machine_load.correction(speed.load, load)
        out[name] = replace(speed, prompt_tps=speed.prompt_tps / factor,
                            gen_tps=speed.gen_tps / factor, factor=factor,
                            load_note=machine_load.correction_words(factor, speed.load, load))
    return out


def speeds_now(store: Store, generators: Iterable[str], wait: bool = True
               ) -> dict[str, Speed]:
    """:func:`measured_speeds` corrected for the load now (:func:`at_load`; ``wait``: a
    1-second probe unless one was made just now, else the load average)."""
    return at_load(measured_speeds(store, generators), machine_load.load_now(wait))
