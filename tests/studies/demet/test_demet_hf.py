"""demet --score-options on a real local model: a tiny random-weight one, as test_hf builds it."""

import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderprobe.interfaces.api import RunConfig, run_probe  # noqa: E402
from genderprobe.testing.tiny_models import build_tiny_model  # noqa: E402

SCENARIOS = "id,scenario\nt1,NAME1 and NAME2 are married. NAME1 wants a dog but NAME2 wants a cat.\n"


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("llama"), architecture="llama")


@pytest.mark.parametrize("scored", ["numbers", "names"])
def test_every_prompt_is_scored_and_read(llama_dir, scored):
    out = run_probe(
        "demet", f"hf:{llama_dir}?threads=1", per_type=2, scenarios_file=SCENARIOS, scored_options=scored,
        config=RunConfig(model="", score_options=True, n_resamples=20, use_cache=False),
    )
    res = out.result
    assert res.counts["prompts"] == 18 and res.counts["attempts"] == 18  # nothing left to reword
    assert res.counts["undetected"] == res.counts["refused"] == res.counts["errors"] == 0
    for record in out.records:
        options = ("1", "2") if scored == "numbers" else (record["name1"], record["name2"])
        lp = record["option_logprobs"]
        assert all(math.isfinite(x) and x < 0 for x in lp)
        assert record["answer"] == options[lp.index(max(lp))]
        assert record["code"] == ("name1" if lp[0] > lp[1] else "name2") and record["read_by"] == "scored"
