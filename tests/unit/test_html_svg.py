"""The HTML pages' SVG charts (engine/results/html/svg.py): ticks, bars with CI whiskers,
points with CI lines, the heatmap; labels escaped; bad shapes refused with one clear line."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from engine.results.html.svg import Interval, bar_chart, heatmap, interval_chart, nice_ticks

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)       # well-formed XML, one <svg> element
    assert root.tag == f"{NS}svg" and root.get("role") == "img"
    assert root.find(f"{NS}title") is not None
    assert "href" not in svg and "url(" not in svg    # nothing outside the element
    return root


@pytest.mark.parametrize("lo, hi, expected", [
    (0, 100, [0, 20, 40, 60, 80, 100]),
    (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    (-66.7, 83.3, [-100, -50, 0, 50, 100]),
    (851, 1126, [800, 900, 1000, 1100, 1200]),
    (5, 5, [4.4, 4.6, 4.8, 5.0, 5.2, 5.4, 5.6]),
    # a CI that collapsed on its value up to float rounding (a Pearson of 1.0)
    (0.9999999999999999 - 5e-18, 1.0 + 5e-18, [0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6]),
])
def test_nice_ticks_cover_the_range(lo, hi, expected):
    ticks = nice_ticks(lo, hi)
    assert ticks == pytest.approx(expected)
    assert ticks[0] <= lo and ticks[-1] >= hi and len(ticks) <= 8


def test_nice_ticks_refuse_infinite_bounds():
    with pytest.raises(ValueError, match="finite bounds"):
        nice_ticks(0, float("inf"))


def test_bars_with_whiskers_at_their_values():
    values = [[Interval("NV", 0.25, 0.1, 0.5, 8), Interval("CA", None)],
              [Interval("NV", 0.5, 0.2, 0.8, 8), Interval("CA", 1.0, 0.6, 1.0, 8)]]
    svg = bar_chart(["NV", "CA"], ["sys <a>", "sys b"], values, title="t", y_title="share (%)")
    root = parse(svg)
    bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert [b.find(f"{NS}title").text for b in bars] == [
        "sys <a> · NV: 25.0% [10.0, 50.0], n=8", "sys b · NV: 50.0% [20.0, 80.0], n=8",
        "sys b · CA: 100.0% [60.0, 100.0], n=8"]
    # heights are proportional to the values on a 0–100% axis
    h = [float(b.get("height")) for b in bars]
    assert h[1] == pytest.approx(2 * h[0], abs=0.2) and h[2] == pytest.approx(4 * h[0], abs=0.2)
    assert len(re.findall('class="whisker"', svg)) == 3
    assert "n/a" in svg                              # the missing value is said, not drawn
    assert "sys &lt;a&gt;" in svg and "sys <a>" not in svg
    assert "100%" in svg and "share (%)" in svg


def test_bar_chart_refuses_a_ragged_table():
    with pytest.raises(ValueError, match="one row per series, one cell per group"):
        bar_chart(["NV", "CA"], ["a"], [[Interval("NV", 0.1)]], title="t", y_title="y")


def test_interval_chart_points_lines_and_reference():
    rows = [Interval("a", 0.1, -0.05, 0.2), Interval("b", -0.3, -0.5, -0.1),
            Interval("c", None)]
    svg = interval_chart(rows, title="Δ", x_title="points", scale=100, reference=0,
                         row_classes=["", "worse", ""])
    root = parse(svg)
    points = list(root.iter(f"{NS}circle"))
    assert len(points) == 2 and points[1].get("class") == "point worse"
    xs = [float(p.get("cx")) for p in points]
    zero = float(next(root.iter(f"{NS}line")).get("x1"))
    ref = [ln for ln in root.iter(f"{NS}line") if ln.get("class") == "reference"][0]
    assert xs[1] < float(ref.get("x1")) < xs[0]      # b left of 0, a right of it
    assert zero <= xs[1]
    assert "n/a" in svg and svg.count('class="whisker"') == 2


def test_heatmap_cells_and_blanks():
    svg = heatmap(["x", "y"], [[None, 0.75], [0.25, None]], counts=[[0, 4], [4, 0]],
                  title="wins")
    root = parse(svg)
    cells = [r for r in root.iter(f"{NS}rect") if r.get("class") == "cell"]
    assert [c.find(f"{NS}title").text for c in cells] == ["x vs y: 75.0%, 4 battles",
                                                          "y vs x: 25.0%, 4 battles"]
    assert float(cells[0].get("fill-opacity")) > float(cells[1].get("fill-opacity"))
    assert len([r for r in root.iter(f"{NS}rect") if r.get("class") == "cell-empty"]) == 2
    with pytest.raises(ValueError, match="a 2×2 matrix is needed for 2 labels"):
        heatmap(["x", "y"], [[None]], title="bad")
