"""The harness (api.execute): what it opens it closes, and what it writes is whole."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from instruments import ScriptedModel

from genderprobe.errors import UserError
from genderprobe.interfaces import run_resources
from genderprobe.interfaces.api import RunConfig, execute
from genderprobe.interfaces.cli import main
from genderprobe.outputs import run_files
from genderprobe.studies.relationship_levy.probe import RelationshipLevy


class ClosableModel(ScriptedModel):
    """A scripted model that goes to the store and remembers being closed."""

    cacheable = True

    def __init__(self) -> None:
        super().__init__(lambda prompt, repetition: "(a)", spec="test:closable")
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def opened(monkeypatch):
    """Route execute's model opening to a ClosableModel and hand it to the test."""
    model = ClosableModel()
    monkeypatch.setattr(run_resources, "open_model", lambda spec, options, **kw: (model, kw.get("concurrency", 8)))
    return model


def _config(tmp_path, **kw):
    return RunConfig(model="test:closable", cache_dir=tmp_path / "cache", **kw)


def test_the_model_is_closed_after_a_run(tmp_path, opened):
    execute(RelationshipLevy(sample_k=3), _config(tmp_path))
    assert opened.closed == 1


@pytest.mark.parametrize(
    "break_it,message",
    [
        (lambda tmp: RunConfig(model="", score_options=True), "cannot score answer options"),
        (lambda tmp: RunConfig(model="", reader_judge="nobackend:x", cache_dir=tmp / "c"), "Unknown model backend"),
        (lambda tmp: RunConfig(model="", cache_dir=tmp / "file" / "sub"), "response store"),
        (lambda tmp: RunConfig(model="", max_retries=-1, cache_dir=tmp / "c"), "retries"),
    ],
)
def test_the_model_is_closed_when_the_run_cannot_start(tmp_path, opened, break_it, message):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(UserError, match=message):
        execute(RelationshipLevy(sample_k=3), break_it(tmp_path))
    assert opened.closed == 1


@pytest.mark.parametrize("seed", [-1, 1.5, "3"])
def test_a_bad_seed_is_one_sentence(seed):
    with pytest.raises(UserError, match=r"seed \(--seed\) must be a whole number at least 0"):
        execute(RelationshipLevy(sample_k=3), RunConfig(model="reference:random", seed=seed))


def test_output_files_get_the_usual_permissions(tmp_path):
    out = tmp_path / "out"
    execute(RelationshipLevy(sample_k=3), RunConfig(model="reference:random", out_dir=out))
    umask = os.umask(0)
    os.umask(umask)
    for name in ("results.json", "records.jsonl"):
        assert (out / name).stat().st_mode & 0o777 == 0o666 & ~umask, name


def run_cli(*args):
    return CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:biased", "--sample-k", "3", *args])


def test_an_output_folder_inside_a_file_is_one_sentence(tmp_path):
    (tmp_path / "file").write_text("x")
    result = run_cli("--out", str(tmp_path / "file" / "out"))
    assert result.exit_code == 2, result.output
    assert "Cannot write" in result.output and "Traceback" not in result.output


def test_a_results_path_taken_by_a_folder_is_refused_before_the_run(tmp_path):
    out = tmp_path / "out"
    (out / "results.json").mkdir(parents=True)
    result = run_cli("--out", str(out))
    assert result.exit_code == 2, result.output
    assert "results.json is a folder" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]  # no records without results


def test_a_failed_results_write_leaves_no_records(tmp_path, monkeypatch):
    out = tmp_path / "out"

    def disk_full(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_files, "write_json", disk_full)
    result = run_cli("--out", str(out))
    assert result.exit_code == 1, result.output  # a full disk is no mistake in the command: run again later
    assert "No space left on device" in result.output
    assert list(out.iterdir()) == []


def test_the_python_api_is_importable_from_the_package():
    import genderprobe
    from genderprobe.interfaces import api

    for name in ("run_probe", "arun_probe", "RunConfig", "RunOutput"):
        assert getattr(genderprobe, name) is getattr(api, name)
    assert sorted(genderprobe.__all__) == sorted(["__version__", "run_probe", "arun_probe", "RunConfig", "RunOutput"])
