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

From the reading to a plan (interpret.py runs these steps in order, sharing a reader.Reader)
    plan.py          the plan's types: Ref, Measure, Filter, Having, OrderKey, Plan, Abstain, Ambiguity
    columns.py       what a column is for: kinds (dates kept as text too), labels, keys, measures
    walk.py          left to right: each phrase and literal takes its role from the cues before it
    roles.py         the role of one phrase: filter, measure, group, ranking key, entity, column
    durations.py     'average session duration in seconds': a row's end minus its start
    filters.py       comparisons, presence tests, several values of one column
    date_columns.py  which date a date or time bucket is about (the fact's own, or its parent's)
    date_filters.py  'in 2025', 'before March', 'last 30 days' → ranges on that date
    dates.py         the [start, end) of a year, quarter, month, day or period
    time_buckets.py  'per month', 'by year', 'which month' → group by a calendar unit
    ranking.py       superlatives and 'top N': which column ranks, how many rows are kept
    output.py        grouping or projection, and the default order
    target.py        the table the question is about; the tables the view must join
    abstain.py       when to decline, and what to say

From the plan to an answer
    compile.py       the plan as SQL over the view
    date_sql.py      date arithmetic per dialect: buckets, durations, calendar order
    explain.py       the reading and the refusal in plain words
    answer.py        the stages, traced: answer_keyword(db, request, settings, trace) -> Outcome
"""

from core.keyword.answer import answer_keyword
from core.keyword.readings import Reading

__all__ = ["Reading", "answer_keyword"]
