"""Mask rules: a masked column may be shown (masked) or counted, and used in no other way.

Why so strict: the executor masks every value a result shows (core/masking.py), but a predicate
on the value leaks it bit by bit — `WHERE ascii(substr(email, i, 1)) = c` over a generated series
rebuilds every address one character at a time, `ORDER BY email LIMIT 1` is a binary search, and
`'x@' || replace(email, '@', '.')` moves the secret into the part a mask keeps. Any use but "show
it" lets a query compute something from the value that the mask does not cover. So the guard
allows a reference that reads a masked column (`GuardPolicy.mask_columns`, resolved with the same
lineage as denied columns, `core.guard.lineage`) in exactly these places:

- as an output column of the outermost query, bare or renamed (`SELECT email AS contact`), also
  through derived tables and CTEs that pass it on bare, and through the branches of a UNION ALL;
- as the argument of COUNT (`COUNT(email)`, `COUNT(DISTINCT email)`): a number of rows;
- in the output of an EXISTS subquery, where nothing is read from it.

Everywhere else it is denied, with a reason that names the column: WHERE, JOIN ON and USING,
GROUP BY, ORDER BY (by expression, output name or position), HAVING, QUALIFY, window clauses,
DISTINCT ON, any function argument, CASE, arithmetic and string surgery, scalar and IN
subqueries, UNION/INTERSECT/EXCEPT (they compare values), a NATURAL JOIN over a masked table, a
whole row of a masked table inside an expression (`row_to_json(c)`), and `t.*` anywhere but the
output or COUNT. A derived table's or CTE's output column carries the mask of what it passes on,
so `x.e` in `WHERE` is denied when `x` is `(SELECT email AS e FROM customers)`; where a `*`
hides which column is which, a name that could be a masked column is taken as one.

The executor still masks what is shown, whoever wrote the SQL: this pass is the wall in front.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from core.guard.columns import denied_by_table
from core.guard.lineage import Lineage, Read, Source, enclosing_selects, visible_cte
from core.guard.names import column_key
from core.guard.verdict import Deny

# clauses of a SELECT that may name its output columns (by name or position)
_OUTPUT_REFERRING = ("order", "group", "having", "qualify", "distinct")


class MaskRules:
    """Denies every use of a masked column but showing or counting it (module docstring)."""

    def __init__(self, lineage: Lineage, mask_columns: Iterable[str], dialect: str) -> None:
        self.lineage = lineage
        self.masked = denied_by_table(mask_columns)
        self.dialect = dialect
        self._carried: dict[tuple[int, str], str | None] = {}
        self._busy: set[tuple[int, str]] = set()

    def check(self, root: exp.Expr) -> None:
        if not self.masked:
            return
        for node in root.walk():
            if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                shown = self.carries(node)
                if shown and not _allowed_place(node):
                    raise Deny(
                        f"uses masked column {shown} {_place(node, self.dialect)}; a masked column can only be shown or counted"
                    )
            elif isinstance(node, exp.Star):
                self._check_star(node)
            elif isinstance(node, exp.Join):
                self._check_join(node)
            elif isinstance(node, exp.SetOperation):
                self._check_set_operation(node)
            if isinstance(node, exp.Query):
                self._check_output_references(node)

    # ---------------------------------------------------------------- what a reference carries

    def carries(self, column: exp.Column) -> str | None:
        """The masked column ("table.column") this reference can read, if any."""
        for read in self.lineage.reads(column):
            found = self._masked_read(read)
            if found:
                return found
        name = column_key(column.name)
        for source in self._derived_sources(column):
            found = self._source_carries(source, name)
            if found:
                return found
        return None

    def _masked_read(self, read: Read) -> str | None:
        columns = self.masked.get(read.table)
        if not columns:
            return None
        if read.column is None:  # a whole row, a renamed column that could be any, c.f in PostgreSQL
            return f"{read.table}.{sorted(columns)[0]}"
        return f"{read.table}.{read.column}" if read.column in columns else None

    def _derived_sources(self, column: exp.Column) -> list[Source]:
        """The derived tables and CTEs (not real tables) `column` may name."""
        levels = enclosing_selects(column)
        qualifier = column.args.get("table")
        if isinstance(qualifier, exp.Identifier):
            return [s for s in self.lineage.named(qualifier, levels) if not s.table]
        name = column_key(column.name)
        for select in levels:
            sources = self.lineage.sources(select)
            derived = [s for s in sources if not s.table and s.has(name) is not False]
            if derived or any(s.has(name) for s in sources):
                return derived
        return []

    def _source_carries(self, source: Source, name: str) -> str | None:
        """Does output `name` of a derived table or CTE pass on a masked column?"""
        body = _body_of(source.node, self.dialect)
        if body is None:  # a table function, VALUES, UNNEST: what it returns is its arguments'
            return None
        key = (id(body), name)
        if key in self._carried:
            return self._carried[key]
        if key in self._busy:  # a recursive CTE reading itself: what it carries comes from its anchor
            return None
        self._busy.add(key)
        try:
            position = source.outputs.index(name) if source.outputs and name in source.outputs else None
            found = self._query_carries(body, name, position)
        finally:
            self._busy.discard(key)
        self._carried[key] = found
        return found

    def _query_carries(self, query: exp.Expr, name: str, position: int | None) -> str | None:
        while isinstance(query, exp.Subquery):
            query = query.this
        if isinstance(query, exp.SetOperation):
            for branch in (query.this, query.expression):
                found = self._query_carries(branch, name, position)
                if found:
                    return found
            return None
        if not isinstance(query, exp.Select):
            return None
        projections = query.expressions
        if position is not None and position < len(projections) and not _has_star(projections):
            return self._projection_carries(projections[position], query)
        for projection in projections:  # by name ("" for any), or through a `*` that hides which is which
            if not name or _is_star(_bare(projection)) or column_key(projection.output_name) == name:
                found = self._projection_carries(projection, query, name)
                if found:
                    return found
        return None

    def _projection_carries(self, projection: exp.Expr, select: exp.Select, name: str = "") -> str | None:
        inner = _bare(projection)
        if isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
            return self.carries(inner)
        if _is_star(inner):
            return self._star_carries(inner, select, name)
        return None  # computed: any masked reference inside it is denied where it stands

    def _star_carries(self, star: exp.Expr, select: exp.Select, name: str) -> str | None:
        """Does `*` or `t.*` in `select` pass on a masked column called `name` (any, if "")?"""
        for source in self._star_sources(star, select):
            if source.table:
                columns = self.masked.get(source.table)
                if columns and (not name or name in columns or name in source.renames or source.base is None):
                    return f"{source.table}.{name if name in columns else sorted(columns)[0]}"
            else:
                found = self._source_carries(source, name)
                if found:
                    return found
        return None

    def _star_sources(self, star: exp.Expr, select: exp.Select) -> list[Source]:
        qualifier = star.args.get("table") if isinstance(star, exp.Column) else None
        if isinstance(qualifier, exp.Identifier):
            return self.lineage.named(qualifier, enclosing_selects(star) or [select])
        return self.lineage.sources(select)

    # ---------------------------------------------------------------- checks

    def _check_star(self, star: exp.Star) -> None:
        parent = star.parent
        node: exp.Expr = parent if isinstance(parent, exp.Column) else star
        if isinstance(node.parent, exp.Count) or _is_output(node):
            return
        select = next(iter(enclosing_selects(node)), None)
        if select is None:
            return
        found = self._star_carries(node, select, "")
        if found:
            raise Deny(
                f"reads whole rows of {found.split('.')[0]}, which has masked columns, {_place(node, self.dialect)}"
            )

    def _check_join(self, join: exp.Join) -> None:
        levels = enclosing_selects(join)
        if str(join.args.get("method") or "").upper() == "NATURAL":
            for select in levels[:1]:
                for source in self.lineage.sources(select):
                    columns = self.masked.get(source.table)
                    if columns:
                        raise Deny(
                            f"uses NATURAL JOIN over {source.table}, which has masked columns"
                            f" ({', '.join(sorted(columns))}); join on named columns instead"
                        )
        for ident in join.args.get("using") or []:
            if isinstance(ident, exp.Identifier):
                name = column_key(ident.name)
                for read in self.lineage.unqualified(ident, name, ident.name, levels):
                    found = self._masked_read(read)
                    if found:
                        raise Deny(
                            f"uses masked column {found} to join (USING); a masked column can only be shown or counted"
                        )

    def _check_set_operation(self, node: exp.SetOperation) -> None:
        if isinstance(node, exp.Union) and not node.args.get("distinct"):
            return  # UNION ALL compares nothing
        for branch in (node.this, node.expression):
            query = branch.this if isinstance(branch, exp.Subquery) else branch
            if not isinstance(query, exp.Query):
                continue
            for index, name in enumerate(_output_names(query)):
                found = self._query_carries(query, name, index)
                if found:
                    kind = type(node).__name__.upper()
                    raise Deny(
                        f"compares the values of masked column {found} ({kind} removes duplicates);"
                        " use UNION ALL, or leave the column out"
                    )

    def _check_output_references(self, query: exp.Query) -> None:
        """ORDER BY / GROUP BY / HAVING / DISTINCT ON naming an output column that carries a mask."""
        names = _output_names(query)
        carrying: dict[str, str] = {}
        positions: dict[int, str] = {}
        for index, name in enumerate(names):
            found = self._query_carries(query, name, index)
            if found:
                carrying[name] = found
                positions[index + 1] = found
        star = isinstance(query, exp.Select) and _has_star(query.expressions)
        starred = self._query_carries(query, "", None) if star else None
        if not carrying and not starred:
            return
        for clause in _OUTPUT_REFERRING:
            part = query.args.get(clause)
            if not isinstance(part, exp.Expr) or (clause == "distinct" and not part.args.get("on")):
                continue
            for node in part.walk():
                if isinstance(node, exp.Column) and not node.table and column_key(node.name) in carrying:
                    found = carrying[column_key(node.name)]
                elif isinstance(node, exp.Literal) and not node.is_string and _positional(node):
                    found = positions.get(int(node.this)) if node.this.isdigit() else None
                    found = found or starred
                else:
                    continue
                if found:
                    raise Deny(
                        f"uses masked column {found} {_place(node, self.dialect)}; a masked column can only be shown or counted"
                    )


def _body_of(item: exp.Expr, dialect: str) -> exp.Expr | None:
    """The query behind a FROM item that is a derived table, a LATERAL subquery or a CTE."""
    body: object = None
    if isinstance(item, exp.Subquery):
        body = item.this
    elif isinstance(item, exp.Lateral) and isinstance(item.this, exp.Subquery):
        body = item.this.this
    elif isinstance(item, exp.Table):
        cte = visible_cte(item, dialect)
        body = cte.this if cte is not None else None
    return body if isinstance(body, exp.Expr) else None


def _bare(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Alias | exp.Paren):
        node = node.this
    return node


def _is_star(node: exp.Expr) -> bool:
    return isinstance(node, exp.Star) or (isinstance(node, exp.Column) and isinstance(node.this, exp.Star))


def _has_star(projections: list[exp.Expr]) -> bool:
    return any(_is_star(_bare(p)) for p in projections)


def _output_names(query: exp.Expr) -> list[str]:
    while isinstance(query, exp.Subquery):
        query = query.this
    while isinstance(query, exp.SetOperation):
        query = query.this
        while isinstance(query, exp.Subquery):
            query = query.this
    if not isinstance(query, exp.Select):
        return []
    return [column_key(p.output_name) for p in query.expressions]


def _positional(literal: exp.Literal) -> bool:
    """`ORDER BY 2` / `GROUP BY 2` name the second output column; `ORDER BY 2 + x` does not."""
    parent = literal.parent
    return isinstance(parent, (exp.Ordered, exp.Group)) or (
        isinstance(parent, exp.Tuple) and isinstance(parent.parent, exp.Distinct)
    )


def _is_output(node: exp.Expr) -> bool:
    """Is `node` (bare or renamed) an output column of a query whose output may carry a mask?"""
    while isinstance(node.parent, exp.Paren | exp.Alias):
        node = node.parent
    select = node.parent
    if not isinstance(select, exp.Select) or node.arg_key != "expressions":
        return False
    return _output_flows_out(select)


def _output_flows_out(query: exp.Expr) -> bool:
    """Do this query's output columns reach the result, or a FROM item that passes them on?

    Not when they are compared: a scalar or IN subquery, UNION / INTERSECT / EXCEPT.
    """
    parent = query.parent
    if parent is None or isinstance(parent, exp.CTE | exp.Lateral | exp.Exists):
        return True  # the result; a CTE or LATERAL item whose outputs carry the mask; EXISTS reads none
    if isinstance(parent, exp.Subquery):
        grand = parent.parent
        if grand is None or isinstance(grand, exp.From | exp.Join | exp.Lateral | exp.Exists):
            return True  # parentheses round the whole query; a derived table; EXISTS
        if isinstance(grand, exp.Subquery | exp.SetOperation | exp.CTE):
            return _output_flows_out(parent)  # more parentheses
        return False
    if isinstance(parent, exp.Union) and not parent.args.get("distinct"):
        return _output_flows_out(parent)  # UNION ALL compares nothing
    return False


def _allowed_place(column: exp.Column) -> bool:
    node: exp.Expr = column
    while isinstance(node.parent, exp.Paren):
        node = node.parent
    parent = node.parent
    if isinstance(parent, exp.Count) or (
        isinstance(parent, exp.Distinct) and isinstance(parent.parent, exp.Count)
    ):
        return True
    return _is_output(column)


_CLAUSE_WORDS = {
    "where": "in WHERE",
    "group": "in GROUP BY",
    "order": "in ORDER BY",
    "having": "in HAVING",
    "qualify": "in QUALIFY",
    "distinct": "in DISTINCT ON",
}


def _place(node: exp.Expr, dialect: str) -> str:
    """Where `node` stands, in words ("in WHERE", "inside SUBSTR() in the output"), for the reason."""
    inner = ""
    current: exp.Expr = node
    while current.parent is not None:
        parent = current.parent
        what = ""
        if isinstance(parent, exp.Window):
            what = "in a window (OVER)"
        elif isinstance(parent, exp.Filter) and current.arg_key == "expression":
            what = "in FILTER (WHERE ...)"
        elif isinstance(parent, exp.Case | exp.If):
            inner = inner or "inside CASE"
        elif isinstance(parent, exp.Func) and not isinstance(parent, exp.Count):
            inner = inner or f"inside {parent.sql(dialect).split('(')[0].strip().upper()[:30]}()"
        elif isinstance(parent, exp.Join) and current.arg_key == "on":
            what = "in JOIN ON"
        elif isinstance(parent, exp.Select) and current.arg_key in _CLAUSE_WORDS:
            what = _CLAUSE_WORDS[current.arg_key]
        elif isinstance(parent, exp.Select) and current.arg_key == "expressions" and inner:
            what = "in the output"
        elif isinstance(parent, exp.Subquery | exp.In | exp.Any | exp.All) and not isinstance(
            parent.parent, exp.From | exp.Join | exp.Lateral
        ):
            what = "inside a subquery whose values are compared"
        if what:
            return f"{inner} {what}" if inner else what
        current = parent
    return inner or "in the query"
