"""Keyword mode: answer questions with no LLM (DANKE keyword search, papers/kws-text-to-sql.txt §3).

The question's words are matched to tables, columns and stored values (the keyword dictionary
and the value index), the matched tables are joined along the Steiner tree of the foreign-key
graph (the view), matched values become filters, and cue words give the query its shape:
counts, sums and averages, groups and time buckets, rankings, comparisons and date ranges.

Right or silent: it answers only when every word of the question is placed, the joins are sound
and unique, and its confidence in the reading reaches `engine.keyword_min_confidence`; otherwise
it declines in one sentence (what it understood, which words it could not place or what it
doubts), or asks back when two to four concrete readings compete (options re-ask with a
`Reading` pinned, core/keyword/readings.py). In a thread, a follow-up is applied to its last
reading as a change (a filter, a period, a grouping), or it says that such follow-ups need an LLM.

Reading the question: lexicon → grammar → tree → binding (the path every question takes first)
    lexicon.yaml     every word keyword mode reads, as data (lexicon.py checks and loads it)
    grammar.py       words → lexemes → question trees (tree.py); a follow-up → the change it says
    bind.py          a tree → a Query over this schema's tables, columns and values, or a decline
    followup.py      a follow-up in a thread: the last question's tree changed, then bound again
    readings.py      Reading: one reading of some words, as clarification options carry it

The first reader, for questions the grammar has no rule for yet (first_reader.py; issue 33 retires
it): shapes.py (cues and literals) → match.py (phrases → senses) → the passes of interpret.py over
an immutable Plan (plan.py): walk.py, filters.py, dates.py, time_buckets.py, ranking.py, output.py,
abstain.py. match.py also holds the schema's Lexicon both readers bind with; columns.py says what
a column is for (kinds, labels, keys, measures).

Judging the reading
    confidence.py    join soundness and uniqueness (hard rules), and the confidence: match
                     quality, the margin to competing readings, join evidence, doubtful shapes

From the query to an answer
    compile.py       the query as SQL over the view, date arithmetic per dialect
    explain.py       the reading and the refusal in plain words
    replies.py       the decline and the question back, as both readers word them
    answer.py        the stages, traced: answer_keyword(db, request, settings, trace) -> Outcome
"""

from core.keyword.answer import answer_keyword
from core.keyword.readings import Reading

__all__ = ["Reading", "answer_keyword"]
