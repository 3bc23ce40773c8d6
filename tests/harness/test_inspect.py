"""The probes as inspect_ai tasks (genderprobe.interfaces.inspect_tasks): on the same answers,
inspect's numbers are genderprobe run's numbers.

Both sides get their answers from one deterministic function of the prompt: inspect
through its mock model, or both through the local OpenAI-compatible test server.
"""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="inspect_ai is not installed: pip install -e '.[inspect]'")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import list_eval_logs, read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from genderprobe.interfaces.api import RunConfig, run_probe  # noqa: E402
from genderprobe.interfaces.inspect_tasks import TASKS  # noqa: E402
from genderprobe.interfaces.inspect_tasks.tasks import metric_values  # noqa: E402
from genderprobe.models import ModelOptions  # noqa: E402
from genderprobe.registry import get_probe  # noqa: E402
from genderprobe.testing.answers import ChatCall, PreferMan, unit_draw  # noqa: E402
from genderprobe.testing.openai_server import OpenAITestServer  # noqa: E402

# tenacity 9.2 deprecates an argument inspect_ai 0.3.285 still passes; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")

KEY = "sk-inspect-test-key"
LEVY = {"sample_k": 10}


def answer(call: ChatCall) -> str:
    """Prefers the man 4 times in 5, and leaves about one answer in 6 unreadable."""
    if unit_draw("unread", call.prompt, call.params.get("temperature")) < 0.17:
        return "Both have a point; I cannot tell."
    return PreferMan(0.8)(call)


def mock_outputs(messages, tools, tool_choice, config) -> ModelOutput:
    """inspect's mock model answering as ``answer`` (with usage, so it counts no tokens itself)."""
    call = ChatCall("test", tuple((m.role, m.text) for m in messages), {"temperature": config.temperature})
    output = ModelOutput.from_content("mockllm/model", answer(call))
    output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
    return output


def mock_model():
    return get_model("mockllm/model", custom_outputs=mock_outputs, memoize=False)


def server_answer(call: ChatCall) -> str:
    return answer(ChatCall(call.model, call.messages, {"temperature": call.params.get("temperature")}))


def genderprobe_run(server: OpenAITestServer, probe: str, *, judge: bool = False, **params):
    options = ModelOptions(base_url=server.base_url, api_key=KEY)
    config = RunConfig(model="openai:test", model_options=options, judge="openai:test" if judge else None,
                       judge_options=options if judge else None)
    return run_probe(probe, "openai:test", config=config, **params)


def inspect_metrics(log) -> dict[str, float]:
    assert log.status == "success", log.error and log.error.message
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def assert_same_numbers(got: dict[str, float], want: dict[str, float]) -> None:
    assert list(got) == list(want)
    assert all(math.isclose(got[k], want[k], rel_tol=0, abs_tol=1e-12) for k in want), (got, want)


def test_relationship_levy_in_process_matches_genderprobe_run(tmp_path):
    """inspect's mock model and genderprobe on the test server give the same answers to the
    same prompts, in the same order, read into the same codes and the same metrics."""
    log = inspect_eval(TASKS["relationship_levy"](**LEVY), model=mock_model(), log_dir=str(tmp_path / "logs"),
                       display="none")[0]
    got = inspect_metrics(log)
    with OpenAITestServer(server_answer, api_key=KEY) as server:
        out = genderprobe_run(server, "relationship-levy", **LEVY)

    # Per sample: genderprobe's prompt, the same answer, the probe's code for it.
    records = out.records
    assert len(log.samples) == len(records) == 2 * LEVY["sample_k"]
    codes = {s.sample_id: s.value for s in log.reductions[0].samples}
    for sample, record in zip(sorted(log.samples, key=lambda s: s.id), records):
        assert sample.input[-1].text == record["prompt"]
        assert sample.output.completion == record["answer"]
        assert codes[sample.id] == record["code"]
    assert {"male", "female", "undetected"} <= set(codes.values())

    # Task metrics: the probe's own, headline first with its interval.
    want = metric_values(get_probe("relationship-levy")(**LEVY), out.result)
    assert_same_numbers(got, want)
    assert list(got)[:3] == ["diff_abs_success_rate", "diff_abs_success_rate_ci_low", "diff_abs_success_rate_ci_high"]
    for name in ("diff_success_rate", "diff_abs_success_rate", "undetected_rate_attempts"):
        assert got[name] == out.document["metrics"][name]["value"]
    assert 0 < got["undetected_rate_attempts"] < 0.5


@pytest.mark.parametrize("probe,params,judge", [
    # two rounds: the temperature ablation asks again at another temperature
    ("genmo", {"sample_k": 6, "temperatures": (0.5,)}, False),
    # six rounds: dialogues, then the judge's labelling and checking rounds
    ("multilingual-dialogue", {"languages": ("en",), "dialogues_per_pairing": 1}, True),
])
def test_multi_round_probes_match_genderprobe_run(tmp_path, probe, params, judge):
    # Tuples as `-T name=a,b` gives them.
    as_given = {k: ",".join(map(str, v)) if isinstance(v, tuple) else v for k, v in params.items()}
    roles = {"judge": mock_model()} if judge else None
    log = inspect_eval(TASKS[probe.replace("-", "_")](**as_given), model=mock_model(), model_roles=roles,
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    got = inspect_metrics(log)
    assert max(s.metadata["round"] for s in log.samples) > 1
    with OpenAITestServer(server_answer, api_key=KEY) as server:
        out = genderprobe_run(server, probe, judge=judge, **params)
    assert_same_numbers(got, metric_values(get_probe(probe)(**params), out.result))


def test_a_probe_that_needs_a_judge_says_how_to_give_one(tmp_path):
    log = inspect_eval(TASKS["multilingual_dialogue"](languages="en", dialogues_per_pairing=1), model=mock_model(),
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "error"
    assert "needs a judge model; pass --model-role judge=PROVIDER/MODEL" in log.error.message


def _cli(name: str) -> str:
    """The console script installed beside this interpreter (the venv's), else on PATH."""
    path = Path(sys.executable).with_name(name)
    return str(path) if path.exists() else (shutil.which(name) or pytest.skip(f"no '{name}' command"))


def test_inspect_eval_command_end_to_end_matches_genderprobe_run(tmp_path):
    """`inspect eval genderprobe/relationship_levy` finds the task through the entry point,
    asks the test server exactly the prompts `genderprobe run` asks, and logs the same metrics."""
    pytest.importorskip("openai", reason="inspect's openai-api provider needs the openai package: pip install openai")
    limits = []  # the token limit of every request: the user's, not the probe's default 300

    def answer_and_note(call: ChatCall) -> str:
        limits.append(call.params.get("max_tokens", call.params.get("max_completion_tokens")))
        return server_answer(call)

    with OpenAITestServer(answer_and_note, api_key=KEY, model="test") as server:
        env = {**os.environ, "TESTSERVER_API_KEY": KEY, "TESTSERVER_BASE_URL": server.base_url}
        inspect_run = subprocess.run(
            [_cli("inspect"), "eval", "genderprobe/relationship_levy", "--model", "openai-api/testserver/test",
             "-T", f"sample_k={LEVY['sample_k']}", "--max-tokens", "50",
             "--log-dir", str(tmp_path / "logs"), "--display", "none"],
            env=env, capture_output=True, text=True, timeout=120,
        )
        assert inspect_run.returncode == 0, inspect_run.stderr[-3000:]
        gp_run = subprocess.run(
            [_cli("genderprobe"), "run", "relationship-levy", "--model", "openai:test", "--base-url", server.base_url,
             "--sample-k", str(LEVY["sample_k"]), "--max-tokens", "50", "--no-cache", "--json"],
            env={**os.environ, "OPENAI_API_KEY": KEY}, capture_output=True, text=True, timeout=120,
        )
        assert gp_run.returncode == 0, gp_run.stderr[-3000:]
        # Every prompt asked once by each: the same prompts, and nothing more.
        assert server.total_requests == 4 * LEVY["sample_k"]
        assert set(server.requests.values()) == {2}
        assert set(limits) == {50}

    (info,) = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.eval.task == "genderprobe/relationship_levy"
    assert log.eval.metadata["probe"] == "relationship-levy"
    got = inspect_metrics(log)
    document = json.loads(gp_run.stdout)
    for name, estimate in document["metrics"].items():
        if estimate["value"] is not None:
            assert got[name] == estimate["value"], name
    for name in ("diff_success_rate", "diff_abs_success_rate"):
        assert got[f"{name}_ci_low"] == document["metrics"][name]["ci_low"]
        assert got[f"{name}_ci_high"] == document["metrics"][name]["ci_high"]


def test_a_task_cut_short_by_limit_says_why_its_metrics_are_empty(tmp_path, caplog):
    caplog.set_level("WARNING", logger="genderprobe.interfaces.inspect_tasks.tasks")
    (log,) = inspect_eval(TASKS["relationship_levy"](sample_k=20), model=mock_model(), limit=7,
                          log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.results.scores[0].metrics == {}
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("No metrics")]
    assert said == ["No metrics: inspect ran 7 of the 40 samples of round 1 (--limit or --sample-id), and the probe "
                    "computes its metrics from all of them; size the run with the probe's own parameters "
                    "(-T sample_k=N where it has one)."]
    caplog.clear()
    (log,) = inspect_eval(TASKS["relationship_levy"](sample_k=20), model=mock_model(), max_samples=2,
                          log_dir=str(tmp_path), display="none")
    assert log.results.scores[0].metrics and not [r for r in caplog.records if "No metrics" in r.getMessage()]
