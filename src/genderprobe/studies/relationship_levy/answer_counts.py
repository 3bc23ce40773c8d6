"""RelationshipLevy's answers read and counted per item, chunk by chunk.

Each answer is read by the run's reader and by the other one (ProbeResult.readers),
coded as the man, the woman, undetected or an error, and added to per-item counts
(arrays of length k), beside the position chosen, the losses by the gender of
option (a), option probabilities where options were scored, and a few answers of
each code as evidence.
"""

from __future__ import annotations

import numpy as np

from genderprobe.analysis.losses import ItemLosses, loss_report_from_counts
from genderprobe.analysis.stats import Estimate, bootstrap_ratio, folded_abs
from genderprobe.contract import PositionEvidence, ReaderComparison
from genderprobe.reading.doubtful import rests_on_contradicted_letter
from genderprobe.studies.relationship_levy.answer_reader import (
    CAREFUL,
    FAITHFUL,
    is_refusal,
    judge_reading,
    reader,
)
from genderprobe.studies.relationship_levy.metrics import COMPARED, item_shares
from genderprobe.studies.relationship_levy.record_columns import CODE_NAMES

# Codes of one attempt.
MALE, FEMALE, UNDETECTED, ERROR = 0, 1, 2, 3
# Lost answers are grouped by the gender of option (a), the person named first.
LOSS_GROUPS = ("male", "female")
LOSS_BY = "gender of option (a)"

_EVIDENCE_PER_CODE = 5
_READER_EVIDENCE = 20
# An answer that is an option alone, and the option both readers read in it.
_OPTION_ALONE = {"(a)": 0, "(b)": 1, "(A)": 0, "(B)": 1}
_MAX_UNDETECTED_EVIDENCE = 1000


class AnswerCounts:
    """Per-item counts, filled chunk by chunk (arrays of length k)."""

    def __init__(self, k: int, reps: int, used: str = FAITHFUL, *, compare: bool = True):
        self.k, self.reps = k, reps
        self.used = used
        self.read = reader(used)
        small = np.int16 if 2 * reps < 2**15 else np.int64
        # The same answers read by the other reader too (ProbeResult.readers), where asked.
        self.other = reader(CAREFUL if used == FAITHFUL else FAITHFUL) if compare else None
        self.other_male = np.zeros(k if compare else 0, small)
        self.other_female = np.zeros(k if compare else 0, small)
        self.read_by_either = self.disagree = 0
        # Answers both readers read as the same option, and those whose reading rests on a contradicted label
        # ("(a) Incorrect", "not (b)"): the readers check's third signal (genderprobe.reading.doubtful).
        self.agreed = self.doubtful = 0
        # Read answers by position ((a), (b)), and pairs (item, repetition) read in both orders.
        self.by_position = np.zeros(2, np.int64)
        self.paired_same = self.paired_total = 0
        # Per group (gender of option (a)) and kind: (lost attempts, answered attempts), and per kind how many
        # items had each profile (answered with the man as (a), with the woman, lost of each): each item is
        # asked in both groups, so the loss test pairs them.
        self.lost = {kind: {g: (0, 0) for g in LOSS_GROUPS} for kind in ("undetected", "refusal")}
        self.profiles: dict[str, dict[tuple[int, ...], int]] = {kind: {} for kind in self.lost}
        self.refused_of_chunk = np.zeros(0, bool)
        self.scenario = np.zeros(k, np.int16)
        self.man = np.zeros(k, np.int16)
        self.woman = np.zeros(k, np.int16)
        self.male = np.zeros(k, small)
        self.female = np.zeros(k, small)
        self.undetected = np.zeros(k, small)
        self.errors = np.zeros(k, small)
        self.chose_a = np.zeros(k, small)
        self.prob_male: np.ndarray | None = None
        self.codes_of_chunk = np.zeros(0, np.int8)
        self.evidence: dict[str, list[dict]] = {"male": [], "female": [], "undetected": [], "error": []}
        self.full_evidence: set[int] = set()  # codes whose evidence sample is complete

    def _options_of(self, a: int, names) -> tuple[str, str]:
        """(name of option (a), name of option (b)) of attempt a of a chunk."""
        per_item = 2 * self.reps
        m, w = names[a // per_item]
        return (m, w) if (a % per_item) < self.reps else (w, m)

    def rule_of_chunk(self, names, *, careful: bool = False):
        """The run's reader (or the careful reader) as the reader judge asks for it: option index, None, or REFUSED."""
        read = reader(CAREFUL) if careful else self.read
        return lambda a, text: judge_reading(read, text, *self._options_of(a, names))

    def add(self, start, sc, man, woman, responses, score_options, names) -> None:
        """names: per item, (the man's first name, the woman's)."""
        n = len(sc)
        per_item = 2 * self.reps
        stop = start + n
        self.scenario[start:stop], self.man[start:stop], self.woman[start:stop] = sc, man, woman
        codes, other_codes, chose_a, refused = (self._read_options_alone(responses)
                                                or self._read_one_by_one(start, responses, names))
        self._count_positions(codes, chose_a, n)
        if self.other is not None:
            other_grid = other_codes.reshape(n, per_item)
            self.other_male[start:stop] = (other_grid == MALE).sum(1)
            self.other_female[start:stop] = (other_grid == FEMALE).sum(1)
        self.codes_of_chunk = codes
        self.refused_of_chunk = refused
        self._count_losses(codes, refused, per_item)
        grid = codes.reshape(n, per_item)
        self.male[start:stop] = (grid == MALE).sum(1)
        self.female[start:stop] = (grid == FEMALE).sum(1)
        self.undetected[start:stop] = (grid == UNDETECTED).sum(1)
        self.errors[start:stop] = (grid == ERROR).sum(1)
        self.chose_a[start:stop] = chose_a.reshape(n, per_item).sum(1)
        if score_options:
            self._add_probabilities(start, n, responses)

    def _man_is_a(self, attempts: int) -> np.ndarray:
        """Per attempt of a chunk: whether the man is option (a) (each item's first ``reps`` attempts)."""
        return (np.arange(attempts) % (2 * self.reps)) < self.reps

    def _read_options_alone(self, responses) -> tuple[np.ndarray, ...] | None:
        """(codes, the other reader's codes, chose (a), refused) of a chunk whose every answer is an option
        alone, as a calibration model answers (millions in a full-space run), read at once; else None.

        Both readers read an option alone as that option, so they agree on every answer and none is
        doubtful or a refusal: what _read_one_by_one gives these answers."""
        choice = np.array([_OPTION_ALONE.get(r.text, -1) if r.error_kind is None else -1 for r in responses],
                          np.int8)
        if (choice < 0).any():
            return None
        chose_a = choice == 0
        codes = np.where(chose_a == self._man_is_a(len(choice)), MALE, FEMALE).astype(np.int8)
        if self.other is not None:
            self.read_by_either += len(codes)
            self.agreed += len(codes)
        return codes, codes.copy(), chose_a, np.zeros(len(codes), bool)

    def _read_one_by_one(self, start, responses, names) -> tuple[np.ndarray, ...]:
        """(codes, the other reader's codes, chose (a), refused) of a chunk, each answer read by both readers."""
        per_item = 2 * self.reps
        codes = np.empty(len(responses), np.int8)
        other_codes = np.full(len(responses), UNDETECTED, np.int8)
        chose_a = np.zeros(len(responses), bool)
        refused = np.zeros(len(responses), bool)
        for a, resp in enumerate(responses):
            if not resp.ok:
                codes[a] = other_codes[a] = ERROR
                continue
            man_is_a = (a % per_item) < self.reps
            text = resp.text
            if text in _OPTION_ALONE:  # what calibration models answer: both readers read it alike
                choice = other = _OPTION_ALONE[text]
            else:
                options = self._options_of(a, names)
                choice = self.read(text, *options)
                other = self.other(text, *options) if self.other is not None else None
            if self.other is not None:
                if other is not None:
                    other_codes[a] = MALE if (other == 0) == man_is_a else FEMALE
                if choice is not None or other is not None:
                    self.read_by_either += 1
                    if choice != other:
                        self.disagree += 1
                        self._note_disagreement(start + a // per_item, man_is_a, text, choice, other)
                    else:
                        self.agreed += 1
                        self.doubtful += text not in _OPTION_ALONE and rests_on_contradicted_letter(text, "ab"[choice])
            refused[a] = choice is None and is_refusal(resp.text)
            if choice is None:
                codes[a] = UNDETECTED
                continue
            chose_a[a] = choice == 0
            codes[a] = MALE if (choice == 0) == man_is_a else FEMALE
        return codes, other_codes, chose_a, refused

    def _note_disagreement(self, item: int, man_is_a: bool, answer: str, choice, other) -> None:
        """Evidence of an answer the two readers read differently (the first few of a run)."""
        bucket = self.evidence.setdefault("readers_disagree", [])
        if len(bucket) < _READER_EVIDENCE:
            code = {None: "undetected", 0: "male" if man_is_a else "female", 1: "female" if man_is_a else "male"}
            other_name = CAREFUL if self.used == FAITHFUL else FAITHFUL
            bucket.append({"item": item, "man_option": "(a)" if man_is_a else "(b)", "answer": answer,
                           self.used: code[choice], other_name: code[other]})

    def _count_positions(self, codes: np.ndarray, chose_a: np.ndarray, n: int) -> None:
        """Read answers by the position chosen, and per (item, repetition) whether both orders chose the same."""
        read = (codes == MALE) | (codes == FEMALE)
        self.by_position += [int((read & chose_a).sum()), int((read & ~chose_a).sum())]
        # Attempts of an item: its man-as-(a) repetitions, then its woman-as-(a) ones.
        read, chose_a = read.reshape(n, 2, self.reps), chose_a.reshape(n, 2, self.reps)
        both = read[:, 0] & read[:, 1]
        self.paired_total += int(both.sum())
        self.paired_same += int((both & (chose_a[:, 0] == chose_a[:, 1])).sum())

    def position(self, scored: bool) -> PositionEvidence:
        return PositionEvidence(self.by_position.tolist(), self.paired_same, self.paired_total, scored)

    def readers(self, boot: dict) -> ReaderComparison | None:
        """Both readers' headline metrics on the same answers, by the headline's estimator."""
        if self.other is None:
            return None
        other = CAREFUL if self.used == FAITHFUL else FAITHFUL
        counts = {self.used: (self.male, self.female), other: (self.other_male, self.other_female)}
        headlines: dict[str, dict[str, Estimate]] = {metric: {} for metric in COMPARED}
        for name in (FAITHFUL, CAREFUL):
            share = item_shares(*counts[name])
            for metric, transform in COMPARED.items():
                headlines[metric][name] = bootstrap_ratio(share, **boot, transform=transform)
            # As the headline prints it: the signed difference's interval folded at 0.
            headlines["diff_abs_success_rate"][name] = folded_abs(
                headlines["diff_abs_success_rate"][name], headlines["diff_success_rate"][name])
        return ReaderComparison(FAITHFUL, CAREFUL, self.used, self.read_by_either, self.disagree, headlines,
                                agreed=self.agreed, doubtful=self.doubtful)

    def _count_losses(self, codes: np.ndarray, refused: np.ndarray, per_item: int) -> None:
        """Lost attempts by the gender of option (a), counted over the chunk at once."""
        man_is_a = self._man_is_a(len(codes))
        answered = codes != ERROR
        lost = {"undetected": codes == UNDETECTED, "refusal": refused}
        for group, side in (("male", man_is_a), ("female", ~man_is_a)):
            asked = answered & side
            n = int(asked.sum())
            for kind, flags in lost.items():
                old_lost, old_n = self.lost[kind][group]
                self.lost[kind][group] = (old_lost + int((flags & asked).sum()), old_n + n)
        grid = answered.reshape(-1, 2, self.reps)  # item, option (a) the man / the woman, repetition
        for kind, flags in lost.items():
            per_item = np.column_stack([grid.sum(2), (flags.reshape(grid.shape) & grid).sum(2)])
            for row, k in _profile_counts(per_item, self.reps + 1):
                self.profiles[kind][row] = self.profiles[kind].get(row, 0) + k

    def _add_probabilities(self, start, n, responses) -> None:
        """Per item: mean probability of the man's option over its attempts."""
        if self.prob_male is None:
            self.prob_male = np.full(self.k, np.nan)
        per_item = 2 * self.reps
        lp = np.full((len(responses), 2), np.nan)
        for a, resp in enumerate(responses):
            if resp.ok and resp.option_logprobs is not None and len(resp.option_logprobs) == 2:
                lp[a] = resp.option_logprobs
        # Softmax over the two options, only where both log-probabilities came back.
        valid = ~np.isnan(lp).any(axis=1)
        p_a = np.full(len(responses), np.nan)
        shifted = lp[valid] - lp[valid].max(axis=1, keepdims=True)
        e = np.exp(shifted)
        p_a[valid] = e[:, 0] / e.sum(axis=1)
        man_is_a = self._man_is_a(len(responses))
        p_man = np.where(man_is_a, p_a, 1 - p_a).reshape(n, per_item)
        scored = (~np.isnan(p_man)).sum(axis=1)
        mean = np.nansum(p_man, axis=1) / np.maximum(scored, 1)
        self.prob_male[start : start + n] = np.where(scored > 0, mean, np.nan)

    def loss_report(self):
        """Undetected (refusals among them) and refused answers by the gender of option (a).

        Built from running counts, so the full space needs no flag per attempt."""
        by_item = {kind: ItemLosses.from_counts(found, len(LOSS_GROUPS)) for kind, found in self.profiles.items()}
        return loss_report_from_counts(self.lost, by=LOSS_BY, order=LOSS_GROUPS, within={"refusal": "undetected"},
                                       by_item=by_item)

    def collect_evidence(self, code: int, record: dict) -> None:
        if code in self.full_evidence:
            return
        keys = ("item", "prompt", "answer", "code", "man_option", "refusal", "error")
        bucket = self.evidence[CODE_NAMES[code]]
        bucket.append({k: record[k] for k in keys if k in record})
        limit = _MAX_UNDETECTED_EVIDENCE if code in (UNDETECTED, ERROR) else _EVIDENCE_PER_CODE
        if len(bucket) >= limit:
            self.full_evidence.add(code)


def _profile_counts(rows: np.ndarray, base: int) -> list[tuple[tuple[int, ...], int]]:
    """Each distinct row (whole numbers below ``base``) with how often it occurs, rows in ascending order.

    What np.unique(rows, axis=0) gives, by counting instead of sorting every row: each row is read as
    one number in ``base`` (the first column the most significant, so ascending numbers are ascending
    rows). A base too large to count every possible row in falls back to the sort."""
    width = rows.shape[1]
    if base**width > 1 << 20:
        found, times = np.unique(rows, axis=0, return_counts=True)
        return list(zip(map(tuple, found.tolist()), times.tolist()))
    number = np.zeros(len(rows), np.int64)
    for column in rows.T:
        number = number * base + column
    times = np.bincount(number, minlength=base**width)
    found = np.flatnonzero(times)
    digits = [(found // base**(width - 1 - c)) % base for c in range(width)]
    return list(zip(map(tuple, np.column_stack(digits).tolist()), times[found].tolist()))
