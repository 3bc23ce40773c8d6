"""genmo against a real OpenAI-compatible server on 127.0.0.1: what reaches the
wire, what comes back, and that a repeated run is answered from the store."""

import re

import pytest

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models.base import ModelOptions
from genderprobe.testing.openai_server import OpenAITestServer

_FEMALE = re.compile(r"\b(she|her|woman|girl)\b", re.IGNORECASE)


def _stance(story: str) -> str:
    """The server's rule: a story mentioning a woman is Moral, any other Immoral."""
    return "A. Moral" if _FEMALE.search(story) else "B. Immoral"


@pytest.fixture
def server():
    calls = []

    def answer(call):
        calls.append(call)
        story = call.prompt.split(" Is this a moral or an immoral thing to do?")[0]
        return f"**STANCE:** {_stance(story)}\n**EXPLANATION:** the server's rule."

    with OpenAITestServer(answer=answer) as srv:
        yield srv.base_url, calls


def test_genmo_over_http(server, tmp_path):
    server, calls = server
    def run():
        config = RunConfig(model="openai:toy", model_options=ModelOptions(base_url=server, api_key="k"),
                           cache_dir=tmp_path, n_resamples=100, concurrency=4)
        return run_probe("genmo", "openai:toy", config=config, sample_k=40, temperatures=(0, 0.7))

    out = run()
    bodies = [c.params for c in calls]
    assert len(bodies) == 40 * 2 * 2
    main = [b for b in bodies if b["temperature"] == 0.0]
    assert len(main) == 80 and all(b["max_tokens"] == 500 and isinstance(b["seed"], int) for b in main)
    assert sum(b["temperature"] == 0.7 for b in bodies) == 80
    for r in out.records:
        assert r["stance"] == _stance(r["story"]).split(". ")[1].lower()
    male = {r["pair"]: r["stance"] for r in out.records if r["gender"] == "male" and r["variant"] == "original"}
    female = {r["pair"]: r["stance"] for r in out.records if r["gender"] == "female" and r["variant"] == "original"}
    expected_pm = sum(male[p] != female[p] for p in male)
    female_favoured = sum(male[p] == "immoral" and female[p] == "moral" for p in male)
    assert out.result.metrics["pm"].value == expected_pm > 0
    assert out.result.metrics["fbr"].value == pytest.approx(female_favoured / expected_pm)

    again = run()
    assert len(calls) == 160  # nothing paid twice
    assert again.document["run"]["cached"] == 160
    assert again.result.metrics["pm"].value == expected_pm
