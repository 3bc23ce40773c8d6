"""Empty answers are asked again once, never in silence, and not at all with --keep-empty.

Against a real OpenAI-compatible server on 127.0.0.1 that answers a fixed quarter of
the prompts with nothing: the requests it receives show that a run asks again each
prompt whose stored answer was empty once (saying so before it sends, and a dry run
counting them apart), keeps a second empty answer, so a prompt is paid at most twice
ever, and that --keep-empty (flag, config key, Python API) rereads with another
--reader for nothing, counting the same losses as the run that got them.
"""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner
from instruments import fake_key

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models import ModelOptions
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.answers import PreferMan

KEY = fake_key("empty-again-key-7c21")
LOSSES = ("errors", "empty", "error_kinds")


class SilentOnAQuarter:
    """Answers like PreferMan, except a fixed quarter of the prompts, answered with no text every time."""

    def __init__(self) -> None:
        self.man = PreferMan(0.75)

    def __call__(self, call) -> str:
        return "" if hashlib.sha256(call.prompt.encode()).digest()[0] % 4 == 0 else self.man(call)


def run(server, tmp_path, out, *extra):
    args = ["run", "relationship-levy", "--model", "openai:test", "--base-url", server.base_url, "--sample-k", "10",
            "--resamples", "20", "--cache-dir", str(tmp_path), "--out", str(tmp_path / out), *extra]
    result = CliRunner().invoke(main, args, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.output
    return result, json.loads((tmp_path / out / "results.json").read_text())["run"] if out else None


def dry_run(server, tmp_path, *extra):
    result, _ = run(server, tmp_path, "", "--dry-run", "--json", *extra)
    return json.loads(result.output)["dry_run"]["model"]


def test_an_empty_answer_is_asked_again_once_and_said_so_then_kept(tmp_path):
    with OpenAITestServer(SilentOnAQuarter()) as server:
        _, first = run(server, tmp_path, "first")
        empty = first["empty"]
        assert server.total_requests == 20 and 0 < empty < 10 and first["errors"] == empty
        estimate = dry_run(server, tmp_path)
        assert (estimate["to_send"], estimate["empty_again"]) == (empty, empty)
        text, _ = run(server, tmp_path, "", "--dry-run")
        assert f"{empty} came back empty last time and are asked again" in text.output
        assert server.total_requests == 20
        said, second = run(server, tmp_path, "second")
        assert server.total_requests == 20 + empty  # each empty one asked once more, and said so
        assert f"{empty} prompts to openai:test came back empty last time and are asked again" in said.output
        assert {k: second[k] for k in LOSSES} == {k: first[k] for k in LOSSES} and second["sent"] == empty
        # Empty twice: kept as the answer; nothing is sent again, ever.
        said, third = run(server, tmp_path, "third")
        assert server.total_requests == 20 + empty and third["sent"] == 0
        assert "came back empty last time" not in said.output
        assert {k: third[k] for k in LOSSES} == {k: first[k] for k in LOSSES}
        assert max(server.requests.values()) == 2
        assert dry_run(server, tmp_path)["to_send"] == 0


def test_keep_empty_rereads_with_another_reader_for_nothing(tmp_path):
    with OpenAITestServer(SilentOnAQuarter()) as server:
        _, first = run(server, tmp_path, "first")
        assert first["empty"] > 0 and server.total_requests == 20
        assert dry_run(server, tmp_path, "--keep-empty")["to_send"] == 0
        said, reread = run(server, tmp_path, "reread", "--keep-empty", "--reader", "improved")
        assert "came back empty last time" not in said.output
        (tmp_path / "keep.toml").write_text("[run]\nkeep_empty = true\n")
        _, from_file = run(server, tmp_path, "from-file", "--config", str(tmp_path / "keep.toml"))
        config = RunConfig(model="openai:test", model_options=ModelOptions(base_url=server.base_url, api_key=KEY),
                           cache_dir=tmp_path, n_resamples=20, keep_empty=True)
        from_api = run_probe("relationship-levy", "openai:test", config=config, sample_k=10).document["run"]
        assert server.total_requests == 20
        for again in (reread, from_file, from_api):
            assert again["sent"] == 0 and {k: again[k] for k in LOSSES} == {k: first[k] for k in LOSSES}
