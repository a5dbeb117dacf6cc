"""What the question's words name: roles ("agents", "policy holders"), types, tables on a path.

View synthesis is a reasoner, not a language model: it only needs to know whether a phrase it
already has — a role code's meaning from the catalog, a subtype table's name, a connector's name —
appears in the question. Words are compared lower-case and singular; a phrase of several words
must appear in order ("policy holder"), or run together ("policyholder").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from core.graph.names import words_of
from core.plurals import singular

# Words that name no particular table or role: they never decide between two joins.
_STOP = """
    a an the of in on at by for to from with and or per each every all any is are was were be
    what which who whom whose how many much list show give find total number count sum average
    table tables row rows record records data detail details info information value values id
    type types code codes kind
"""
STOP = frozenset(_STOP.split())
# How the names of roles end: agent, holder, broker, insured, claimant, witness, attorney, payee.
ROLE_ENDINGS = ("er", "or", "ant", "ent", "ist", "ee", "ian", "ary", "ed", "ess", "ey")


@dataclass(frozen=True)
class Wording:
    """The question as words, for asking whether it names a phrase."""

    text: str = ""

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        return tuple(singular(w) for w in re.findall(r"[a-z0-9]+", self.text.lower()))

    @cached_property
    def _joined(self) -> frozenset[str]:
        """Every run of up to three adjacent words written as one: policy holder → policyholder."""
        t = self.tokens
        runs = {"".join(t[i : i + n]) for n in (1, 2, 3) for i in range(len(t) - n + 1)}
        return frozenset(runs | {singular(r) for r in runs})

    def __bool__(self) -> bool:
        return bool(self.tokens)

    def without(self, phrases: list[str]) -> Wording:
        """The question with these phrases taken out: words that named a role name nothing else
        ("insured person" is the insured role, not the person table)."""
        text = self.text
        for phrase in sorted(phrases, key=len, reverse=True):
            words = [re.escape(w) for w in words_of(phrase)]
            if words:
                text = re.sub(r"\b" + r"\W*".join(words) + r"\w*", " ", text, flags=re.IGNORECASE)
        return Wording(text)

    def names(self, phrase: str) -> bool:
        """Does the question name `phrase` ('policy holder', 'loss_payment', 'Loss Reserve')?"""
        words = [singular(w) for w in words_of(phrase) if w not in STOP]
        if not words or not self.tokens:
            return False
        return "".join(words) in self._joined

    def names_code(self, code: str) -> bool:
        """A role code written out as it is stored ('AG', "role 'PH'"), case and all."""
        return (
            len(code) >= 2
            and re.search(rf"(?<![A-Za-z0-9]){re.escape(code)}(?![A-Za-z0-9])", self.text) is not None
        )

    def abbreviates(self, code: str) -> str | None:
        """The question's words a bare code abbreviates: 'AG' → 'agent', 'PH' → 'policy holder'.

        Only for codes whose meaning nobody wrote down, and only words that read as a role (agent,
        holder, insured, claimant, witness): a guess, and said to be one.
        """
        low = code.lower()
        if not 2 <= len(low) <= 4 or not low.isalpha():
            return None
        t = self.tokens
        for i, w in enumerate(t):
            if w in STOP:
                continue
            if len(w) >= 4 and w.startswith(low) and w.endswith(ROLE_ENDINGS):
                return w
            run = t[i : i + len(low)]
            initials = "".join(x[0] for x in run)
            if (
                len(run) == len(low)
                and initials == low
                and all(x not in STOP and len(x) >= 3 for x in run)
                and run[-1].endswith(ROLE_ENDINGS)
            ):
                return " ".join(run)
        return None

    def distinctive(self, phrase: str, common: set[str]) -> bool:
        """Does the question name a word of `phrase` that the other tables' names do not share?"""
        return any(
            w not in STOP and w not in common and w in self.tokens for w in map(singular, words_of(phrase))
        )
