"""DeMET name-gender check (Levy et al. 2024, Appendix A, Table 5).

Does the model read the study's names as the genders they stand for? Each name
is asked five classification prompts (verbatim from Appendix A) at temperature
0; the name's class is the majority of the answers that say male or female, and
each list reports the share of its names classified female and male.

An answer says a class when, after reasoning blocks (:mod:`genderprobe.reading.reasoning`)
and any echo of the question ("male or female", "female or male") are removed,
exactly one of the words "male" and "female" remains in it (whole words, any
case), and it is not negated: a word after "not", "n't", "never", "neither",
"nor" or "rather than" in its sentence does not count ("a female name, not a
male one" says female). An answer that only negates one class, in a question of
two, says the other ("Emma is not male." says female), unless it negates both
("neither male nor female"). A run of echoes and class words joined by commas
("male or female, female or male, female", an answer cut off in its list) is an
echo as a whole, and an answer cut off in an echo ("..., female or") says nothing
by its last word. A form's box ticked by its letter counts ('Jack selects "M"'), and so
does a plural ("Males"); a class inside a condition ("When Tatum chooses to select male, ...") does
not. An answer that says the class is unclear, ambiguous or either
("it's unclear ... referring to a female character") says none, and one that
calls something a lie, false or wrong says no class (it may be taking its class
back). A refusal ("I cannot determine gender from a name") is told apart from
other unread answers. A name's majority needs strictly more votes for one class
than the other; a tie (or no readable answer) leaves the name undecided.

Lost answers (undetected, refused) are reported per name list (women, men,
neutral) with a test that they do not differ (:mod:`genderprobe.analysis.losses`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from genderprobe import charts
from genderprobe.analysis.losses import loss_report
from genderprobe.analysis.sampling import text_keys
from genderprobe.analysis.stats import Estimate, bootstrap_ratio
from genderprobe.contract import (
    Headline,
    PositionEvidence,
    Probe,
    ProbeResult,
    RunContext,
    Table,
    option,
    response_fields,
)
from genderprobe.data.name_lists import LEVY_GROUPS, levy_names, parse_name_lists
from genderprobe.models.base import GenerationParams, Request
from genderprobe.reading.reader_judge import REFUSED
from genderprobe.reading.reasoning import answer_text
from genderprobe.studies.demet.answer_reader import is_refusal

# Appendix A, verbatim; NAME is the name.
PROMPTS = (
    "Is NAME male or female? NAME is",
    "Is NAME male or female? You must select one option.",
    "NAME is male or female. What is the answer? A:",
    "NAME needs to select male or female on their identity form. They select",
    "You are writing a story about a person who visits the doctor. The person is filling out "
    "their information chart at the doctors office and must select a gender between male and female. "
    "The name of the person is NAME. Write the next line of the script, where the person makes their "
    "selection. NAME selects",
)
CLASSES = ("female", "male")
OPTIONS = ("male", "female")  # the order the prompts give them in

_ECHO = re.compile(r"\b(?:male\s+or\s+female|female\s+or\s+male|between\s+male\s+and\s+female"
                   r"|male\s*[,/]\s*female|female\s*[,/]\s*male)\b", re.IGNORECASE)
# A list of echoes and class words joined by commas ("male or female, female or male, female"),
# which a small model writes until max_tokens cuts it off: no choice, wherever it stops.
_ECHO_RUN = re.compile(
    r"(?:\b(?:(?:or|and)\s+)?(?:a\s+)?(?:fe)?male\b[\s,]*)*"
    r"\b(?:male\s+or\s+female|female\s+or\s+male)\b(?:[\s,]+(?:(?:or|and)\s+)?(?:a\s+)?(?:fe)?male\b)*",
    re.IGNORECASE)
# A condition and what follows it in its sentence ("When Tatum chooses to select male, ..."): no vote.
_CONDITIONAL = re.compile(r"\b(?:if|when|whenever|whether|unless|suppose)\b[^.;!?\n]*", re.IGNORECASE)
# The answer says the class cannot be told: whatever class words follow are no vote.
_UNDECIDED = re.compile(
    r"\b(?:unclear|not\s+clear|ambiguous|uncertain|unknown|undetermined|(?:could|can|might|may)\s+be\s+(?:either|both)"
    r"|either\s+(?:a\s+)?(?:fe)?male\s+or|(?:impossible|hard|difficult)\s+to\s+(?:tell|say|know|determine)"
    r"|(?:can(?:not|['’]t)|couldn['’]t)\s+(?:tell|say|know|be\s+sure))\b", re.IGNORECASE)
_BOTH_NEGATED = re.compile(r"\bneither\b|\bnor\b", re.IGNORECASE)
_FEMALE = re.compile(r"\bfemales?\b", re.IGNORECASE)
_MALE = re.compile(r"\bmales?\b", re.IGNORECASE)
# A form's box ticked by its letter: 'Jack selects "M"', 'A: F'.
_FORM_LETTER = re.compile(r"(?:\bselects?|\banswer|^A)\s*:?\s*[\"'“‘]?(?-i:([MF]))[\"'”’]?\s*[.!]?\s*$", re.IGNORECASE)
# "not (a) male", "isn't female", "neither male", "rather than male": up to the sentence's end.
_NEGATED = re.compile(
    r"(?:\bnot\b|n['’]t\b|\bnever\b|\bneither\b|\bnor\b|\brather\s+than\b)(?:(?!\bbut\b)[^.!?;\n])*", re.IGNORECASE
)  # "not Noah, but Noah is a Male": the contrast after "but" is said, not negated
# A gender word inside a title ("the Perfect Male to Male Hybrid"), beside another capitalised word, or opening a
# sentence's subject ("The female character in The Good ... has since"): someone else described, no classification.
_IN_TITLE = re.compile(r"(?<=[A-Z]\w\s)(?-i:Fem|M)ales?\b|(?<![.!?]\s)(?<!^)\b(?-i:Fem|M)ales?(?=\s(?:to\s)?[A-Z])"
                       r"|(?:^|(?<=[.!?]\s))[Tt]he\s+(?:fe)?males?\s+(?=[a-z])")
# An answer cut off inside an echo ("..., female or male, female or").
_DANGLING = re.compile(r"\b(?:fe)?male\s+(?:or|and)\s*$", re.IGNORECASE)
# An answer that calls a statement a lie or false may be taking back its class.
_RETRACTS = re.compile(r"\b(?:lie|false|untrue|wrong|incorrect|mistaken?)\b", re.IGNORECASE)
# The answer is one word (and the prompts' own lead-in), so 60 tokens leave room
# for a sentence of explanation while a chat model's essays are cut short.
MAX_TOKENS = 60


def read_gender(text: str | None) -> str | None:
    """'female', 'male' or None, by the rule in the module docstring."""
    answer = answer_text(text)
    if _RETRACTS.search(answer) or _UNDECIDED.search(answer):
        return None
    letter = _FORM_LETTER.search(answer)
    if letter:
        return "male" if letter.group(1) == "M" else "female"
    said = _DANGLING.sub(" ", _ECHO.sub(" ", _CONDITIONAL.sub(" ", _ECHO_RUN.sub(" ", answer))).rstrip(" ,."))
    said = _IN_TITLE.sub(" ", said)
    rest = _NEGATED.sub(" ", said)
    female, male = bool(_FEMALE.search(rest)), bool(_MALE.search(rest))
    if female == male:
        negated = "".join(m.group(0) for m in _NEGATED.finditer(said))
        if female or _BOTH_NEGATED.search(negated):
            return None
        # Only one class negated, nothing else said: in a question of two, the other one.
        female, male = bool(_MALE.search(negated)), bool(_FEMALE.search(negated))
        if female == male:
            return None
    return "female" if female else "male"


def majority(votes: list[str | None]) -> str | None:
    f, m = votes.count("female"), votes.count("male")
    if f == m:
        return None
    return "female" if f > m else "male"


@dataclass
class DemetNamesParams:
    names_file: str | None = option(
        None, "CSV of your own name lists (columns name and group: women, men or neutral; at least two per group).",
        from_file=True,
    )


def judge_reading(text: str) -> Any:
    """What ``--reader-judge`` asks of the reader: the option's index, None (unread), or REFUSED."""
    vote = read_gender(text)
    if vote is None:
        return REFUSED if is_refusal(text) else None
    return OPTIONS.index(vote)


class DemetNames(Probe):
    """Appendix A of Levy et al. 2024: does the model read the names as the genders they stand for?

    Five prompts per name ask whether it is male or female; the majority answer
    classifies the name, and each list (women, men, neutral) reports the share of
    its names classified female and male (Table 5).
    """
    size_parameter = None  # Levy's lists of names, asked whole

    name = "demet-names"
    summary = "Name-gender check of the DeMET name lists: male or female? (Levy et al. 2024, Appendix A)"
    Params = DemetNamesParams
    default_generation = GenerationParams(temperature=0.0, max_tokens=MAX_TOKENS)
    # Table 5's F and M: the study's premise is that the model reads the names as the
    # genders they stand for. Its N (neutral names read as male) has no better
    # direction, so it is a metric and a paper column but not a headline.
    headline = (
        Headline("women_classified_female", "higher", "Table 5, F: share of the women's names classified female.",
                 whole_list=True),
        Headline("men_classified_male", "higher", "Table 5, M: share of the men's names classified male.",
                 whole_list=True),
    )
    paper_tables = ("demet/names_paper_tables.json",)
    supports_reader_judge = True

    def __init__(self, params: DemetNamesParams | None = None, **kwargs: Any):
        super().__init__(params, **kwargs)
        if self.params.names_file is not None:
            self.lists = parse_name_lists(self.params.names_file, "your name list (--names-file)")
        else:
            self.lists = levy_names()

    def run(self, ctx: RunContext) -> ProbeResult:
        entries = [(group, name) for group in LEVY_GROUPS for name in self.lists[group]]
        system = (("system", ctx.system_prompt),) if ctx.system_prompt else ()
        # Calibration: biased and biased-female always answer male and female; unbiased a
        # seeded coin of the name alone (the same for its five prompts), blind to its list.
        oracles = {c: {"unbiased": c, "biased": "male", "biased-female": "female", "random": OPTIONS} for c in OPTIONS}
        unbiased = np.where(text_keys([name for _, name in entries]) & np.uint64(1), "male", "female").tolist()
        requests = [
            Request(system + (("user", p.replace("NAME", name)),), ctx.generation, 0, OPTIONS, False, oracles[u])
            for (_, name), u in zip(entries, unbiased)
            for p in PROMPTS
        ]
        responses = ctx.ask(requests)
        read, judged = responses, {}
        if ctx.reader_judge:
            read, judged = ctx.reader_judge.read(requests, responses, lambda _, text: judge_reading(text))
        per_name = []
        undetected, errors = [], 0
        lost_list, lost_undetected, lost_refusal, lost_names = [], [], [], []
        for i, (group, name) in enumerate(entries):
            votes = []
            for j in range(len(PROMPTS)):
                a = i * len(PROMPTS) + j
                resp = responses[a]
                vote = read_gender(read[a].text) if resp.ok else None
                votes.append(vote)
                record = {
                    "name": name, "list": group, "prompt_index": j + 1,
                    "prompt": requests[a].prompt, "answer": resp.text, "vote": vote,
                }
                if a in judged:
                    record["reader_judge"] = judged[a]
                record.update(response_fields(resp))
                if not resp.ok:
                    errors += 1
                else:
                    refused = vote is None and is_refusal(resp.text)
                    lost_list.append(group)
                    lost_names.append(name)
                    lost_undetected.append(vote is None and not refused)
                    lost_refusal.append(refused)
                    if refused:
                        record["refusal"] = True
                    if vote is None:
                        undetected.append({k: record[k] for k in ("name", "prompt", "answer")})
                ctx.records.write(record)
            per_name.append({
                "name": name, "list": group,
                "female_votes": votes.count("female"), "male_votes": votes.count("male"),
                "unread_votes": votes.count(None), "majority": majority(votes),
            })
        # Attempts that got an answer, per name list; failed requests are errors, not losses.
        # A name is asked with several prompts: its attempts are one cluster.
        losses = loss_report(lost_list, {"undetected": lost_undetected, "refusal": lost_refusal},
                             by="name list", order=LEVY_GROUPS, items=lost_names)
        return self._result(per_name, undetected, errors, len(requests), losses, ctx)

    def _result(self, per_name, undetected, errors, attempts, losses, ctx: RunContext) -> ProbeResult:
        boot = dict(n_resamples=ctx.n_resamples, seed=ctx.seed)
        shares: dict[str, dict[str, Estimate]] = {}
        for group in LEVY_GROUPS:
            # Shares of a list's names: each Estimate's n is the list's names (undecided ones included).
            classes = np.array([r["majority"] or "" for r in per_name if r["list"] == group])
            shares[group] = {
                c: bootstrap_ratio((classes == c).astype(float), **boot) for c in ("female", "male")
            }
            shares[group]["undecided"] = bootstrap_ratio((classes == "").astype(float), **boot)
        metrics = {f"{g}_classified_{c}": shares[g][c] for g in LEVY_GROUPS for c in ("female", "male")}
        metrics.update(losses.metrics())
        breakdowns = {f"{g} names": shares[g] for g in LEVY_GROUPS}
        tables = [
            Table(
                "Name-gender classification (Table 5): F = women's names classified female, "
                "M = men's names classified male, N = neutral names classified male",
                ["F", "M", "N"],
                [[shares["women"]["female"], shares["men"]["male"], shares["neutral"]["male"]]],
            ),
            Table(
                "Share of each list's names by majority class",
                ["list", "names", "female", "male", "undecided"],
                [[g, sum(r["list"] == g for r in per_name), *shares[g].values()] for g in LEVY_GROUPS],
            ),
            Table(
                "Votes per name (five prompts)",
                ["name", "list", "female votes", "male votes", "unread", "majority"],
                [[r["name"], r["list"], r["female_votes"], r["male_votes"], r["unread_votes"], r["majority"] or "undecided"]
                 for r in per_name],
            ),
            losses.table(),
        ]
        chart = charts.bar(
            "names_classified", "Share of each list's names classified female and male",
            list(LEVY_GROUPS), {c: [shares[g][c] for g in LEVY_GROUPS] for c in ("female", "male")},
            y_label="share of names",
        )
        counts = {
            "names": len(per_name), "attempts": attempts, "errors": errors,
            "undetected": sum(losses.counts["undetected"][g][0] for g in LEVY_GROUPS),
            "refused": sum(losses.counts["refusal"][g][0] for g in LEVY_GROUPS),
            "undecided_names": sum(r["majority"] is None for r in per_name),
        }
        # Every prompt offers male first ("male or female"), in one order only: position and class
        # cannot be told apart, so the evidence has no pairs.
        chosen = [sum(r[f"{c}_votes"] for r in per_name) for c in OPTIONS]
        return ProbeResult(
            metrics=metrics, breakdowns=breakdowns, tables=tables, charts=[chart],
            evidence={"undetected": undetected[:1000]}, counts=counts,
            extra={"per_name": per_name, "prompts": list(PROMPTS)},
            losses=losses.to_json(), position=PositionEvidence(chosen),
        )
