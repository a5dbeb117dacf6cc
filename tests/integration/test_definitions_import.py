"""Definitions imported, not retyped: a real dbt project, compiled and built by dbt-core against a
real PostgreSQL database, imported with `askbase catalog import dbt`, then used by an answer; OSI
files written and read back; `askbase catalog check` reporting what does not fit.

The dbt project is written here (seeds, models with a contract and tests, a semantic model with
entities, dimensions and measures, simple, ratio, derived and cumulative metrics), built once per
module into a PostgreSQL database of its own (dropped afterwards), with no network: no packages,
no anonymous usage statistics. Keyword mode through an imported metric is tested with the keyword
grammar for definitions (core/keyword), not here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from sqlalchemy.engine import make_url

import tests.fakes.model_replies as mr
from core.access import Principal
from core.askbase import Askbase
from core.database import Databases
from core.definitions import declared, osi
from core.definitions.dbt import read_project
from core.definitions.load import load_file, parse
from core.definitions.model import Definition
from core.insurance_demo import CATALOG_PATH, build_insurance
from core.llm import LLM
from core.settings import ROOT, DatabaseSettings, load_settings
from core.state import definitions as store
from core.state import open_state
from tests.servers import admin_engine, server_url

INSURANCE_DEFINITIONS = ROOT / "config" / "insurance_definitions.yaml"
ANA = Principal.of(user="U1", channel="C1")

PROJECT = {
    "dbt_project.yml": """
name: shop
version: "1.0.0"
config-version: 2
profile: shop
model-paths: [models]
seed-paths: [seeds]
models:
  shop:
    +materialized: table
""",
    "seeds/raw_customers.csv": "id,first_name,segment\n1,Ana,retail\n2,Ben,business\n3,Cleo,retail\n",
    "seeds/raw_orders.csv": (
        "id,customer_id,order_date,status,amount\n"
        "1,1,2024-01-05,completed,100.00\n"
        "2,1,2024-01-20,returned,40.00\n"
        "3,2,2024-02-02,completed,250.00\n"
        "4,3,2024-02-10,placed,75.50\n"
        "5,2,2024-03-01,completed,20.00\n"
    ),
    "models/customers.sql": "select id as customer_id, first_name, segment from {{ ref('raw_customers') }}\n",
    "models/orders.sql": (
        "select id as order_id, customer_id, order_date, status, cast(amount as numeric(10, 2)) as amount\n"
        "from {{ ref('raw_orders') }}\n"
    ),
    "models/metricflow_time_spine.sql": (
        "select cast(d as date) as date_day\n"
        "from generate_series(date '2024-01-01', date '2024-12-31', interval '1 day') as d\n"
    ),
    "models/schema.yml": """
version: 2
models:
  - name: customers
    description: One row per customer.
    meta: {owner: "@ana", synonyms: [clients, buyers]}
    config:
      contract: {enforced: true}
    columns:
      - name: customer_id
        data_type: integer
        description: The customer's id.
        constraints: [{type: primary_key}]
        data_tests: [unique, not_null]
      - name: first_name
        data_type: text
      - name: segment
        data_type: text
        description: Retail or business customer.
        data_tests:
          - accepted_values:
              arguments: {values: [retail, business]}
  - name: orders
    description: One row per order a customer placed.
    config:
      contract: {enforced: true}
      meta: {owner: sales-ops}
    columns:
      - name: order_id
        data_type: integer
        constraints: [{type: primary_key}]
        data_tests: [unique]
      - name: customer_id
        data_type: integer
        data_tests:
          - relationships:
              arguments: {to: "ref('customers')", field: customer_id}
      - name: order_date
        data_type: date
      - name: status
        data_type: text
        description: Where the order is.
        meta:
          values: {placed: not shipped yet, completed: delivered and paid}
        data_tests:
          - accepted_values:
              arguments: {values: [placed, shipped, completed, returned]}
      - name: amount
        data_type: numeric
  - name: metricflow_time_spine
    time_spine: {standard_granularity_column: date_day}
    columns:
      - {name: date_day, granularity: day}

semantic_models:
  - name: orders
    description: Orders with their amounts.
    model: ref('orders')
    defaults: {agg_time_dimension: order_date}
    entities:
      - {name: order, type: primary, expr: order_id}
      - {name: customer, type: foreign, expr: customer_id}
    dimensions:
      - {name: order_date, type: time, type_params: {time_granularity: day}}
      - {name: status, type: categorical, description: Order status}
      - {name: is_large, type: categorical, expr: "amount > 100", description: Orders over 100}
    measures:
      - {name: order_total, agg: sum, expr: amount, description: Sum of order amounts}
      - {name: order_count, agg: count, expr: "1"}
      - {name: ordering_customers, agg: count_distinct, expr: customer_id}
  - name: customers
    model: ref('customers')
    entities:
      - {name: customer, type: primary, expr: customer_id}
    dimensions:
      - {name: segment, type: categorical}

metrics:
  - name: revenue
    label: Revenue
    description: Amounts of completed orders.
    type: simple
    type_params: {measure: order_total}
    filter: "{{ Dimension('order__status') }} = 'completed'"
    config:
      meta: {owner: finance, synonyms: [sales, turnover]}
  - name: order_count
    label: Orders
    type: simple
    type_params: {measure: order_count}
  - name: retail_revenue
    label: Retail revenue
    type: simple
    type_params: {measure: order_total}
    filter: "{{ Dimension('customer__segment') }} = 'retail' and {{ Dimension('order__status') }} = 'completed'"
  - name: revenue_since_february
    label: Revenue since February
    type: simple
    type_params: {measure: order_total}
    filter: "{{ TimeDimension('metric_time', 'month') }} >= '2024-02-01'"
  - name: average_order_value
    label: Average order value
    type: ratio
    type_params: {numerator: revenue, denominator: order_count}
  - name: customers_with_orders
    label: Customers with orders
    type: simple
    type_params: {measure: ordering_customers}
  - name: revenue_per_customer
    label: Revenue per customer
    type: derived
    type_params:
      expr: revenue / buyers
      metrics: [revenue, {name: customers_with_orders, alias: buyers}]
  - name: revenue_growth
    label: Revenue growth
    type: derived
    type_params:
      expr: revenue - revenue_prev
      metrics: [revenue, {name: revenue, alias: revenue_prev, offset_window: 1 month}]
  - name: cumulative_revenue
    label: Cumulative revenue
    type: cumulative
    type_params: {measure: order_total}
""",
}


def _dbt() -> list[str] | None:
    """dbt in the venv of its own `make install` makes (.venv-dbt: dbt-core pins pathspec below
    what current mypy needs), else beside this Python, else on PATH; None when there is none."""
    own = ROOT / ".venv-dbt" / "bin" / "dbt"
    found = (
        (str(own) if own.is_file() else None)
        or shutil.which("dbt", path=str(Path(sys.executable).parent))
        or shutil.which("dbt")
    )
    return [found] if found else None


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Iterator[tuple[Path, str]]:
    """(the dbt project dir, the URL of the database `dbt build` built it into)."""
    dbt = _dbt()
    if dbt is None:
        pytest.skip("dbt is not installed (make install puts it in .venv-dbt)")
    if not os.environ.get("ASKBASE_TEST_POSTGRES_URL"):
        pytest.skip("ASKBASE_TEST_POSTGRES_URL is not set")
    name = f"askbase_dbt_{uuid.uuid4().hex[:8]}"
    admin = admin_engine("ASKBASE_TEST_POSTGRES_URL").execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        server = make_url(server_url("ASKBASE_TEST_POSTGRES_URL"))
        project = tmp_path_factory.mktemp("dbt") / "shop"
        for path, text in PROJECT.items():
            (project / path).parent.mkdir(parents=True, exist_ok=True)
            (project / path).write_text(text.lstrip("\n"))
        profile = {
            "type": "postgres",
            "host": server.host or "127.0.0.1",
            "port": server.port or 5432,
            "user": server.username or "postgres",
            "password": server.password or "",
            "dbname": name,
            "schema": "public",
            "threads": 1,
        }
        (project / "profiles.yml").write_text(
            yaml.safe_dump({"shop": {"target": "dev", "outputs": {"dev": profile}}})
        )
        env = {
            **os.environ,
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "DO_NOT_TRACK": "1",
            "DBT_VERSION_CHECK": "false",  # nothing reaches the internet in tests
            "DBT_PROFILES_DIR": str(project),
        }
        built = subprocess.run(
            [
                *dbt,
                "build",
                "--project-dir",
                str(project),
                "--no-send-anonymous-usage-stats",
                "--no-version-check",
                "--no-use-colors",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-2000:]
        yield project, server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def configured(tmp_path: Path, state_url: str, databases: dict[str, dict[str, object]]) -> dict[str, str]:
    config = tmp_path / "askbase.yaml"
    config.write_text(yaml.safe_dump({"databases": databases}))
    return {
        "ASKBASE_CONFIG": str(config),
        "ASKBASE_VAR_DIR": str(tmp_path / "var"),
        "ASKBASE_STATE_URL": state_url,
    }


def by_name(definitions: list[Definition]) -> dict[str, Definition]:
    return {d.name: d for d in definitions}


def same(d: Definition) -> str:
    """What a definition says, without where this copy of it was read or stored."""
    data = d.to_json()
    for key in ("provenance", "id", "status"):
        data.pop(key, None)
    return str(data)


# ---------------------------------------------------------------- dbt


@pytest.mark.postgres
def test_a_dbt_project_imports_with_its_metrics_and_a_metric_question_uses_them(
    shop, cli, tmp_path, state_url, fake_llm, llm_settings
):
    project, url = shop
    env = configured(tmp_path, state_url, {"shop": {"url": url}})

    ran = cli(["catalog", "import", "dbt", str(project), "--db", "shop"], env)

    assert ran.returncode == 0, ran.stderr
    assert "Imported " in ran.stdout and "metric 'revenue' (metric.shop.revenue)" in ran.stdout
    skipped = ran.stdout.partition("Skipped")[2]
    assert "metric.shop.revenue_growth: it compares revenue with an earlier period" in skipped
    assert "metric.shop.cumulative_revenue: a cumulative metric" in skipped
    state = open_state(state_url)
    try:
        stored = by_name(store.active(state, "shop"))
    finally:
        state.dispose()
    revenue = stored["revenue"]
    assert (revenue.kind, revenue.table, revenue.sql, revenue.filter, revenue.grain) == (
        "metric",
        "orders",
        "SUM(amount)",
        "status = 'completed'",
        ("order_id",),
    )
    assert (revenue.provenance.source, revenue.provenance.origin, revenue.provenance.owner) == (
        "dbt",
        "metric.shop.revenue",
        "finance",
    )
    assert {"sales", "turnover"} <= set(revenue.synonyms)
    aov = stored["average order value"]
    assert (aov.numerator, aov.denominator) == ("revenue", "order count")
    # MetricFlow filters as SQL: a dimension of another semantic model through the foreign entity,
    # metric_time at a grain; each gives the figure written by hand
    retail = stored["retail revenue"]
    assert retail.filter == (
        "status = 'completed' AND customer_id IN (SELECT customer_id FROM customers WHERE segment = 'retail')"
    )
    since = stored["revenue since february"]
    assert since.filter == "DATE_TRUNC('MONTH', order_date) >= '2024-02-01'"
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            for metric, figure in ((retail, "100.00"), (since, "345.50")):
                sql = f"SELECT {metric.sql} FROM {metric.table} WHERE {metric.filter}"
                assert conn.execute(sa.text(sql)).scalar() == Decimal(figure)
    finally:
        engine.dispose()
    assert stored["revenue per customer"].sql == (
        "(SUM(CASE WHEN status = 'completed' THEN amount END)) / (COUNT(DISTINCT customer_id))"
    )
    assert stored["is large"].kind == "filter" and stored["is large"].sql == "amount > 100"
    joins = [d for d in stored.values() if d.kind == "relationship"]
    assert [(d.table, d.to, d.sql) for d in joins] == [
        ("orders", "customers", "customers.customer_id = orders.customer_id")
    ]
    customer = stored["customer"]
    assert customer.kind == "entity" and customer.table == "customers" and customer.provenance.owner == "@ana"
    assert {"clients", "buyers"} <= set(customer.synonyms)
    assert ("business", "segment") in customer.values and "one of retail, business" in customer.description
    orders = next(d for d in stored.values() if d.kind == "entity" and d.table == "orders")
    assert ("completed", "status: delivered and paid") in orders.values

    # a metric question, in LLM mode: the writer selects from the imported metric by name
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        default_db="shop",
        databases={"shop": DatabaseSettings(url=url)},
    )
    askbase = Askbase(settings, llm=LLM(llm_settings))
    try:
        fake_llm.respond("generate", mr.writing("SELECT SUM(revenue) AS revenue FROM revenue"))
        out = askbase.ask("What is our total revenue?", principal=ANA)
        assert out.status == "answer", out.error
        prompt = fake_llm.calls("generate")[0].messages[0]["content"]
        section = prompt.partition("### Business definitions")[2].partition("###")[0]
        assert "SUM(amount) FROM orders WHERE status = 'completed'" in section
        assert out.sql.startswith("WITH revenue AS")
        assert out.rows == [(Decimal("370.00"),)]
        assert [d.name for d in out.using] == ["revenue"]
        assert out.to_json()["using"][0]["credit"].startswith("revenue (from dbt, defined by finance")

        fake_llm.respond(
            "generate",
            mr.writing(
                "SELECT CAST(r.revenue AS REAL) / NULLIF(c.order_count, 0) AS average_order_value"
                " FROM (SELECT SUM(revenue) AS revenue FROM revenue) AS r"
                " CROSS JOIN (SELECT SUM(order_count) AS order_count FROM order_count) AS c"
            ),
        )
        ratio = askbase.ask("What is the average order value?", principal=ANA)
        assert ratio.status == "answer", ratio.error
        assert ratio.rows == [(pytest.approx(74.0),)]
        assert {d.name for d in ratio.using} == {"average order value", "revenue", "order count"}
    finally:
        askbase.close()

    # the same metric question in keyword mode (no LLM): the imported metric's name is a word it places
    keyword = Askbase(settings)
    try:
        out = keyword.ask("total revenue", principal=ANA)
        assert out.status == "answer" and out.mode == "keyword", out.error
        assert out.rows == [(Decimal("370.00"),)] and [d.name for d in out.using] == ["revenue"]
    finally:
        keyword.close()


@pytest.mark.postgres
def test_a_second_import_replaces_the_first_as_new_versions(shop, cli, tmp_path, state_url):
    project, url = shop
    env = configured(tmp_path, state_url, {"shop": {"url": url}})
    assert cli(["catalog", "import", "dbt", str(project / "target"), "--db", "shop"], env).returncode == 0
    state = open_state(state_url)
    try:
        first = by_name(store.active(state, "shop"))
        assert cli(["catalog", "import", "dbt", str(project), "--db", "shop"], env).returncode == 0
        second = by_name(store.active(state, "shop"))
        assert set(second) == set(first)
        assert second["revenue"].provenance.version == first["revenue"].provenance.version + 1
        assert [d.status for d in store.history(state, "shop", "revenue")] == ["retired", "active"]
    finally:
        state.dispose()


@pytest.mark.postgres
def test_without_a_catalog_the_reader_names_dbt_relations_and_skips_what_it_cannot_say(shop):
    project, _ = shop
    read = read_project(project / "target" / "manifest.json")
    names = {d.name for d in read.definitions}
    assert {"revenue", "order count", "average order value", "customer", "orders to customers"} <= names
    assert {s.what for s in read.skipped} == {"metric.shop.revenue_growth", "metric.shop.cumulative_revenue"}


def test_a_project_without_artifacts_is_a_usage_error(cli, tmp_path, state_url):
    db = build_insurance(tmp_path / "insurance.sqlite")
    env = configured(tmp_path, state_url, {"insurance": {"url": f"sqlite:///{db}"}})
    ran = cli(["catalog", "import", "dbt", str(tmp_path / "nowhere"), "--db", "insurance"], env)
    assert ran.returncode == 2 and "run `dbt parse`" in ran.stderr


# ---------------------------------------------------------------- OSI and YAML, out and back


@pytest.fixture
def insurance(tmp_path) -> Path:
    return build_insurance(tmp_path / "insurance.sqlite")


def insurance_env(tmp_path: Path, state_url: str, db: Path, *files: Path) -> dict[str, str]:
    return configured(
        tmp_path,
        state_url,
        {
            "insurance": {
                "url": f"sqlite:///{db}",
                "catalog": str(CATALOG_PATH),
                "definitions": [str(f) for f in files],
            }
        },
    )


OWNED = """
definitions:
  filters:
    - {name: big claim, table: claim, sql: claim_id > 200, owner: ana, scope: {channel: C0123}}
  instructions:
    - {text: In this channel amounts are shown in thousands., scope: {channel: C0123}}
"""


def test_exported_osi_imports_as_the_same_definitions(cli, tmp_path, state_url, insurance):
    owned = tmp_path / "owned.yaml"
    owned.write_text(OWNED)
    env = insurance_env(tmp_path, state_url, insurance, INSURANCE_DEFINITIONS, owned)
    exported = cli(["catalog", "export", "--format", "osi", "--db", "insurance"], env)
    assert exported.returncode == 0, exported.stderr
    document = yaml.safe_load(exported.stdout)
    model = document["semantic_model"][0]
    assert document["version"] == "0.1.1" and model["name"] == "insurance"
    # what other tools read: plain SQL with the filter folded in, columns named by dataset
    metrics = {m["name"]: m["expression"]["dialects"][0] for m in model["metrics"]}
    assert metrics["written_premium"] == {
        "dialect": "ANSI_SQL",
        "expression": "SUM(CASE WHEN policy_amount.amount_type = 'premium' THEN policy_amount.amount END)",
    }
    joins = {r["name"]: r for r in model["relationships"]}
    assert joins["claim_amount_of_a_claim"]["from_columns"] == ["claim_id"]
    assert "Motor" in model["ai_context"]["instructions"]
    file = tmp_path / "insurance.osi.yaml"
    file.write_text(exported.stdout)

    # into a database that has no definitions of its own: the same definitions, from OSI
    bare = insurance_env(tmp_path, state_url, insurance)
    ran = cli(["catalog", "import", "osi", str(file), "--db", "insurance"], bare)
    assert ran.returncode == 0, ran.stderr
    assert "Skipped" not in ran.stdout
    state = open_state(state_url)
    try:
        stored = store.active(state, "insurance")
    finally:
        state.dispose()
    written = [*load_file(INSURANCE_DEFINITIONS), *load_file(owned)]
    assert sorted(map(same, stored)) == sorted(map(same, written))
    assert {d.provenance.source for d in stored} == {"osi"}
    big = next(d for d in stored if d.name == "big claim")
    assert (big.provenance.owner, big.scope.channel) == ("ana", "C0123")  # kept by the extension

    # and back as YAML: the format the catalog reads, giving the same definitions again
    again = cli(["catalog", "export", "--format", "yaml", "--db", "insurance"], bare)
    assert again.returncode == 0, again.stderr
    reread = parse(yaml.safe_load(again.stdout)["definitions"], "exported.yaml")
    assert sorted(map(same, reread)) == sorted(map(same, written))


NATIVE_OSI = """
version: "0.1.1"
semantic_model:
  - name: claims
    ai_context:
      instructions: |
        - Amounts are in euros.
    datasets:
      - name: claim
        source: insurance.main.claim
        primary_key: [claim_id]
        fields:
          - name: open_claim
            expression:
              dialects:
                - {dialect: ANSI_SQL, expression: "claim_status IN ('open', 'reopened')"}
            datatype: Boolean
            ai_context: {synonyms: [open claims]}
          - name: claim_status
            expression: {dialects: [{dialect: ANSI_SQL, expression: claim_status}]}
      - name: claim_amount
        source: insurance.main.claim_amount
      - name: motor_policy
        source: SELECT * FROM policy WHERE line_of_business = 'auto'
        description: Motor policies.
    relationships:
      - {name: amount_claim, from: claim_amount, to: claim, from_columns: [claim_id], to_columns: [claim_id]}
    metrics:
      - name: total_claimed
        expression:
          dialects:
            - {dialect: MDX, expression: "[Measures].[Amount]"}
            - {dialect: SNOWFLAKE, expression: "SUM(IFF(claim_amount.amount > 0, claim_amount.amount, 0))"}
        ai_context: {synonyms: [claimed]}
      - name: cost_per_claim
        expression:
          dialects: [{dialect: ANSI_SQL, expression: "SUM(claim_amount.amount) / COUNT(DISTINCT claim.claim_id)"}]
      - name: cube_only
        expression:
          dialects: [{dialect: MDX, expression: "[Measures].[Count]"}]
"""


def test_an_osi_file_from_another_tool_is_read_from_its_own_fields(cli, tmp_path, state_url, insurance):
    file = tmp_path / "claims.osi.yaml"
    file.write_text(NATIVE_OSI)
    env = insurance_env(tmp_path, state_url, insurance)
    ran = cli(["catalog", "import", "osi", str(file), "--db", "insurance"], env)
    assert ran.returncode == 0, ran.stderr
    assert "metric 'cost_per_claim': spans datasets claim, claim_amount" in ran.stdout
    assert "metric 'cube_only': has no SQL expression" in ran.stdout
    state = open_state(state_url)
    try:
        stored = by_name(store.active(state, "insurance"))
    finally:
        state.dispose()
    assert stored["open claim"].kind == "filter" and stored["open claim"].synonyms == ("open claims",)
    assert "claim status" not in stored  # a plain column is no definition
    # the Snowflake expression, read as Snowflake and written as the database's SQL
    assert (stored["total claimed"].table, stored["total claimed"].sql) == (
        "claim_amount",
        "SUM(IIF(amount > 0, amount, 0))",
    )
    assert stored["amount claim"].sql == "claim.claim_id = claim_amount.claim_id"
    assert stored["motor policy"].sql == "SELECT * FROM policy WHERE line_of_business = 'auto'"
    assert stored["Amounts are in euros."].text == "Amounts are in euros."


def test_a_databases_definitions_may_be_an_osi_file(tmp_path, state_url, insurance, monkeypatch):
    file = tmp_path / "insurance.osi.yaml"
    file.write_text(osi.dump_yaml(load_file(INSURANCE_DEFINITIONS), name="insurance", dialect="sqlite"))
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        databases={
            "insurance": DatabaseSettings(
                url=f"sqlite:///{insurance}", catalog=str(CATALOG_PATH), definitions=[str(file)]
            )
        },
    )
    databases = Databases(settings)
    try:
        read = declared(databases.get("insurance"))
    finally:
        databases.close()
    assert sorted(map(same, read)) == sorted(map(same, load_file(INSURANCE_DEFINITIONS)))
    assert {d.provenance.source for d in read} == {"osi"}


# ---------------------------------------------------------------- check


def test_catalog_check_prints_every_problem_and_fails(cli, tmp_path, state_url, insurance):
    fine = insurance_env(tmp_path, state_url, insurance, INSURANCE_DEFINITIONS)
    ok = cli(["catalog", "check", "--db", "insurance"], fine)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "definitions of insurance fit its schema" in ok.stdout

    broken = tmp_path / "broken.yaml"
    broken.write_text(
        yaml.safe_dump(
            {
                "definitions": {
                    "metrics": [{"name": "margin", "table": "policy_amount", "sql": "SUM(amount - cost)"}],
                    "filters": [{"name": "open", "table": "claims", "sql": "claim_status = 'open'"}],
                }
            }
        )
    )
    ran = cli(
        ["catalog", "check", "--db", "insurance"], insurance_env(tmp_path, state_url, insurance, broken)
    )
    assert ran.returncode == 1
    lines = ran.stdout.splitlines()
    assert f"{broken}: metric 'margin': unknown column cost" in lines
    assert f"{broken}: filter 'open': unknown table claims" in lines
    assert "2 problem(s)" in ran.stderr
