"""The HTML pages of issue 19 on real runs (the scripted-run workspace: runs made by the run
engine, an arena; a run with hostile text; a run of about 1,000 items): the numbers they embed
and show are the ones ``--json`` prints, untrusted text is escaped, the size stays bounded, and
a bigger run's item browser carries a seeded sample of queries."""

from __future__ import annotations

import html as html_lib
import json
import re
import subprocess
import sys
from collections import Counter

import pytest

from engine.arena.ratings.duel import compare
from engine.arena.ratings.page import leaderboard_page
from engine.arena.ratings.page import run_page_with_arenas as run_page
from engine.results import build_report, item_detail, items_for
from engine.results.html import comparison_page
from engine.results.html.items import item_data, pack, unpack
from engine.results.html.page import figure, json_script
from engine.results.pairing import side_runs
from engine.runs.lookup import load_run
from engine.stats import Estimate
from engine.store import Store
from testkit.html_runs import PAYLOADS, calibrated, hostile_run, sized_run
from testkit.paths import ROOT

A, B = "alpha:fake-a/mirage@1", "alpha:fake-b/mirage@1"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "h.db"
    store = Store(path)
    hostile_run(store)
    store.close()
    return path


def cli(db, *args):
    return subprocess.run([sys.executable, "-m", "mirage_tui.cli", *args, "--db", str(db)],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)


def embedded(page: str, element: str = "report-data") -> dict:
    match = re.search(rf'<script type="application/json" id="{element}">(.*?)</script>', page,
                      re.S)
    assert match, f"no {element} in the page"
    return json.loads(match.group(1))


def packed_items(page: str) -> dict:
    match = re.search(r'<script type="application/gzip\+base64" id="item-data">(.*?)</script>',
                      page, re.S)
    assert match, "no item data in the page"
    return unpack(match.group(1))


def visible_text(page: str) -> str:
    """The page's markup outside its script elements, unescaped."""
    return html_lib.unescape(re.sub(r"<script.*?</script>", "", page, flags=re.S))


# --------------------------------------------------------------------------- run page

def _flat(entry: dict, key: str) -> Estimate:
    """A share of a row of ``report --json`` (its flat keys ``key``, ``key_lo``, ``key_hi``
    and the row's ``n``)."""
    return Estimate(entry[key], entry[f"{key}_lo"], entry[f"{key}_hi"], entry["n"])


def test_report_html_numbers_are_report_json(db, tmp_path):
    out = tmp_path / "alpha.html"
    made = cli(db, "report", "alpha", "--html", str(out))
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == f"wrote the run report to {out.resolve()} " \
                                  f"({round(out.stat().st_size / 1024)} KB)"
    printed = cli(db, "report", "alpha", "--json")
    assert printed.returncode == 0, printed.stderr
    report = json.loads(printed.stdout)
    page = out.read_text(encoding="utf-8")
    data = embedded(page)
    assert data["kind"] == "run"
    assert data["report"] == report
    text = visible_text(page)
    # every answer figure as the page writes it: percent, CI, n
    for system, per_setting in report["metrics"].items():
        for setting, metrics in per_setting.items():
            row = next(line for line in re.findall(r"<tr>.*?</tr>", page)
                       if f"<td>{system}</td><td>{setting}</td>" in line)
            for metric in ("em_loose", "f1_mirage", "char3_recall"):
                assert html_lib.escape(figure(metrics[metric])) in row, (system, setting, metric)
    em = report["metrics"]["fake-a/mirage@1"]["oracle"]["em_loose"]
    assert figure(em) == f"66.7 [22.3, 95.7], n=6" and figure(em) in text
    for entry in report["systems"]:
        for key in ("nv", "ca", "ci", "cm", "overall"):
            assert figure(_flat(entry, key)) in text
        counts = " ".join(str(entry["patterns"][p]) for p in sorted(entry["patterns"]))
        assert counts  # the pattern table holds them in order
        row = next(line for line in re.findall(r"<tr>.*?</tr>", page)
                   if line.startswith(f"<tr><td>{entry['system']}</td><td class=\"num\">"
                                      f"{entry['patterns']['b0o0m0']}</td>"))
        assert [int(x) for x in re.findall(r'class="num">(\d+)</td>', row)][:8] == \
            [entry["patterns"][p] for p in sorted(entry["patterns"])]
    # the header names the dataset, the models' identities, seeds, device, tool version
    for needle in ("demo@1", report["header"]["models"]["fake-a"]["sha256"][:16],
                   "sampling 0, generation 0", "fake-a 1, fake-b 1", "mirage-tui 0.1.0"):
        assert needle in text, needle


def test_adaptability_chart_draws_the_report(db):
    store = Store(db)
    page = run_page(store, load_run(store, "alpha"), n_boot=200)
    report = build_report(store, load_run(store, "alpha"), n_boot=200).as_json()
    chart = re.search(r'<svg[^>]*class="chart bars".*?</svg>', page, re.S).group(0)
    assert "<title>Adaptability per system (MIRAGE §1)</title>" in chart
    assert "share of queries (%)" in chart and "whiskers: 95% CI" in chart
    bars = re.findall(r'<rect class="s(\d)"[^>]*><title>([^<]*)</title>', chart)
    assert len(bars) == 4 * len(report["systems"])
    for k, entry in enumerate(report["systems"]):
        for key, label in (("nv", "NV"), ("ca", "CA"), ("ci", "CI"), ("cm", "CM")):
            tip = (f"{entry['system']} · {label}: {100 * entry[key]:.1f}% "
                   f"[{100 * entry[key + '_lo']:.1f}, {100 * entry[key + '_hi']:.1f}], "
                   f"n={entry['n']}")
            assert (str(k), tip) in bars
    assert chart.count('class="whisker"') == len(bars)
    # the run's arena is on its page too
    assert "Arena duel" in page and 'class="chart forest"' in page and 'class="chart heat"' in page


def test_item_browser_carries_the_inspector_items(db):
    store = Store(db)
    page = run_page(store, load_run(store, "alpha"), n_boot=200)
    data = packed_items(page)
    rows = items_for(store, load_run(store, "alpha"), limit=1000)
    assert data["total"] == data["shown"] == len(rows) == 36 and data["sample"] is None
    assert Counter(data["categories"][i["ca"]] for i in data["items"] if i["ca"] is not None) \
        == Counter(r.category for r in rows if r.category is not None)
    first = data["items"][0]
    system, query = data["systems"][first["sy"]], first["q"]
    detail = item_detail(store, load_run(store, "alpha"), system, query)
    setting = data["settings"][first["se"]]
    shown = next(s for s in detail.settings if s.setting == setting)
    assert first["pr"] == shown.prompt and first["r"] == shown.response
    pool = data["queries"][str(query)]["pool"]
    assert [c[0] for c in pool] == [c.chunk_rowid for c in detail.pool]
    assert [bool(c[3]) for c in pool] == [c.is_oracle for c in detail.pool]
    assert any(c[3] for c in pool)      # the oracle is marked
    assert data["queries"][str(query)]["answers"] == detail.answers


def test_item_browser_samples_queries_beyond_its_limit(db):
    store = Store(db)
    data = item_data(store, load_run(store, "alpha"), limit=10, seed=3)
    assert data["total"] == 36 and data["sample"] == {"queries": 1, "of": 6, "seed": 3}
    assert data["shown"] == 6 and len(data["queries"]) == 1   # all of one query's items
    assert item_data(store, load_run(store, "alpha"), limit=10, seed=3) == data
    # a byte budget too: the sample shrinks until the packed items fit
    full = len(pack(item_data(store, load_run(store, "alpha"))))
    small = item_data(store, load_run(store, "alpha"), max_bytes=full // 2, seed=3)
    assert small["sample"]["of"] == 6 and 1 <= small["sample"]["queries"] < 6
    assert len(pack(small)) <= full // 2
    assert small["shown"] == 6 * small["sample"]["queries"]
    assert len(small["queries"]) == small["sample"]["queries"]
    page = run_page(store, load_run(store, "alpha"), n_boot=50, item_limit=10)
    assert "6 items of 36: every item of 1 of the run&#x27;s 6 queries, sampled with seed 0" \
        in page


# --------------------------------------------------------------------------- compare, arena

def test_compare_html_numbers_are_compare_json(db, tmp_path):
    out = tmp_path / "cmp.html"
    made = cli(db, "compare", A, B, "--n-boot", "500", "--json", "--html", str(out))
    assert made.returncode == 0, made.stderr
    assert f"wrote the comparison to {out.resolve()}" in made.stderr
    printed = json.loads(made.stdout)
    page = out.read_text(encoding="utf-8")
    assert embedded(page) == {"kind": "comparison", "comparison": printed}
    text = visible_text(page)
    assert printed["verdict"] in text
    chart = re.search(r'<svg[^>]*class="chart forest".*?</svg>', page, re.S).group(0)
    assert len(re.findall(r'<circle class="point', chart)) == len(printed["rows"])
    assert "Δ = B − A (percentage points)" in chart
    mixed = next(r for r in printed["rows"] if r["metric"] == "em_loose"
                 and r["setting"] == "mixed")
    assert f"{100 * mixed['delta']:.1f} [{100 * mixed['lo']:.1f}, {100 * mixed['hi']:.1f}]" \
        in text
    assert "B right, A wrong: 4 items" in text and "A right, B wrong: 2 items" in text


def test_leaderboard_html_is_arena_ratings_json(db, tmp_path):
    out = tmp_path / "lb.html"
    made = cli(db, "arena", "ratings", "alpha", "--json", "--html", str(out))
    assert made.returncode == 0, made.stderr
    printed = json.loads(made.stdout)
    data = embedded(out.read_text(encoding="utf-8"))
    assert data["kind"] == "leaderboard" and data["arena"]["name"] == "duel"
    for key in ("systems", "order", "win_fraction", "battle_counts", "n_battles", "notes"):
        assert data["ratings"][key] == printed[key], key
    page = out.read_text(encoding="utf-8")
    heat = re.search(r'<svg[^>]*class="chart heat".*?</svg>', page, re.S).group(0)
    cells = [row for row in printed["win_fraction"] for v in row if v is not None]
    assert heat.count('<rect class="cell"') == len(cells)
    # fewer than 4 contestants with features: the page says why there is no surrogate
    assert data["surrogate"] is None and "No surrogate ranking" in page
    fresh = Store(db)
    assert leaderboard_page(fresh, load_run(fresh, "alpha"), n_boot=50).count("<svg") == 2
    # who judged it and how far to trust it, as arena ratings says, over the table
    assert data["judge_trust"] == printed["judge_trust"]
    text = visible_text(page)
    line = "judged by smollm2-135m-instruct, judge not calibrated"
    assert data["judge_trust"]["line"].startswith(line)
    assert line in text and text.index(line) < text.index("win rate %")


def test_leaderboard_page_says_how_far_its_calibrated_judge_agrees(demo_run, tmp_path):
    from engine.arena.judging.job import judge_arena
    from testkit.arena import ScriptedJudge

    store = demo_run
    run = load_run(store, "r")
    judge_arena(store, run, ScriptedJudge(), order="both")
    calibrated(store, tmp_path)          # fake-judge, both orders, 6 pairs it gets right
    page = leaderboard_page(store, load_run(store, "r"), n_boot=20)
    text = visible_text(page)
    assert "judged by fake-judge, agrees with people 100.0% [" in text
    assert "(n=6, labels people@1); calibrated with template ragqa_arena_pairwise@1, " \
           "the arena used mirage_bench_pairwise@1" in text
    assert embedded(page)["judge_trust"]["calibration"]["order"] == "both"


# --------------------------------------------------------------------------- hostile, size

def _no_live_markup(page: str) -> None:
    """No payload survives as markup: outside the two data elements (packed items, base64;
    the report's JSON, whose every ``<`` is an escape) there is no ``<img``, no ``onerror=``
    attribute and no script element but the page's own two."""
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page,
                     re.S).group(1)
    assert "<" not in data and ">" not in data
    outside = re.sub(r'<script type="application/(gzip\+base64|json)".*?</script>', "", page,
                     flags=re.S)
    for payload in PAYLOADS:
        assert payload not in outside
    assert "<img" not in outside and not re.search(r"\sonerror=", outside.replace(
        "onerror=&quot;", ""))
    assert outside.count("<script") == 1 and outside.count("</script>") == 1


def test_hostile_text_is_shown_as_text(hostile):
    store = Store(hostile)
    page = run_page(store, load_run(store, "hostile"), n_boot=50)
    _no_live_markup(page)
    items = packed_items(page)
    replies = {i["r"] for i in items["items"]}
    assert " ".join(PAYLOADS) in replies        # carried as data, written by textContent
    data = embedded(page)                       # the JSON element still parses whole
    assert data["report"]["run"] == "hostile"
    sides = ("hostile:evil-a/mirage@1", "hostile:evil-b/mirage@1")
    cmp = comparison_page(compare(store, *sides, side_runs(store, *sides), n_boot=50))
    _no_live_markup(cmp)
    assert html_lib.escape(PAYLOADS[1]) in cmp  # a flipped item's response, escaped
    assert embedded(cmp)["comparison"]["a"]["run"] == "hostile"


def test_json_script_cannot_be_closed_from_inside():
    element = json_script("x", {"text": "</script><script>alert(1)</script><!-- &"})
    assert element.count("</script>") == 1 and "<!--" not in element
    inner = element.split(">", 1)[1].rsplit("</script>", 1)[0]
    assert json.loads(inner) == {"text": "</script><script>alert(1)</script><!-- &"}


def test_a_thousand_item_run_stays_small(tmp_path):
    store = Store(tmp_path / "sized.db")
    n = sized_run(store, 1000)
    assert n >= 1000
    page = run_page(store, load_run(store, "sized"), n_boot=200)
    size = len(page.encode("utf-8"))
    assert size < 2 * 2**20, f"{size:,} bytes for {n} items"
    data = packed_items(page)
    assert data["shown"] == data["total"] == n and data["sample"] is None


# --------------------------------------------------------------------------- surrogate, calibration

def test_leaderboard_page_shows_the_surrogate_beside_the_judged_ranking(db, tmp_path):
    import shutil

    from engine.arena.surrogate.features import compute_features
    from engine.arena.surrogate.forest import surrogate_for_run

    copy = tmp_path / "with-features.db"
    shutil.copy(db, copy)
    store = Store(copy)
    compute_features(store, load_run(store, "alpha"))            # the model-free features only
    run = load_run(store, "alpha")
    page = leaderboard_page(store, run, n_boot=50)
    data = embedded(page)
    expected = surrogate_for_run(store, run, "duel", n_boot=50).as_json()
    assert data["surrogate"] == expected and data["surrogate_note"] is None
    text = visible_text(page)
    tau = expected["tau"]
    assert "Kendall τ" in text and "held-out R²" in text
    if tau["value"] is not None:
        assert f"{tau['value']:.2f}" in text
    for row in expected["rows"]:
        assert row["system"] in text


def test_calibration_html_is_calibration_json(tmp_path):
    db = tmp_path / "cal.db"
    store = Store(db)
    calibrated(store, tmp_path)
    store.close()
    out = tmp_path / "cal.html"
    made = cli(db, "judge", "calibration", "--json", "--html", str(out))
    assert made.returncode == 0, made.stderr
    assert f"wrote the calibration to {out.resolve()}" in made.stderr
    printed = json.loads(made.stdout)
    page = out.read_text(encoding="utf-8")
    assert embedded(page) == {"kind": "calibration", "calibration": printed}
    text = visible_text(page)
    sign = printed["figures"]["overall"]["sign_accuracy"]
    assert figure(sign) in text and "RAGChecker GPT-4 76%" in text
    assert page.count('class="chart forest"') == 2
    assert "Per domain" in text and "Confusion" in text


def test_retrieval_and_breakdowns_are_the_reports(tmp_path):
    from testkit.toy_run import build_toy

    store = build_toy(Store(tmp_path / "toy.db"))
    page = run_page(store, load_run(store, "toy-run"), n_boot=200)
    report = build_report(store, load_run(store, "toy-run"), n_boot=200).as_json()
    rows = re.findall(r"<tr>.*?</tr>", page)
    (entry,) = report["retrieval"]
    for k in (1, 3, 5):
        m = entry["metrics"]
        expected = "".join(f'<td class="num">{html_lib.escape(figure(m[f"{name}@{k}"]))}</td>'
                           for name in ("p", "r", "ndcg"))
        assert any(r.startswith(f'<tr><td>ret-x</td><td class="num">{k}</td>{expected}')
                   for r in rows), k
    for s in report["systems"]:
        for group, g in s["by_language"].items():
            cells = "".join(f'<td class="num">{html_lib.escape(figure(_flat(g, key)))}</td>'
                            for key in ("nv", "ca", "ci", "cm"))
            assert any(f"<td>{html_lib.escape(group)}</td>{cells}" in r for r in rows), \
                (s["system"], group)
    assert "Per source" in page and "wiki" in page and "news" in page


@pytest.mark.parametrize("command, what", [
    (("compare", A, B, "--n-boot", "200"), "comparison"),
    (("arena", "ratings", "alpha", "--boot", "50"), "leaderboard"),
])
def test_html_instead_of_text_says_where_the_page_went(db, tmp_path, command, what):
    out = tmp_path / "sub" / "page.html"
    out.parent.mkdir()                      # a page never makes folders (issue 35)
    made = cli(db, *command, "--html", str(out))
    assert made.returncode == 0, made.stderr
    kb = round(out.stat().st_size / 1024)
    assert made.stdout == f"wrote the {what} to {out.resolve()} ({kb} KB)\n"
    assert made.stderr == ""
