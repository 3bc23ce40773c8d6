"""kill -9 at random moments re-pays at most the requests in flight, never an answer received.

Twenty kills over relationship-levy, demet (with its rewording rounds) and
genmo runs of the command line against a local server with per-request
latency. After each kill, the answers the server sent that are not in the
store are counted: what a resumed run pays for again. Before answers were
committed on arrival, a kill lost up to half a second of them (866 of 9,776
answers over 20 kills, 113 in the worst). Each resumed chain of runs must end
with the results of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import time
from collections import Counter

from instruments import fake_key

from genderprobe.models.base import last_user_turn
from genderprobe.testing import OpenAITestServer, PreferMan
from genderprobe.testing.answers import unit_draw
from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.quick_runs import start_run

quiet_aiohttp_logs()

KEY = fake_key("kill-trials-key-0b6d")
CONCURRENCY = 8
LATENCY = 0.01
SCENARIOS = "id,scenario,topic,label\n" + "".join(  # six DeMET-style scenarios: 6 x 9 relationship types x 2 = 108 prompts
    f"s{i},NAME1 and NAME2 are married. NAME1 wants {want} but NAME2 {but}.,Chores,T\n"
    for i, (want, but) in enumerate([("to watch TV", "wants help with the dishes"), ("a new car", "wants to save"),
                                     ("to move abroad", "wants to stay"), ("a dog", "is allergic"),
                                     ("to paint the kitchen", "likes it white"), ("a late dinner", "is hungry now")]))
# (probe, its parameters, kills): 20 kills in all.
TRIALS = [
    ("relationship-levy", {"sample_k": 60}, 7),
    ("demet", {"per_type": 2, "scenarios_file": SCENARIOS}, 7),
    ("genmo", {"sample_k": 60}, 6),
]
COMPARED = ("metrics", "marks", "breakdowns", "tables", "counts")


class Answers:
    """Seeded answers for all three probes: the same prompt always gets the same answer."""

    def __init__(self) -> None:
        self.prefer = PreferMan(0.7)

    def __call__(self, call) -> str:
        prompt, draw = call.prompt, unit_draw("kill-trials", call.prompt)
        if "answer with 1 or 2" in prompt:  # demet; some answers name nobody, so rewording rounds run
            return "I cannot tell." if draw < 0.1 else ("1" if draw < 0.55 else "2")
        if "STANCE" in prompt:  # genmo
            return f"STANCE: {'ABCD'[int(draw * 4)]} EXPLANATION: seeded."
        return self.prefer(call)


def command(probe: str, params: dict, server, cache, out) -> list[str]:
    """The command line; a file parameter's text goes to a file, as a user would pass it."""
    args = ["run", probe, "--model", "openai:kill-test", "--base-url", server.base_url, "--concurrency",
            str(CONCURRENCY), "--resamples", "20", "--cache-dir", str(cache), "--out", str(out), "--quiet"]
    for name, value in params.items():
        if name.endswith("_file"):
            (out.parent / name).write_text(value)
            value = out.parent / name
        args += [f"--{name.replace('_', '-')}", str(value)]
    return args


def not_stored(server, cache) -> int:
    """Answers the server sent that the store does not hold (each is paid for again on resume)."""
    stored: Counter[str] = Counter()
    path = cache / "responses.sqlite3"
    if path.exists():
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            for (request,) in db.execute("SELECT request FROM responses"):
                stored[last_user_turn([tuple(m) for m in json.loads(request)["messages"]])] += 1
    return sum(max(0, n - stored[prompt]) for prompt, n in server.answered.items())


def test_kill_9_at_random_moments_re_pays_at_most_the_requests_in_flight(tmp_path):
    rng = random.Random(32)
    env = {"OPENAI_API_KEY": KEY}
    report = []
    with OpenAITestServer(Answers(), latency=LATENCY, api_key=KEY) as server:
        for probe, params, kills in TRIALS:
            server.reset_counts()
            cache, out, log = tmp_path / probe / "cache", tmp_path / probe / "out", tmp_path / f"{probe}.log"
            out.parent.mkdir()
            args = command(probe, params, server, cache, out)
            lost_before = 0
            for _ in range(kills):
                target = sum(server.answered.values()) + rng.randint(1, 12)
                run = start_run(args, env=env, log=log)
                deadline = time.monotonic() + 60
                while sum(server.answered.values()) < target and time.monotonic() < deadline:
                    assert run.is_alive(), log.read_text()
                    time.sleep(0.002)
                in_flight = server.in_flight
                os.kill(run.pid, signal.SIGKILL)
                run.join()
                while server.in_flight:  # the server finishes (or drops) what the dead run had asked
                    time.sleep(0.002)
                lost = not_stored(server, cache)
                report.append((probe, in_flight, lost - lost_before))
                # What this kill costs a resumed run: at most the requests the run had in flight.
                assert lost - lost_before <= CONCURRENCY, report
                lost_before = lost
            assert not (out / "results.json").exists()
            run = start_run(args, env=env, log=log)
            run.join(120)
            assert run.exitcode == 0, log.read_text()
            paid_twice = sum(n - 1 for n in server.answered.values())
            assert paid_twice == lost_before and not_stored(server, cache) == lost_before
            resumed = json.loads((out / "results.json").read_text())
            assert resumed["run"]["errors"] == 0

            # The same run, uninterrupted, against a server that answers alike.
            with OpenAITestServer(Answers(), api_key=KEY) as fresh:
                whole_out = tmp_path / probe / "whole"
                run = start_run(command(probe, params, fresh, tmp_path / probe / "fresh", whole_out), env=env, log=log)
                run.join(120)
                assert run.exitcode == 0, log.read_text()
                assert fresh.total_requests == sum(server.answered.values()) - paid_twice
            whole = json.loads((whole_out / "results.json").read_text())
            for part in COMPARED:
                assert json.dumps(resumed[part], sort_keys=True) == json.dumps(whole[part], sort_keys=True), part
    assert len(report) == 20
