"""View synthesis: join the tables a question needs into one view the SQL writer can query.

DANKE (kws-text-to-sql §3, §4.4) joins the needed tables along a Steiner tree of the foreign-key
graph; Lucy (§3.3) adds the constraints that make the joins *right*, not just connected:

- C3  a many-to-many relation goes through its bridge table;
- C4  a lookup table is only ever a leaf, never the connector between two other tables;
- C5  the fewest extra tables — here: the minimum-cost tree, where declared and catalog edges cost
      1 and inferred edges a little more, so declared edges win ties (exact Dreyfus–Wagner up to
      8 requested tables, the shortest-path heuristic beyond);
- inner tables of a star or snowflake (and subtypes) are LEFT JOINed along their branch.

Two foreign keys between the same tables are two roles, and the view carries one aliased copy
per role (`source_airport_city`, `dest_airport_city`) so the SQL writer picks the role, not the
join. A connector table that only passes its key through (paper between paper_dataset and
paper_keyphrase) is left out and its referrers joined on the shared key. The view exposes every
joined table's primary key and knows its grain, so counts over a fanned-out join can use
COUNT(DISTINCT key) and the generator is told when the view repeats rows.

Enterprise patterns (core/graph detects them) change the view as the question's words say: a
role table is joined once per role named ("agents", "policy holder"), the role filter inside the
join; a typed fact once per type named (loss payment, loss reserve), each copy restricted to its
type inside its own join; a subtype joins what hangs off its supertype on the shared key; two
parallel paths are settled by the question, or named in the recipe as a tie (View.ties).

Modules, in the order a view is made:

  synthesize.py   synthesize_view: the passes below, in order, and the table weights
  wording.py      what the question's words name: roles, types, tables on a path
  steiner.py      the minimum-cost tree (pure graph algorithm: knows no catalog)
  constraints.py  Lucy's constraints applied to that tree (C3 bridges, fewer fan-outs, pass-through)
  patterns.py     roles, typed facts and parallel paths as the question names them
  materialize.py  tree → View: root, one alias per role, INNER or LEFT, columns, grain
  view.py         View, JoinStep, ViewColumn, the SELECT that defines a view, and its grain in words
  identifiers.py  quoting per dialect and safe aliases
  describe.py     what the SQL writer reads about a view: view_ddl, join_summary
"""

from core.joins.describe import join_summary, sample_sql, view_ddl
from core.joins.identifiers import RESERVED, table_expr
from core.joins.synthesize import graph_weights, synthesize_view
from core.joins.view import JoinStep, View, ViewColumn, column_expr, grain_text

__all__ = [
    "RESERVED",
    "JoinStep",
    "View",
    "ViewColumn",
    "column_expr",
    "grain_text",
    "graph_weights",
    "join_summary",
    "sample_sql",
    "synthesize_view",
    "table_expr",
    "view_ddl",
]
