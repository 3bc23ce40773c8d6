"""Best-Worst Scaling (BWS): tuple design, counting scores, split-half reliability.

Follows Kiritchenko and Mohammad (2016) as used by Hada et al. (2023, Section 4):

* design: for N items, 2N 4-tuples in which every item appears in 8 tuples and no
  two tuples share more than 2 items;
* scores by counting (Orme 2009): for each item, the share of its appearances
  chosen as best (most negatively biased) minus the share chosen as worst (least),
  in [-1, 1], normalised to [0, 1] as (score + 1) / 2;
* split-half reliability: the annotations of each tuple split at random into two
  halves, scores from each half correlated (Pearson and Spearman), repeated.

Pure functions over integer arrays; file parsing reports bad rows by line number.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from genderprobe.analysis.stats import rowwise_pearson
from genderprobe.errors import UserError

TUPLE_SIZE = 4
APPEARANCES = 8  # tuples per item; with 4-tuples this gives 2N tuples
# The 8 tuples of an item need 8 triples of other items pairwise sharing at most
# one item; 7 items hold at most 7 such triples (the Fano plane), so 9 items is
# the least a design can have, and 9 items do have one (NINE_ITEM_DESIGN).
MIN_ITEMS = 9
# Below this many items the random search needs many restarts.
_FEW_ITEMS = 12
# A design for 9 items: the 72 triples of points of the affine plane AG(2, 3)
# (points 3a + b) that are not lines, split into 18 sets of 4 points with no
# three on a line. Each triple lies in exactly one tuple, so no two tuples share
# 3 items, and each point lies in 24 such triples, hence in 8 tuples.
NINE_ITEM_DESIGN = (
    (0, 1, 3, 4), (0, 1, 5, 8), (0, 1, 6, 7), (0, 2, 3, 5), (0, 2, 4, 7), (0, 2, 6, 8),
    (0, 3, 7, 8), (0, 4, 5, 6), (1, 2, 3, 6), (1, 2, 4, 5), (1, 2, 7, 8), (1, 3, 5, 7),
    (1, 4, 6, 8), (2, 3, 4, 8), (2, 5, 6, 7), (3, 4, 6, 7), (3, 5, 6, 8), (4, 5, 7, 8),
)
ANNOTATION_COLUMNS = ("Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem")


# -- design ---------------------------------------------------------------------


def design_tuples(n_items: int, *, seed: int = 0, restarts: int = 20, max_sweeps: int = 30) -> np.ndarray:
    """A (2N, 4) array of item indices: each item in 8 tuples, no two tuples sharing > 2 items.

    Eight seeded permutations of the items are laid end to end and cut into
    4-tuples (so every item appears exactly 8 times); tuples that repeat an item
    or share three items with another tuple are then repaired by swapping items
    between tuples, which keeps every item's count; a repair that gets stuck
    starts again from fresh permutations. Nine items, which the search rarely
    solves, get the one known design relabelled at random. Deterministic for a seed.
    """
    if not isinstance(n_items, int) or isinstance(n_items, bool) or n_items < MIN_ITEMS:
        raise UserError(
            f"A Best-Worst Scaling design needs at least {MIN_ITEMS} items: with fewer, no item can sit in "
            f"{APPEARANCES} 4-tuples with no two tuples sharing more than 2 items; got {n_items!r}."
        )
    rng = np.random.default_rng(_seed(seed))
    if n_items == MIN_ITEMS:
        labels = rng.permutation(n_items)
        return labels[np.array(NINE_ITEM_DESIGN)][rng.permutation(2 * n_items)]
    if n_items < _FEW_ITEMS:
        restarts, max_sweeps = max(restarts, 200), max(max_sweeps, 60)
    for _ in range(restarts):
        stream = np.concatenate([rng.permutation(n_items) for _ in range(APPEARANCES)])
        tuples = stream.reshape(-1, TUPLE_SIZE).copy()
        if _repair(tuples, rng, max_sweeps):
            return tuples
    raise UserError(
        f"No Best-Worst Scaling design was found for {n_items} items with seed {seed}; "
        f"try another --seed or more items."
    )


def _seed(seed: int) -> int:
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise UserError(f"The seed must be a whole number of at least 0; got {seed!r}.")
    return seed


def _triples(row: np.ndarray | list[int]) -> list[tuple[int, ...]]:
    return list(combinations(sorted(int(v) for v in row), 3))


def _repair(tuples: np.ndarray, rng: np.random.Generator, max_sweeps: int) -> bool:
    """Swap items between tuples until the design holds; False if it will not."""
    n_tuples = len(tuples)
    counts: Counter[tuple[int, ...]] = Counter()
    for row in tuples:
        counts.update(_triples(row))

    def bad(i: int) -> bool:
        row = tuples[i]
        return len(set(row.tolist())) < TUPLE_SIZE or any(counts[t] > 1 for t in _triples(row))

    def fits(row: np.ndarray) -> bool:
        return len(set(row.tolist())) == TUPLE_SIZE and all(counts[t] == 0 for t in _triples(row))

    for _ in range(max_sweeps):
        broken = [i for i in range(n_tuples) if bad(i)]
        if not broken:
            return True
        for i in broken:
            if not bad(i):
                continue
            for _attempt in range(50):
                j = int(rng.integers(n_tuples))
                if j == i:
                    continue
                a, b = int(rng.integers(TUPLE_SIZE)), int(rng.integers(TUPLE_SIZE))
                old_i, old_j = tuples[i].copy(), tuples[j].copy()
                new_i, new_j = old_i.copy(), old_j.copy()
                new_i[a], new_j[b] = old_j[b], old_i[a]
                counts.subtract(_triples(old_i))
                counts.subtract(_triples(old_j))
                if fits(new_i):
                    counts.update(_triples(new_i))
                    if fits(new_j):
                        counts.update(_triples(new_j))
                        tuples[i], tuples[j] = new_i, new_j
                        break
                    counts.subtract(_triples(new_i))
                counts.update(_triples(old_i))
                counts.update(_triples(old_j))
    return not any(bad(i) for i in range(n_tuples))


def design_problems(tuples: np.ndarray, n_items: int) -> list[str]:
    """What is wrong with a design (empty when it meets all three constraints)."""
    problems = []
    if tuples.shape != (2 * n_items, TUPLE_SIZE):
        problems.append(f"shape {tuples.shape} instead of {(2 * n_items, TUPLE_SIZE)}")
    per_item = np.bincount(tuples.ravel(), minlength=n_items)
    if not (per_item == APPEARANCES).all():
        problems.append("some item does not appear in exactly 8 tuples")
    if any(len(set(row.tolist())) < TUPLE_SIZE for row in tuples):
        problems.append("some tuple repeats an item")
    triples = Counter(t for row in tuples for t in _triples(row))
    if any(c > 1 for c in triples.values()):
        problems.append("two tuples share more than 2 items")
    return problems


def tuples_csv(tuples: np.ndarray, ids: list[str]) -> str:
    """The design in the released layout (Item1..Item4), items named by their ids."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ANNOTATION_COLUMNS[:TUPLE_SIZE])
    for row in tuples:
        writer.writerow([ids[i] for i in row])
    return out.getvalue()


# -- annotations ------------------------------------------------------------------


@dataclass(frozen=True)
class Annotations:
    """Best-worst annotations as index arrays.

    ids: item ids (strings as written in the file), sorted; the other arrays index into it.
    items: (M, 4) items shown in each annotation; best, worst: (M,) chosen items;
    tuple_of: (M,) which distinct tuple each annotation belongs to (for split-half).
    """

    ids: tuple[str, ...]
    items: np.ndarray
    best: np.ndarray
    worst: np.ndarray
    tuple_of: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.ids)

    @property
    def n_tuples(self) -> int:
        return int(self.tuple_of.max()) + 1 if self.tuple_of.size else 0

    def __len__(self) -> int:
        return int(self.best.size)


def parse_annotations(text: str, source: str) -> Annotations:
    """Annotations from CSV text in the released layout (Item1..Item4, BestItem, WorstItem)."""
    try:
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if header is None:
            raise UserError(f"The annotation file {source} is empty.")
        header = [h.strip() for h in header]
        missing = [c for c in ANNOTATION_COLUMNS if c not in header]
        if missing:
            raise UserError(
                f"The annotation file {source} lacks the column(s) {', '.join(missing)}; "
                f"it needs {', '.join(ANNOTATION_COLUMNS)}."
            )
        col = [header.index(c) for c in ANNOTATION_COLUMNS]
        rows: list[list[str]] = []
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) < len(header):
                raise UserError(f"Line {line} of {source} has {len(row)} fields instead of {len(header)}.")
            cells = [row[c].strip() for c in col]
            shown, best, worst = cells[:4], cells[4], cells[5]
            if any(not c for c in cells):
                raise UserError(f"Line {line} of {source} has an empty item, best or worst cell.")
            if len(set(shown)) < TUPLE_SIZE:
                raise UserError(f"Line {line} of {source} shows the same item twice in its tuple.")
            if best not in shown:
                raise UserError(f"Line {line} of {source} names best item {best}, which is not in its tuple.")
            if worst not in shown:
                raise UserError(f"Line {line} of {source} names worst item {worst}, which is not in its tuple.")
            if best == worst:
                raise UserError(f"Line {line} of {source} names the same item {best} as both best and worst.")
            rows.append(cells)
    except csv.Error as exc:
        raise UserError(f"The annotation file {source} is not valid CSV ({exc}).") from None
    if not rows:
        raise UserError(f"The annotation file {source} has no annotations.")
    return _index(rows)


def _sort_key(item_id: str) -> tuple[int, float, str]:
    try:
        return (0, float(item_id), item_id)
    except ValueError:
        return (1, 0.0, item_id)


def _index(rows: list[list[str]]) -> Annotations:
    ids = sorted({c for r in rows for c in r[:4]}, key=_sort_key)
    position = {item_id: k for k, item_id in enumerate(ids)}
    coded = np.array([[position[c] for c in r] for r in rows], dtype=np.int64)
    items = coded[:, :4]
    # A tuple is its set of items, whatever order it was shown in.
    _, tuple_of = np.unique(np.sort(items, axis=1), axis=0, return_inverse=True)
    return Annotations(tuple(ids), items, coded[:, 4], coded[:, 5], tuple_of.ravel())


# -- scores -----------------------------------------------------------------------


@dataclass(frozen=True)
class Scores:
    """Counting scores per item, aligned with ``ids``."""

    ids: tuple[str, ...]
    score: np.ndarray  # in [-1, 1]
    appearances: np.ndarray  # annotations that showed the item

    @property
    def normalized(self) -> np.ndarray:
        return (self.score + 1) / 2


def _counting(n: int, items: np.ndarray, best: np.ndarray, worst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    shown = np.bincount(items.ravel(), minlength=n)
    diff = np.bincount(best, minlength=n) - np.bincount(worst, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return diff / shown, shown


def counting_scores(annotations: Annotations) -> Scores:
    """%best - %worst for every item."""
    score, shown = _counting(annotations.n_items, annotations.items, annotations.best, annotations.worst)
    return Scores(annotations.ids, score, shown)


def scores_csv(scores: Scores, digits: int | None = 3) -> str:
    """id, score, score_normalized, most biased first (the released layout).

    With ``digits``, the score is rounded first and normalised from the rounded
    value, as in the released file.
    """
    score = np.round(scores.score, digits) if digits is not None else scores.score
    order = np.argsort(-score, kind="stable")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "score", "score_normalized"])
    for k in order:
        s = float(score[k])
        writer.writerow([scores.ids[k], repr(s), repr((s + 1) / 2)])
    return out.getvalue()


# -- split-half reliability ---------------------------------------------------------


@dataclass(frozen=True)
class Reliability:
    pearson: np.ndarray  # one value per repetition
    spearman: np.ndarray

    def summary(self) -> dict[str, float | int]:
        return {
            "repetitions": int(self.pearson.size),
            "pearson_mean": float(np.nanmean(self.pearson)),
            "pearson_sd": float(np.nanstd(self.pearson)),
            "spearman_mean": float(np.nanmean(self.spearman)),
            "spearman_sd": float(np.nanstd(self.spearman)),
        }


def split_halves(annotations: Annotations, repetitions: int, rng: np.random.Generator) -> np.ndarray:
    """(repetitions, M) booleans: True puts an annotation in the first half.

    Within each tuple the annotations are shuffled and dealt alternately, the
    first card going to a random half, so halves differ by at most one annotation
    and neither half is systematically the larger.
    """
    m = len(annotations)
    keys = rng.random((repetitions, m))
    # Rank of each annotation within its tuple under the random keys.
    order = np.lexsort((keys, np.broadcast_to(annotations.tuple_of, keys.shape)), axis=1)
    sorted_tuple = annotations.tuple_of[order]
    first = np.ones_like(sorted_tuple, dtype=bool)
    first[:, 1:] = sorted_tuple[:, 1:] != sorted_tuple[:, :-1]
    index = np.broadcast_to(np.arange(m), sorted_tuple.shape)
    position = index - np.maximum.accumulate(np.where(first, index, 0), axis=1)
    flip = rng.random((repetitions, annotations.n_tuples)) < 0.5
    in_first_sorted = (position % 2 == 0) ^ flip[np.arange(repetitions)[:, None], sorted_tuple]
    halves = np.empty_like(in_first_sorted)
    np.put_along_axis(halves, order, in_first_sorted, axis=1)
    return halves


def split_half_reliability(annotations: Annotations, *, repetitions: int = 100, seed: int = 0) -> Reliability:
    """Correlation of the scores from two random halves of each tuple's annotations."""
    if not isinstance(repetitions, int) or repetitions < 1:
        raise UserError(f"The number of split-half repetitions must be a whole number of at least 1; got {repetitions!r}.")
    if (np.bincount(annotations.tuple_of) < 2).all():
        raise UserError("Split-half reliability needs tuples annotated at least twice; every tuple here has one annotation.")
    rng = np.random.default_rng(_seed(seed))
    halves = split_halves(annotations, repetitions, rng)
    n = annotations.n_items
    a = np.empty((repetitions, n))
    b = np.empty((repetitions, n))
    for r in range(repetitions):
        for out, mask in ((a, halves[r]), (b, ~halves[r])):
            out[r], _ = _counting(n, annotations.items[mask], annotations.best[mask], annotations.worst[mask])
    # Items missing from a half (possible with singly annotated tuples) are left out.
    keep = ~(np.isnan(a).any(axis=0) | np.isnan(b).any(axis=0))
    a, b = a[:, keep], b[:, keep]
    pearson = rowwise_pearson(a, b)
    from scipy.stats import rankdata  # here: scipy is slow to import and only this needs it

    spearman = rowwise_pearson(rankdata(a, axis=1), rankdata(b, axis=1))
    return Reliability(pearson, spearman)
