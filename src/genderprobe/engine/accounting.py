"""What a run's requests were and what they cost: one entry per runner (the model, each judge).

Tokens are those sent and received by this run (answers from the store cost
nothing); prices are US dollars per million tokens; batch APIs (OpenAI,
Anthropic) bill their answers at half the price.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

ROLES = ("model", "judge", "checker", "reader_judge")


def runner_accounting(runner: Any, model: Any, generation: Any | None,
                      prices: tuple[float | None, float | None]) -> dict[str, Any]:
    """One runner's requests, tokens, who answered, what was sent and, with prices, what it cost."""
    stats = runner.stats.to_json()
    stats["endpoint"] = model.endpoint
    if generation is not None:
        stats["generation_sent"] = model.effective_params(generation)
    price_in, price_out = prices
    if price_in is not None or price_out is not None:
        stats["prices_per_million"] = {"in": price_in, "out": price_out}
        batch_in, batch_out = stats["batch_prompt_tokens"], stats["batch_completion_tokens"]
        stats["cost_usd"] = round(
            cost(stats["prompt_tokens"] - batch_in, stats["completion_tokens"] - batch_out, price_in, price_out)
            + cost(batch_in, batch_out, price_in, price_out) / 2, 6)
    return stats


def cost(tokens_in: float, tokens_out: float, price_in: float | None, price_out: float | None) -> float:
    """US dollars for the tokens at prices per million (a price not given counts as 0)."""
    return round((tokens_in * (price_in or 0.0) + tokens_out * (price_out or 0.0)) / 1e6, 6)


def by_role(run: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(role, stats) for the model and each judge of a results document's ``run`` entry."""
    for role in ROLES:
        stats = run if role == "model" else run.get(role)
        if stats:
            yield role, stats


def empty_warnings(run: dict[str, Any]) -> list[str]:
    return [f"{stats['empty']:,} answers of {_who(role)} were empty and count as failed requests; "
            f"a run again asks once more for each prompt that came back empty only once, unless --keep-empty "
            f"(see error_kinds.empty in the results)."
            for role, stats in by_role(run) if stats.get("empty")]


def cut_warnings(run: dict[str, Any]) -> list[str]:
    return [f"{stats['cut']:,} answers of {_who(role)} were longer than max_tokens allows and were cut "
            f"before anything read them (the server ignores max_tokens; see cut_from in the records)."
            for role, stats in by_role(run) if stats.get("cut")]


def _who(role: str) -> str:
    return "the model" if role == "model" else f"the {role.replace('_', ' ')}"
