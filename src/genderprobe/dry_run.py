"""``--dry-run``: what a run would send and cost, with nothing sent.

:class:`DryRun` stands where the runner stands. It looks every request up in
the store, counts those it would send and estimates their tokens. So that
the probe runs through without a model, it answers them as the calibration
model ``reference:random`` does (a stored answer is returned as is): rounds
that depend on the answers (a judge reading them, DeMET's rewording) are
counted as that model's answers would need them, which the estimate says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from genderprobe.accounting import cost
from genderprobe.models import get_model
from genderprobe.models.base import Model, Request, Response
from genderprobe.store import Store, request_key


@dataclass
class DryRunStats:
    requests: int = 0
    cached: int = 0
    to_send: int = 0
    prompt_tokens: int = 0  # estimated: characters / 4 plus a few per message
    completion_tokens: int = 0  # at most: each request's max_tokens
    unbounded: int = 0  # requests with no max_tokens, whose answer length is unknown

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class DryRun:
    """Counts requests instead of sending them. Call it like a runner."""

    def __init__(self, model: Model, store: Store | None, *, max_age: float | None = None):
        self.model = model
        self.store = store if model.cacheable else None
        self.max_age = max_age
        self.stats = DryRunStats()
        self._stand_in = get_model("reference:random")

    def __call__(self, requests: Sequence[Request]) -> list[Response]:
        self.stats.requests += len(requests)
        found: dict[bytes, Response] = {}
        keys: list[bytes] = []
        if self.store:
            keys = [request_key(self.model.identity, r) for r in requests]
            found = self.store.get_many(keys, max_age=self.max_age)
        out: list[Response | None] = [found.get(k) for k in keys] if keys else [None] * len(requests)
        missing = [i for i, r in enumerate(out) if r is None]
        self.stats.cached += len(requests) - len(missing)
        for i in missing:
            request = requests[i]
            self.stats.to_send += 1
            self.stats.prompt_tokens += estimate_prompt_tokens(request)
            if request.params.max_tokens:
                self.stats.completion_tokens += request.params.max_tokens
            else:
                self.stats.unbounded += 1
        for i, r in zip(missing, self._stand_in.generate_batch([requests[i] for i in missing])):
            out[i] = r
        return out  # type: ignore[return-value]

    def close(self) -> None:
        self.model.close()


def estimate_prompt_tokens(request: Request) -> int:
    """About four characters a token, and a few tokens of chat framing per message."""
    return sum(len(content) for _, content in request.messages) // 4 + 4 * len(request.messages)


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
                "are counted as a random model's answers would need them; prompt tokens are estimated at four "
                "characters a token.",
    }
