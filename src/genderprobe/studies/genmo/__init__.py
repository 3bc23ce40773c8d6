"""The GenMO study (Bajaj et al. 2024): are moral judgements of the same action
different for men and women?

probe: the genmo probe; stance and verdict: the Table 7 templates and the
stance reader; refusals: answers that decline to judge; metrics: the metrics
of Section 4; ablation: the robustness ablations of Table 4; dataset: the 908
story pairs.
"""
