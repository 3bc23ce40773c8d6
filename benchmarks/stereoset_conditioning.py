"""StereoSet's likelihood way on SmolLM2-135M-Instruct: our scores beside the conditioning of the paper's own
script (issue 49; docs/stereoset.md, "How a model is asked").

    python benchmarks/stereoset_conditioning.py              # all 255 intrasentence gender contexts
    python benchmarks/stereoset_conditioning.py --sample 40  # a sample

Both score a sentence by its mean log-probability per token, its first token given the start-of-text
token. Ours (the probe's, ``--method loglikelihood``) conditions every later token on the start token
and all tokens before it; the paper's script scores the later tokens by a second pass over the sentence
without the start token. The script runs the probe on hf:, recomputes each sentence both ways from the
same weights, checks that ours equals the probe's recorded scores, and prints the paper's lm_score, ss
and ICAT both ways, and how many contexts change their ss or lms comparison.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=None)
    args = parser.parse_args()

    import torch

    from genderprobe.interfaces.api import RunConfig, run_probe
    from genderprobe.models.loglikelihood import prefix_token_id
    from genderprobe.studies.stereoset import metrics as m
    from genderprobe.studies.stereoset.dataset import targets
    from genderprobe.testing import smollm2

    if smollm2.unavailable():
        raise SystemExit(smollm2.unavailable())
    folder = smollm2.materialise()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        run = run_probe("stereoset", f"hf:{folder}", config=RunConfig(seed=0, out_dir=Path(out), use_cache=False),
                        sample_k=args.sample)
        records = [json.loads(line) for line in run.records_path.open()]
    probe_seconds = time.perf_counter() - started

    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    start = prefix_token_id(tokenizer)

    def both_ways(sentence: str) -> tuple[float, float]:
        ids = tokenizer(sentence, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            with_start = torch.log_softmax(model(input_ids=torch.tensor([[start, *ids]])).logits[0].float(), -1)
            alone = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
        first = float(with_start[0, ids[0]])
        ours = (first + sum(float(with_start[t, ids[t]]) for t in range(1, len(ids)))) / len(ids)
        papers = (first + sum(float(alone[t - 1, ids[t]]) for t in range(1, len(ids)))) / len(ids)
        return ours, papers

    names = list(targets())
    tables = {way: np.zeros((len(records), m.COLUMNS)) for way in ("ours", "paper's script")}
    largest, changed_ss, changed_lm = 0.0, 0, 0
    for n, record in enumerate(records):
        scores = [both_ways(s) for s in record["sentences"]]
        ours, papers = tuple(s[0] for s in scores), tuple(s[1] for s in scores)
        largest = max(largest, *(abs(a - b) for a, b in zip(ours, record["scores"])))
        tables["ours"][n, :4] = m.from_scores(ours)
        tables["paper's script"][n, :4] = m.from_scores(papers)
        a, b = m.from_scores(ours), m.from_scores(papers)
        changed_ss += a[0] != b[0]
        changed_lm += a[2] != b[2]
    target_of = np.array([names.index(r["target"]) for r in records])
    print(f"{len(records)} intrasentence contexts; the probe's run took {probe_seconds:.0f} s")
    print(f"largest difference between our recomputed scores and the probe's records: {largest:.2e}")
    for way, table in tables.items():
        e = m.estimates(table, target_of, len(names), n_resamples=1000, seed=0, inspect=False)
        print(f"{way:>15}: lm_score {e['lm_score'].value:.2f}  ss {e['ss'].value:.2f} "
              f"[{e['ss'].ci_low:.2f}, {e['ss'].ci_high:.2f}]  icat {e['icat'].value:.2f}")
    print(f"contexts whose ss comparison differs: {changed_ss}; whose lms wins differ: {changed_lm}")


if __name__ == "__main__":
    main()
