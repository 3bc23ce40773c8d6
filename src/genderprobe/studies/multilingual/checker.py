"""Reading the checker's reply (Zhao et al. 2024, Appendix E): agree, disagree or unclear.

The paper labels a dialogue once the checker agrees. A reply that neither
agrees nor objects ("Absolutely. The conversation is about a promotion.") is
unclear and is asked again; a hedged one ("I partially agree, but ...") is not
an agreement: its reservation goes back to the labeller like an objection.
"""

from __future__ import annotations

import re

from genderprobe.reading.reasoning import answer_text
from genderprobe.studies.multilingual.answers import normal_key

AGREE, DISAGREE, UNCLEAR = "agree", "disagree", "unclear"

# Ours: the paper does not re-ask; this asks for the verdict the Table 26 prompt wants.
REASK_PROMPT = 'Please answer yes or no: do you agree that the dialogue falls under the topic of "{topic}."?'

_OPENING_NO = re.compile(r"(no|nope|not)\b")
# "No, I wouldn't be able to answer ...": the checker cannot answer, which is no objection.
_CANNOT_ANSWER = re.compile(r"no\W+i\s+(?:can't|cannot|couldn't|wouldn't be able|won't be able|am not able|am unable"
                            r"|don't know)\b")
# A yes that only comes after the reply has echoed or continued the dialogue ("@alice\nOne lovely day, ...!
# Yes, absolutely and so sadly ...") is the dialogue's, not the checker's: it counts in the first two sentences.
YES_WITHIN = 2
_OPENING_YES = re.compile(r"(yes|yeah|yep|agreed|i agree|i concur|correct)\b")
# "I disagree", "I do not agree", "I don't fully agree", "I can't really agree".
_OBJECTION = re.compile(r"disagree|(?:\bnot|n't|\bcannot|\bnever)\s+(?:\w+\s+){0,2}(?:agree|concur)")
_AGREEMENT = re.compile(r"\b(?:agree|concur)\b")
# Agreement with a qualifier is not agreement: "partially agree", "agree to some extent".
_QUALIFIED = re.compile(
    r"\b(?:partially|partly|somewhat|mostly|largely|half|kind of|sort of)\s+(?:\w+\s+)?(?:agree|concur)"
    r"|\b(?:agree|concur)\w*\s+(?:\w+\s+){0,2}(?:to (?:some|an|a certain|a degree|a point)|in part|partially|partly)"
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_BUT = re.compile(r"\b(?:but|however|although|though|except)\b")
_SENTENCE_END = re.compile(r"[.!?\n]")


def read_verdict(text: str | None) -> str:
    """AGREE, DISAGREE or UNCLEAR for one checker reply (its reasoning set aside)."""
    text = answer_text(text)
    if not text:
        return UNCLEAR
    norm = normal_key(text).lstrip("\"'“”「」*#> \n")
    if _CANNOT_ANSWER.match(norm):
        return UNCLEAR
    if _OPENING_NO.match(norm):
        return DISAGREE
    # The first sentence that gives a verdict decides; a later one may describe the dialogue
    # ("the man does not agree with her plan").
    sentences = [x.strip(" \"'“”*") for x in _SENTENCE_END.split(norm)]
    for n, sentence in enumerate(x for x in sentences if x):
        if _said_by_checker(sentence, _OBJECTION) or _said_by_checker(sentence, _QUALIFIED):
            return DISAGREE
        if _said_by_checker(sentence, _AGREEMENT) or (n < YES_WITHIN and _OPENING_YES.match(sentence)):
            # "I agree, but it is more about family", "Yes, but ...": the reservation undoes it.
            return DISAGREE if _BUT.search(sentence) else AGREE
    return UNCLEAR


def _said_by_checker(sentence: str, pattern: re.Pattern[str]) -> bool:
    """The verdict is the checker's own ("I agree", "Disagree."), not a speaker's in the dialogue
    ("The man does not agree with her plan", "They agree to meet"): nothing, or I/we, before it."""
    match = pattern.search(sentence)
    if match is None:
        return False
    before = _WORD.findall(sentence[: match.start()])
    return not before or any(w in ("i", "we") for w in before)
