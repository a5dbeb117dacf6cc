"""The verified-query matcher on its own: parameters found on the SQL tree, values put back into it,
and the paraphrase set (tests/data/verified_paraphrases.json) — no near miss may be reused.

Everything runs on the real demo database: its catalog gives the schema words, its value index the
stored values, and every reuse is judged by running the substituted SQL against a hand-written one.
"""

from __future__ import annotations

import pytest
import sqlglot

from core.bench.verified import evaluate, load_set, verified_queries
from core.verified.lexicon import lexicon_for
from core.verified.literals import shift
from core.verified.match import match
from core.verified.params import detect
from core.verified.query import Param, VerifiedQuery
from core.verified.substitute import Binding, SubstitutionError, substitute


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from core.database import Databases
    from core.demo import ensure_demo
    from core.settings import load_settings

    var = tmp_path_factory.mktemp("verified-demo")
    ensure_demo(var)
    databases = Databases(load_settings(var_dir=str(var)))
    yield databases.get("demo")
    databases.close()


def verified(demo, question: str, sql: str, n: int = 1) -> VerifiedQuery:
    found = detect(question, sql, "sqlite", lexicon_for(demo), [t.name for t in demo.catalog.tables])
    return VerifiedQuery(n, "demo", question, sql, "sqlite", found.params, found.reusable, found.note)


# ---------------------------------------------------------------- the paraphrase set


def test_the_paraphrase_set_is_large_and_honest():
    pset = load_set()
    matches = [c for c in pset.cases if c.match]
    near = [c for c in pset.cases if not c.match]
    assert len(pset.cases) >= 100 and len(matches) >= 50 and len(near) >= 50
    kinds = {c.kind for c in near}
    for kind in ("different measure", "different entity", "added filter", "removed filter", "negation"):
        assert kind in kinds, kind
    assert any("grouping" in k for k in kinds)
    assert all(c.gold_sql for c in matches)


def test_no_near_miss_is_reused_and_most_paraphrases_are(demo):
    ours, baseline, _ = evaluate(demo, load_set())
    wrong = [(o.question, o.reused, o.why) for o in ours.outcomes if o.verdict == "wrong"]
    assert wrong == []
    assert ours.recall >= 0.80, [o.question for o in ours.outcomes if o.verdict == "missed"]
    assert ours.recall > baseline.recall  # the exact-text baseline reuses almost nothing


# ---------------------------------------------------------------- parameters


def test_parameters_are_the_values_the_sql_writes(demo):
    q = verified(
        demo,
        "Top 5 clients by revenue in 2024",
        "SELECT c.name, SUM(pa.amount) AS revenue FROM client c JOIN payment p ON p.client_id = c.id "
        "JOIN payment_amount pa ON pa.payment_id = p.id JOIN income i ON i.amount_id = pa.id "
        "WHERE p.paid_on >= '2024-01-01' AND p.paid_on < '2025-01-01' GROUP BY c.name "
        "ORDER BY revenue DESC LIMIT 5",
    )
    assert [(p.name, p.kind, p.text) for p in q.params] == [
        ("limit", "number", "5"),
        ("year", "year", "2024"),
    ]
    assert q.params[1].originals == ("2024-01-01", "2025-01-01")


def test_a_value_is_a_parameter_only_where_it_is_compared_with_its_own_column(demo):
    # 'Lyon' in the question, but the SQL filters on an id: nothing may change
    q = verified(demo, "How many clients are in Lyon?", "SELECT COUNT(*) FROM client WHERE loc_id = 13")
    assert q.params == ()
    # a number written twice: which one is the question's is unknowable, so neither changes
    q = verified(
        demo,
        "Which hosts have more than 8 cores?",
        "SELECT hostname FROM compute WHERE cpu_cores > 8 LIMIT 8",
    )
    assert q.params == ()


def test_a_moving_period_over_fixed_dates_is_never_reused(demo):
    q = verified(
        demo,
        "Which clients signed up this year?",
        "SELECT name FROM client WHERE signup_date >= '2025-01-01' AND signup_date < '2026-01-01'",
    )
    assert not q.reusable and "moving period" in q.note
    m = match("Which clients signed up this year?", [q], lexicon_for(demo))
    assert m.reuse is None and m.near == (q,)  # still an example for the SQL writer
    relative = verified(
        demo,
        "Which clients signed up this year?",
        "SELECT name FROM client WHERE signup_date >= date('now', 'start of year')",
    )
    assert relative.reusable  # the SQL moves with the calendar itself


def test_month_and_year_bounds_move_by_whole_months():
    assert shift("2025-03-01", -3) == "2024-12-01"
    assert shift("2025-04-01", -3) == "2025-01-01"
    assert shift("2024-02-29", 12) == "2025-02-28"  # a last day stays a last day
    assert shift("2025-01-31", 1) == "2025-02-28"
    assert shift("2024", 12) == "2025"
    assert shift("2024-03-15 08:00:00", 1) == "2024-04-15 08:00:00"


# ---------------------------------------------------------------- substitution


def test_values_are_replaced_as_literal_nodes_and_quoted_by_sqlglot(demo):
    sql = "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id WHERE LOWER(l.city) = 'lyon' OR l.city LIKE '%Lyon%'"
    q = verified(demo, "How many clients are in Lyon?", sql)
    (city,) = q.params
    assert city.originals == ("lyon", "%Lyon%")
    new = substitute(q.sql, "sqlite", [Binding(city, "O'Brien", value="O'Brien")])
    assert "LOWER(l.city) = 'o''brien'" in new and "LIKE '%O''Brien%'" in new
    assert sqlglot.parse_one(new, read="sqlite")  # still one valid statement: no injection through values


def test_unchanged_values_keep_the_verified_sql_verbatim(demo):
    q = verified(
        demo,
        "How many clients are in Lyon?",
        "select count(*) from client c join location l on l.id=c.loc_id where l.city='Lyon'",
    )
    assert substitute(q.sql, "sqlite", [Binding(q.params[0], "Lyon", value="Lyon")]) == q.sql


def test_a_literal_that_moved_stops_the_substitution():
    p = Param("city", "value", "Lyon", 0, 4, (0,), ("Lyon",), "location", "city", "Lyon")
    with pytest.raises(SubstitutionError):
        substitute(
            "SELECT 1 FROM location WHERE city = 'Paris'", "sqlite", [Binding(p, "Nice", value="Nice")]
        )


# ---------------------------------------------------------------- matching


def test_the_match_names_its_values_and_never_guesses_between_readings(demo):
    pset = load_set()
    queries = verified_queries(demo, pset)
    pool = list(queries.values())
    lexicon = lexicon_for(demo)
    m = match("How many customers are based in Zurich?", pool, lexicon)
    assert m.reuse is not None and m.reuse.query.id == queries["clients_in_city"].id
    (binding,) = m.reuse.bindings
    assert binding.value == "Zürich" and "city: Lyon → Zürich" in m.reuse.describe()
    # "Frankfurt" is a city and three datacenters: a near match at best, never a reuse
    m = match("How many hosts in Frankfurt are in maintenance?", pool, lexicon)
    assert m.reuse is None
