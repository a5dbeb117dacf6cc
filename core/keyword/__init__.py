"""Keyword mode: answer questions with no LLM (DANKE keyword search, papers/kws-text-to-sql.txt §3).

The question's words are matched to tables, columns and stored values (the keyword dictionary
and the value index), the matched tables are joined along the Steiner tree of the foreign-key
graph (the view), matched values become filters, and cue words give the query its shape:
counts, sums and averages, groups, rankings, comparisons and date ranges. Every answer carries
its reading in plain words; a question it cannot read without guessing is declined with what
was understood and a rephrasing; equally plausible readings come back as a clarification whose
options re-ask with a `Reading` pinned (see core/keyword/readings.py).

    shapes.py    cue phrases, literals and content words of the question
    match.py     phrases → tables, columns, values; one coherent reading (DANKE matching)
    plan.py      the query plan, an Abstain, or an Ambiguity
    compile.py   the plan as SQL over the view
    explain.py   the reading and the refusal in plain words
    answer.py    the stages, traced: answer_keyword(db, request, settings, trace) -> Outcome
    readings.py  Reading: one reading of some words, as clarification options carry it
"""

from core.keyword.answer import answer_keyword
from core.keyword.readings import Reading

__all__ = ["Reading", "answer_keyword"]
