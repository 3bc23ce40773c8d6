"""Reading answers: what every study's reader shares.

Setting a reasoning model's thinking aside (``reasoning``), telling a refusal
(``refusals``), reading a choice between two people (``two_person``), a
yes or no as GenderBench reads it (``yes_no``, on NLTK 3.8.1's tokenizer ported
in ``nltk_punkt``) and as a careful reader does (``yes_no_careful``), a choice
among lettered options read carefully (``options_careful``), the gender of a
story's character (``character_gender``) and the story probes' shared run
(``stories``), an emotion (``emotion``), GenderBench's rule and a careful
reader side by side on every answer (``two_readers``), and a judge model that
reads the answers the rules cannot (``reader_judge``). Each
study's own reader lives in its folder and builds on these.

It may import the analysis (a judge's readings are counted as losses), the
contract, models.base and errors; never the engine, the outputs or the interfaces.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

# Names this package held when it was one module (genderprobe/reading.py), and where they live now.
_MOVED = {"split_reasoning": "reasoning", "answer_text": "reasoning", "refusal_detector": "refusals",
          "TwoPersonVotes": "two_person", "decide": "two_person", "two_person_votes": "two_person",
          "mask_two_people": "two_person"}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{_MOVED[name]}"
    warnings.warn(f"genderprobe.reading.{name} moved to {module}; import it from there.",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(module), name)
