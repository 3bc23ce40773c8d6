"""--executor ray: a local Ray instance with 2 workers, against the tiny hf model
and the local OpenAI-compatible test server. One Ray instance for the module."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("transformers")

from genderprobe.engine.store import Store  # noqa: E402
from genderprobe.errors import UserError  # noqa: E402
from genderprobe.interfaces.api import RunConfig, run_probe  # noqa: E402
from genderprobe.testing.kill_trials import ray_worker_pids as worker_pids  # noqa: E402
from genderprobe.testing.tiny_models import build_tiny_model  # noqa: E402

WORKERS = 2


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    # Ray's single-machine mode: every connection stays on 127.0.0.1.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return f"hf:{build_tiny_model(tmp_path_factory.mktemp('tiny'))}?threads=1"


def workers_gone(timeout: float = 20.0, ignore: frozenset[int] = frozenset()) -> bool:
    deadline = time.monotonic() + timeout
    while set(worker_pids()) - ignore:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


class KillOneWorker:
    """A progress sink that SIGKILLs one Ray worker once `after` answers have arrived."""

    def __init__(self, after: int):
        self.after, self.seen, self.killed = after, 0, None
        # Workers of an earlier Ray session still exiting (an earlier module's, under a loaded
        # CI machine) are not this run's: only the workers that appear from here on count.
        self.before = frozenset(worker_pids())

    def expect(self, n: int) -> None:
        pass

    def advance(self, n: int, **counts: int) -> None:
        self.seen += n
        if self.killed is None and self.seen >= self.after:
            pids = [pid for pid in worker_pids() if pid not in self.before]
            assert len(pids) == WORKERS, (pids, sorted(self.before))
            self.killed = pids[0]
            os.kill(self.killed, signal.SIGKILL)


def run(spec: str, cache: Path | None, executor: str = "local", progress=None, **params):
    config = RunConfig(model="", n_resamples=200, use_cache=cache is not None, cache_dir=cache,
                       executor=executor, ray_workers=WORKERS if executor == "ray" else None,
                       progress=progress, score_options=params.pop("score_options", False),
                       generation=params.pop("generation", {}))
    return run_probe("relationship-levy", spec, config=config, **params)


def same_results(a, b, abs_tol=1e-6) -> None:
    """Identical records and metrics; log-probabilities from differently padded batches
    agree to float32 rounding."""
    assert len(a.records) == len(b.records)
    for x, y in zip(a.records, b.records):
        assert {k: v for k, v in x.items() if k not in ("option_logprobs", "cached")} == {
            k: v for k, v in y.items() if k not in ("option_logprobs", "cached")
        }
        if "option_logprobs" in x:
            assert x["option_logprobs"] == pytest.approx(y["option_logprobs"], abs=1e-4)
    for name, est in a.result.metrics.items():
        other = b.result.metrics[name]
        assert (est.value, est.ci_low, est.ci_high) == pytest.approx(
            (other.value, other.ci_low, other.ci_high), abs=abs_tol
        ), name
    assert a.result.counts == b.result.counts


def test_killed_hf_worker_is_replaced_and_results_equal_one_process(tiny, tmp_path):
    """Option scoring on 2 workers, one SIGKILLed mid-run: the run finishes with every
    answer stored once, equals a single-process run, and a local rerun asks nothing."""
    cache = tmp_path / "c"
    killer = KillOneWorker(after=40)
    spread = run(tiny, cache, "ray", progress=killer, sample_k=150, score_options=True)
    assert killer.killed is not None and killer.killed not in worker_pids()
    assert workers_gone(ignore=killer.before)  # the run closed its workers, the replacement too
    assert spread.result.counts["errors"] == 0 and spread.document["run"]["sent"] == 300
    with Store(cache / "responses.sqlite3") as store:
        info = store.info()
    assert info["responses"] == 300 and info["errors"] == 0
    assert "prob_diff_success_rate" in spread.result.metrics
    local = run(tiny, cache, sample_k=150, score_options=True)
    assert local.document["run"]["sent"] == 0 and local.document["run"]["cached"] == 300
    same_results(spread, run(tiny, None, sample_k=150, score_options=True))


def test_hf_sampled_generation_on_two_workers_equals_one_process(tiny):
    gen = {"max_tokens": 3, "temperature": 1.0, "seed": 11}
    spread = run(tiny, None, "ray", sample_k=40, generation=gen)
    same_results(spread, run(tiny, None, sample_k=40, generation=gen), abs_tol=0)


def test_a_bad_model_on_the_workers_is_one_sentence():
    with pytest.raises(UserError, match="does not exist"):
        run("hf:/no/such/model", None, "ray", sample_k=2)
    assert workers_gone()


def test_vllm_engines_on_two_workers_answer_as_one_process(tmp_path):
    """A vLLM engine per worker (on GPUs, or vLLM's CPU build where that is installed), against
    one engine in this process."""
    from genderprobe.models.vllm_engine import refusal

    if refusal() is not None:
        pytest.skip(refusal())
    path = build_tiny_model(tmp_path / "small", size="small")  # vLLM's CPU attention takes heads of 32
    memory = "gpu_memory_utilization=0.2" if ray.cluster_resources().get("GPU") else f"kv_cache_memory_bytes={2**28}"
    spec = f"vllm:{path}?dtype=float32&enforce_eager=1&max_new_tokens=8&{memory}"
    pooled = run(spec, tmp_path / "cache", "ray", sample_k=12)
    assert pooled.result.counts["errors"] == 0 and workers_gone()
    from vllm_in_process import engine_in_this_process

    with engine_in_this_process():  # the comparison's engine: two processes fewer, each importing vLLM
        local = run(spec, None, sample_k=12)
    same_results(pooled, local)


# -- API clients on Ray workers, against the local OpenAI-compatible server ------------

PER_WORKER = 6


def api_run(server, cache: Path | None, executor: str = "local", progress=None, **params):
    from genderprobe.models.base import ModelOptions

    config = RunConfig(model="", n_resamples=200, use_cache=cache is not None, cache_dir=cache,
                       executor=executor, ray_workers=WORKERS if executor == "ray" else None,
                       concurrency=PER_WORKER, progress=progress,
                       model_options=ModelOptions(base_url=server.base_url, api_key="sk-ray-test"),
                       score_options=params.pop("score_options", False))
    return run_probe("relationship-levy", "openai:test", config=config, **params)


def test_api_workers_killed_mid_run_lose_nothing_and_ask_again_only_what_was_in_flight(tmp_path):
    from genderprobe.testing.openai_server import OpenAITestServer

    with OpenAITestServer(p_man=0.7, latency=0.05) as server:
        local = api_run(server, None, sample_k=60)
        server.requests.clear()
        killer = KillOneWorker(after=30)
        spread = api_run(server, tmp_path / "c", "ray", progress=killer, sample_k=60)
        assert killer.killed is not None
        asked = dict(server.requests)
        # Every prompt reached the server; only requests in flight on the killed
        # worker (at most its concurrency) were asked a second time.
        assert len(asked) == 120
        assert sum(asked.values()) - 120 <= PER_WORKER and max(asked.values()) <= 2
        with Store(tmp_path / "c" / "responses.sqlite3") as store:
            assert store.info()["responses"] == 120
        same_results(spread, local, abs_tol=0)
        server.requests.clear()
        again = api_run(server, tmp_path / "c", "ray", sample_k=60)
        assert again.document["run"]["sent"] == 0 and sum(server.requests.values()) == 0
    assert workers_gone(ignore=killer.before)


def test_api_option_scoring_on_ray_equals_one_process():
    from genderprobe.testing.openai_server import OpenAITestServer

    with OpenAITestServer(p_man=0.8) as server:
        spread = api_run(server, None, "ray", sample_k=40, score_options=True)
        local = api_run(server, None, sample_k=40, score_options=True)
    same_results(spread, local, abs_tol=0)
    assert spread.result.counts["undetected"] == 0
    assert spread.result.metrics["prob_male_success_rate"].value > 0.6


# -- error paths ------------------------------------------------------------------------

def test_workers_the_cluster_cannot_hold_are_refused_not_waited_for(tiny):
    """Ray keeps an actor it cannot place pending forever: the run would hang silently."""
    from genderprobe.engine.executors.ray_pool import RayPool
    from genderprobe.models.base import ModelOptions

    started = time.monotonic()
    with pytest.raises(UserError, match=f"3 Ray workers with 1 CPUs each need 3 CPUs and the Ray cluster has {WORKERS}"):
        RayPool(tiny, ModelOptions(), workers=3)
    with pytest.raises(UserError, match="need 1 GPUs and the Ray cluster has 0"):
        RayPool(tiny, ModelOptions(), workers=1, worker_gpus=1.0)
    assert time.monotonic() - started < 10 and workers_gone()


def test_local_weights_ask_for_no_gpu_on_a_cluster_without_one():
    from genderprobe.engine.executors.ray_pool import _default_gpus

    # vLLM's CPU build runs there; its GPU build refuses in the worker, in one sentence.
    assert _default_gpus("vllm:/m", ray) == 0.0 and _default_gpus("hf:/m", ray) == 0.0


def test_a_backend_refusal_inside_a_worker_stops_the_run_with_its_sentence(tiny):
    """A UserError raised while answering (here: an option that is no text at all) is
    fatal and keeps its words, as in one process; it is not retried as a worker bug."""
    from genderprobe.engine.executors.ray_pool import RayPool
    from genderprobe.errors import ModelError
    from genderprobe.models.base import ModelOptions, Request

    pool = RayPool(tiny, ModelOptions(), workers=1)
    try:
        with pytest.raises(ModelError) as err:
            pool.generate_batch([Request.user("Who?", options=("", "(b)"), score_options=True)])
    finally:
        pool.close()
    assert err.value.fatal and "tokenizes to nothing" in str(err.value)


def test_workers_that_loaded_different_models_are_refused():
    from genderprobe.engine.executors.ray_pool import agreed

    same = {"error": None, "identity": "hf:/m@float32:128:aaaa"}
    assert agreed([same, dict(same)]) == same
    with pytest.raises(UserError, match="loaded different models"):
        agreed([same, {**same, "identity": "hf:/m@float32:128:bbbb"}])
    with pytest.raises(UserError, match="does not exist"):
        agreed([same, {"error": "The model directory /m does not exist.", "identity": None}])


def test_a_replacement_that_cannot_load_the_model_stops_the_run_with_the_reason():
    """The dead worker is killed (an unreachable one may still hold its GPU), and a
    replacement that reports an error fails what is queued instead of idling forever."""
    import asyncio
    from types import SimpleNamespace

    from genderprobe.engine.executors.ray_pool import RayPool

    killed: list = []
    fake_ray = SimpleNamespace(exceptions=ray.exceptions, kill=killed.append)

    async def broken():
        return {"error": "The model directory /m does not exist.", "identity": None, "pid": 1}

    async def scenario():
        pool = RayPool.__new__(RayPool)
        dead = object()
        queued = asyncio.get_running_loop().create_future()
        pool._ray, pool._actors, pool._ready = fake_ray, [dead], [True]
        pool._identity, pool.replaced, pool._max_replacements = "hf:/m@x", 0, 4
        pool._queue, pool._failed = [(None, queued)], None
        pool._new_actor = lambda: SimpleNamespace(describe=SimpleNamespace(remote=broken))
        await pool._replace(0, dead)
        return pool, dead, queued.result()

    pool, dead, outcome = asyncio.run(scenario())
    assert killed == [dead]
    assert pool._failed == "a replacement Ray worker could not take over: The model directory /m does not exist"
    assert outcome.fatal and pool._queue == [] and pool._ready == [False]


SHUTDOWN_SCRIPT = """
import os, sys
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
import ray
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.errors import UserError

def config():
    return RunConfig(model="", executor="ray", ray_workers=2, use_cache=False, n_resamples=20)

try:
    run_probe("relationship-levy", "hf:" + sys.argv[1], config=config(), sample_k=2)
except UserError as exc:
    print("refused:", exc)
print("after refusal:", ray.is_initialized())
out = run_probe("relationship-levy", "reference:biased", config=config(), sample_k=4)
print("answered:", out.document["run"]["sent"])
print("after run:", ray.is_initialized())
"""


def test_a_pool_that_started_ray_shuts_it_down_after_a_run_and_after_a_refusal(tmp_path):
    """In its own process (this module's Ray instance is not the pool's to stop)."""
    import subprocess
    import sys

    (tmp_path / "not-a-model").mkdir()
    (tmp_path / "not-a-model" / "config.json").write_text("{}")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    out = subprocess.run([sys.executable, "-c", SHUTDOWN_SCRIPT, str(tmp_path / "not-a-model")],
                         capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("refused: Cannot load the hf model") and "\n" not in lines[0]
    assert lines[1:] == ["after refusal: False", "answered: 8", "after run: False"]
