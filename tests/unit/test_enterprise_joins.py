"""Enterprise join patterns on the insurance demo: roles, typed facts, subtypes, parallel paths.

Each test synthesizes the view from the tables and the question (no LLM), writes SQL over the view
by hand the way the SQL writer would, expands it, runs it on SQLite and compares the rows with
hand-written SQL over the base tables — the rows a user would see, not only the join text.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import sqlalchemy as sa
import sqlglot
import yaml
from sqlglot import exp

from core.bench.join_gold import case_patterns, covered_instances, gold_cases
from core.catalog import overlay, reflect
from core.connect import readonly_engine
from core.expand import expand
from core.graph import build_graph
from core.insurance_demo import CATALOG_PATH, build_insurance
from core.joins import synthesize_view, view_ddl
from core.joins.wording import Wording
from tests.paths import DATA

QUESTIONS = DATA / "insurance_questions.json"


@pytest.fixture(scope="module")
def insurance(tmp_path_factory):
    path = build_insurance(tmp_path_factory.mktemp("insurance") / "insurance.sqlite")
    engine = readonly_engine(f"sqlite:///{path}")
    catalog = overlay(reflect(engine, "insurance"), yaml.safe_load(CATALOG_PATH.read_text()))
    graph = build_graph(catalog, engine)
    yield graph, engine
    engine.dispose()


def rows(engine, sql: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(sql)).all()]


def joins_of(sql: str) -> list[exp.Join]:
    return list(sqlglot.parse_one(sql, read="sqlite").find_all(exp.Join))


# ---------------------------------------------------------------------------------------------
# roles


def test_a_role_the_question_names_is_joined_with_its_filter_inside_the_join(insurance):
    graph, engine = insurance
    view = synthesize_view(graph, ["policy", "party"], question="Which agents sold the most policies?")
    assert view.root_table == "policy"
    (role,) = [s for s in view.steps if s.where]
    assert role.table == "agreement_party_role" and role.where == (("agent_role.party_role_code", "AG"),)
    assert role.on == (("policy.policy_id", "agent_role.agreement_id"),)  # the subtype's shared key
    assert "agreement" not in {s.table for s in view.steps}
    assert view.aliases["agent"] == "party"
    sql = expand(
        f"SELECT agent_party_name, COUNT(DISTINCT policy_policy_id) AS n FROM {view.name} "
        "GROUP BY agent_party_name ORDER BY n DESC, agent_party_name LIMIT 5",
        view,
        "sqlite",
    )
    assert "party_role_code = 'AG'" in sql
    gold = rows(
        engine,
        """SELECT a.party_name, COUNT(DISTINCT p.policy_id) AS n FROM policy p
           JOIN agreement_party_role r ON r.agreement_id = p.policy_id AND r.party_role_code = 'AG'
           JOIN party a ON a.party_id = r.party_id GROUP BY a.party_name ORDER BY n DESC, a.party_name LIMIT 5""",
    )
    every_party = rows(
        engine,
        """SELECT a.party_name, COUNT(DISTINCT p.policy_id) AS n FROM policy p
           JOIN agreement_party_role r ON r.agreement_id = p.policy_id
           JOIN party a ON a.party_id = r.party_id GROUP BY a.party_name ORDER BY n DESC, a.party_name LIMIT 5""",
    )
    assert rows(engine, sql) == gold and gold != every_party


def test_two_roles_get_two_copies_each_with_its_own_party(insurance):
    graph, engine = insurance
    view = synthesize_view(
        graph, ["policy", "party"], question="For each policy, show the policy holder and the agent."
    )
    copies = {s.alias: s for s in view.steps if s.where}
    assert {s.where[0][1] for s in copies.values()} == {"AG", "PH"}
    assert all(s.kind == "left" for s in copies.values())  # a missing role never drops the policy
    assert {"agent", "policy_holder"} <= set(view.aliases)
    ddl = view_ddl(view)
    assert "are the same table agreement_party_role in different roles" in ddl
    sql = expand(
        f"SELECT policy_policy_number, policy_holder_party_name, agent_party_name FROM {view.name}",
        view,
        "sqlite",
    )
    gold = rows(
        engine,
        """SELECT p.policy_number, h.party_name, a.party_name FROM policy p
           JOIN agreement_party_role hr ON hr.agreement_id = p.policy_id AND hr.party_role_code = 'PH'
           JOIN party h ON h.party_id = hr.party_id
           JOIN agreement_party_role ar ON ar.agreement_id = p.policy_id AND ar.party_role_code = 'AG'
           JOIN party a ON a.party_id = ar.party_id""",
    )
    assert sorted(rows(engine, sql)) == sorted(gold) and len(gold) > 300


def test_roles_in_a_claim_come_from_the_code_table_and_without_a_question_the_view_says_how_to_filter(
    insurance,
):
    graph, _ = insurance
    view = synthesize_view(graph, ["claim", "party"], question="Claims with their claimant and adjuster")
    assert {s.where for s in view.steps if s.where} == {
        (("claimant_role.role_code", "CL"),),
        (("adjuster_role.role_code", "AD"),),
    }
    plain = synthesize_view(graph, ["claim", "claim_party_role", "party"])
    assert not any(s.where for s in plain.steps)
    assert any("claim_party_role says which role party plays in claim in role_code" in n for n in plain.notes)


def test_without_meanings_in_the_catalog_a_code_is_read_from_its_letters_and_said_to_be_a_guess(insurance):
    _, engine = insurance
    bare = build_graph(replace(reflect(engine, "insurance"), signature=""), engine)
    assert dict(bare.roles["agreement_party_role"].codes)["AG"] == "AG"  # only the codes are known
    view = synthesize_view(bare, ["policy", "party"], question="Policies sold by each agent")
    (role,) = [s for s in view.steps if s.where]
    assert role.where[0][1] == "AG" and "a guess from its letters" in role.why


def test_words_of_a_role_name_no_other_table(insurance):
    graph, _ = insurance
    view = synthesize_view(
        graph, ["policy", "party"], question="Policies whose insured person is not the policy holder"
    )
    assert {s.where[0][1] for s in view.steps if s.where} == {"IN", "PH"}
    assert "person" not in {t.lower() for t in view.tables}  # 'insured person' is the role, not the table


# ---------------------------------------------------------------------------------------------
# typed facts


def test_each_type_of_amount_the_question_names_gets_its_own_copy(insurance):
    graph, engine = insurance
    question = "The largest loss payment and the largest loss reserve of each claim"
    view = synthesize_view(graph, ["claim", "claim_amount"], question=question)
    inner = {s.table: s.within for s in view.steps if s.within}
    assert inner == {"loss_payment": "loss_payment_claim_amount", "loss_reserve": "loss_reserve_claim_amount"}
    assert view.patterns and "aggregate each copy on its own" in view.patterns[0]
    sql = expand(
        f"SELECT claim_claim_number, MAX(loss_payment_claim_amount_amount), MAX(loss_reserve_claim_amount_amount) "
        f"FROM {view.name} GROUP BY claim_claim_number",
        view,
        "sqlite",
    )
    # each copy is joined to its type inside its own parentheses, so claims without one stay
    assert sql.count("LEFT JOIN (") == 2
    gold = rows(
        engine,
        """SELECT c.claim_number,
                  (SELECT MAX(a.amount) FROM claim_amount a JOIN loss_payment t ON t.claim_amount_id = a.claim_amount_id
                    WHERE a.claim_id = c.claim_id),
                  (SELECT MAX(a.amount) FROM claim_amount a JOIN loss_reserve t ON t.claim_amount_id = a.claim_amount_id
                    WHERE a.claim_id = c.claim_id)
           FROM claim c""",
    )
    assert sorted(rows(engine, sql)) == sorted(gold) and len(gold) == 263


def test_one_amount_table_alone_is_one_row_per_amount(insurance):
    graph, _ = insurance
    view = synthesize_view(graph, ["claim_amount", "loss_payment", "loss_reserve"])
    assert view.root_table == "claim_amount" and not any(s.within for s in view.steps)
    assert {s.table: s.kind for s in view.steps} == {"loss_payment": "left", "loss_reserve": "left"}


# ---------------------------------------------------------------------------------------------
# parallel paths


def test_parallel_paths_follow_the_question_and_a_tie_is_named_in_the_recipe(insurance):
    graph, engine = insurance
    direct = synthesize_view(graph, ["policy_amount", "policy"], question="Total premium per policy number")
    assert direct.join_edges() == {frozenset({("policy_amount", "policy_id"), ("policy", "policy_id")})}
    assert any("also reaches policy through policy_coverage_detail" in n for n in direct.notes)
    named = synthesize_view(graph, ["policy_amount", "policy"], question="Premium per policy and coverage")
    assert "policy_coverage_detail" in named.tables
    assert (
        named.ties
        and "the other reading joins policy_coverage_detail.policy_id = policy.policy_id" in named.ties[0]
    )
    assert "Two readings, equally good" in view_ddl(named)
    sql = expand(f"SELECT COUNT(*) FROM {named.name}", named, "sqlite")
    assert rows(engine, sql) == rows(
        engine, "SELECT COUNT(*) FROM policy_amount WHERE policy_coverage_detail_id IS NOT NULL"
    )


# ---------------------------------------------------------------------------------------------
# the gold questions


def test_views_cover_the_gold_joins_of_our_insurance_questions(insurance):
    graph, engine = insurance
    questions = json.loads(QUESTIONS.read_text())
    assert len(questions) >= 30
    seen: dict[str, int] = {}
    covered = total = 0
    for q in questions:
        assert rows(engine, q["gold_sql"]), q["id"]  # every gold query runs and answers something
        for case in gold_cases(q["gold_sql"], "insurance", graph.catalog, q["question"], q["id"]):
            for pattern in case_patterns(case, graph):
                seen[pattern] = seen.get(pattern, 0) + 1
            view = synthesize_view(graph, list(case.tables), question=q["question"])
            covered += covered_instances(case, view, graph)
            total += 1
    assert all(
        seen.get(p, 0) >= 3
        for p in ("subtype", "role", "role filtered", "typed fact", "parallel path", "self-join")
    )
    assert covered / total >= 0.95, (covered, total)


# ---------------------------------------------------------------------------------------------
# the question's words


def test_the_question_names_phrases_in_order_or_run_together():
    w = Wording("Which policyholders had claims paid to them?")
    assert w.names("policy holder") and w.names("claim") and not w.names("holder policy")
    assert Wording("Loss payments by claim").names("loss_payment")
    assert not Wording("payment of a loss").names("loss payment")
    assert Wording("agents and the policies they sold").abbreviates("AG") == "agent"
    assert Wording("for every policy holder").abbreviates("PH") == "policy holder"
    assert Wording("policies including travel").abbreviates("IN") is None  # no role reads 'including'
    assert Wording("policies of insured people").abbreviates("IN") == "insured"
    assert Wording("where role 'PH' is missing").names_code("PH")
    assert not Wording("graph theory").names_code("PH")
    assert Wording("the insured person").without(["insured person"]).tokens == ("the",)
