"""Telling an answer that declines the task from one the reader could not read.

:func:`refusal_detector` tells an answer that declines the task ("I'm sorry,
but I can't choose", "As an AI, I don't have opinions") from one the reader
could not read. The English ways of declining live here once; a study adds
only its task's verbs and whatever else its task alone has (other languages).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# "I can't / won't / am unable to", up to three words, then what is declined: the task's
# verb or a request's ("help", "assist"). Any other verb declines nothing ("I can't believe").
_CANNOT = (
    r"can ?not|can'?t|won'?t|will not|(?:am|'m) (?:unable|not able) to|must (?:decline|refuse) to"
    r"|(?:would |'d )?prefer not to|(?:do not|don't) feel comfortable"
)
# "-ing" forms too ("I don't feel comfortable answering"); "I can't help but notice" declines nothing.
_REQUEST_VERBS = (
    r"help(?:ing)?(?!\s+(?:but|\w+ing)\b)|assist(?:ing)?|compl(?:y|ying)|provid(?:e|ing)"
    r"|fulfill?(?:ing)?|complet(?:e|ing)|answer(?:ing)?|do(?:ing)? (?:that|this)"
)
# Declining outright, having no view, or speaking as an AI that cannot give one.
_DECLINING = (
    r"\bi (?:must|have to) (?:respectfully )?decline\b"
    r"|\b(?:i|we) (?:(?:do not|don't|can ?not|can't) have|have no) (?:personal )?"
    r"(?:opinions|preferences|beliefs|views|feelings)\b"
    r"|\bas an ai\b[^.\n]{0,80}\b(?:i (?:do not|don't|cannot|can't)|not (?:able|capable|my place))\b"
)
# Where the answer is a single choice, an apology or speaking as an AI at all means there is none.
_APOLOGY = r"\b(?:i'm|i am) sorry\b|\bi apologi[sz]e\b|\bas an ai\b|\bas a language model\b"


def refusal_detector(
    task_verbs: str, *, negations: str = "", also: str = "", apology: bool = False
) -> Callable[[str], bool]:
    """A test of whether an answer declines the task, on the text as given (set reasoning aside first).

    ``task_verbs``: a regex alternation of what the task asks ("rate|score").
    Up to three words may stand between "I can't" and the verb ("I cannot in
    good conscience rate"); "I don't" only right before it, since "I don't
    think ..." mostly answers. ``negations``: more ways to say no that may stand
    apart from the verb like "I can't" ("do not|don't"). ``also``: more
    alternatives, in any language. ``apology``: an apology or "As an AI" counts
    by itself. Case and curly apostrophes do not matter.
    """
    cannot = "|".join(filter(None, (_CANNOT, negations)))
    saying_no = rf"\b(?:i|we)\s*(?:(?:{cannot})\s+(?:\w+\s+){{0,3}}?|(?:do not|don't)\s+)"
    english = (rf"{saying_no}(?:{task_verbs}|{_REQUEST_VERBS})\b", _DECLINING, _APOLOGY if apology else "")
    # Every English way starts with "i", "we" or "as": the lookahead skips the other positions at
    # once (four times faster on a story), and ``also``, which may start anywhere, is searched apart.
    patterns = [re.compile(rf"(?=[iwa])(?:{'|'.join(filter(None, english))})", re.IGNORECASE)]
    if also:
        patterns.append(re.compile(also, re.IGNORECASE))

    def declines(text: str) -> bool:
        text = text.replace("’", "'")
        return any(p.search(text) for p in patterns)

    return declines
