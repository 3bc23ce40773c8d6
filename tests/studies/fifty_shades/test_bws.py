"""Best-Worst Scaling: design constraints, counting scores, split-half reliability, bad files."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from genderprobe.data.packaged import data_text
from genderprobe.errors import UserError
from genderprobe.interfaces.cli import main
from genderprobe.studies.fifty_shades import bws
from genderprobe.studies.fifty_shades import dataset as fifty_shades

HEADER = "Item1,Item2,Item3,Item4,BestItem,WorstItem\n"


@pytest.mark.parametrize("n", [9, 10, 11, 12, 13, 37, 1000])
def test_design_meets_the_three_constraints(n):
    tuples = bws.design_tuples(n, seed=3)
    assert tuples.shape == (2 * n, 4)
    assert bws.design_problems(tuples, n) == []
    assert (np.bincount(tuples.ravel(), minlength=n) == 8).all()
    # No two tuples share more than 2 items, checked pairwise here (independently of design_problems).
    sets = [set(row.tolist()) for row in tuples]
    if n <= 40:
        for i in range(len(sets)):
            for j in range(i + 1, len(sets)):
                assert len(sets[i] & sets[j]) <= 2


def test_design_is_seeded():
    assert np.array_equal(bws.design_tuples(50, seed=1), bws.design_tuples(50, seed=1))
    assert not np.array_equal(bws.design_tuples(50, seed=1), bws.design_tuples(50, seed=2))


def test_design_problems_sees_a_broken_design():
    tuples = bws.design_tuples(20, seed=0)
    broken = tuples.copy()
    broken[1] = [broken[0][0], broken[0][1], broken[0][2], broken[1][3]]
    assert bws.design_problems(broken, 20)


@pytest.mark.parametrize("n", [0, 4, 8, -3])
def test_design_refuses_too_few_items(n):
    with pytest.raises(UserError, match="at least 9 items"):
        bws.design_tuples(n)


def test_nine_item_designs_hold_for_many_seeds():
    """9 items, the least possible, for which the random search would rarely succeed."""
    for seed in range(20):
        nine = bws.design_tuples(9, seed=seed)
        assert bws.design_problems(nine, 9) == []
    assert not np.array_equal(bws.design_tuples(9, seed=0), bws.design_tuples(9, seed=1))


def test_counting_scores_by_hand():
    text = HEADER + "a,b,c,d,a,d\na,b,c,d,b,d\na,b,e,f,e,a\n"
    scores = bws.counting_scores(bws.parse_annotations(text, "t.csv"))
    got = dict(zip(scores.ids, scores.score))
    assert got == {"a": pytest.approx(0 / 3), "b": pytest.approx(1 / 3), "c": 0.0, "d": -1.0, "e": 1.0, "f": 0.0}
    assert dict(zip(scores.ids, scores.appearances.tolist()))["a"] == 3
    assert dict(zip(scores.ids, scores.normalized))["d"] == 0.0


def test_released_annotations_regenerate_released_scores():
    """The toolkit reproduces fsb_final_scores.csv from the raw annotations: 1000/1000 exact at 3 decimals."""
    ann = fifty_shades.annotations()
    assert (ann.n_items, ann.n_tuples, len(ann)) == (1000, 2000, 5360)
    released = {
        row["id"]: (float(row["score"]), float(row["score_normalized"]))
        for row in csv.DictReader(io.StringIO(data_text("fifty_shades/fsb_final_scores.csv")))
    }
    ours = bws.counting_scores(ann)
    mine = dict(zip(ours.ids, ours.score))
    diffs = np.array([abs(mine[k] - v[0]) for k, v in released.items()])
    assert len(released) == 1000 and set(mine) == set(released)
    assert diffs.max() < 5e-4  # the release rounds to 3 decimals
    assert sum(round(mine[k], 3) == v[0] for k, v in released.items()) == 1000
    written = {r["id"]: r for r in csv.DictReader(io.StringIO(bws.scores_csv(ours, 3)))}
    assert all(float(written[k]["score"]) == v[0] and float(written[k]["score_normalized"]) == v[1]
               for k, v in released.items())


def test_released_design_nearly_meets_the_constraints():
    """The released tuples: every item in 8 of 2,000 distinct tuples; one pair of them shares 3 items."""
    ann = fifty_shades.annotations()
    _, first = np.unique(ann.tuple_of, return_index=True)
    tuples = ann.items[first]
    assert (np.bincount(tuples.ravel()) == 8).all()
    assert bws.design_problems(tuples, ann.n_items) == ["two tuples share more than 2 items"]
    sets = [frozenset(r.tolist()) for r in tuples]
    by_triple = {}
    for k, row in enumerate(tuples):
        for t in bws._triples(row):
            by_triple.setdefault(t, []).append(k)
    assert [len(v) for v in by_triple.values() if len(v) > 1] == [2]
    assert len(set(sets)) == 2000


def test_split_half_reliability_of_the_released_annotations():
    summary = bws.split_half_reliability(fifty_shades.annotations(), repetitions=100, seed=0).summary()
    # Paper (5,285 annotations): Pearson 0.8634 ± 0.0061, Spearman 0.8691 ± 0.0061.
    # The released file has 5,360; we get 0.8711 ± 0.0054 and 0.8761 ± 0.0051.
    assert summary["repetitions"] == 100
    assert summary["pearson_mean"] == pytest.approx(0.8711, abs=0.001)
    assert summary["spearman_mean"] == pytest.approx(0.8761, abs=0.001)
    assert 0.003 < summary["pearson_sd"] < 0.008 and 0.003 < summary["spearman_sd"] < 0.008


def test_split_half_correlations_match_a_plain_recount_with_scipy():
    """Each repetition's r equals scipy on scores recounted by hand from the same two halves."""
    from scipy import stats

    ann = fifty_shades.annotations()
    rel = bws.split_half_reliability(ann, repetitions=3, seed=3)
    halves = bws.split_halves(ann, 3, np.random.default_rng(3))
    for r in range(3):
        scores = []
        for mask in (halves[r], ~halves[r]):
            shown, net = np.zeros(ann.n_items), np.zeros(ann.n_items)
            for k in np.flatnonzero(mask):
                shown[ann.items[k]] += 1
                net[ann.best[k]] += 1
                net[ann.worst[k]] -= 1
            scores.append(net / shown)
        assert rel.pearson[r] == pytest.approx(stats.pearsonr(*scores).statistic, abs=1e-12)
        assert rel.spearman[r] == pytest.approx(stats.spearmanr(*scores).statistic, abs=1e-12)


def test_split_halves_are_balanced_within_each_tuple():
    ann = fifty_shades.annotations()
    halves = bws.split_halves(ann, 20, np.random.default_rng(1))
    per_tuple = np.bincount(ann.tuple_of)
    for r in range(20):
        first = np.bincount(ann.tuple_of[halves[r]], minlength=ann.n_tuples)
        assert (np.abs(2 * first - per_tuple) <= 1).all()
    # With 3 annotations, the extra one goes to either half.
    three = per_tuple[ann.tuple_of] == 3
    assert 0.3 < halves[:, three].mean() < 0.7


def test_reliability_is_high_for_consistent_and_low_for_random_annotators():
    rng = np.random.default_rng(0)
    n = 60
    truth = rng.permutation(n)
    tuples = bws.design_tuples(n, seed=0)
    rows_same, rows_random = [], []
    for row in tuples:
        for _ in range(2):
            ranked = sorted(row.tolist(), key=lambda i: truth[i])
            rows_same.append([*row.tolist(), ranked[-1], ranked[0]])
            pick = rng.permutation(row)
            rows_random.append([*row.tolist(), pick[0], pick[1]])

    def text(rows):
        return HEADER + "".join(",".join(map(str, r)) + "\n" for r in rows)

    same = bws.split_half_reliability(bws.parse_annotations(text(rows_same), "s"), repetitions=20).summary()
    rand = bws.split_half_reliability(bws.parse_annotations(text(rows_random), "r"), repetitions=20).summary()
    assert same["pearson_mean"] == pytest.approx(1.0)
    assert abs(rand["pearson_mean"]) < 0.3


@pytest.mark.parametrize(
    "rows, message",
    [
        ("1,2,3,4,5,1\n", "Line 2 of a.csv names best item 5, which is not in its tuple."),
        ("1,2,3,4,1,2\n1,2,3,4,2,9\n", "Line 3 of a.csv names worst item 9, which is not in its tuple."),
        ("1,2,3,4,1,2\n1,2,3,4,2,3\n1,2,3,4,4,4\n", "Line 4 of a.csv names the same item 4 as both best and worst."),
        ("1,2,3,3,1,2\n", "Line 2 of a.csv shows the same item twice in its tuple."),
        ("1,2,3,4,,2\n", "Line 2 of a.csv has an empty item, best or worst cell."),
        ("1,2,3\n", "Line 2 of a.csv has 3 fields instead of 6."),
        ("", "The annotation file a.csv has no annotations."),
    ],
)
def test_bad_annotation_rows_are_reported_by_line(rows, message):
    with pytest.raises(UserError) as err:
        bws.parse_annotations(HEADER + rows, "a.csv")
    assert str(err.value) == message


def test_missing_columns_and_empty_file():
    with pytest.raises(UserError, match="lacks the column"):
        bws.parse_annotations("Item1,Item2\n1,2\n", "a.csv")
    with pytest.raises(UserError, match="is empty"):
        bws.parse_annotations("", "a.csv")


# -- command line ------------------------------------------------------------------------


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_cli_score_writes_the_released_scores(tmp_path):
    src = tmp_path / "ann.csv"
    src.write_text(data_text("fifty_shades/fsb-tuples-annotations.csv"), encoding="utf-8")
    out = tmp_path / "scores.csv"
    result = invoke("bws", "score", str(src), "--out", str(out))
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert list(rows[0]) == ["id", "score", "score_normalized"]
    released = {r["id"]: r for r in csv.DictReader(io.StringIO(data_text("fifty_shades/fsb_final_scores.csv")))}
    assert all(float(r["score"]) == float(released[r["id"]]["score"]) for r in rows)
    assert [r["id"] for r in rows][:3] == ["38", "360", "918"]


def test_cli_reliability_json(tmp_path):
    src = tmp_path / "ann.csv"
    src.write_text(data_text("fifty_shades/fsb-tuples-annotations.csv"), encoding="utf-8")
    result = invoke("bws", "reliability", str(src), "--repetitions", "10", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["annotations"] == 5360 and doc["annotations_per_tuple"] == [2, 3]
    assert 0.85 < doc["pearson_mean"] < 0.89
    table = invoke("bws", "reliability", str(src), "--repetitions", "5")
    assert "SHR Pearson" in table.output and table.exit_code == 0


def test_cli_design_from_items_file(tmp_path):
    items = tmp_path / "gen.csv"
    items.write_text("uid,response\n" + "".join(f"u{i},text {i}\n" for i in range(30)), encoding="utf-8")
    out = tmp_path / "tuples.csv"
    result = invoke("bws", "design", str(items), "--out", str(out), "--seed", "4")
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0] == ["Item1", "Item2", "Item3", "Item4"] and len(rows) == 61
    ids = {f"u{i}": i for i in range(30)}
    tuples = np.array([[ids[c] for c in r] for r in rows[1:]])
    assert bws.design_problems(tuples, 30) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["bws", "design", "--n", "8"], "needs at least 9 items"),
        (["bws", "design"], "Give either an ITEMS file or --n N"),
        (["bws", "score", "nope.csv"], "The file nope.csv does not exist."),
    ],
)
def test_cli_bad_input_is_one_sentence_and_exit_2(args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_cli_bad_annotation_file_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "1,2,3,4,1,2\n1,2,3,4,3,3\n", encoding="utf-8")
    out = tmp_path / "scores.csv"
    result = invoke("bws", "score", str(bad), "--out", str(out))
    assert result.exit_code == 2
    assert "Line 3 of" in result.output and "same item 3 as both best and worst" in result.output
    assert not out.exists()


@pytest.mark.parametrize("args", [["design", "--n", "20"], ["reliability", "ANN"]])
def test_cli_negative_seed_is_refused_without_traceback(tmp_path, args):
    src = tmp_path / "ann.csv"
    src.write_text(HEADER + "1,2,3,4,1,2\n1,2,3,4,2,1\n", encoding="utf-8")
    result = invoke("bws", *[str(src) if a == "ANN" else a for a in args], "--seed", "-1")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "-1 is not in the range x>=0" in result.output
    with pytest.raises(UserError, match="seed must be a whole number of at least 0"):
        bws.design_tuples(20, seed=-1)


def test_cli_design_names_the_number_of_items_given():
    result = invoke("bws", "design", "--n", "-5")
    assert result.exit_code == 2 and "got -5" in result.output


def test_cli_reads_a_csv_saved_with_a_byte_order_mark(tmp_path):
    src = tmp_path / "ann.csv"
    src.write_bytes(b"\xef\xbb\xbf" + (HEADER + "1,2,3,4,1,2\n").encode())
    result = invoke("bws", "score", str(src))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:2] == ["id,score,score_normalized", "1,1.0,1.0"]
