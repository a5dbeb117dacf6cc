"""Business definitions: declared in YAML, checked against the schema, picked for a question, shown
to the SQL writer, expanded before the guard, credited under the answer — on the real insurance
demo database, with the real OpenAI client against the local fake model.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import tests.fakes.model_replies as mr
from core.access import Principal
from core.askbase import Askbase
from core.catalog import load_catalog
from core.definitions.check import check
from core.definitions.expand import expand
from core.definitions.load import DefinitionError, load_file, parse
from core.definitions.model import Definitions
from core.definitions.retrieve import pick
from core.definitions.used import used
from core.guard import GuardPolicy
from core.insurance_demo import CATALOG_PATH, build_insurance
from core.llm import LLM
from core.settings import ROOT, DatabaseSettings, load_settings

DEFINITIONS = ROOT / "config" / "insurance_definitions.yaml"
ALICE = Principal.of(user="U1", channel="C1")


@pytest.fixture(scope="module")
def insurance(tmp_path_factory) -> Path:
    return build_insurance(tmp_path_factory.mktemp("insurance") / "insurance.sqlite")


@pytest.fixture(scope="module")
def catalog(insurance):
    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{insurance}")
    try:
        yield load_catalog(engine, "insurance", overlay_path=CATALOG_PATH)
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def declared() -> Definitions:
    return Definitions(load_file(DEFINITIONS))


def by_hand(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


# ---------------------------------------------------------------- written, and checked


def test_the_insurance_definitions_fit_their_schema(declared, catalog):
    kinds = {d.kind for d in declared}
    assert kinds == {"entity", "metric", "filter", "relationship", "instruction"}
    assert check(declared, catalog) == []


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        (
            "metrics: [{name: revenue, table: policy_amount, sql: SUM(amount), colour: red}]",
            "unknown field 'colour'",
        ),
        ("filters: [{name: operational, sql: \"status = 'x'\"}]", "needs table"),
        ("things: []", "unknown section(s) things"),
    ],
)
def test_a_definition_that_cannot_be_read_names_its_file_and_itself(yaml_text, problem):
    with pytest.raises(DefinitionError) as info:
        parse(__import__("yaml").safe_load(yaml_text), "defs.yaml")
    assert str(info.value).startswith("defs.yaml") and problem in str(info.value)


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        (
            "metrics: [{name: revenue, table: policy_amount, sql: SUM(amount_eur)}]",
            "metric 'revenue': unknown column amount_eur",
        ),
        (
            "metrics: [{name: biggest, table: policy_amount, sql: amount}]",
            "metric 'biggest': is not an aggregate",
        ),
        (
            "filters: [{name: operational, table: reactor, sql: \"status = 'x'\"}]",
            "filter 'operational': unknown table reactor",
        ),
        ("filters: [{name: big, table: claim, sql: COUNT(*) > 2}]", "filter 'big': is an aggregate"),
        (
            "entities: [{name: policy, table: policy, filter: \"policy_status = 'in force'\"}]",
            "has the name of a table",
        ),
        (
            "relationships: [{name: holder role, table: policy, to: agreement_party_role, sql: agreement_party_role.agreement_id = policy.policy_id}]",
            "fan-out",
        ),
        (
            "metrics: [{name: ratio, numerator: nothing, denominator: premium}]",
            "'nothing', which is not a defined metric",
        ),
    ],
)
def test_a_definition_that_does_not_fit_the_schema_is_reported(yaml_text, problem, catalog):
    definitions = Definitions(parse(__import__("yaml").safe_load(yaml_text), "defs.yaml"))
    problems = check(definitions, catalog)
    assert problems and problems[0].startswith("defs.yaml:"), problems
    assert problem in problems[0], problems


def test_a_definition_that_reads_a_denied_column_is_refused(catalog):
    definitions = Definitions(
        parse({"filters": [{"name": "gmail", "table": "party", "sql": "email LIKE '%gmail%'"}]}, "defs.yaml")
    )
    problems = check(definitions, catalog, GuardPolicy(deny_columns=frozenset({"party.email"})))
    assert problems and "would be refused" in problems[0] and "party.email" in problems[0]


# ---------------------------------------------------------------- picked, expanded, credited


def test_a_question_picks_the_definitions_it_names_and_what_they_stand_on(declared):
    def names(question: str) -> list[str]:
        return sorted(
            p.definition.name for p in pick(question, declared) if p.definition.kind != "instruction"
        )

    assert names("What was the loss ratio of motor policies?") == [
        "loss ratio",
        "total loss",
        "written premium",
    ]
    rules = [p.definition.text for p in pick("What was the loss ratio of motor policies?", declared)]
    assert len(rules) == 4 and any('"Motor"' in r for r in rules)  # the rule that says what motor is
    assert names("Which agents sold the most active policies?") == ["agent", "in force"]
    assert pick("How many catastrophes hit the north region?", declared) == []  # no glossary word


def test_entities_and_metrics_named_like_tables_become_ctes_that_run(declared, catalog, insurance):
    real = {t.name for t in catalog.tables}
    sql, named = expand(
        "SELECT a.party_name, COUNT(*) AS policies FROM agent a JOIN policy p ON p.policy_id = a.policy_id"
        " WHERE p.policy_status = 'in force' GROUP BY a.party_name ORDER BY policies DESC, a.party_name LIMIT 3",
        declared,
        real,
        "sqlite",
    )
    assert [d.name for d in named] == ["agent"] and sql.startswith("WITH agent AS")
    gold = by_hand(
        insurance,
        "SELECT pa.party_name, COUNT(*) AS policies FROM party pa JOIN agreement_party_role r ON r.party_id ="
        " pa.party_id AND r.party_role_code = 'AG' JOIN policy p ON p.policy_id = r.agreement_id WHERE"
        " p.policy_status = 'in force' GROUP BY pa.party_name ORDER BY policies DESC, pa.party_name LIMIT 3",
    )
    assert by_hand(insurance, sql) == gold
    per_claim, named = expand("SELECT ROUND(SUM(total_loss), 2) FROM total_loss", declared, real, "sqlite")
    assert [d.name for d in named] == ["total loss"]
    assert by_hand(insurance, per_claim) == by_hand(
        insurance, "SELECT ROUND(SUM(amount), 2) FROM claim_amount"
    )


def test_a_copied_snippet_counts_as_used_and_a_claimed_one_does_not(declared):
    written = (
        "SELECT SUM(pa.amount) FROM policy_amount pa JOIN policy p ON p.policy_id = pa.policy_id"
        " WHERE pa.amount_type = 'premium' AND p.policy_status = 'in force'"
    )
    candidates = [p.definition for p in pick("written premium of active policies", declared)]
    assert {d.name for d in used(written, candidates, (), "sqlite")} == {"written premium", "in force"}
    assert used("SELECT SUM(amount) FROM policy_amount", candidates, (), "sqlite") == ()


# ---------------------------------------------------------------- through the engine, LLM mode


@pytest.fixture
def engine_with(insurance, tmp_path, state_url, llm_settings) -> Iterator[Askbase]:
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        default_db="insurance",
        databases={
            "insurance": DatabaseSettings(
                url=f"sqlite:///{insurance}", catalog=str(CATALOG_PATH), definitions=[str(DEFINITIONS)]
            )
        },
    )
    askbase = Askbase(settings, llm=LLM(llm_settings))
    yield askbase
    askbase.close()


def test_the_writer_sees_the_definitions_it_needs_and_the_answer_credits_them(
    engine_with, fake_llm, insurance
):
    fake_llm.respond(
        "generate",
        mr.writing(
            "SELECT a.party_name, COUNT(*) AS policies FROM agent AS a JOIN policy AS p ON p.policy_id = a.policy_id"
            " WHERE p.policy_status = 'in force' GROUP BY a.party_name ORDER BY policies DESC, a.party_name LIMIT 5"
        ),
    )
    out = engine_with.ask("Which agents sold the most active policies?", principal=ALICE)
    assert out.status == "answer", out.error
    prompt = fake_llm.calls("generate")[0].messages[0]["content"]
    section = prompt.partition("### Business definitions")[2].partition("###")[0]
    assert "entity `agent`" in section and "policy_status = 'in force'" in section
    assert "loss ratio" not in section and "adjuster" not in section  # only what the question needs
    assert [d.name for d in out.using] == ["agent", "in force"]
    assert out.sql.startswith("WITH agent AS")
    assert out.rows == by_hand(insurance, out.sql)
    assert out.to_json()["using"][0]["credit"].startswith("agent")
    shown = [s for s in out.trace.stages if s.name == "used definitions"]
    assert shown and "r.party_role_code = 'AG'" in shown[0].outputs["agent"]  # Details show their SQL


def test_a_changed_definition_is_a_cache_miss(engine_with, fake_llm):
    from core.definitions.model import Definition, Provenance
    from core.state import definitions as store

    fake_llm.respond(
        "generate", mr.writing("SELECT COUNT(*) AS n FROM policy WHERE policy_status = 'in force'")
    )
    first = engine_with.ask("How many active policies are there?", principal=ALICE)
    assert (
        first.status == "answer"
        and engine_with.ask("How many active policies are there?", principal=ALICE).reuse
    )
    store.propose(
        engine_with.state,
        "insurance",
        Definition(
            kind="filter",
            name="in force",
            table="policy",
            sql="policy_status IN ('in force', 'cancelled')",
            provenance=Provenance(source="taught"),
        ),
        by="U0ANALYST",
        status="active",
    )
    again = engine_with.ask("How many active policies are there?", principal=ALICE)
    assert again.reuse is None  # the meaning changed: answered afresh


# ---------------------------------------------------------------- taught and learned


def test_a_correction_teaches_the_definitions_that_fit_and_drops_the_rest(catalog, fake_llm, llm_settings):
    from core.definitions.learn import from_correction

    fake_llm.script(
        "learn",
        mr.json_fenced(
            {
                "definitions": [
                    {
                        "kind": "filter",
                        "name": "active policy",
                        "table": "policy",
                        "sql": "policy_status = 'in force'",
                        "description": "A policy that covers today.",
                    },
                    {
                        "kind": "metric",
                        "name": "premium volume",
                        "table": "policy_amount",
                        "sql": "SUM(amount_eur)",
                    },
                    {"kind": "metric", "name": "claim volume", "table": "claim", "sql": "COUNT(*)"},
                ]
            }
        ),
    )
    learned = from_correction(
        "How many active policies are there?",
        "SELECT COUNT(*) FROM agreement WHERE agreement_status = 'active'",
        "SELECT COUNT(*) FROM policy WHERE policy_status = 'in force'",
        catalog,
        Definitions(),
        LLM(llm_settings),
        schema_text="CREATE TABLE policy (...)",
    )
    assert [d.name for d in learned.proposed] == ["active policy", "claim volume"]
    assert learned.dropped and "unknown column amount_eur" in learned.dropped[0]
    assert all(d.provenance.source == "learned" for d in learned.proposed)
    prompt = fake_llm.calls("learn")[0].messages[1]["content"]
    assert "agreement_status = 'active'" in prompt and "policy_status = 'in force'" in prompt


def test_teaching_without_an_llm_reads_conditions_and_ratios_and_an_analyst_approves(
    insurance, tmp_path, state_url
):
    from core.teaching import Teacher

    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        default_db="insurance",
        verified={"analysts": {"users": ["U0ANALYST"]}},
        databases={
            "insurance": DatabaseSettings(
                url=f"sqlite:///{insurance}", catalog=str(CATALOG_PATH), definitions=[str(DEFINITIONS)]
            )
        },
    )
    askbase = Askbase(settings)
    try:
        teacher = Teacher(askbase)
        analyst = Principal.of(user="U0ANALYST", channel="C1")
        proposal = teacher.propose(
            "insurance", "define storm claims as claim.catastrophe_id IS NOT NULL", ALICE
        )
        assert proposal.stored and not proposal.may_approve
        assert proposal.definition is not None and proposal.definition.kind == "filter"
        assert proposal.preview == "40 of 263 claim rows"  # run through the engine's door
        assert teacher.approve(proposal.id, ALICE) is None  # only analysts approve
        assert "storm claims" not in {d.name for d in teacher.all_of("insurance")}
        approved = teacher.approve(proposal.id, analyst)
        assert approved is not None and approved.status == "active"
        assert "storm claims" in {d.name for d in teacher.all_of("insurance")}

        ratio = teacher.propose(
            "insurance", "define payout ratio as paid loss divided by written premium", analyst
        )
        assert ratio.definition is not None and ratio.definition.ratio and ratio.may_approve
        assert ratio.preview.startswith("over all the data: ")
        broken = teacher.propose("insurance", "define big claims as claim_size > 10000", analyst)
        assert not broken.stored and broken.problem  # no LLM and no such column: nothing stored
        assert teacher.revert(approved.id, analyst) is None  # it replaced nothing: it is simply gone
        assert "storm claims" not in {d.name for d in teacher.all_of("insurance")}
    finally:
        askbase.close()
