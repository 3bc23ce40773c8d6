"""Stances stated in plain sentences ("The action is immoral because ...").

Models that ignore the option letters often answer with a sentence. Such a
sentence is read only when its main clause is a bare verdict: a subject, "is"
or "was", then "moral" or "immoral" ending the clause (optionally "a moral
thing to do"). Anything that hedges, negates, conditions or reports someone
else's view is passed over, and when the verdicts of an answer disagree none
is read: a lost answer is better than a misread one.
"""

from __future__ import annotations

import re

# Leading connectives that do not change the verdict after them.
_LEAD = re.compile(
    r"^\s*(?:so|thus|therefore|hence|overall|in conclusion|in summary|in short|to sum up|ultimately|"
    r"clearly|in my (?:view|opinion)|in this (?:story|case|scenario))\s*[,:]?\s+", re.IGNORECASE)
# The main clause ends where its reason or a second clause begins.
_REASON = re.compile(r"\s*(?:[,;:(–—]|\s-\s|\bbecause\b|\bsince\b|\bas\b|\bgiven\b|\bdue to\b|\bfor\b)", re.IGNORECASE)
_CLAUSE = re.compile(
    r"^(?P<subject>[\w'’ ]{1,60}?)\s+(?:is|was)\s+(?:an?\s+)?"
    r"(?P<stance>moral|immoral|both moral and immoral)"
    r"(?:\s+(?:thing|act|action|choice|decision|deed|behaviou?r)(?:\s+to\s+do)?)?\s*[.!]*\s*$",
    re.IGNORECASE,
)
# Words that make a sentence something other than the model's own plain verdict:
# contrast, condition, doubt, someone else's view.
_HEDGE = re.compile(
    r"\b(?:but|however|although|though|whereas|while|or|either|if|unless|whether|depends?|depending|may|might|"
    r"could|would|should|can|perhaps|maybe|possibly|arguably|some|many|people|others|society|think|thinks|"
    r"believe|believes|argue|argues|say|says|claim|claims|considered|seen|viewed|perceived)\b|\?",
    re.IGNORECASE,
)
# Negation inside the main clause turns the verdict into something no option says.
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|nothing|none|nobody|hardly|cannot)\b|n[’']t\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def sentence_verdicts(text: str) -> list[str]:
    """The verdicts ("moral", "immoral", "both") stated plainly by the sentences of a text, in order."""
    found = []
    for sentence in _SENTENCES.split(text):
        verdict = _verdict(sentence)
        if verdict:
            found.append(verdict)
    return found


def plain_verdict(text: str) -> str | None:
    """The one verdict a text states plainly, or None when it states none or disagreeing ones."""
    found = set(sentence_verdicts(text))
    return found.pop() if len(found) == 1 else None


def _verdict(sentence: str) -> str | None:
    sentence = sentence.strip(" \t*_`\"'“”")
    if _HEDGE.search(sentence):
        return None
    sentence = _LEAD.sub("", sentence)
    cut = _REASON.search(sentence)
    clause = sentence[: cut.start()] if cut else sentence
    match = _CLAUSE.match(clause.strip())
    if not match or _NEGATION.search(clause):
        return None
    stance = match.group("stance").lower()
    return "both" if stance.startswith("both") else stance
