"""The README's two commands stay true: CI runs exactly its test command, and both make their own venv."""

import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_the_readme_has_two_commands_that_make_and_use_a_virtual_environment():
    commands = readme_commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && ")


def test_ci_runs_the_readmes_test_command_exactly():
    test_command = readme_commands()[1]
    assert "pytest" in test_command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1].strip() == test_command


def _pulled_in(requirements: list[Requirement], extras: set[str]) -> set[str]:
    """Every distribution the requirements install, as this environment's metadata says (those it lacks are
    not followed: CI installs them all)."""
    seen: set[str] = set()
    todo = [(r, extras) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in wanted | {""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = importlib.metadata.distribution(req.name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        todo += [(Requirement(r), set(req.extras)) for r in needs]
    return seen


def test_the_readmes_test_command_installs_no_torch():
    """Its extra pulls in no torch: from PyPI torch brings CUDA (16 nvidia-* packages, a 4.7 GB environment)
    on a machine without a GPU; the tiers that need torch are installed on purpose (README, .ci/run)."""
    extra = re.search(r"-e '\.\[(\w+)\]'", readme_commands()[1]).group(1)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"][extra]]
    pulled = _pulled_in(requirements, set())
    assert "jinja2" in pulled and "pytest" in pulled  # followed
    heavy = sorted(n for n in pulled if n in {"torch", "triton", "accelerate"} or n.startswith("nvidia-"))
    assert heavy == [], f"the [{extra}] extra pulls in {heavy}"
