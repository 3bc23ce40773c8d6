"""The layout: imports run one way, every study is one folder, the registry needs no list.

Layers, from the bottom:

- base: errors, stats and the request/response types (models.base);
- contract: what a study implements (contract, and its chart specs, charts);
- harness: every other module outside studies/ and testing/ (api, runner,
  store, models, executors, results, report, cli, the shared services);
- studies: genderprobe/studies/<study>/, each importing the layers below, its
  own modules and, of another study, only its data loader (``dataset``);
- testing: the test kit (test servers, tiny models), which may use anything
  and which nothing else imports.

A module imports only from its own layer or the layers below it. The import
graph is read from the source (every import statement, also those inside
functions), so a violation fails here before anyone runs the code.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest

import genderprobe
from genderprobe import registry

ROOT = Path(genderprobe.__file__).parent
BASE = {"genderprobe.errors", "genderprobe.stats", "genderprobe.models.base"}
CONTRACT = {"genderprobe.contract", "genderprobe.charts"}
LAYERS = ("base", "contract", "harness", "studies", "testing")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def layer(module: str) -> str:
    if module in BASE:
        return "base"
    if module in CONTRACT:
        return "contract"
    if module.startswith("genderprobe.studies"):
        return "studies"
    if module.startswith("genderprobe.testing"):
        return "testing"
    return "harness"


def study_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "studies" else None


def imports(module: str) -> set[str]:
    """The genderprobe modules ``module`` imports (a name imported from a package is
    the submodule when there is one)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {m for m in found if m == "genderprobe" or m.startswith("genderprobe.")}


def violations() -> list[str]:
    bad = []
    for module in sorted(MODULES):
        mine = layer(module)
        for dep in sorted(imports(module)):
            theirs = layer(dep)
            if dep == "genderprobe" and mine != "harness":
                # the package itself is the public API (run_probe), i.e. the harness
                theirs = "harness"
            if LAYERS.index(theirs) > LAYERS.index(mine):
                bad.append(f"{module} ({mine}) imports {dep} ({theirs})")
            elif mine == theirs == "studies" and study_of(module) != study_of(dep):
                if study_of(module) is None or study_of(dep) is None or not dep.endswith(".dataset"):
                    bad.append(f"{module} imports {dep}: another study's internals (only its dataset may be used)")
    return bad


def test_imports_run_one_way_only():
    assert violations() == []


def test_the_checker_sees_a_harness_module_that_imports_a_study(monkeypatch):
    # The test above must be able to fail: a harness module importing a study,
    # a study importing another's reader, and the contract importing the harness.
    fake = {
        "genderprobe.store": "from genderprobe.studies.genmo.stance import read_stance\n",
        "genderprobe.studies.relationship_levy.probe": "from genderprobe.studies.demet.answer_reader import x\n",
        "genderprobe.contract": "def f():\n    from genderprobe.api import run_probe\n",
    }
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: next(
        (src for m, src in fake.items() if MODULES[m] == self), None) or real(self, **kw))
    found = violations()
    assert "genderprobe.store (harness) imports genderprobe.studies.genmo.stance (studies)" in found
    assert any("relationship_levy.probe imports genderprobe.studies.demet.answer_reader" in v for v in found)
    assert "genderprobe.contract (contract) imports genderprobe.api (harness)" in found


def test_every_probe_lives_in_its_study_folder():
    for name, cls in registry.builtin_probes().items():
        parts = cls.__module__.split(".")
        assert parts[:2] == ["genderprobe", "studies"] and len(parts) == 4, (name, cls.__module__)
        assert parts[3] == "probe" or parts[3].endswith("_probe"), (name, cls.__module__)
    outside = [m for m in MODULES if layer(m) != "studies" and m.rpartition(".")[2] in ("probe", "probes")]
    assert outside == []


def test_each_study_keeps_its_data_and_corpora_in_its_folder():
    for study in registry.studies():
        folder = ROOT / "studies" / study
        assert (folder / "data").is_dir(), study
        datasets = [p for p in (folder / "data").rglob("*") if p.is_file() and not p.name.endswith("paper_tables.json")]
        if datasets:  # a dataset travels with its licence or source note; paper tables are facts
            assert any((folder / "data").glob("LICENSE*")) or any((folder / "data").glob("SOURCE*")), study
        assert list(folder.glob("corpora/*.jsonl")), f"{study}: no answer corpus"
    assert sorted(p.name for p in (ROOT / "data").iterdir()) == ["SOURCES.md", "names"]


def test_a_new_study_is_a_new_folder_and_nothing_else(tmp_path, monkeypatch):
    study = tmp_path / "zz_example"
    (study / "data").mkdir(parents=True)
    (study / "__init__.py").write_text('"""An example study."""\n')
    (study / "data" / "words.csv").write_text("word\nkind\n")
    (study / "probe.py").write_text(textwrap.dedent('''
        from genderprobe.contract import Probe, ProbeResult
        from genderprobe.packaged import read_csv

        class Example(Probe):
            name = "zz-example"
            summary = "An example."

            def run(self, ctx):
                return ProbeResult(metrics={}, extra={"words": [r["word"] for r in read_csv("zz_example/words.csv", ("word",))]})
    '''))
    (study / "commands.py").write_text(textwrap.dedent('''
        import click

        @click.command("zz-example")
        def example():
            """An example command."""

        COMMANDS = [example]
    '''))
    import genderprobe.api
    import genderprobe.studies

    monkeypatch.setattr(genderprobe.studies, "__path__", [*genderprobe.studies.__path__, str(tmp_path)])
    monkeypatch.setattr(genderprobe.api, "_DATA_HASHES", None)  # hashed once per process; hash again with the new study
    caches = (registry.studies, registry.builtin_probes, registry.all_probes, registry.study_data_folders)
    for c in caches:
        c.cache_clear()
    try:
        assert "zz_example" in registry.studies()
        assert registry.get_probe("zz-example").__module__ == "genderprobe.studies.zz_example.probe"
        assert [c.name for c in registry.study_commands() if c.name == "zz-example"] == ["zz-example"]
        out = genderprobe.run_probe("zz-example", "reference:random")
        assert out.result.extra == {"words": ["kind"]}
        assert "zz_example/words.csv" in out.document["versions"]["data"]
    finally:
        for c in caches:
            c.cache_clear()
        for name in [m for m in sys.modules if m.startswith("genderprobe.studies.zz_example")]:
            del sys.modules[name]


@pytest.mark.parametrize("old, new", [
    ("genderprobe.bws", "genderprobe.studies.fifty_shades.bws"),
    ("genderprobe.probes.base", "genderprobe.contract"),
    ("genderprobe.probes.relationship_levy", "genderprobe.studies.relationship_levy.probe"),
    ("genderprobe.datasets.genmo", "genderprobe.studies.genmo.dataset"),
    ("genderprobe.fifty_shades.judge", "genderprobe.studies.fifty_shades.judge"),
    ("genderprobe.demet.answers", "genderprobe.studies.demet.answer_reader"),
    ("genderprobe.cli_commands.judge", "genderprobe.studies.fifty_shades.commands.judge"),
])
def test_old_module_paths_still_import_with_a_warning(old, new):
    import importlib
    import warnings

    for name in [m for m in sys.modules if m == old or m.startswith(old + ".")]:
        del sys.modules[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert f"{old} moved to {new}; import it from there." in [str(w.message) for w in caught]
    assert all(w.category is DeprecationWarning for w in caught)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # its own spec: its data and submodules are still found


def test_old_names_of_moved_packages_still_work():
    from genderprobe.contract import Probe
    from genderprobe.studies.fifty_shades import dataset

    with pytest.warns(DeprecationWarning):
        from genderprobe.datasets import fifty_shades
        from genderprobe.probes import get_probe
        from genderprobe.probes.base import Probe as OldProbe
    assert fifty_shades is dataset and OldProbe is Probe
    assert get_probe("demet") is registry.get_probe("demet")
    with pytest.raises(ModuleNotFoundError):
        import genderprobe.demet.no_such_module  # noqa: F401
