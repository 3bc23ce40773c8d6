"""The package as an index would publish it: the wheel and sdist build, pass twine's metadata check, carry
their templates, data and licences, and a wheel installed alone in a fresh virtual environment runs the
README's first command and writes the HTML report.

The install step fetches the dependencies (from pip's cache where CI has just installed them): it takes a
minute or two, so it runs under CI or with GENDERPROBE_PACKAGING=1, and skips with that reason elsewhere.
"""

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from genderprobe.version import __version__

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not (os.environ.get("CI") or os.environ.get("GENDERPROBE_PACKAGING")),
    reason="builds the wheel and installs it in a fresh venv (a minute or two): set GENDERPROBE_PACKAGING=1; CI does",
)


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    pytest.importorskip("build", reason="the build package is not installed: pip install -e '.[dev]'")
    out = tmp_path_factory.mktemp("dist")
    # Built from a copy: a build writes src/genderprobe.egg-info, which would then shadow the installed
    # package's metadata wherever src is on the path (other tests run commands with PYTHONPATH=src).
    source = tmp_path_factory.mktemp("source") / "genderprobe"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                                  "__pycache__", ".pytest_cache", "tests", "benchmarks"))
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(out),
                    str(source)], check=True, capture_output=True, text=True)
    wheel, = out.glob("*.whl")
    sdist, = out.glob("*.tar.gz")
    return wheel, sdist


def test_the_wheel_and_sdist_pass_twines_check_and_carry_what_the_package_reads(dist):
    wheel, sdist = dist
    assert wheel.name == f"genderprobe-{__version__}-py3-none-any.whl"
    pytest.importorskip("twine", reason="twine is not installed: pip install -e '.[dev]'")
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    names = set(zipfile.ZipFile(wheel).namelist())
    source = ROOT / "src"
    # Every file the package reads at run time: templates, presets, packaged data and corpora, licences.
    wanted = {str(p.relative_to(source)) for p in source.rglob("*") if p.is_file()
              and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts and ".egg-info" not in str(p)}
    assert wanted and not wanted - names, sorted(wanted - names)[:10]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert {"LICENSE", "CHANGELOG.md", "README.md", "docs/python-api.md"} <= members


def test_a_wheel_installed_alone_runs_the_readme_command_and_writes_the_report(dist, tmp_path):
    wheel, _ = dist
    # Nothing of this checkout or its environment may leak in (a PYTHONPATH holding src/ would make pip
    # take genderprobe as installed already).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["GENDERPROBE_CACHE_DIR"] = str(tmp_path / "cache")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)],
                             capture_output=True, text=True, env=env)
    assert install.returncode == 0, install.stderr[-2000:]
    genderprobe = venv / "bin" / "genderprobe"
    run = subprocess.run([str(genderprobe), "run", "relationship-levy", "--model", "reference:random", "--out",
                          "results"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Validity: " in run.stdout and (tmp_path / "results" / "results.json").is_file()
    where = subprocess.run([str(python), "-c", "import genderprobe; print(genderprobe.__file__)"], env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(venv) in where  # the installed wheel, not this checkout
    report = subprocess.run([str(genderprobe), "report", "results"], cwd=tmp_path, env=env, capture_output=True,
                            text=True)
    assert report.returncode == 0, report.stderr[-2000:]
    page = next((tmp_path / "results").glob("*.html")).read_text(encoding="utf-8")
    assert "relationship-levy" in page and "diff_success_rate" in page
