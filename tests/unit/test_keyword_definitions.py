"""Keyword mode's definitions grammar (core/keyword/definitions.py): questions about metrics,
named filters and entities answered with no LLM — each grammar rule on its own (text → tree),
then end to end on the real insurance demo database with its definitions, every answer equal to
SQL written by hand; what the grammar declines is read by keyword mode exactly as before.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.access import Principal
from core.askbase import Askbase
from core.definitions import of_database
from core.definitions.load import load_file
from core.definitions.model import Definition, Definitions
from core.dictionary import Term
from core.dictionary import words as folded_words
from core.insurance_demo import CATALOG_PATH, build_insurance
from core.keyword import definitions as grammar
from core.keyword.definitions import Asked, Clause, NotMine, ValueSense, Vocabulary
from core.keyword.match import lexicon
from core.pipeline import answer
from core.request import Request
from core.settings import ROOT, DatabaseSettings, load_settings

DEFINITIONS = ROOT / "config" / "insurance_definitions.yaml"
DECLARED = Definitions(tuple(load_file(DEFINITIONS)))


def named(name: str) -> Definition:
    found = next((d for d in DECLARED if d.name == name), None)
    assert found is not None, name
    return found


def rule(start: str) -> Definition:
    found = next((d for d in DECLARED.of_kind("instruction") if d.text.startswith(start)), None)
    assert found is not None, start
    return found


MOTOR = rule('"Motor"')
FISCAL = rule("The fiscal year")


# ---------------------------------------------------------------------------------------------
# what instructions say words mean


def test_an_instruction_that_says_what_a_word_means_gives_a_value_for_each_word():
    vocab = grammar.vocabulary_of(DECLARED, lambda _t: (), lambda _t: ())
    said = {" ".join(words): (v.column, v.value, v.rule) for words, v in vocab.said_values}
    assert said["motor"] == ("line_of_business", "auto", MOTOR)
    assert said["car"] == ("line_of_business", "auto", MOTOR)
    assert said["household"] == ("line_of_business", "home", MOTOR)  # the column carried over
    assert said["commercial"] == ("line_of_business", "business", MOTOR)


def test_the_fiscal_year_is_read_from_its_instruction_example():
    vocab = grammar.vocabulary_of(DECLARED, lambda _t: (), lambda _t: ())
    assert vocab.fiscal is not None
    definition, start, end, year = vocab.fiscal
    assert definition == FISCAL and (start.isoformat(), end.isoformat(), year) == (
        "2024-04-01",
        "2025-03-31",
        2024,
    )


# ---------------------------------------------------------------------------------------------
# the grammar, rule by rule, over a small fake schema: text → tree

TERMS = {
    "policy": [Term("policy", "policy", None, "name")],
    "claim": [Term("claim", "claim", None, "name")],
    "catastrophe": [Term("catastrophe", "catastrophe", None, "name")],
    "line of business": [
        Term("line of business", "policy", "line_of_business", "name"),
        Term("line of business", "coverage", "line_of_business", "name"),
    ],
    "catastrophe type": [Term("catastrophe type", "catastrophe", "catastrophe_type", "name")],
    "party name": [Term("party name", "party", "party_name", "name")],
}
VALUES = {"closed": [ValueSense("claim_status", "closed", "claim")]}
LOB = (("coverage", "line_of_business"), ("policy", "line_of_business"))
AUTO = (ValueSense("line_of_business", "auto", "", MOTOR),)


@pytest.fixture(scope="module")
def fake() -> Vocabulary:
    return grammar.vocabulary_of(
        DECLARED,
        lambda text: TERMS.get(" ".join(folded_words(text)), ()),
        lambda text: VALUES.get(text.lower(), ()),
    )


def tree(question: str, vocab: Vocabulary) -> Asked | None:
    return grammar.parse(grammar.lexemes(question, vocab))


def test_lexemes_take_the_longest_reading_and_a_definition_before_the_schema(fake):
    read = grammar.lexemes("How many open claims are there?", fake)
    assert [(x.kind, x.words) for x in read] == [
        ("phrase", "how many"),
        ("filter", "open claims"),  # a synonym of the filter, not the value 'open' and the table
        ("phrase", "are there"),
    ]
    by = grammar.lexemes("total loss by line of business", fake)
    assert [(x.kind, x.words) for x in by] == [
        ("metric", "total loss"),
        ("phrase", "by"),  # a schema word never starts with a grammar word
        ("column", "line of business"),
    ]
    assert by[2].columns == LOB  # both readings kept: binding picks the nearer
    assert [x.kind for x in grammar.lexemes("total losses in FY2024", fake)] == ["metric", "phrase", "fy"]
    assert grammar.lexemes("total loss by colour", fake)[-1].kind == "unknown"


@pytest.mark.parametrize(
    "question, want",
    [
        ("total loss by line of business", Asked("metric", metric=named("total loss"), group=LOB)),
        ("What is the total written premium?", Asked("metric", metric=named("written premium"))),
        (
            "written premium for motor policies in 2024",
            Asked(
                "metric",
                metric=named("written premium"),
                clauses=(Clause(values=(AUTO,), table="policy"),),
                year=2024,
            ),
        ),
        (
            "written premium in fiscal 2024",
            Asked("metric", metric=named("written premium"), year=2024, fiscal=True),
        ),
        (
            "written premium in FY2024",
            Asked("metric", metric=named("written premium"), year=2024, fiscal=True),
        ),
        ("written premium in FY24", Asked("metric", metric=named("written premium"), year=2024, fiscal=True)),
        ("paid loss per catastrophe", Asked("metric", metric=named("paid loss"), group_table="catastrophe")),
        (
            "show me the loss ratio for each catastrophe type for closed claims",
            Asked(
                "metric",
                metric=named("loss ratio"),
                group=(("catastrophe", "catastrophe_type"),),
                clauses=(Clause(values=(tuple(VALUES["closed"]),), table="claim"),),
            ),
        ),
    ],
)
def test_metric_rule(question, want, fake):
    assert tree(question, fake) == want


@pytest.mark.parametrize(
    "question, want",
    [
        (
            "how many open claims are there",
            Asked("count", subject=Clause(filters=(named("open claim"),))),
        ),
        ("number of renewals", Asked("count", subject=Clause(filters=(named("renewal"),)))),
        ("How many agents?", Asked("count", entity=named("agent"))),
        (
            "how many active motor policies",
            Asked("count", subject=Clause(filters=(named("in force"),), values=(AUTO,), table="policy")),
        ),
        (
            "how many open claims per line of business",
            Asked("count", subject=Clause(filters=(named("open claim"),)), group=LOB),
        ),
    ],
)
def test_count_rule(question, want, fake):
    assert tree(question, fake) == want


@pytest.mark.parametrize(
    "question, want",
    [
        ("list the open claims", Asked("list", subject=Clause(filters=(named("open claim"),)))),
        (
            "show all catastrophe claims in 2024",
            Asked("list", subject=Clause(filters=(named("catastrophe claim"),)), year=2024),
        ),
    ],
)
def test_list_rule(question, want, fake):
    assert tree(question, fake) == want


@pytest.mark.parametrize(
    "question, want",
    [
        (
            "agents with the most in-force policies",
            Asked(
                "most", entity=named("agent"), subject=Clause(filters=(named("in force"),), table="policy")
            ),
        ),
        (
            "top 3 agents with the most policies",
            Asked("most", entity=named("agent"), subject=Clause(table="policy"), top=3),
        ),
    ],
)
def test_most_rule(question, want, fake):
    assert tree(question, fake) == want


@pytest.mark.parametrize(
    "question",
    [
        "total loss by line of business and year",  # 'and', 'year': not placed
        "loss ratio by agent",  # grouping by an entity is not sound (an agent per policy is not one row)
        "total loss over 1000",
        "list the agents",  # an entity is counted or ranked here, never listed
        "total loss by line of business by catastrophe type",  # one grouping
        "how many",
        "agents with the most open claims per line of business",
    ],
)
def test_what_no_rule_places_is_not_read(question, fake):
    assert tree(question, fake) is None


# ---------------------------------------------------------------------------------------------
# on the insurance demo database: binding, joins, SQL — and the answers


@pytest.fixture(scope="module")
def insurance(tmp_path_factory) -> Path:
    return build_insurance(tmp_path_factory.mktemp("insurance") / "insurance.sqlite")


@pytest.fixture(scope="module")
def app(insurance, tmp_path_factory) -> Iterator[Askbase]:
    var = tmp_path_factory.mktemp("var")
    settings = load_settings(
        var_dir=str(var),
        state_url=f"sqlite:///{var / 'state.sqlite'}",
        default_db="insurance",
        databases={
            "insurance": DatabaseSettings(
                url=f"sqlite:///{insurance}", catalog=str(CATALOG_PATH), definitions=[str(DEFINITIONS)]
            )
        },
    )
    app = Askbase(settings)  # no OPENAI_API_KEY in the tests' environment: keyword mode
    assert app.llm is None
    yield app
    app.close()


@pytest.fixture(scope="module")
def defined(app) -> Definitions:
    found = of_database(app.database("insurance"), None)
    assert {d.name for d in found} >= {"total loss", "loss ratio", "open claim", "agent"}
    return found


def keyword(app, question: str, definitions: Definitions):
    """Keyword mode as the pipeline runs it (no LLM), with these definitions in force."""
    return answer(
        app.database("insurance"), Request(question, definitions=definitions), app.settings.engine, None
    )


def by_hand(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def same_rows(got, want) -> bool:
    def norm(r) -> tuple:
        return tuple(round(v, 6) if isinstance(v, float) else v for v in r)

    return Counter(map(norm, got)) == Counter(map(norm, want))


LOSS_BY_LOB = """
    SELECT p.line_of_business, SUM(ca.amount) FROM claim_amount ca
    JOIN claim c ON c.claim_id = ca.claim_id JOIN policy p ON p.policy_id = c.policy_id
    GROUP BY p.line_of_business"""
PREMIUM_BY_LOB = """
    SELECT p.line_of_business, SUM(pa.amount) FROM policy_amount pa JOIN policy p ON p.policy_id = pa.policy_id
    WHERE pa.amount_type = 'premium' GROUP BY p.line_of_business"""
GOLD = {
    "total loss by line of business": LOSS_BY_LOB,
    "Loss ratio by line of business": f"""
        WITH loss(lob, v) AS ({LOSS_BY_LOB}), premium(lob, v) AS ({PREMIUM_BY_LOB}),
        lines AS (SELECT lob FROM loss UNION SELECT lob FROM premium)
        SELECT lines.lob, COALESCE(loss.v, 0) * 1.0 / premium.v FROM lines
        LEFT JOIN loss ON loss.lob = lines.lob LEFT JOIN premium ON premium.lob = lines.lob""",
    "written premium for motor policies in 2024": """
        SELECT SUM(pa.amount) FROM policy_amount pa JOIN policy p ON p.policy_id = pa.policy_id
        WHERE pa.amount_type = 'premium' AND p.line_of_business = 'auto'
          AND strftime('%Y', pa.effective_date) = '2024'""",
    "average severity per catastrophe type": """
        WITH loss AS (SELECT k.catastrophe_type t, SUM(ca.amount) v FROM claim_amount ca
                      JOIN claim c ON c.claim_id = ca.claim_id JOIN catastrophe k ON k.catastrophe_id = c.catastrophe_id
                      GROUP BY k.catastrophe_type),
             claims AS (SELECT k.catastrophe_type t, COUNT(*) n FROM claim c
                        JOIN catastrophe k ON k.catastrophe_id = c.catastrophe_id
                        WHERE c.claim_status <> 'denied' GROUP BY k.catastrophe_type)
        SELECT loss.t, loss.v * 1.0 / claims.n FROM loss JOIN claims ON claims.t = loss.t""",
    "How many open claims are there?": "SELECT COUNT(*) FROM claim WHERE claim_status IN ('open', 'reopened')",
    "how many active policies": "SELECT COUNT(*) FROM policy WHERE policy_status = 'in force'",
    "list the open claims": """
        SELECT claim_id, claim_number, claim_status FROM claim WHERE claim_status IN ('open', 'reopened')""",
    "How many agents?": """
        SELECT COUNT(DISTINCT r.party_id) FROM agreement_party_role r
        JOIN policy p ON p.policy_id = r.agreement_id WHERE r.party_role_code = 'AG'""",
    "agents with the most in-force policies": """
        WITH n AS (SELECT a.party_id, a.party_name, COUNT(*) k FROM party a
                   JOIN agreement_party_role r ON r.party_id = a.party_id AND r.party_role_code = 'AG'
                   JOIN policy p ON p.policy_id = r.agreement_id WHERE p.policy_status = 'in force'
                   GROUP BY a.party_id, a.party_name)
        SELECT party_name, k FROM n WHERE k = (SELECT MAX(k) FROM n)""",
    "paid loss per catastrophe": """
        SELECT k.catastrophe_name, SUM(ca.amount) FROM claim_amount ca
        JOIN loss_payment lp ON lp.claim_amount_id = ca.claim_amount_id
        JOIN claim c ON c.claim_id = ca.claim_id JOIN catastrophe k ON k.catastrophe_id = c.catastrophe_id
        GROUP BY k.catastrophe_id, k.catastrophe_name""",
    "written premium in fiscal 2024": """
        SELECT SUM(pa.amount) FROM policy_amount pa JOIN policy p ON p.policy_id = pa.policy_id
        WHERE pa.amount_type = 'premium' AND p.effective_date BETWEEN '2024-04-01' AND '2025-03-31'""",
    # the fiscal instruction: 'a claim [belongs] to that [fiscal year] of its loss_date'
    "total loss in fiscal 2024": """
        SELECT SUM(ca.amount) FROM claim_amount ca JOIN claim c ON c.claim_id = ca.claim_id
        WHERE c.loss_date BETWEEN '2024-04-01' AND '2025-03-31'""",
    "loss ratio for car insurance policies": """
        SELECT (SELECT SUM(ca.amount) FROM claim_amount ca JOIN claim c ON c.claim_id = ca.claim_id
                JOIN policy p ON p.policy_id = c.policy_id WHERE p.line_of_business = 'auto') * 1.0
             / (SELECT SUM(pa.amount) FROM policy_amount pa JOIN policy p ON p.policy_id = pa.policy_id
                WHERE pa.amount_type = 'premium' AND p.line_of_business = 'auto')""",
    "how many open claims per line of business": """
        SELECT p.line_of_business, COUNT(*) FROM claim c JOIN policy p ON p.policy_id = c.policy_id
        WHERE c.claim_status IN ('open', 'reopened') GROUP BY p.line_of_business""",
    "number of renewals": "SELECT COUNT(*) FROM policy WHERE renewed_policy_id IS NOT NULL",
    # a value said before a table word may be on that table's many-to-one neighbour: the claim's policy
    "average severity for household claims": """
        SELECT (SELECT SUM(ca.amount) FROM claim_amount ca JOIN claim c ON c.claim_id = ca.claim_id
                JOIN policy p ON p.policy_id = c.policy_id WHERE p.line_of_business = 'home') * 1.0
             / (SELECT COUNT(*) FROM claim c JOIN policy p ON p.policy_id = c.policy_id
                WHERE p.line_of_business = 'home' AND c.claim_status <> 'denied')""",
    "paid loss by line of business in FY23": """
        SELECT p.line_of_business, SUM(ca.amount) FROM claim_amount ca
        JOIN loss_payment lp ON lp.claim_amount_id = ca.claim_amount_id
        JOIN claim c ON c.claim_id = ca.claim_id JOIN policy p ON p.policy_id = c.policy_id
        WHERE c.loss_date BETWEEN '2023-04-01' AND '2024-03-31' GROUP BY p.line_of_business""",
    "claim count by claim status": """
        SELECT claim_status, COUNT(*) FROM claim WHERE claim_status <> 'denied' GROUP BY claim_status""",
    "total loss for closed claims": """
        SELECT SUM(ca.amount) FROM claim_amount ca JOIN claim c ON c.claim_id = ca.claim_id
        WHERE c.claim_status = 'closed'""",
}
USING = {
    "total loss by line of business": ["total loss"],
    "Loss ratio by line of business": ["loss ratio", "total loss", "written premium"],
    "written premium for motor policies in 2024": ["written premium", MOTOR.name],
    "average severity per catastrophe type": ["average severity", "total loss", "claim count"],
    "How many open claims are there?": ["open claim"],
    "how many active policies": ["in force"],
    "list the open claims": ["open claim"],
    "How many agents?": ["agent"],
    "agents with the most in-force policies": ["agent", "in force"],
    "paid loss per catastrophe": ["paid loss"],
    "written premium in fiscal 2024": ["written premium", FISCAL.name],
    "total loss in fiscal 2024": ["total loss", FISCAL.name],
    "loss ratio for car insurance policies": ["loss ratio", "total loss", "written premium", MOTOR.name],
    "how many open claims per line of business": ["open claim"],
    "number of renewals": ["renewal"],
    "average severity for household claims": ["average severity", "total loss", "claim count", MOTOR.name],
    "paid loss by line of business in FY23": ["paid loss", FISCAL.name],
    "claim count by claim status": ["claim count"],
    "total loss for closed claims": ["total loss"],
}


@pytest.mark.parametrize("question", list(GOLD))
def test_a_question_about_definitions_is_answered_like_the_query_written_by_hand(
    question, app, defined, insurance
):
    out = keyword(app, question, defined)
    assert out.status == "answer" and out.mode == "keyword", (out.error, out.sql)
    assert same_rows(out.rows, by_hand(insurance, GOLD[question])), (out.sql, out.rows)
    assert [d.name for d in out.using] == USING[question]
    stages = {s.name: s for s in out.trace.stages}
    assert (
        "read" in stages["definitions grammar"].outputs and "retrieve" not in stages
    )  # the old reader never ran
    assert set(stages["used definitions"].outputs) == set(USING[question])  # Details shows their SQL


def test_the_reading_says_what_was_measured_and_what_each_definition_means(app, defined):
    out = keyword(app, "total loss by line of business", defined)
    assert out.interpretation == "total loss per line of business; total loss = everything a claim costs"
    ratio = keyword(app, "written premium for motor policies in 2024", defined)
    assert ratio.interpretation.startswith(
        "written premium for line of business 'auto' in 2024 (by policy amount effective date); written premium = "
    )
    fiscal = keyword(app, "written premium in FY2024", defined)
    assert "in fiscal 2024 (2024-04-01 to 2025-03-31) (by policy effective date)" in fiscal.interpretation


def test_the_answer_through_askbase_credits_its_definitions(app):
    out = app.ask("how many active policies", refresh=True, principal=Principal.of(user="U1", channel="C1"))
    assert out.status == "answer" and out.mode == "keyword"
    assert [u["name"] for u in out.to_json()["using"]] == ["in force"]
    assert "policy_status = 'in force'" in out.sql  # not agreement_status, which the definition rules out


def test_a_join_that_fans_out_or_leaves_the_key_is_declined(app, defined):
    lex = lexicon(app.database("insurance"))
    for question, why in [
        ("written premium by claim status", "joining claim to policy_amount is not many-to-one"),
        (
            "total loss by party name",
            "not many-to-one from claim_amount",
        ),  # only a vendor's expenses lead there
        ("loss ratio per catastrophe", "joining claim to policy_amount is not many-to-one"),
        ("written premium for property claims", "joining claim to policy is not many-to-one"),
    ]:
        with pytest.raises(NotMine) as info:
            grammar.write(question, lex, defined)
        assert why in str(info.value), question


@pytest.mark.parametrize(
    "question, why",
    [
        ("claim count in 2024", "claim has 2 date columns"),  # loss date or reported date?
        ("how many claims", "no definition is said"),
        ("written premium by line of business and year", "not placed: and, year"),
    ],
)
def test_what_the_schema_leaves_open_is_declined(question, why, app, defined):
    with pytest.raises(NotMine) as info:
        grammar.write(question, lexicon(app.database("insurance")), defined)
    assert why in str(info.value)


@pytest.mark.parametrize(
    "question, named",
    [
        ("written premium by claim status", "'written premium'"),  # fan-out
        ("total loss by party name", "'total loss'"),  # not many-to-one
        ("loss ratio by agent", "'agent', 'loss ratio'"),  # no rule
        ("claim count by claim status in 2024", "'claim count'"),  # two dates
        ("list active policies with their agents", "'agent', 'in force'"),
    ],
)
def test_a_declined_question_that_names_a_definition_is_declined_not_read_without_it(
    question, named, app, defined
):
    """Keyword mode's older reading knows no definitions: it read 'active policies' as
    agreement_status = 'active', which the definition rules out. Right or silent: it declines."""
    now = keyword(app, question, defined)
    assert now.status == "error" and now.error_kind == "keyword_abstain" and not now.rows
    assert now.error.startswith(f"I know what {named} mean"), now.error
    grammar_stage = [s for s in now.trace.stages if s.name == "definitions grammar"]
    assert grammar_stage and "declined" in grammar_stage[0].outputs


def test_a_declined_question_that_names_no_definition_is_read_by_keyword_mode_exactly_as_before(app, defined):
    now = keyword(app, "how many claims", defined)
    before = keyword(app, "how many claims", Definitions())
    assert (now.status, now.sql, now.error, now.rows) == (
        before.status,
        before.sql,
        before.error,
        before.rows,
    )
    assert now.status == "answer"


def test_without_definitions_the_grammar_is_not_even_tried(app):
    out = keyword(app, "how many claims", Definitions())
    assert out.status == "answer"
    assert "definitions grammar" not in {s.name for s in out.trace.stages}
