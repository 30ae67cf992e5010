"""A run report as plain text, in the shape of MIRAGE's tables (Park et al., Tables 1 and 2).

Every number is a percentage with its 95% CI (:func:`engine.stats.interval`), ``12.3 [9.1, 15.8]``, and every row or
cell says its n. Reads the typed :class:`engine.results.report.RunReport` (never its JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.metrics.adaptability import OVERALL_MEANING
from engine.results.records import parse_retrieved, retriever_name
from engine.runs.header import RunHeader
from engine.units import COUNT_METRICS, fmt_interval
from engine.stats import format_interval
from engine.text_fit import fit_table, wrap_lines
from models.served_by import backend_words

if TYPE_CHECKING:
    from engine.results.adaptability_rows import AdaptabilityRow
    from engine.results.report import RunReport
    from engine.stats import Estimate

ADAPTABILITY_COLUMNS = (("nv", "NV↓"), ("ca", "CA↑"), ("ci", "CI↓"), ("cm", "CM↓"),
                        ("overall", "Overall↑"))
RETRIEVAL_COLUMNS = (("p", "P"), ("r", "R"), ("f1", "F1"), ("ndcg", "NDCG"),
                     ("ndcg_mirage", "NDCG(ref)"))


def pct(value: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """``12.3 [9.1, 15.8]`` (percent: :func:`engine.units.fmt_interval`), ``–`` when
    there is no value."""
    return fmt_interval(value, lo, hi)


def num(value: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """``1.25 [0.80, 1.70]``, for means that are not rates; ``–`` when there is no value."""
    return format_interval(value, lo, hi, digits=2)


def est_pct(e: Estimate) -> str:
    """An estimate as :func:`pct` writes it (no n)."""
    return pct(e.value, e.lo, e.hi)


def _est(e: Estimate, metric: str = "") -> str:
    return num(e.value, e.lo, e.hi) if metric in COUNT_METRICS else est_pct(e)


def table(rows: list[list[str]], right: set[int] = frozenset(),
          width: int | None = None, keys: int = 1) -> list[str]:
    """Left-aligned columns (right-aligned where asked), two spaces apart, within ``width``
    cells when given (:func:`engine.text_fit.fit_table`: cells wrap, never cut; panels
    repeat the first ``keys`` columns)."""
    return fit_table(rows, right, width, keys=keys)


def short_setting(setting: str) -> str:
    """A setting as tables show it: the retriever's readable name without its ``#hash``
    (Table 2's notes map each name to its full label)."""
    retrieved = parse_retrieved(setting)
    if retrieved and retrieved[1]:
        return f"retrieved@{retrieved[0]}:{retriever_name(retrieved[1])}"
    return setting


def row_name(entry: AdaptabilityRow) -> str:
    """An adaptability row's name as tables show it: the system, plus its mixed-like setting
    without the retriever's hash unless it is ``mixed``."""
    mixed = entry.mixed_setting
    return entry.run_system + ("" if mixed == "mixed" else f" | {short_setting(mixed)}")


def _context(entry: AdaptabilityRow) -> tuple[str, str]:
    if entry.retriever or entry.top_k:
        name = entry.retriever_name or entry.retriever or "retrieved"
        return name, str(entry.top_k or "-")
    return "mixed (pool)", "-"


def concurrency_text(header: RunHeader) -> str:
    """The run header's requests in flight per generator (``smollm2 4``), when any generator
    had more than one out at once; empty otherwise."""
    concurrency = header.concurrency
    if not any(
            isinstance(n, int) and n > 1 for n in concurrency.values()):
        return ""
    return ", ".join(f"{name} {n}" for name, n in concurrency.items())


def backends(header: RunHeader) -> dict[str, str]:
    """``{generator: backend}`` from the run header's model identities (``llama.cpp``,
    ``llama-server``, ``http``, ...; engine/runs/header.py records them)."""
    return {name: model.backend for name, model in header.models.items() if model.backend}


def backend_text(header: RunHeader) -> str:
    """The backend the run's generators ran on: ``llama-server`` when they share one, else
    ``smollm2 llama.cpp, qwen llama-server``; empty when none is recorded."""
    found = backends(header)
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    return ", ".join(f"{name} {backend}" for name, backend in found.items())


def served_text(header: RunHeader) -> str:
    """What served the run's generators, with their device where it says more
    (:func:`models.served_by.backend_words`): ``llama.cpp on CPU`` when they share one, else
    ``smollm2 llama.cpp on CPU, qwen HTTP endpoint``; empty when none is recorded (Live's
    title)."""
    found = {name: backend_words(model.backend, model.device)
             for name, model in header.models.items() if model.backend}
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    return ", ".join(f"{name} {words}" for name, words in found.items())


def backend_segments(segments: list[tuple[str, str]],
                     report: RunReport) -> list[tuple[str, str]]:
    """A run's summary (``comparison.summary_segments``) with its backend named after the
    title and the run's row line."""
    text = backend_text(report.header)
    if not text:
        return segments
    at = 2 if len(segments) > 1 and segments[1][0].startswith("\ncreated") else 1
    return [*segments[:at], (f"\nbackend {text}", ""), *segments[at:]]


def _title(report: RunReport) -> list[str]:
    items = report.items
    errors = items.errors  # done counts them: finished items, generated or failed
    extra = [f"{errors} failed" if errors else "",
             f"{items.truncated} truncated" if items.truncated else ""]
    extra_text = ", ".join(e for e in extra if e)
    lines = [f"Run {report.run} on {report.dataset}: {report.status}, "
             f"{items.done}/{items.total} items done"
             + (f" ({extra_text})" if extra_text else "")]
    if errors:
        lines.append(f"{errors} item{'s' if errors != 1 else ''} failed (recorded with the error; "
                     "running the run again retries them).")
    header = report.header
    backend = backend_text(header)
    if backend:
        lines.append(f"Backend: {backend}.")
    overlap = concurrency_text(header)
    if overlap:
        lines.append(f"Requests in flight: {overlap} (a backend that batches requests may "
                     "change a greedy text slightly).")
    if report.partial:
        lines.append(f"PARTIAL: status {report.status}, {items.done} of {items.total} "
                     f"items done ({items.pending} pending); the numbers cover the items "
                     "stored so far.")
    sample = report.sample
    if sample:
        kind = "an adaptive sample" if sample.mode == "adaptive" else "a sample"
        lines.append(f"Computed on {kind} of {sample.queries:,} of {sample.of:,} "
                     f"queries (stratified by source and language, seed {sample.seed}).")
    lines.append(f"Percentages with 95% CIs over queries (exact Clopper–Pearson for rates; "
                 f"scores: bootstrap, {report.n_boot} resamples, seed {report.seed}, no "
                 "narrower than Clopper–Pearson); n = queries counted.")
    return lines + report.definition_lines()


def _adaptability_table(report: RunReport, by: str | None, width: int | None) -> list[str]:
    head = ["System", "Context", "k"] + ([by.capitalize()] if by else []) + ["n"]
    head += [title for _, title in ADAPTABILITY_COLUMNS]
    rows = [head]
    for entry in report.systems:
        context, k = _context(entry)
        groups = entry.by(by).items() if by else [(None, entry)]
        for group, values in groups:
            rows.append([entry.run_system, context, k] + ([group] if by else [])
                        + [str(values.n)]
                        + [est_pct(values.share(key)) for key, _ in ADAPTABILITY_COLUMNS])
    n_col = 4 if by else 3
    lines = ["Table 1. RAG adaptability (MIRAGE §1, EM_loose labels; NV+CA+CI+CM = 100)"
             + (f", by {by}" if by else "")]
    if len(rows) == 1:
        return lines + ["  (no system has base, oracle and a mixed-like setting yet)"]
    return lines + table(rows, right={n_col}, width=width) + [OVERALL_MEANING + "."]


def _patterns(report: RunReport) -> list[str]:
    lines = ["Patterns (b base, o oracle, m the mixed-like setting; EM_loose) and items left out"]
    for entry in report.systems:
        counts = ", ".join(f"{k} {v}" for k, v in entry.patterns.items())
        left = entry.left_out
        lines.append(f"  {row_name(entry)}: {counts} (n={entry.n}); left out "
                     f"{left.total} ({left.errored} errored, {left.missing} missing)")
    return lines


def _retrieval_table(report: RunReport, by: str | None, width: int | None) -> list[str]:
    if not report.retrieval:
        return []
    head = ["Retriever", "k"] + ([by.capitalize()] if by else []) + ["n"]
    head += [title for _, title in RETRIEVAL_COLUMNS]
    rows = [head]
    for entry in report.retrieval:
        groups = entry.by(by).items() if by else [(None, entry)]
        for group, values in groups:
            for k in entry.ks:
                rows.append([entry.retriever_name or entry.retriever, str(k)]
                            + ([group] if by else [])
                            + [str(values.n)]
                            + [_est(values.metrics[f"{key}@{k}"])
                               for key, _ in RETRIEVAL_COLUMNS])
    gold = report.gold
    lines = [f"Table 2. Retrieval over the run's queries (MIRAGE §1; relevant = the query's "
             f"gold chunks, {gold}; NDCG(ref) = the reference code's NDCG)"
             + (f", by {by}" if by else "")]
    for e in report.retrieval:
        if e.retriever_name != e.retriever:
            lines.append(f"  {e.retriever_name} is {e.retriever}")
        if e.missing:
            lines.append(f"  {e.retriever_name}: {e.missing} of the run's queries have no "
                         "stored ranking (left out)")
        if e.no_gold:
            lines.append(f"  {e.retriever_name}: {e.no_gold} queries have no relevant "
                         "chunk (kept, recall 0)")
    return lines + table(rows, right={3 if by else 2}, width=width)


def _accuracy_table(report: RunReport, width: int | None) -> list[str]:
    rows = [["System", "Setting", "Accuracy", "n"]]
    for system, settings in report.accuracy.items():
        for setting, e in settings.items():
            rows.append([system, short_setting(setting), _est(e), str(e.n)])
    if len(rows) == 1:
        return []
    return ["Accuracy per setting (EM_loose)"] + table(rows, right={3}, width=width)


def _replies_table(report: RunReport, width: int | None) -> list[str]:
    """Answers cut at the token limit and reasoning tokens per system (only a run with a cut
    answer or a reasoning model's thinking has them)."""
    entries = report.replies
    if not entries:
        return []
    rows = [["System", "Cut at the limit", "While thinking", "Reasoning tokens (mean)", "n"]]
    for e in entries:
        rate, tokens = e.cut_rate, e.reasoning_tokens
        rows.append([e.system, f"{e.cut} ({est_pct(rate)})",
                     str(e.cut_while_thinking), num(tokens.value, tokens.lo, tokens.hi),
                     str(e.n)])
    return (["Replies: answers cut at the token limit (scored as given: an answer cut while "
             "thinking is empty) and the thinking's tokens (95% CIs; n = answers)"]
            + table(rows, right={2, 4}, width=width))


def _metrics_tables(report: RunReport, width: int | None) -> list[str]:
    lines = []
    for system, settings in report.metrics.items():
        names = list(dict.fromkeys(m for per in settings.values() for m in per))
        if not names:
            continue
        rows = [["Metric"] + [short_setting(s) for s in settings]]
        for metric in names:
            rows.append([metric] + [f"{_est(settings[s][metric], metric)} "
                                    f"n={settings[s][metric].n}" for s in settings])
        lines += ["", f"Metrics per setting, {system} (mean; n = items with a value; "
                  "correct_language only counts replies long enough to detect)"]
        lines += table(rows, width=width)
    return lines


def format_report(report: RunReport, by: str | None = None, width: int | None = None) -> str:
    """The report as text: header (with a PARTIAL banner and the sample note when they apply),
    Table 1 (adaptability per system × retriever × top-k), the pattern counts, Table 2
    (retrieval), accuracy per setting and every other metric per setting.
    ``by="language"`` or ``"source"`` splits Tables 1 and 2 by that query field. With
    ``width``, no line is wider: tables wrap their cells, other lines wrap at spaces."""
    if by not in (None, "language", "source"):
        raise ValueError(f"by must be 'language' or 'source', got {by!r}")
    parts = [_title(report), _adaptability_table(report, by, width)]
    if report.systems:
        parts.append(_patterns(report))
    parts += [_retrieval_table(report, by, width), _accuracy_table(report, width),
              _replies_table(report, width)]
    if report.notes:
        parts.append(["Notes"] + [f"  {note}" for note in report.notes])
    text = "\n\n".join("\n".join(p) for p in parts if p)
    metrics = _metrics_tables(report, width)
    return wrap_lines(text + ("\n" + "\n".join(metrics) if metrics else ""), width) + "\n"
