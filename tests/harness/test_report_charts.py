"""The SVG chart drawers: every chart type, its numbers, its edge cases, its escaping."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from genderprobe import charts
from genderprobe.analysis.stats import Estimate
from genderprobe.errors import UserError
from genderprobe.outputs.report import format, svg
from genderprobe.outputs.report.charts import draw

NS = "{http://www.w3.org/2000/svg}"


def parse(figure) -> ET.Element:
    """The SVG must be well-formed XML (escaping mistakes break this first)."""
    return ET.fromstring(str(figure.svg))


def count(root: ET.Element, tag: str, cls: str) -> int:
    return sum(1 for e in root.iter(NS + tag) if cls in (e.get("class") or "").split())


def test_forest_draws_a_point_per_defined_row_and_lists_every_row():
    rows = {"a": Estimate(0.2, 0.1, 0.3, 10), "b": Estimate(None, None, None, 0), "c": Estimate(-0.5, None, None, 4)}
    fig = draw(charts.forest("f", "F", rows, x_range=(-1, 1)))
    root = parse(fig)
    assert count(root, "circle", "pt") == 2
    assert "undefined" in "".join(root.itertext())
    assert [r[0] for r in fig.rows] == ["a", "b", "c"]
    assert fig.rows[0][1]["value"] == 0.2 and fig.rows[0][1]["ci_high"] == 0.3
    assert fig.rows[2][2] == 4


def test_forest_places_points_on_the_scale():
    fig = draw(charts.forest("f", "F", {"zero": Estimate(0.0, -0.5, 0.5, 3)}, x_range=(-1, 1), reference=0.0))
    root = parse(fig)
    point = next(e for e in root.iter(NS + "circle"))
    ref = next(e for e in root.iter(NS + "line") if e.get("class") == "reference")
    assert float(point.get("cx")) == pytest.approx(float(ref.get("x1")), abs=0.1)


def test_bar_handles_intervals_missing_values_and_many_categories():
    words = [f"w{i}" for i in range(120)]
    values = [None if i % 10 == 0 else i / 100 for i in range(120)]
    fig = draw(charts.bar("b", "B", words, {"DI": values}, reference=1.0))
    root = parse(fig)
    assert count(root, "rect", "bar") == 108
    assert len(fig.rows) == 120 and fig.rows[1] == ["w1", {"value": 0.01, "ci_low": None, "ci_high": None, "n": None}]
    two = draw(charts.bar("b2", "B2", ["x", "y"], {"s1": [Estimate(0.4, 0.3, 0.5, 9), 0.1], "s2": [None, 0.2]}))
    root2 = parse(two)
    assert count(root2, "rect", "bar") == 3 and count(root2, "line", "ci") == 1
    assert two.columns == ["category", "s1", "s2"]


def test_heatmap_has_a_cell_per_value_and_marks_the_centre():
    fig = draw(charts.heatmap("h", "H", ["r1", "r2"], ["c1", "c2", "c3"], [[0.5, 1.0, None], [1.5, 2.0, 0.9]],
                              center=1.0, value_label="DI"))
    root = parse(fig)
    assert count(root, "rect", "cell") == 6
    assert count(root, "rect", "empty") == 1
    assert any(e.get("class") == "reference" for e in root.iter(NS + "line"))
    cells = {e.find(NS + "title").text: e.get("fill") for e in root.iter(NS + "rect") if e.get("class") == "cell"}
    assert cells["r1 · c2: 1"] == "#f7f7f7"  # the centre is neutral
    assert fig.rows == [["r1", 0.5, 1.0, None], ["r2", 1.5, 2.0, 0.9]]


def test_scatter_draws_every_point_and_the_identity_line():
    pts = [(0.1, 0.2), (0.5, 0.4), (0.9, 1.0)]
    fig = draw(charts.scatter("s", "S", pts, identity_line=True, labels=["a", "b", "c"], x_label="model"))
    root = parse(fig)
    assert count(root, "circle", "dot") == 3
    assert sum(1 for e in root.iter(NS + "line") if e.get("class") == "reference") == 1
    assert fig.columns == ["label", "model", "y"] and fig.rows[2] == ["c", 0.9, 1.0]


def test_histogram_draws_a_bar_per_nonzero_count():
    fig = draw(charts.histogram("h", "H", [0, 1, 2, 3], {"a": [1, 0, 5], "b": [2, 2, 2]}))
    assert count(parse(fig), "rect", "bar") == 5
    assert fig.rows[0] == ["[0, 1)", 1, 2]


@pytest.mark.parametrize("spec", [
    charts.forest("e", "E", {}), charts.bar("e", "E", [], {}), charts.heatmap("e", "E", [], [], []),
    charts.scatter("e", "E", []), charts.histogram("e", "E", [], {}),
])
def test_empty_charts_say_so(spec):
    fig = draw(spec)
    assert "No " in "".join(parse(fig).itertext())


def test_unknown_chart_type_is_not_drawn():
    assert draw({"type": "sankey", "id": "x", "title": "X"}) is None


@pytest.mark.parametrize("spec, problem", [
    ({"type": "forest", "id": "f", "rows": "nope"}, "'rows' must be a list"),
    ({"type": "bar", "id": "b", "categories": ["a"], "series": [{"name": "s", "points": []}]}, "has 0 points"),
    ({"type": "heatmap", "id": "h", "rows": ["a"], "columns": ["x"], "values": [[1, 2]]}, "'values' must hold"),
    ({"type": "scatter", "id": "s", "points": [[1]]}, "[x, y] pair"),
    ({"type": "histogram", "id": "h", "edges": [1, 0], "series": []}, "increasing"),
])
def test_malformed_specs_are_one_sentence_user_errors(spec, problem):
    with pytest.raises(UserError) as err:
        draw(spec)
    message = str(err.value)
    assert problem in message and f"Chart '{spec['id']}'" in message
    assert message.endswith(".") and "\n" not in message


def test_labels_are_escaped_in_svg():
    evil = '<script>alert(1)</script>" onmouseover="x'
    for spec in (
        charts.forest("f", evil, {evil: Estimate(0.1, 0, 0.2, 3)}, x_label=evil),
        charts.bar("b", evil, [evil], {evil: [0.5]}, y_label=evil),
        charts.heatmap("h", evil, [evil], [evil], [[1.0]], value_label=evil),
        charts.scatter("s", evil, [(1, 2)], labels=[evil], x_label=evil, y_label=evil),
        charts.histogram("g", evil, [0, 1], {evil: [3]}, x_label=evil),
    ):
        markup = str(draw(spec).svg)
        assert "<script" not in markup and 'onmouseover="' not in markup
        root = ET.fromstring(markup)  # still well-formed
        assert not any(a.startswith("on") for e in root.iter() for a in e.attrib)


def test_long_and_wide_labels_are_truncated_with_the_full_text_as_tooltip():
    label = "長い" * 40
    fig = draw(charts.forest("f", "F", {label: Estimate(0.1, 0, 0.2, 3)}))
    root = parse(fig)
    titled = [e.find(NS + "title") for e in root.iter(NS + "text")]
    tooltip = next(t for t in titled if t is not None and t.text == label)
    visible = tooltip.tail
    assert visible.endswith("…") and label.startswith(visible[:-1]) and len(visible) < len(label)
    assert svg.text_width("中") > 1.5 * svg.text_width("a")  # wide glyphs are measured wide


def test_nice_domain_holds_the_data_and_uses_round_ticks():
    lo, hi, ticks = svg.nice_domain(-0.07, 0.93)
    assert lo <= -0.07 and hi >= 0.93
    assert all(re.fullmatch(r"-?\d+(\.\d{1,2})?", svg.tick_label(t)) for t in ticks)
    assert svg.nice_domain(2.0, 2.0)[0] < 2.0 < svg.nice_domain(2.0, 2.0)[1]
    assert svg.tick_label(-0.3 + 0.1 * 3) == svg.tick_label(-0.0) == "0"  # rounding noise is the 0 it is


def test_number_formats():
    assert format.number(1234567) == "1,234,567"
    assert format.number(0.12345) == "0.123"
    assert format.number(3.2e-9, tiny_as_sci=True) == "3.20e-09"  # a p-value
    assert format.number(9.14e-16) == format.number(-1e-17) == format.number(-0.0004) == "0.000"  # noise is 0
    assert format.estimate({"value": -2e-17, "ci_low": -0.0001, "ci_high": 0.2}) == "0.000 [0.000, 0.200]"
    assert format.estimate({"value": 2e-9, "ci_low": None, "ci_high": None}, p=True) == "2.00e-09"
    assert format.plain([-4.71e-05, 0.0119]) == "[0.000, 0.012]" and format.plain([1, "a"]) == '[1, "a"]'
    assert [format.is_p_value(n) for n in ("p-value", "Holm-adjusted p", "pearson_p_value", "pmr", "PM (T=0)")] \
        == [True, True, True, False, False]
    assert format.number(None) == "–"
    assert format.estimate({"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}) == "0.500 [0.400, 0.600]"
    assert format.estimate({"value": None, "ci_low": None, "ci_high": None}) == "undefined"
    assert format.when("2026-01-31T14:05:00+00:00") == "2026-01-31 14:05 UTC"


def test_a_ratio_heatmap_centred_on_parity_colours_one_third_and_three_alike():
    """Disparate impact 1/3 and 3 are equal bias either way; a linear scale drew 1/3 pale and legended -1."""
    fig = draw(charts.heatmap("di", "DI", ["standout", "communal"], ["en"], [[1 / 3], [3.0]], center=1.0,
                              value_label="disparate impact"))
    root = parse(fig)
    strength = {e.find(NS + "title").text.split(":")[0]: e.get("fill") for e in root.iter(NS + "rect")
                if e.get("class") == "cell"}
    low, high = (int(strength[k][1:3], 16) for k in ("standout · en", "communal · en"))
    # Equally far from neutral: 1/3 as deep a blue as 3 is a red (their red channels mirror).
    assert low == 33 and high == 178
    ticks = [t.text for t in root.iter(NS + "text") if t.get("class") == "tick"]
    assert ticks[:2] == ["0.333", "3"] and not any(t.startswith("-") for t in ticks)
    assert "(log scale)" in "".join(root.itertext())
    assert fig.columns == ["", "en"]  # the row-label column is not named after the values


def test_a_heatmap_centred_elsewhere_stays_linear():
    fig = draw(charts.heatmap("b", "B", ["x"], ["a", "b"], [[-2.0, 1.0]], center=0.0, value_label="bias"))
    ticks = [t.text for t in parse(fig).iter(NS + "text") if t.get("class") == "tick"]
    assert ticks[:2] == ["-2", "2"] and "(log scale)" not in "".join(parse(fig).itertext())
