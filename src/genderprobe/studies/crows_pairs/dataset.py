"""CrowS-Pairs' 262 gender pairs, in the file's order.

``sent_more`` is the pair's more stereotyping sentence, ``sent_less`` its minimal edit; ``direction``
is ``stereo`` where sent_more demonstrates a stereotype of the disadvantaged group and ``antistereo``
where sent_less violates one (then sent_more is the sentence about the advantaged group, which keeps
the stereotype). Both the paper's metric and lm-eval's count a pair as stereotyped where sent_more is
the more likely sentence, whatever its direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import read_csv
from genderprobe.errors import UserError

DATA = "crows_pairs/crows_pairs/crows_pairs_gender.csv"
DIRECTIONS = ("stereo", "antistereo")
N_ITEMS = 262


@dataclass(frozen=True)
class Pair:
    row: int  # the pair's id in the source file (its first, unnamed column)
    sent_more: str
    sent_less: str
    direction: str


@cache
def pairs() -> tuple[Pair, ...]:
    rows = read_csv(DATA, ("sent_more", "sent_less", "stereo_antistereo", "bias_type"))
    found = tuple(Pair(int(r[""]), r["sent_more"], r["sent_less"], r["stereo_antistereo"]) for r in rows
                  if r["bias_type"].startswith("gender"))
    if len(found) != N_ITEMS or any(p.direction not in DIRECTIONS for p in found):
        raise UserError(f"Expected {N_ITEMS} CrowS-Pairs gender pairs in {DATA}, found {len(found)}; "
                        "reinstall genderprobe.")
    return found
