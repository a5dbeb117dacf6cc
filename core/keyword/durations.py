"""'The average session duration in seconds': a row's end date minus its start date, aggregated.

Read only when nothing has to be guessed: an aggregate is asked for ('average', 'total',
'longest'), the unit is stated ('in seconds', 'in days'), and the table the duration is of has
exactly one start date and one end date (session_start_ts / session_end_ts). Otherwise the word
stays unsupported and keyword mode declines, as it does for any duration it cannot pin down.
"""

from __future__ import annotations

from core.keyword.columns import TEMPORAL, column_kind
from core.keyword.match import Lexicon
from core.keyword.plan import Measure
from core.keyword.reader import Reader
from core.values import fold

START = frozenset(["start", "started", "begin", "begins", "from", "checkin", "departure", "pickup", "open"])
END = frozenset(["end", "ended", "finish", "to", "checkout", "arrival", "dropoff", "close", "return"])
UNITS = {"second": "second", "minute": "minute", "hour": "hour", "day": "day", "week": "week"}
EXTREMES = {"longest": "MAX", "shortest": "MIN"}


def read_duration(r: Reader) -> None:
    """Claim the word 'duration' as a measure when it can be read (see the module's docstring)."""
    shape = r.shape
    cue = next((c for c in shape.cues if c.kind == "unsupported" and c.words.lower() == "duration"), None)
    if cue is None:
        return
    unit_at = next(
        (
            i
            for i in range(cue.end, len(shape.tokens) - 1)
            if shape.tokens[i].low == "in" and shape.tokens[i + 1].low.rstrip("s") in UNITS
        ),
        None,
    )
    how = next(
        (
            c
            for c in reversed(shape.cues)
            if c.end <= cue.start and (c.kind == "agg" or c.words.lower() in EXTREMES)
        ),
        None,
    )
    if unit_at is None or how is None:
        return
    between = [m for m in r.matching.mentions if how.end <= m.start and m.end <= cue.start]
    tables = [m for m in between if m.sense is not None and m.sense.kind == "table"]
    if len(tables) != 1 or len(between) != 1:
        return
    table = tables[0].sense.table  # type: ignore[union-attr]
    pair = start_and_end(r.lex, table)
    if pair is None:
        return
    unit = UNITS[shape.tokens[unit_at + 1].low.rstrip("s")]
    func = how.arg if how.kind == "agg" else EXTREMES[how.words.lower()]
    words = f"{tables[0].words} duration in {unit}s"
    r.plan.measures.append(Measure(func, table, pair[1], words=words, since=pair[0], unit=unit))  # type: ignore[arg-type]
    r.role(tables[0]).kind = "absorbed"
    r.skipped_cues |= {how.start, cue.start}
    unit_words = {unit_at, unit_at + 1}
    for m in r.matching.mentions:
        if m.start in unit_words:
            r.role(m).kind = "absorbed"
    r.matching.unmatched = [i for i in r.matching.unmatched if i not in unit_words]
    for i in unit_words:
        shape.role[i] = "stop"


def start_and_end(lex: Lexicon, table: str) -> tuple[str, str] | None:
    """The one start date and the one end date of `table`, by their names."""
    t = lex.table(table)
    if t is None:
        return None
    dates = [c.name for c in t.columns if column_kind(lex, t.name, c.name) in TEMPORAL]
    starts = [d for d in dates if set(fold(d.replace("_", " ")).split()) & START]
    ends = [d for d in dates if set(fold(d.replace("_", " ")).split()) & END]
    if len(starts) == 1 and len(ends) == 1 and starts != ends:
        return starts[0], ends[0]
    return None
