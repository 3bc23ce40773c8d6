"""A vLLM logits processor that makes a request generate given tokens.

Option scoring (:mod:`genderprobe.models.vllm_engine`) forces each prompt down one
option's tokens, reading at every step the log-probabilities of the tokens the
options may continue with. vLLM takes those from the model's raw logits, before
any logits processor runs (``logprobs_mode="raw_logprobs"``, its default), so
forcing changes which token comes next and none of the numbers read. vLLM's
structured outputs would not do: they mask the logits before the log-probabilities
are taken. Imported only where vLLM is installed; the engine loads it by name.
"""

from __future__ import annotations

from typing import Any

from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

# SamplingParams.extra_args key holding the token ids a request must generate.
FORCED = "genderprobe_forced_tokens"


class ForcedTokens(AdapterLogitsProcessor):
    """Requests with ``extra_args[FORCED]`` generate exactly those tokens; others are untouched."""

    def is_argmax_invariant(self) -> bool:
        return False

    def new_req_logits_processor(self, params: Any):
        forced = (params.extra_args or {}).get(FORCED)
        if not forced:
            return None

        def force(output_ids: list[int], logits):
            step = len(output_ids)
            if step < len(forced):
                logits.fill_(float("-inf"))
                logits[forced[step]] = 0.0
            return logits

        return force
