"""``--dry-run``: what a run would send and cost, with nothing sent.

:class:`DryRun` stands where the runner stands. It looks every request up in
the store, counts those it would send and estimates their tokens. So that
the probe runs through without a model, it answers them as the calibration
model ``reference:random`` does (a stored answer is returned as is): rounds
that depend on the answers (a judge reading them, DeMET's rewording) are
counted as that model's answers would need them, which the estimate says.

Above ``--max-requests`` (see :mod:`genderprobe.engine.work_bounds`) nothing is built:
:func:`counted_document` reports the count the probe computes from its
parameters, and says the run would be refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from genderprobe.engine.accounting import cost
from genderprobe.engine.empty_answers import stored_empty_answers
from genderprobe.engine.store import Store, request_keys
from genderprobe.engine.token_count import ESTIMATE, token_counter
from genderprobe.engine.work_bounds import check_running_total
from genderprobe.models import get_model
from genderprobe.models.base import Model, Request, Response


@dataclass
class DryRunStats:
    requests: int = 0
    cached: int = 0
    to_send: int = 0
    empty_again: int = 0  # of to_send: prompts that came back empty last time, asked again
    prompt_tokens: int = 0  # counted as token_count says (token_count)
    completion_tokens: int = 0  # at most: each request's max_tokens
    unbounded: int = 0  # requests with no max_tokens, whose answer length is unknown
    token_count: str = ESTIMATE  # how prompt_tokens were counted

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class DryRun:
    """Counts requests instead of sending them. Call it like a runner."""

    def __init__(self, model: Model, store: Store | None, *, max_age: float | None = None,
                 max_requests: int | None = None, keep_empty: bool = False):
        self.model = model
        self.store = store if model.cacheable else None
        self.max_age = max_age
        self.max_requests = max_requests
        self.keep_empty = keep_empty
        self.counter = token_counter(model.spec)
        self.stats = DryRunStats(token_count=self.counter.method)
        self._stand_in = get_model("reference:random")

    def __call__(self, requests: Sequence[Request]) -> list[Response]:
        self.stats.requests += len(requests)
        check_running_total(self.max_requests, self.model.spec, self.stats.requests)
        found: dict[bytes, Response] = {}
        keys: list[bytes] = []
        if self.store:
            keys = request_keys(self.model.identity, requests)
            found = self.store.get_many(keys, max_age=self.max_age)
        out: list[Response | None] = [found.get(k) for k in keys] if keys else [None] * len(requests)
        missing = [i for i, r in enumerate(out) if r is None]
        if self.store and missing:
            taken, again = stored_empty_answers(self.store, keys, missing, keep_empty=self.keep_empty,
                                                max_age=self.max_age)
            for i, r in taken.items():
                out[i] = r
            missing = [i for i in missing if i not in taken]
            self.stats.empty_again += again
        self.stats.cached += len(requests) - len(missing)
        for i in missing:
            request = requests[i]
            self.stats.to_send += 1
            self.stats.prompt_tokens += self.counter.prompt_tokens(request)
            if request.params.max_tokens:
                self.stats.completion_tokens += request.params.max_tokens
            else:
                self.stats.unbounded += 1
        for i, r in zip(missing, self._stand_in.generate_batch([requests[i] for i in missing])):
            out[i] = r
        return out  # type: ignore[return-value]

    def close(self) -> None:
        self.model.close()


def dry_run_document(probe: Any, model: Model, counters: dict[str, DryRun | None],
                     prices: dict[str, tuple[float | None, float | None]]) -> dict[str, Any]:
    """The estimate for each model of the run, and the most it would cost where prices were given."""
    estimate: dict[str, Any] = {}
    for role, counter in counters.items():
        if counter is None:
            continue
        stats = counter.stats.to_json()
        price_in, price_out = prices[role]
        if price_in is not None or price_out is not None:
            stats["cost_usd_at_most"] = cost(stats["prompt_tokens"], stats["completion_tokens"], price_in, price_out)
        stats["model"] = counter.model.spec
        estimate[role] = stats
    return {
        "probe": probe.name,
        "model": model.spec,
        "endpoint": model.endpoint,
        "dry_run": estimate,
        "note": "Nothing was sent. Rounds that depend on the answers (a judge reading them, DeMET's rewording) "
                "are counted as a random model's answers would need them; prompt tokens counted with "
                + "; ".join(dict.fromkeys(e["token_count"] for e in estimate.values())) + ".",
    }


def counted_document(probe: Any, model: str, requests: int, limit: int) -> dict[str, Any]:
    """A dry run above the request limit: the count, worked out without building a prompt."""
    return {
        "probe": probe.name,
        "model": model,
        "endpoint": None,
        "dry_run": {"model": {"model": model, "requests": requests, "cached": None, "to_send": None,
                              "prompt_tokens": None, "completion_tokens": None, "unbounded": 0,
                              "above_limit": limit}},
        "note": f"Nothing was built or sent: {requests:,} requests is more than the {limit:,} --max-requests "
                f"allows, so the run would stop before its first request; the store was not looked at and no "
                f"tokens were estimated (raise --max-requests to count them).",
    }


def dry_run_lines(doc: dict[str, Any]) -> list[str]:
    """The dry run's summary as the command line prints it."""
    lines = [f"Dry run: {doc['probe']} on {doc['model']}" + (f" at {doc['endpoint']}" if doc["endpoint"] else "")]
    for role, e in doc["dry_run"].items():
        who = f"  {role.replace('_', ' ')} {e['model']}: {e['requests']:,} requests"
        if e.get("above_limit"):
            lines.append(f"{who}, above the limit of {e['above_limit']:,}")
            continue
        again = (f" ({e['empty_again']:,} came back empty last time and are asked again; --keep-empty takes them "
                 f"as they are)" if e.get("empty_again") else "")
        line = (f"{who}, {e['cached']:,} already stored, {e['to_send']:,} to send{again}; about "
                f"{e['prompt_tokens']:,} tokens in, at most {e['completion_tokens']:,} out")
        if e["unbounded"]:
            line += f" (and {e['unbounded']:,} answers with no --max-tokens bound)"
        if "cost_usd_at_most" in e:
            line += f"; at most ${e['cost_usd_at_most']:,.4f}"
        lines.append(line)
    lines.append(doc["note"])
    return lines


def suite_dry_run_lines(docs: list[dict[str, Any]]) -> list[str]:
    """The total of a suite's dry runs (every run and model together), then the note they share."""
    totals = {"requests": 0, "to_send": 0, "prompt_tokens": 0, "completion_tokens": 0, "unbounded": 0}
    costs: list[float] = []
    uncounted = 0
    for doc in docs:
        for e in doc["dry_run"].values():
            totals["requests"] += e["requests"]
            if e.get("above_limit"):
                uncounted += 1
                continue
            for key in ("to_send", "prompt_tokens", "completion_tokens", "unbounded"):
                totals[key] += e[key]
            if "cost_usd_at_most" in e:
                costs.append(e["cost_usd_at_most"])
    line = (f"Suite dry run, {len(docs)} runs: {totals['requests']:,} requests, {totals['to_send']:,} to send; about "
            f"{totals['prompt_tokens']:,} tokens in, at most {totals['completion_tokens']:,} out")
    if totals["unbounded"]:
        line += f" (and {totals['unbounded']:,} answers with no --max-tokens bound)"
    if costs:
        line += f"; at most ${sum(costs):,.2f}"
        if len(costs) < sum(len(d["dry_run"]) for d in docs) - uncounted:
            line += " for the models with prices"
    if uncounted:
        line += f"; {uncounted} run{'s' if uncounted > 1 else ''} above --max-requests not counted"
    return [line, docs[-1]["note"]]
