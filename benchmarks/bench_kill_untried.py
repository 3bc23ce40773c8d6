"""Never paid twice on the paths issue 47 had not attacked: --batch, the Ray executor, local weights.

1. --batch (OpenAI's Files and Batch APIs, a real local server): trials that each
   kill -9 a run at a random moment (upload, create, polling, reading the
   results) and run it again to its end; two identical runs started together
   on one store; a store under a file-size limit (a full disk). Paid: the
   requests in every batch created plus those sent the normal way.
2. The Ray executor (2 workers, API clients against a local server with 50 ms
   latency): trials that SIGKILL one worker after a random number of answers;
   requests asked twice against the requests in flight on the killed worker.
3. Local weights (hf:, a tiny random-weight model): trials that kill -9 a run
   at a random moment and resume it; answers the backend had finished that the
   store did not hold at the kill, against the answers of the batch in progress.

Every chain of runs must end with the results of an uninterrupted run.

    python benchmarks/bench_kill_untried.py [batch] [ray] [hf]
"""

from __future__ import annotations

import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.kill_trials import (
    FINISHED_LOG,
    batch_paid,
    batch_run,
    finished_not_stored,
    hf_run,
    ray_worker_pids,
    same_documents,
    same_results,
    stored,
)
from genderprobe.testing.quick_runs import start_run

KEY = "sk-" + "bench-kill-untried"  # built: no key-shaped literal tracked
ENV = {"OPENAI_API_KEY": KEY}


def batch_trials(work: Path, trials: int = 30, sample_k: int = 100) -> None:
    from genderprobe.testing.batch_servers import OpenAIBatchServer

    rng, rows, log = random.Random(47), [], work / "batch.log"
    with OpenAIBatchServer(api_key=KEY) as server:
        run = start_run(batch_run(server, work / "whole-cache", work / "whole", sample_k, work), env=ENV, log=log)
        run.join()
        prompts = batch_paid(server)
    for trial in range(trials):
        with OpenAIBatchServer(api_key=KEY, polls_until_done=4) as server:  # a fresh count for each trial
            args = batch_run(server, work / f"batch{trial}", work / f"batch{trial}-out", sample_k, work)
            run = start_run(args, env=ENV, log=log)
            time.sleep(rng.uniform(0.05, 1.2))  # a random moment: upload, create, polling or reading
            killed = run.is_alive()
            if killed:
                os.kill(run.pid, signal.SIGKILL)
            run.join()
            run = start_run(args, env=ENV, log=log)
            run.join()
            same = same_results(work / f"batch{trial}-out", work / "whole")
            rows.append((killed, batch_paid(server) - prompts, server.batches_created, same, run.exitcode))
    print(f"  kill -9: {trials} trials of {prompts} prompts ({sum(r[0] for r in rows)} killed mid-run, the rest had "
          f"ended): {sum(r[1] for r in rows)} requests re-paid in all, worst {max(r[1] for r in rows)}; batches "
          f"created per trial {sorted({r[2] for r in rows})}; results identical to an uninterrupted run's in "
          f"{sum(r[3] for r in rows)} of {trials}; exit codes of the resumed runs {sorted({r[4] for r in rows})}")
    with OpenAIBatchServer(api_key=KEY, polls_until_done=4) as server:
        runs = [start_run(batch_run(server, work / "two", work / f"two{i}", sample_k, work), env=ENV, log=log)
                for i in range(2)]
        for run in runs:
            run.join()
        print(f"  two identical runs together on one store: {prompts} prompts, {batch_paid(server)} paid, "
              f"{server.batches_created} batches created, exit codes {[r.exitcode for r in runs]}")
    for limit in (60_000, 200_000):  # the disk fills at the ledger, or at the answers
        with OpenAIBatchServer(api_key=KEY, polls_until_done=4) as server:
            full = work / f"full{limit}"
            run = start_run(batch_run(server, full, work / "full-out", sample_k, work), env=ENV, log=log,
                            file_size_limit=limit)
            run.join()
            first = run.exitcode
            said = [line for line in log.read_text().splitlines() if line.startswith("Error")][-1:]
            run = start_run(batch_run(server, full, work / "full-out2", sample_k, work), env=ENV, log=log)
            run.join()
            print(f"  a {limit // 1000} kB file-size limit under the store: exit {first}, then with room exit "
                  f"{run.exitcode}; {batch_paid(server)} paid for {prompts} prompts; its sentence: "
                  f"{said[0] if said else '(none)'}")


class KillOneWorker:
    """A progress sink that SIGKILLs one Ray worker once ``after`` answers have arrived."""

    def __init__(self, server, after: int):
        self.server, self.after, self.seen = server, after, 0
        self.killed: int | None = None
        self.in_flight = 0

    def expect(self, n: int) -> None:
        pass

    def advance(self, n: int, **counts: int) -> None:
        self.seen += n
        if self.killed is None and self.seen >= self.after:
            self.killed, self.in_flight = ray_worker_pids()[0], self.server.in_flight
            os.kill(self.killed, signal.SIGKILL)


def ray_trials(work: Path, trials: int = 10, sample_k: int = 150, per_worker: int = 6) -> None:
    import ray

    from genderprobe.interfaces.api import RunConfig, run_probe
    from genderprobe.models.base import ModelOptions
    from genderprobe.testing.openai_server import OpenAITestServer

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    rng, rows = random.Random(47), []
    try:
        with OpenAITestServer(p_man=0.7, latency=0.05) as server:
            def run(cache, executor="local", progress=None):
                config = RunConfig(model="", n_resamples=50, cache_dir=cache, executor=executor, concurrency=per_worker,
                                   ray_workers=2 if executor == "ray" else None, progress=progress,
                                   model_options=ModelOptions(base_url=server.base_url, api_key=KEY))
                return run_probe("relationship-levy", "openai:ray-test", config=config, sample_k=sample_k)

            whole = run(work / "ray-whole").document
            for trial in range(trials):
                server.reset_counts()
                killer = KillOneWorker(server, rng.randint(1, 2 * sample_k - 2 * per_worker))
                doc = run(work / f"ray{trial}", "ray", killer).document
                asked = dict(server.requests)
                rows.append((killer.in_flight, sum(asked.values()) - len(asked), len(asked) == 2 * sample_k,
                             same_documents(doc, whole)))
    finally:
        ray.shutdown()
    print(f"  a worker SIGKILLed at a random moment: {trials} trials of {2 * sample_k} prompts on 2 workers "
          f"(concurrency {per_worker} each): asked twice {[r[1] for r in rows]} against the requests in flight at "
          f"the server (both workers) {[r[0] for r in rows]}; every prompt answered in {sum(r[2] for r in rows)} "
          f"of {trials}; results identical to a one-process run's in {sum(r[3] for r in rows)} of {trials}")


def hf_trials(work: Path, trials: int = 10, sample_k: int = 100) -> None:
    from genderprobe.testing.tiny_models import build_tiny_model

    model = build_tiny_model(work / "tiny")
    rng, log, setup = random.Random(47), work / "hf.log", "genderprobe.testing.kill_trials:log_finished_parts"
    run = start_run(hf_run(model, work / "hf-whole-cache", work / "hf-whole", sample_k), env={}, log=log)
    run.join()
    lost, same = [], 0
    for trial in range(trials):
        cache, out, parts = work / f"hf{trial}", work / f"hf{trial}-out", work / f"hf{trial}.parts"
        args, env = hf_run(model, cache, out, sample_k), {FINISHED_LOG: str(parts)}
        run, target = start_run(args, env=env, log=log, setup=setup), rng.randint(1, 2 * sample_k - 1)
        while stored(cache) < target and run.is_alive():
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.1))  # then a random moment of the batches that follow
        os.kill(run.pid, signal.SIGKILL)
        run.join()
        lost.append(finished_not_stored(parts, cache))
        run = start_run(args, env=env, log=log, setup=setup)
        run.join()
        same += same_results(out, work / "hf-whole")
    print(f"  kill -9: {trials} trials of {2 * sample_k} prompts in batches of 8: answers finished but not "
          f"stored at the kill {lost} (worst {max(lost)}); results identical to an uninterrupted run's in "
          f"{same} of {trials}")


def main() -> None:
    quiet_aiohttp_logs()
    work = Path(tempfile.mkdtemp(prefix="bench-kill-untried-"))
    parts = sys.argv[1:] or ["batch", "ray", "hf"]
    if "batch" in parts:
        print("1. --batch")
        batch_trials(work)
    if "ray" in parts:
        print("2. the Ray executor")
        ray_trials(work)
    if "hf" in parts:
        print("3. local weights (hf:)")
        hf_trials(work)


if __name__ == "__main__":
    main()
