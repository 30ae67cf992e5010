"""One run's page: everything :func:`engine.results.report.build_report` computes (the numbers
``mirage-tui report --json`` prints, embedded as they are), drawn: the run header, the answer
metrics per system and setting, the adaptability chart, the (b, o, m) patterns, retrieval at
1/3/5, the per-language and per-source breakdowns, the run's arena leaderboard when it has
one, and the item browser."""

from __future__ import annotations

from typing import Sequence

from engine.metrics.adaptability import OVERALL_MEANING, PATTERN_KEYS
from engine.results.html.items import ITEM_LIMIT, item_data
from engine.results.html.page import definition_list, esc, figure, notes, page, table
from engine.results.html.svg import Interval, bar_chart
from engine.results.report import RunReport, build_report
from engine.results.adaptability_rows import AdaptabilityGroup, AdaptabilityRow
from engine.results.text import backend_text, num, row_name, short_setting
from engine.stats import N_BOOT, SEED
from engine.store import Store
from engine.runs.lookup import RunInfo

ANSWER_METRICS = (("em_loose", "EM"), ("f1_mirage", "F1"), ("char3_recall", "char-3gram"),
                  ("correct_language", "correct language"))
SHARES = (("nv", "NV", "noise vulnerability ↓"), ("ca", "CA", "context acceptability ↑"),
          ("ci", "CI", "context insensitivity ↓"), ("cm", "CM", "context misinterpretation ↓"))


def run_header_pairs(report: RunReport) -> list[tuple[str, object]]:
    """The run header as (name, value) lines: dataset and version, models with their
    identities, templates, seed, device, backend, concurrency, created, tool version."""
    header, config = report.header, report.config
    dataset = header.dataset
    pairs: list[tuple[str, object]] = [
        ("run", f"{report.run} ({report.status}{', partial' if report.partial else ''})"),
        ("dataset", f"{report.dataset}" + (f" · {dataset.queries} queries · content "
                                           f"{str(dataset.content_hash or '')[:12]}"
                                           if dataset else ""))]
    if report.sample:
        s = report.sample
        pairs.append(("sample", f"{s.mode}: {s.queries} of {s.of} queries, seed {s.seed}"))
    for name, model in header.models.items():
        ident = ", ".join(f"{label} {str(value)[:16]}" for label, value in (
            ("sha256", model.sha256), ("key", model.key), ("backend", model.backend),
            ("quantization", model.quantization), ("device", model.device)) if value)
        pairs.append((f"model {name}", ident))
    for name, retriever in header.retrievers.items():
        pairs.append((f"retriever {name}", ", ".join(
            f"{k} {str(v)[:16]}" for k, v in retriever.as_dict().items()
            if not isinstance(v, (dict, list)))))
    template = config.template if config.template is not None else "–"
    pairs.append(("templates", ", ".join(header.templates) or template))
    seeds = (header.seeds.as_dict() if header.seeds else {}) or {"seed": config.seed}
    pairs.append(("seeds", ", ".join(f"{k} {v}" for k, v in seeds.items())))
    pairs.append(("device", ", ".join(header.devices or [str(header.device or "–")])))
    pairs.append(("backend", backend_text(header) or "–"))
    pairs.append(("concurrency", ", ".join(f"{k} {v}" for k, v in header.concurrency.items())
                  or "–"))
    if header.sessions:
        pairs.append(("created", header.sessions[0].started_at or "–"))
    packages = header.packages
    pairs.append(("tool version", f"mirage-tui {packages.get('mirage-tui', '–')}"
                                  + (f", python {packages['python']}"
                                     if packages.get("python") else "")))
    if report.definitions:
        pairs.append(("definitions", ", ".join(f"{k} {v}" for k, v in
                                               report.definitions.as_json().items()
                                               if v is not None
                                               and not isinstance(v, (dict, list)))))
    counts = report.items.as_json()
    pairs.append(("items", ", ".join(f"{k} {v}" for k, v in counts.items())))
    return pairs


def _metric_table(report: RunReport) -> str:
    rows = []
    for system, per_setting in report.metrics.items():
        for setting, metrics in per_setting.items():
            rows.append([system, short_setting(setting),
                         *(figure(metrics.get(m)) for m, _ in ANSWER_METRICS)])
    if not rows:
        return '<p class="note">No scored items yet.</p>'
    return table(["system", "setting", *(f"{label} %" for _, label in ANSWER_METRICS)], rows,
                 numeric=range(2, 2 + len(ANSWER_METRICS)))


def adaptability_chart(systems: list[AdaptabilityRow]) -> str:
    """NV, CA, CI, CM per system (one bar each, 95% CI whiskers), from the report's rows."""
    names = [row_name(s) for s in systems]
    values = [[Interval(label, e.value, e.lo, e.hi, s.n)
               for key, label, _ in SHARES for e in (s.share(key),)] for s in systems]
    return bar_chart([label for _, label, _ in SHARES], names,
                     values, title="Adaptability per system (MIRAGE §1)",
                     y_title="share of queries (%)")


def _adaptability(report: RunReport) -> str:
    systems = report.systems
    if not systems:
        return ('<h2>Adaptability</h2><p class="note">No system has base, oracle and a mixed '
                'setting: no adaptability.</p>')
    rows = [[row_name(s), *(figure(s.share(k)) for k, _, _ in SHARES),
             figure(s.share("overall")), s.left_out.total] for s in systems]
    patterns = [[row_name(s), *(s.patterns.get(p, 0) for p in PATTERN_KEYS),
                 s.n] for s in systems]
    legend = "; ".join(f"{label}: {words}" for _, label, words in SHARES)
    return ("<h2>Adaptability</h2>" + adaptability_chart(systems)
            + f'<p class="note">{esc(legend)}; {esc(OVERALL_MEANING)}.</p>'
            + table(["system", *(f"{label} %" for _, label, _ in SHARES), "overall %",
                     "left out"], rows, numeric=range(1, 7))
            + "<h3>(base, oracle, mixed) EM patterns, queries</h3>"
            + table(["system", *PATTERN_KEYS, "n"], patterns, numeric=range(1, 10)))


def _retrieval(report: RunReport) -> str:
    entries = report.retrieval
    if not entries:
        return ""
    gold = report.gold
    rows = []
    for e in entries:
        for k in e.ks:
            m = e.metrics
            rows.append([e.retriever_name or e.retriever, k, figure(m.get(f"p@{k}")),
                         figure(m.get(f"r@{k}")), figure(m.get(f"ndcg@{k}"))])
    return ("<h2>Retrieval</h2>"
            + table(["retriever", "k", "P@k %", "R@k %", "NDCG@k %"], rows, numeric=range(1, 5))
            + notes([f"gold: {gold}; {e.retriever}: {e.n} queries, {e.missing} "
                     f"without a ranking, {e.no_gold} without gold" for e in entries]))


BREAKDOWN_ROWS = 40
"""Groups listed per system in a breakdown table (a run over many sources has hundreds)."""


def _largest(groups: dict[str, AdaptabilityGroup]) -> set[str]:
    """The :data:`BREAKDOWN_ROWS` groups with the most queries (ties: by name)."""
    ranked = sorted(groups, key=lambda g: (-groups[g].n, g))
    return set(ranked[:BREAKDOWN_ROWS])


def _breakdowns(report: RunReport) -> str:
    """Per language and per source: the adaptability shares and EM in base, oracle and the
    row's mixed-like setting (named in the row)."""
    out = []
    for title in ("language", "source"):
        rows = []
        left_out = 0
        for s in report.systems:
            trio = ("base", "oracle", s.mixed_setting)
            groups = s.by(title)
            shown = _largest(groups)
            left_out += len(groups) - len(shown)
            for group, g in groups.items():
                if group in shown:
                    rows.append([row_name(s), group,
                                 *(figure(g.share(k)) for k, _, _ in SHARES),
                                 *(figure(g.accuracy.get(t)) for t in trio)])
        if rows:
            out.append(f"<h3>Per {title}</h3>" + table(
                ["system", title, *(f"{label} %" for _, label, _ in SHARES), "EM base %",
                 "EM oracle %", "EM mixed %"], rows, numeric=range(2, 9))
                + (notes([f"{left_out} smaller {title} rows are not listed (at most "
                          f"{BREAKDOWN_ROWS} per system, the largest n); every one is in the "
                          "embedded report data and in report --json"]) if left_out else ""))
    if not out:
        return ""
    return ("<h2>Breakdowns</h2>" + notes(["EM mixed: the row's mixed-like setting (mixed, or "
                                           "the retrieved setting the row names)."])
            + "".join(out))


def _replies(report: RunReport) -> str:
    """Answers cut at the token limit and the thinking's tokens per system (only a run with a
    cut answer or a reasoning model's thinking has them: engine.results.replies)."""
    entries = report.replies
    if not entries:
        return ""
    rows = [[e.system, f"{e.cut} of {e.n}", figure(e.cut_rate),
             str(e.cut_while_thinking), num(e.reasoning_tokens.value, e.reasoning_tokens.lo,
                                            e.reasoning_tokens.hi)
             + f", n={e.reasoning_tokens.n}"] for e in entries]
    return ("<h2>Replies cut and reasoning</h2>"
            + notes(["Answers cut at the token limit are scored as given: one cut while the "
                     "model was still thinking is empty. Each item's thinking is in the item "
                     "browser, folded under its response, and never scored."])
            + table(["system", "cut at the limit", "cut %", "while thinking",
                     "reasoning tokens (mean)"], rows, numeric=(1, 2, 3, 4)))


def run_sections(report: RunReport) -> list[str]:
    return ["<h2>Run</h2>" + definition_list(run_header_pairs(report)),
            "<h2>Answers per system and setting</h2>" + _metric_table(report),
            _replies(report),
            _adaptability(report), _retrieval(report), _breakdowns(report),
            ("<h2>Notes</h2>" + notes(report.notes)) if report.notes else ""]


def run_page(store: Store, run: RunInfo, *, n_boot: int = N_BOOT, seed: int = SEED,
             item_limit: int = ITEM_LIMIT, report: RunReport | None = None,
             arena_sections: Sequence[str] = (), **choices) -> str:
    """The run's page as one HTML string. ``report`` reuses a :class:`RunReport` already built
    (else :func:`build_report` with ``n_boot``, ``seed`` and ``choices``: parity, gold,
    language rule and detector). ``arena_sections`` follow the report's (the run's arenas:
    :func:`engine.arena.ratings.page.run_page_with_arenas` gives them)."""
    if report is None:
        report = build_report(store, run, n_boot=n_boot, seed=seed, **choices)
    sections = run_sections(report) + list(arena_sections)
    subtitle = (f"{report.dataset} · {len(report.accuracy)} systems · "
                f"{report.items.done} items done"
                + (" · partial" if report.partial else ""))
    return page(f"Run {run.name}", subtitle, sections,
                {"kind": "run", "report": report.as_json()},     # the report's one writer
                item_data(store, run, limit=item_limit, seed=seed))

