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

Reading the question
    shapes.py        cue phrases, literals (numbers, dates, quarters, periods) and content words
    match.py         phrases → tables, columns, values; one coherent reading (DANKE matching)
    readings.py      Reading: one reading of some words, as clarification options carry it

From the reading to a query: passes over an immutable plan (interpret.py lists them in order;
each is `(Plan, Context) -> Plan`, or declines)
    plan.py          Plan (the question part-way to SQL), Query (what will be computed), Context
    columns.py       what a column is for: kinds (dates kept as text too), labels, keys, measures
    walk.py          left to right: each phrase and literal takes its role from the cues before it;
                     ratios and durations that claim several words first
    filters.py       comparisons, presence tests, several values of one column
    dates.py         which date a date is about, and the [start, end) of a year, month, period
    time_buckets.py  'per month', 'by year', 'which month' → group by a calendar unit
    ranking.py       superlatives and 'top N': which column ranks, how many rows are kept
    output.py        the target table, grouping or projection, the default order, the tables
    abstain.py       when to decline, and what to say
    followup.py      a follow-up in a thread as a change to the last reading

Judging the reading
    confidence.py    join soundness and uniqueness (hard rules), and the confidence: match
                     quality, the margin to competing readings, join evidence, doubtful shapes

From the query to an answer
    compile.py       the query as SQL over the view, date arithmetic per dialect
    explain.py       the reading and the refusal in plain words
    answer.py        the stages, traced: answer_keyword(db, request, settings, trace) -> Outcome
"""

from core.keyword.answer import answer_keyword
from core.keyword.readings import Reading

__all__ = ["Reading", "answer_keyword"]
