"""Write a keyword-mode query as one SELECT over the view (core/expand.py inlines the view after).

The view already holds every join (DANKE's Steiner tree under Lucy's constraints), so the query
only has to pick columns, filter, aggregate, group and order. Two rules keep counts and sums
right when the view repeats rows (a client joined to its payments repeats the client):
COUNT counts the counted table's key, DISTINCT; SUM and AVG over a table whose rows repeat first
take each of its rows once (a DISTINCT subquery on its key), then aggregate.

Date arithmetic is written per dialect at the end of this module. sqlglot transpiles most date
functions (STRFTIME ↔ TO_CHAR ↔ DATE_FORMAT), so buckets are built as sqlglot expressions; where
its rendering is wrong or lossy for a dialect (QUARTER() on PostgreSQL, DATEDIFF counting days on
MySQL, DATE_TRUNC on SQLite) the expression is written by hand for that dialect. Bucket labels
are text that sorts in time order and reads the same on every database: '2025', '2025-Q1',
'2025-03', and the Monday a week starts on.
"""

from __future__ import annotations

import datetime as dt
import re

import sqlglot
from sqlglot import exp

from core.joins import RESERVED, View, ViewColumn, table_expr
from core.joins.identifiers import identifier
from core.keyword.columns import column_kind, label_columns, parent_levels, stored_as_text
from core.keyword.match import Lexicon
from core.keyword.plan import Absent, Filter, Measure, OrderKey, Query, Ref
from core.keyword.time_buckets import MONTH_NAMES, WEEKDAY_NAMES
from core.values import fold

_SAFE = re.compile(r"^[a-z_][a-z0-9_]*$")
_COMPARE: dict[str, type[exp.Binary]] = {
    ">": exp.GT,
    ">=": exp.GTE,
    "<": exp.LT,
    "<=": exp.LTE,
    "=": exp.EQ,
    "!=": exp.NEQ,
}


class CompileError(ValueError):
    pass


def ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=not _SAFE.match(name) or name in RESERVED)


def col(name: str) -> exp.Column:
    return exp.Column(this=ident(name))


class Compiler:
    """One query's SQL; `aliases` and `output_names` are its own bookkeeping while it writes."""

    def __init__(self, query: Query, view: View, lex: Lexicon, dialect: str) -> None:
        self.query = query
        self.view = view
        self.lex = lex
        self.dialect = dialect
        self.aliases: dict[Measure, str] = {}  # the output name of each measure
        self.output_names: dict[Ref, str] = {}  # group and projection columns, by their output name

    # -- columns -------------------------------------------------------------------------------

    def vcol(self, ref: Ref) -> ViewColumn:
        """The view column of a base column (the first role copy when a table appears twice)."""
        t, c = ref.table.lower(), ref.column.lower()
        for vc in self.view.columns:
            if vc.table.lower() == t and vc.column.lower() == c:
                return vc
        for other in self._joined_to(ref):  # a join key the view keeps once, on the other side
            for vc in self.view.columns:
                if (vc.alias, vc.column.lower()) == other:
                    return vc
        raise CompileError(f"the view has no column {ref.table}.{ref.column}")

    def _joined_to(self, ref: Ref) -> list[tuple[str, str]]:
        """(alias, column) of the columns a join equates with `ref` (bookings.customer_id =
        customers.customer_id)."""
        tables = self.view.aliases
        out = []
        for step in self.view.steps:
            for left, right in step.on:
                (la, lc), (ra, rc) = left.split(".", 1), right.split(".", 1)
                for (a, ac), (b, bc) in (((la, lc), (ra, rc)), ((ra, rc), (la, lc))):
                    if tables[a].lower() == ref.table.lower() and ac.lower() == ref.column.lower():
                        out.append((b, bc.lower()))
        return out

    def c(self, ref: Ref) -> exp.Expr:
        """The view column of `ref`, or its time bucket."""
        column = col(self.vcol(ref).name)
        return bucket(self.as_date(column, ref), ref.bucket, self.dialect) if ref.bucket else column

    def as_date(self, column: exp.Expr, ref: Ref) -> exp.Expr:
        """A date kept as text, cast for the date functions of servers that will not take text
        (SQLite's date functions read ISO text as it is)."""
        if self.dialect == "sqlite" or not stored_as_text(self.lex, ref.raw):
            return column
        return exp.Cast(this=column, to=exp.DataType.build("TIMESTAMP"))

    def repeats(self, table: str) -> bool:
        """Do rows of `table` repeat in the view (it is not alone in the grain of a fanned-out view)?"""
        if not self.view.fans_out:
            return False
        aliases = [a for a, t in self.view.aliases.items() if t.lower() == table.lower()]
        return not (len(self.view.grain) == 1 and aliases and self.view.grain[0] in aliases)

    def _at_most_one(self, table: str, other: str) -> bool:
        """Each row of `table` has at most one row of `other`: the same table, or one reached by
        following foreign keys out of it (student → advisor, gymnast → people)."""
        reached = {t.lower() for level in parent_levels(self.lex, table) for t in level}
        return other.lower() in reached | {table.lower()}

    def _unique(self, ref: Ref) -> bool:
        """`ref` alone tells the rows of its table apart (a one-column unique constraint)."""
        t = self.lex.table(ref.table)
        return t is not None and any(len(u) == 1 and u[0].lower() == ref.column.lower() for u in t.unique)

    def key(self, table: str) -> list[Ref]:
        return [Ref(table, k) for k in self.lex.key_of(table)]

    # -- expressions ---------------------------------------------------------------------------

    def measure(self, m: Measure, source_has_key: bool = True) -> exp.Expr:
        if m.func == "COUNT":
            if m.column is not None:
                ref = Ref(m.table, m.column)
                return exp.Count(this=exp.Distinct(expressions=[self.c(ref)]) if m.distinct else self.c(ref))
            keys = self.key(m.table)
            alone = not self.view.steps or (
                not self.repeats(m.table) and self.view.root_table.lower() == m.table.lower()
            )
            labels = [Ref(m.table, c) for c in label_columns(self.lex, m.table)]
            if alone and not keys and self.query.distinct and len(labels) == 1:
                # 'how many different sports' in a table with no key (a row per student and
                # sport): the different names, not the rows
                return exp.Count(this=exp.Distinct(expressions=[self.c(labels[0])]))
            if alone:
                return exp.Count(this=exp.Star())
            if len(keys) == 1:
                return exp.Count(this=exp.Distinct(expressions=[self.c(keys[0])]))
            if len(labels) == 1 and (not keys or self._unique(labels[0])):
                return exp.Count(this=exp.Distinct(expressions=[self.c(labels[0])]))
            if keys:
                # a key of several columns (campus and discipline): its rows repeat in this view
                # and one of its columns counts campuses, not rows — not answered with a guess
                raise CompileError(f"it could not count each row of {m.table} once through these joins")
            return exp.Count(this=exp.Star())
        assert m.ref is not None
        arg = self.duration(m) if m.since else self.c(m.ref)
        if m.func == "AVG":
            return exp.Avg(this=arg)
        if m.func == "SUM":
            return exp.Sum(this=arg)
        if m.func == "MIN":
            return exp.Min(this=arg)
        return exp.Max(this=arg)

    def ratio(self, a: Ref, b: Ref) -> exp.Expr:
        """a / b as a real number, NULL where b is 0."""
        real = exp.Cast(this=self.c(a), to=exp.DataType.build("DOUBLE"))
        return exp.Div(this=real, expression=exp.Nullif(this=self.c(b), expression=exp.Literal.number(0)))

    def alias(self, m: Measure) -> str:
        base = {"COUNT": "number_of", "SUM": "total", "AVG": "average", "MIN": "minimum", "MAX": "maximum"}[
            m.func
        ]
        what = (
            f"duration_{m.unit}s"
            if m.since
            else m.column or (m.words if m.words and len(m.words) <= 30 else m.table)
        )
        name = re.sub(r"[^a-z0-9_]+", "_", fold(f"{base} {what}")).strip("_")
        return name

    def condition(self, f: Filter) -> exp.Expr:
        column = self.c(f.ref)
        kind = column_kind(self.lex, f.ref.table, f.ref.column)

        def lit(v: object) -> exp.Expr:
            if isinstance(v, bool):
                return exp.Boolean(this=v)
            if isinstance(v, int | float) and not isinstance(v, bool):
                return exp.Literal.number(v)
            if isinstance(v, dt.date):
                return exp.Literal.string(v.isoformat())
            if kind in ("integer", "number") and isinstance(v, str) and _is_number(v):
                return exp.Literal.number(v)
            return exp.Literal.string(str(v))

        if f.op in _COMPARE:
            return _COMPARE[f.op](this=column, expression=lit(f.value))
        if f.op == "in":
            return exp.In(this=column, expressions=[lit(v) for v in f.value])
        if f.op in ("contains", "prefix", "suffix"):
            text = str(f.value).lower().replace("%", "").replace("_", " ").strip()
            pattern = {"contains": f"%{text}%", "prefix": f"{text}%", "suffix": f"%{text}"}[f.op]
            return exp.Like(this=exp.Lower(this=column), expression=exp.Literal.string(pattern))
        if f.op == "range":
            lo, hi = f.value
            parts: list[exp.Expr] = []
            if lo is not None:
                parts.append(exp.GTE(this=column.copy(), expression=lit(lo)))
            if hi is not None:
                parts.append(exp.LT(this=column.copy(), expression=lit(hi)))
            return exp.and_(*parts)
        if f.op == "true":
            return exp.EQ(this=column, expression=exp.true())
        if f.op == "present":  # filled in (value True) or left empty (False: 'without an email')
            empty = exp.Is(this=column, expression=exp.Null())
            return exp.Not(this=empty) if f.value is not False else empty
        if f.op == "none":  # 'no kids': a number of them that is zero, or not recorded
            empty = exp.Is(this=column.copy(), expression=exp.Null())
            return exp.paren(exp.or_(exp.EQ(this=column, expression=exp.Literal.number(0)), empty))
        if f.op == "month":
            month = month_number(self.as_date(column, f.ref), self.dialect)
            return exp.EQ(this=month, expression=exp.Literal.number(int(f.value)))
        raise CompileError(f"unknown filter {f.op}")

    def none_of(self, a: Absent) -> exp.Expr:
        """NOT EXISTS a row of `a.table` that refers to the listed row ('customers who do not have
        any policies'), over the one table the question lists."""
        if not self.view.single_table or self.view.root_table.lower() != a.key.table.lower():
            raise CompileError("an absence over joined tables")
        table = self.lex.table(a.table)
        if table is None:
            raise CompileError(f"no table {a.table}")
        d = self.dialect
        outer = exp.Column(this=identifier(a.key.column, d), table=identifier(self.view.root_table, d))
        inner = exp.Column(this=identifier(a.column, d), table=ident("referring"))
        rows = (
            exp.select(exp.Literal.number(1))
            .from_(table_expr(table.name, table.schema, "referring", d))
            .where(exp.EQ(this=inner, expression=outer))
        )
        return exp.Not(this=exp.Exists(this=rows))

    def duration(self, m: Measure) -> exp.Expr:
        """A row's end minus its start (durations.py), in `m.unit`."""
        assert m.column is not None and m.since is not None
        end, start = (Ref(m.table, c) for c in (m.column, m.since))
        return duration(
            self.as_date(self.c(end), end), self.as_date(self.c(start), start), m.unit, self.dialect
        )

    # -- the query -----------------------------------------------------------------------------

    def from_(self) -> exp.Table:
        if self.view.single_table:
            return table_expr(self.view.root_table, self.view.root_schema, self.view.root_table, self.dialect)
        return exp.Table(this=ident(self.view.name))

    def sql(self) -> str:
        plan = self.query
        subjects = {
            t.lower()
            for t in [plan.target or "", *(m.table for m in plan.measures if m.func == "COUNT")]
            if t
        }
        for f in plan.filters:
            if f.op == "!=" and any(not self._at_most_one(t, f.ref.table) for t in subjects):
                # 'students who aren't allergic to soy' over Has_Allergy rows keeps every student
                # with some other allergy: 'not' must hold for all of a student's rows
                raise CompileError(f"a negation ('{f.words}') over rows that repeat for each one listed")
        where = [self.condition(f) for f in plan.filters] + [self.none_of(a) for a in plan.absent]
        if plan.count_groups:
            return self._count_groups(where).sql(dialect=self.dialect)
        query = self._aggregate(where) if plan.measures or plan.having else self._list(where)
        return (self._ties(query) if plan.ties and plan.order else query).sql(dialect=self.dialect)

    def _ties(self, query: exp.Select) -> exp.Select:
        """Every row that ties with the first on the order ('which datacenter has the most hosts'
        when two have as many): the rows whose first order key is that key's best value."""
        o = self.query.order[0]
        if isinstance(o.key, Measure):
            name = self.aliases.get(o.key, self.alias(o.key))
        else:
            name = self.output_names.get(o.key) or self.vcol(o.key).name
            for p in query.expressions:
                if isinstance(p, exp.Alias) and isinstance(p.this, exp.Column) and p.this.name == name:
                    name = p.alias
        shown = {p.alias_or_name.lower(): p.alias_or_name for p in query.expressions}
        if name.lower() not in shown:
            raise CompileError("a tie on something the answer does not show")
        name = shown[name.lower()]
        inner = query.copy()
        inner.set("limit", None)
        best = (exp.Max if o.desc else exp.Min)(this=col(name))
        top = exp.Subquery(this=exp.select(best).from_(exp.Table(this=ident("ranked"))))
        outer = (
            exp.select(exp.Star())
            .from_(exp.Table(this=ident("ranked")))
            .where(exp.EQ(this=col(name), expression=top))
        )
        order = [exp.Ordered(this=col(p.alias_or_name)) for p in inner.expressions[:1]]
        return outer.with_("ranked", as_=inner).order_by(*order)

    def _named(self, ref: Ref, taken: set[str]) -> exp.Expr:
        """A column under a readable name: its own (a bucket's unit), or table_column when taken."""
        name = (ref.bucket or ref.column).lower()
        if name in taken or (name in ("id", "name") and len({r.table for r in self.query.all_refs()}) > 1):
            name = (
                f"{ref.table}_{ref.column}".lower()
                if not ref.bucket
                else f"{ref.column}_{ref.bucket}".lower()
            )
        taken.add(name)
        self.output_names[ref] = name
        expr = self.c(ref)
        if isinstance(expr, exp.Column) and expr.name.lower() == name:
            return expr
        return exp.alias_(expr, ident(name))

    def _list(self, where: list[exp.Expr]) -> exp.Select:
        plan = self.query
        taken: set[str] = set()
        projections = [self._named(r, taken) for r in plan.projection]
        if plan.ratio is not None:
            projections.append(exp.alias_(self.ratio(*plan.ratio), ident("ratio")))
        if not projections:
            raise CompileError("the reading shows no column")
        query = exp.select(*projections).from_(self.from_())
        if where:
            query = query.where(exp.and_(*where))
        distinct = plan.distinct or (
            any(self.repeats(r.table) for r in plan.ratio) if plan.ratio else self._list_repeats()
        )
        # Ordered by a column it does not show ('the country of the highest airport'), the rows
        # are the things ranked: DISTINCT would rank each country by an arbitrary one of its
        # airports in SQLite and is an error in PostgreSQL.
        hidden_key = any(isinstance(o.key, Ref) and o.key not in plan.projection for o in plan.order)
        if distinct and not hidden_key:
            query = query.distinct()
        elif plan.distinct and not plan.limit:
            # 'the different region names, sorted by record label': each name once, placed by the
            # first (or, descending, the last) label among its rows
            query = query.group_by(*[self.c(r) for r in plan.projection])
            order = [self._first_of_group(o, projections) for o in plan.order]
            return query.order_by(*order)
        return self._order_and_limit(query, projections)

    def _first_of_group(self, o: OrderKey, projections: list[exp.Expr]) -> exp.Ordered:
        if isinstance(o.key, Ref) and o.key not in self.query.projection:
            first: exp.Expr = (exp.Max if o.desc else exp.Min)(this=self.c(o.key))
            return exp.Ordered(this=first, desc=o.desc, nulls_first=False)
        return self._order_expr(o, projections)

    def _list_repeats(self) -> bool:
        """One row per row of the thing listed ('the writers of the books': one per book, as the
        words say), each once: DISTINCT only where the joins repeat the listed thing's rows, or the
        question says 'distinct' / 'different' (plan.distinct)."""
        plan = self.query
        if plan.target is not None:
            return self.repeats(plan.target) or self._only_filtered_by_root(plan.target)
        return any(self.repeats(r.table) for r in plan.projection)

    def _only_filtered_by_root(self, target: str) -> bool:
        """'which stations ever had 0 bikes available': the view's rows are another table's
        (status), each pointing at one of the listed thing's rows, and only the thing's columns
        are shown — the other table's rows only pick which stations, so a station they pick
        twice is the same station, listed once."""
        plan = self.query
        root = self.view.root_table.lower()
        if not self.view.steps or root == target.lower() or not plan.projection:
            return False
        if any(r.table.lower() != target.lower() for r in plan.projection):
            return False
        return target.lower() in {t.lower() for level in parent_levels(self.lex, root) for t in level}

    def _order_expr(self, o: OrderKey, projections: list[exp.Expr]) -> exp.Ordered:
        if isinstance(o.key, Measure) and o.key in self.query.hidden:
            expr: exp.Expr = self.measure(o.key)
        elif isinstance(o.key, Measure):
            expr = col(self.aliases.get(o.key, self.alias(o.key)))
        elif o.key.bucket:
            name = self.output_names.get(o.key)
            expr = col(name) if name else self.c(o.key)
        elif o.key in self.query.calendar and self.query.groups:
            expr = calendar_position(self.c(o.key), self.query.calendar[o.key])
        else:
            vc = self.vcol(o.key)
            expr = col(vc.name)
            for p in projections:
                if isinstance(p, exp.Alias) and isinstance(p.this, exp.Column) and p.this.name == vc.name:
                    expr = col(p.alias)
        return exp.Ordered(this=expr, desc=o.desc, nulls_first=False)

    def _aggregate(self, where: list[exp.Expr]) -> exp.Select:
        plan = self.query
        taken: set[str] = set()
        groups = [self._named(r, taken) for r in plan.groups if r not in plan.unshown]
        measures: list[exp.Expr] = []
        for m in plan.measures:
            if m in plan.hidden:
                continue
            name = self.alias(m)
            while name in taken:
                name += "_2"
            taken.add(name)
            self.aliases[m] = name
            measures.append(exp.alias_(self.measure(m), ident(name)))
        source: exp.Expr = self.from_()
        repeated = [m for m in plan.measures if m.func in ("SUM", "AVG") and self.repeats(m.table)]
        if repeated:
            source, where = self._dedupe(repeated, where)
        query = exp.select(*groups, *measures).from_(source)
        if where:
            query = query.where(exp.and_(*where))
        if plan.groups:
            # once each: a foreign key grouped by and the key it joins are one column of the view
            columns = [self.c(r) for r in [*plan.groups, *self.entity_keys()]]
            query = query.group_by(*{c.sql(): c for c in columns}.values())
        if plan.having:
            query = query.having(self._having())
        return self._order_and_limit(query, groups)

    def entity_keys(self) -> list[Ref]:
        """The keys of the entities whose names group the rows, grouped by too (not shown): two
        aircraft that share a name are still two aircraft."""
        out: list[Ref] = []
        for g in self.query.groups:
            if g.bucket or g not in self.query.names:
                continue
            for k in self.key(g.table):
                if k not in self.query.groups and k not in out and self._in_view(k):
                    out.append(k)
        return out

    def _in_view(self, ref: Ref) -> bool:
        try:
            self.vcol(ref)
        except CompileError:
            return False
        return True

    def _having(self) -> exp.Expr:
        return exp.and_(
            *(
                _COMPARE[h.op](this=self.measure(h.measure), expression=exp.Literal.number(h.value))
                for h in self.query.having
            )
        )

    def _order_and_limit(self, query: exp.Select, projections: list[exp.Expr]) -> exp.Select:
        order = [self._order_expr(o, projections) for o in self.query.order]
        if order:
            query = query.order_by(*order)
        if self.query.limit:
            query = query.limit(self.query.limit)
        return query

    def _dedupe(self, repeated: list[Measure], where: list[exp.Expr]) -> tuple[exp.Expr, list[exp.Expr]]:
        """Each row of the measured table once per group: SELECT DISTINCT group columns, its key
        and the measured columns, filtered, as the source of the aggregate."""
        plan = self.query
        tables = {m.table.lower() for m in repeated}
        if len(tables) > 1:
            raise CompileError("sums over two tables whose rows repeat")
        table = repeated[0].table
        keys = self.key(table)
        if not keys:
            raise CompileError(f"{table} has no key to take each row once")
        refs = list(
            dict.fromkeys(
                [
                    *(g.raw for g in plan.groups),
                    *self.entity_keys(),
                    *keys,
                    *(r for m in plan.measures for r in m.refs),
                ]
            )
        )
        for m in plan.measures:
            if m.func == "COUNT" and m.column is None:
                refs.extend(r for r in self.key(m.table) if r not in refs)
        inner = exp.select(*[col(self.vcol(r).name) for r in refs]).from_(self.from_()).distinct()
        if where:
            inner = inner.where(exp.and_(*where))
        return exp.Subquery(this=inner, alias=exp.TableAlias(this=ident("each_row"))), []

    def _count_groups(self, where: list[exp.Expr]) -> exp.Select:
        plan = self.query
        groups = [self.c(r) for r in plan.groups]
        inner = exp.select(*[g.copy() for g in groups]).from_(self.from_())
        if where:
            inner = inner.where(exp.and_(*where))
        inner = inner.group_by(*groups).having(self._having())
        name = re.sub(r"[^a-z0-9_]+", "_", fold(f"number of {plan.count_groups}")).strip("_")
        return exp.select(exp.alias_(exp.Count(this=exp.Star()), ident(name))).from_(
            exp.Subquery(this=inner, alias=exp.TableAlias(this=ident("qualifying")))
        )


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def compile_query(query: Query, view: View, lex: Lexicon, dialect: str) -> str:
    """The SQL of `query` over `view` (or over the one table), in `dialect`."""
    return Compiler(query, view, lex, dialect).sql()


# ---------------------------------------------------------------------------------------------
# date arithmetic per dialect

FORMATS = {"year": "%Y", "month": "%Y-%m", "day": "%Y-%m-%d"}
SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}


def bucket(column: exp.Expr, unit: str, dialect: str) -> exp.Expr:
    """The calendar `unit` (year | quarter | month | week | day) of a date, as a text label."""
    if unit in FORMATS:
        return exp.TimeToStr(this=column, format=exp.Literal.string(FORMATS[unit]))
    if unit == "quarter":
        if dialect == "sqlite":
            plus = exp.Paren(this=exp.Add(this=month_number(column.copy(), dialect), expression=_number(2)))
            number: exp.Expr = exp.Div(this=plus, expression=_number(3), typed=True)
        else:
            number = exp.Extract(this=exp.var("QUARTER"), expression=column.copy())
        year = exp.TimeToStr(this=column, format=exp.Literal.string("%Y"))
        text = exp.Cast(this=number, to=exp.DataType.build("TEXT"))
        return exp.Concat(expressions=[year, exp.Literal.string("-Q"), text], safe=True)
    if unit == "week":
        if dialect == "sqlite":
            days = [exp.Literal.string("-6 days"), exp.Literal.string("weekday 1")]
            return exp.Anonymous(this="DATE", expressions=[column, *days])
        if dialect == "mysql":
            weekday = exp.Anonymous(this="WEEKDAY", expressions=[column.copy()])
            monday: exp.Expr = exp.DateSub(this=column, expression=weekday, unit=exp.var("DAY"))
        else:
            monday = exp.DateTrunc(unit=exp.Literal.string("WEEK"), this=column)
        return exp.TimeToStr(this=monday, format=exp.Literal.string("%Y-%m-%d"))
    raise ValueError(f"unknown time bucket {unit}")


def duration(end: exp.Expr, start: exp.Expr, unit: str, dialect: str) -> exp.Expr:
    """`end` minus `start` in `unit` (second ... week), fractional (sqlglot's DATEDIFF would
    round to whole units or, on MySQL, count days whatever the unit)."""
    if dialect == "sqlite" and unit == "day":
        julian = [exp.Anonymous(this="JULIANDAY", expressions=[e]) for e in (end, start)]
        return exp.Sub(this=julian[0], expression=julian[1])
    if dialect == "sqlite":
        seconds: exp.Expr = exp.Sub(
            this=_integer(_strftime("%s", end)), expression=_integer(_strftime("%s", start))
        )
    elif dialect == "postgres":
        end, start = (exp.Cast(this=e, to=exp.DataType.build("TIMESTAMP")) for e in (end, start))
        seconds = exp.Extract(
            this=exp.var("EPOCH"), expression=exp.Paren(this=exp.Sub(this=end, expression=start))
        )
    elif dialect == "mysql":
        seconds = exp.Anonymous(this="TIMESTAMPDIFF", expressions=[exp.var("SECOND"), start, end])
    else:
        seconds = exp.DateDiff(this=end, expression=start, unit=exp.var("SECOND"))
    if unit == "second":
        return seconds
    return exp.Div(this=seconds, expression=exp.Literal.number(f"{SECONDS[unit]}.0"))


def month_number(column: exp.Expr, dialect: str) -> exp.Expr:
    """1 for January ... 12 for December."""
    if dialect == "sqlite":
        return _integer(_strftime("%m", column))
    return exp.Month(this=column)


def calendar_position(column: exp.Expr, kind: str) -> exp.Expr:
    """A month or weekday name's place in the calendar (1 for January or Monday)."""
    names = MONTH_NAMES if kind == "month" else WEEKDAY_NAMES
    case = exp.Case()
    for i, name in enumerate(names, 1):
        case = case.when(exp.EQ(this=column.copy(), expression=exp.Literal.string(name)), _number(i))
    return case


def _number(n: int) -> exp.Expr:
    return exp.Literal.number(n)


def _strftime(fmt: str, column: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), column])


def _integer(e: exp.Expr) -> exp.Expr:
    return exp.Cast(this=e, to=exp.DataType.build("INTEGER"))


def order_outputs(sql: str, dialect: str) -> list[int] | None:
    """The output columns (by position) a query orders by, or None when it orders by something
    it does not show: what two rows at a LIMIT must differ in for the cut to be clean."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError:
        return None
    order = tree.args.get("order")
    if not isinstance(tree, exp.Select) or order is None:
        return None
    names = [p.alias_or_name.lower() for p in tree.expressions]
    out = []
    for o in order.expressions:
        e = o.this
        if not isinstance(e, exp.Column) or e.name.lower() not in names:
            return None
        out.append(names.index(e.name.lower()))
    return out
