"""The relationship graph of a database: which tables join to which, on what, and how sure we are.

A multigraph over tables. Every edge is one join condition `table.columns = ref_table.ref_columns`:
two foreign keys between the same two tables are two edges (flights.source_airport and
flights.dest_airport → airports), because they are two different questions. Edges come from

- declared foreign keys (origin "declared"),
- relationships written in the catalog YAML (origin "catalog"),
- inference, for the many databases that declare few keys (origin "inferred", with a confidence):
  column-name conventions (`restaurant_id` → restaurant.id, `start_station_id` → station.id,
  `paperId` → paper.paperId) and value-inclusion profiling on a sample (most values of A.x are
  values of the unique column B.y). In tables that declare no key, columns named like keys whose
  sampled values are distinct stand in for keys; when two such columns hold the same values,
  the table the key's name names, an entity rather than a bridge, is the referenced one.

On top of the edges sit the design patterns Lucy reasons with (§3.1): many-to-many bridges,
lookup tables, stars, snowflakes, subtypes, and the enterprise ones — role tables, typed facts,
parallel paths — from the catalog, or detected from the edges and a sample of the data.

Profiling reads a few thousand rows per table, never whole tables, under a time budget; the
graph is cached on disk next to the catalog, keyed by the catalog's signature.

Modules:

  build.py       build_graph: known edges, inferred edges, patterns; the on-disk cache; graph_for
  columns.py     what a column can hold: dates, flags, amounts and free text are never inferred keys
  shared_keys.py a table referencing a supertype joins its subtypes on the shared key
  report.py      the graph as an admin reads it (python -m bot catalog show) and as catalog YAML
  multigraph.py  Edge and RelationshipGraph
  names.py       naming conventions: words of an identifier, singular forms, key-like names
  keys.py        declared uniqueness, key-compatible column kinds, the confidence threshold
  profiling.py   Profiler: bounded samples of values
  owners.py      which columns are keys (declared, or unique in the data) and which table owns each:
                 the entity a key names, not the bridge that repeats it
  infer.py       edges from column names, checked against sampled values
  inclusion.py   edges from values alone (value inclusion into a unique column)
  patterns.py    bridges, role tables, subtypes, typed facts, lookups, parallel paths detected
"""

from core.graph.build import build_graph, graph_for
from core.graph.multigraph import Edge, RelationshipGraph

__all__ = ["Edge", "RelationshipGraph", "build_graph", "graph_for"]
