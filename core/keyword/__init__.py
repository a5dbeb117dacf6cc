"""Keyword mode: answer questions with no LLM (DANKE keyword search, papers/kws-text-to-sql.txt §3).

The question's words are matched to tables, columns and stored values (the keyword dictionary
and the value index), the matched tables are joined along the Steiner tree of the foreign-key
graph (the view), matched values become filters, and cue words give the query its shape:
counts, sums and averages, groups and time buckets, rankings, comparisons and date ranges.
Every answer carries its reading in plain words; a question it cannot read without guessing is
declined with what was understood and a rephrasing; equally plausible readings come back as a
clarification whose options re-ask with a `Reading` pinned (see core/keyword/readings.py).

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

From the query to an answer
    compile.py       the query as SQL over the view, date arithmetic per dialect
    explain.py       the reading and the refusal in plain words
    answer.py        the stages, traced: answer_keyword(db, request, settings, trace) -> Outcome
"""

from core.keyword.answer import answer_keyword
from core.keyword.readings import Reading

__all__ = ["Reading", "answer_keyword"]
