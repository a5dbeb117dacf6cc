"""The value index: find the stored spelling of what the user typed ("E176" → 'E-176') among millions of values.

Why not CHESS's MinHash LSH (papers/chess.txt, appendix A.1): a MinHash object per value costs
kilobytes and the better part of a millisecond to build (`python -m core.bench values` measures it),
so a million values take many minutes and gigabytes, and its loose 0.01 threshold returns
thousands of candidates per query. Instead:

- every value is *folded* (case-folded, accents stripped, punctuation and spaces removed), so
  'E-176', 'e 176' and 'E176' are the same string to the index;
- an inverted index maps each byte trigram of the folded value (with start/end markers) to the
  sorted ids of the values containing it. It is built with numpy in a few seconds per million
  values and stored as flat arrays (~100 bytes per value) that are memory-mapped, so memory stays
  bounded and opening an index costs nothing;
- a lookup scores values by the IDF weight of the trigrams they share with the query (rarest
  trigrams first, within a postings budget, so common trigrams never dominate the time), keeps
  the best ~150 and re-ranks them with `similarity()`, an edit-distance and word-alignment score
  that tolerates typos, word order and a missing word;
- purely numeric keywords match exactly (LAIA-SQL §4.2): '2024' never suggests '2042'.

Catalog value meanings (`Column.values`: 'OPN' → 'open') are matched in memory alongside the index,
so "open" finds Status = 'OPN'.

On disk: one folder per database under `var/index/`, rebuilt atomically. `refresh_index` re-reads
only the columns whose table changed (by cheap statistics) or that are small enough to re-read,
and rewrites the index only when a value set actually changed.

Modules:

  lookup.py    ValueIndex and open_index: what the pipeline calls
  search.py    ranking values in an opened index
  store.py     the on-disk format: writing, opening, reading back
  build.py     build_index and refresh_index: reading values from the database
  columns.py   which columns to index (plan_columns), and Access: what may never be indexed
  folding.py   fold and similarity: how values and keywords are compared
  progress.py  progress callbacks for builds
  source.py    Source: what the index reads of a database (core.database.Database is one)
"""

from core.values.build import IndexStats, build_index, refresh_index
from core.values.columns import NO_RULES, Access, plan_columns
from core.values.folding import fold, fold_many, is_numeric, similarity
from core.values.lookup import ValueIndex, open_index
from core.values.progress import Progress, ProgressFn, text_progress
from core.values.source import Source
from core.values.store import index_path, iter_index_values

__all__ = [
    "NO_RULES",
    "Access",
    "IndexStats",
    "Progress",
    "ProgressFn",
    "Source",
    "ValueIndex",
    "build_index",
    "fold",
    "fold_many",
    "index_path",
    "is_numeric",
    "iter_index_values",
    "open_index",
    "plan_columns",
    "refresh_index",
    "similarity",
    "text_progress",
]
