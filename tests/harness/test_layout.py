"""The layout: the harness in rooms, imports one way and in no circle, every study one folder.

The rooms, from the bottom (docs/design.md says what each owns):

- base: errors, the version, the cache folder, plugin entry points, the old-paths hook, the
  statistics' vocabulary (analysis.stats), the request/response types (models.base) and the
  steps a user may wait on (steps);
- contract: what a study implements (contract, and its chart specs, charts);
- models: one module per backend;
- registry: finds the studies and their probes; data: the packaged data;
- engine: getting answers (runner, store, retries, batch, executors, dry run);
- analysis: numbers from answers (intervals, tests, losses, planning, validity);
- reading: what every study's answer reader shares, the judge as reader;
- outputs: the results document, records, terminal, report, paper tables;
- interfaces: the Python API, the command line, suites, inspect tasks, config;
- studies: genderprobe/studies/<study>/, each importing the harness, its own
  modules and, of another study, only its data loader (``dataset``);
- testing: the test kit (test servers, tiny models), which may use anything
  and which nothing else imports.

A module imports only from its own room or the rooms its room may import
(``MAY_IMPORT``), and no module imports itself through others (a circle). The
import graph is read from the source (every import statement, also those inside
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
BASE = {"genderprobe.errors", "genderprobe.version", "genderprobe.cache_dir", "genderprobe.plugins", "genderprobe.moved",
        "genderprobe.analysis.stats", "genderprobe.models.base", "genderprobe.steps"}
CONTRACT = {"genderprobe.contract", "genderprobe.charts"}
# The package itself (run_probe) and python -m genderprobe are the Python API and the command line.
INTERFACES = {"genderprobe", "genderprobe.__main__"}
HARNESS = ("base", "contract", "models", "registry", "data", "engine", "analysis", "reading", "outputs",
           "interfaces")
MAY_IMPORT = {
    "base": set(),
    "contract": {"base"},
    "models": {"base", "contract"},
    "registry": {"base", "contract", "models"},
    "data": {"base", "registry"},
    "engine": {"base", "models"},
    "analysis": {"base", "contract", "registry"},
    "reading": {"base", "contract", "models", "analysis"},
    "outputs": {"base", "contract", "registry", "data", "engine", "analysis", "reading"},
    "interfaces": set(HARNESS),
    "studies": set(HARNESS),
    "testing": {*HARNESS, "studies"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def room(module: str) -> str | None:
    """The room ``module`` belongs to; None for a module outside every room."""
    if module in BASE:
        return "base"
    if module in CONTRACT:
        return "contract"
    if module in INTERFACES:
        return "interfaces"
    if module == "genderprobe.registry":
        return "registry"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in MAY_IMPORT else None


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
    return {m for m in found if (m == "genderprobe" or m.startswith("genderprobe.")) and m != module}


def violations() -> list[str]:
    bad = []
    for module in sorted(MODULES):
        mine = room(module)
        if mine is None:
            bad.append(f"{module} is in no room: move it into one (docs/design.md)")
            continue
        for dep in sorted(imports(module)):
            theirs = room(dep)
            if theirs is not None and theirs != mine and theirs not in MAY_IMPORT[mine]:
                bad.append(f"{module} ({mine}) imports {dep} ({theirs})")
            elif mine == theirs == "studies" and study_of(module) != study_of(dep):
                if study_of(module) is None or study_of(dep) is None or not dep.endswith(".dataset"):
                    bad.append(f"{module} imports {dep}: another study's internals (only its dataset may be used)")
    return bad


def circles() -> list[str]:
    """Each circle of imports between modules, once, as "a -> b -> a"."""
    graph = {m: sorted(d for d in imports(m) if d in MODULES) for m in MODULES}
    found: list[str] = []
    state: dict[str, str] = {}  # "open" while on the path, "done" after

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for dep in graph[module]:
            if state.get(dep) == "open":
                circle = path[path.index(dep):] + [dep]
                found.append(" -> ".join(circle))
            elif dep not in state:
                visit(dep, [*path, dep])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_every_module_is_in_a_room_and_imports_run_one_way():
    assert violations() == []


def test_no_module_imports_itself_through_others():
    assert circles() == []


def test_each_room_says_what_it_owns_and_what_it_may_import():
    for name in ("models", "engine", "analysis", "reading", "outputs", "interfaces", "data", "studies", "testing"):
        doc = ast.get_docstring(ast.parse((ROOT / name / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert len(doc.splitlines()) >= 3 and "import" in doc, f"genderprobe/{name}/__init__.py: {doc!r}"


def _planted(monkeypatch, fake: dict[str, str]) -> None:
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: next(
        (src for m, src in fake.items() if MODULES[m] == self), None) or real(self, **kw))


def test_the_checker_sees_imports_against_the_rooms(monkeypatch):
    # The test above must be able to fail: a harness module importing a study, a study
    # importing another's reader, the contract importing the API, the engine importing the
    # outputs, the analysis importing the interfaces (the planning circle this layout broke).
    _planted(monkeypatch, {
        "genderprobe.engine.store": "from genderprobe.studies.genmo.stance import read_stance\n",
        "genderprobe.studies.relationship_levy.probe": "from genderprobe.studies.demet.answer_reader import x\n",
        "genderprobe.contract": "def f():\n    from genderprobe.interfaces.api import run_probe\n",
        "genderprobe.engine.runner": "from genderprobe.outputs.terminal import Progress\n",
        "genderprobe.analysis.planning": "def f():\n    from genderprobe.interfaces.api import run_probe\n",
    })
    found = violations()
    assert "genderprobe.engine.store (engine) imports genderprobe.studies.genmo.stance (studies)" in found
    assert any("relationship_levy.probe imports genderprobe.studies.demet.answer_reader" in v for v in found)
    assert "genderprobe.contract (contract) imports genderprobe.interfaces.api (interfaces)" in found
    assert "genderprobe.engine.runner (engine) imports genderprobe.outputs.terminal (outputs)" in found
    assert "genderprobe.analysis.planning (analysis) imports genderprobe.interfaces.api (interfaces)" in found


def test_the_checker_sees_a_module_outside_every_room(monkeypatch):
    monkeypatch.setitem(MODULES, "genderprobe.helpers", ROOT / "errors.py")
    assert "genderprobe.helpers is in no room: move it into one (docs/design.md)" in violations()


def test_the_checker_sees_a_circle(monkeypatch):
    # Two circles this layout broke: the runner and the batch job that drove its private
    # functions, and the API and the planning that ran a dry run through it.
    _planted(monkeypatch, {
        "genderprobe.engine.batch.job": "from genderprobe.engine.runner import Runner\n",
        "genderprobe.analysis.validity": "from genderprobe.analysis.losses import wilson\n",
    })
    found = circles()
    assert any(c.startswith("genderprobe.engine.batch") and "genderprobe.engine.runner ->" in c for c in found), found
    assert any(set(c.split(" -> ")) == {"genderprobe.analysis.losses", "genderprobe.analysis.validity"}
               for c in found), found


def test_every_probe_lives_in_its_study_folder():
    for name, cls in registry.builtin_probes().items():
        parts = cls.__module__.split(".")
        assert parts[:2] == ["genderprobe", "studies"] and len(parts) == 4, (name, cls.__module__)
        assert parts[3] == "probe" or parts[3].endswith("_probe"), (name, cls.__module__)
    outside = [m for m in MODULES if room(m) != "studies" and m.rpartition(".")[2] in ("probe", "probes")]
    assert outside == []


def test_each_study_keeps_its_data_and_corpora_in_its_folder():
    for study in registry.studies():
        folder = ROOT / "studies" / study
        assert (folder / "data").is_dir(), study
        datasets = [p for p in (folder / "data").rglob("*") if p.is_file() and not p.name.endswith("paper_tables.json")]
        if datasets:  # a dataset travels with its licence or source note; paper tables are facts
            assert any((folder / "data").glob("LICENSE*")) or any((folder / "data").glob("SOURCE*")), study
        assert list(folder.glob("corpora/*.jsonl")), f"{study}: no answer corpus"
    shared = sorted(p.name for p in (ROOT / "data").iterdir() if p.suffix != ".py" and p.name != "__pycache__")
    assert shared == ["SOURCES.md", "names"]


def test_a_new_study_is_a_new_folder_and_nothing_else(tmp_path, monkeypatch):
    study = tmp_path / "zz_example"
    (study / "data").mkdir(parents=True)
    (study / "__init__.py").write_text('"""An example study."""\n')
    (study / "data" / "words.csv").write_text("word\nkind\n")
    (study / "probe.py").write_text(textwrap.dedent('''
        from genderprobe.contract import Probe, ProbeResult
        from genderprobe.data.packaged import read_csv

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
    import genderprobe.outputs.run_document
    import genderprobe.studies

    monkeypatch.setattr(genderprobe.studies, "__path__", [*genderprobe.studies.__path__, str(tmp_path)])
    monkeypatch.setattr(genderprobe.outputs.run_document, "_DATA_HASHES", None)  # hashed once per process; hash again with the new study
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
    # the harness in rooms
    ("genderprobe.runner", "genderprobe.engine.runner"),
    ("genderprobe.api", "genderprobe.interfaces.api"),
    ("genderprobe.stats", "genderprobe.analysis.stats"),
    ("genderprobe.reader_judge", "genderprobe.reading.reader_judge"),
    ("genderprobe.paper", "genderprobe.outputs.paper_tables"),
    ("genderprobe.report.render", "genderprobe.outputs.report.render"),
    ("genderprobe.batch.job", "genderprobe.engine.batch.job"),
    ("genderprobe.cli_commands.plan", "genderprobe.interfaces.cli_commands.plan"),
    ("genderprobe.packaged", "genderprobe.data.packaged"),
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


def test_names_of_the_reading_module_still_import_from_its_package():
    from genderprobe.reading.two_person import two_person_votes

    with pytest.warns(DeprecationWarning, match="genderprobe.reading.two_person_votes moved to "
                                                "genderprobe.reading.two_person"):
        from genderprobe.reading import two_person_votes as old
    assert old is two_person_votes
    with pytest.raises(ImportError):
        from genderprobe.reading import no_such_name  # noqa: F401

