"""Every example question Askbase shows people — in README.md, docs/*.md, the demo catalog's
`examples` and the suggested prompts built from it (Slack's assistant panel and App Home, Teams'
prompt starters: core/suggestions.py) — asked in keyword mode on the demo database, each with its
exact expected outcome: the rows SQL written by hand gives, or a decline that says why.

The examples are read from their sources, so a new example in the docs fails here until its
expected outcome is written down below."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from core.askbase import Askbase
from core.demo import CATALOG_PATH
from core.settings import ROOT
from core.suggestions import example_questions

SUBCOMMANDS = ("db", "help", "schedule", "schedules", "verified", "private", "define")
PATTERNS = (
    r'ask "([^"\n]+\?)"',  # bot ask "…"
    r'QUESTION="([^"]+)"',  # make demo QUESTION="…" (over a line break too)
    r"\*@Askbase ([^*\n]+\?)\*",  # *@Askbase …?*
    r"> @Askbase ([^\n]+\?)",
    r"`/ask ([^`\n]+)`",  # /ask …
    r'"([A-Z][^"\n]{8,}\?)"',  # "How many customers are based in Paris?"
)


def examples() -> list[str]:
    """The example questions of the docs, the demo catalog and the suggested prompts, each once."""
    found: list[str] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for pattern in PATTERNS:
            for m in re.finditer(pattern, text):
                q = " ".join(m.group(1).split())
                first = q.split()[0].lower()
                if first in SUBCOMMANDS or q.lower().startswith(("and ", "what about")) or "@" in q:
                    continue  # a command, a follow-up, or a definition to teach
                found.append(q)
    found += yaml.safe_load(Path(str(CATALOG_PATH)).read_text())["examples"]
    return list(dict.fromkeys(found))


TOP_BY_PAYMENTS = (
    "SELECT c.name, SUM(a.amount) AS t FROM client c JOIN payment p ON p.client_id = c.id "
    "JOIN payment_amount a ON a.payment_id = p.id {where} GROUP BY c.id ORDER BY t DESC LIMIT {n}"
)
# the rows each example gives, as SQL written by hand; or why keyword mode declines it
ANSWERED = {
    "how many clients are there?": "SELECT COUNT(*) FROM client",
    "top 5 clients by total payments": TOP_BY_PAYMENTS.format(where="", n=5),
    "which 10 clients paid the most in 2025?": TOP_BY_PAYMENTS.format(
        where="WHERE p.paid_on >= '2025-01-01' AND p.paid_on < '2026-01-01'", n=10
    ),
    "how many clients signed up in 2024?": (
        "SELECT COUNT(*) FROM client WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01'"
    ),
    "how many customers are based in paris?": (
        "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = 'Paris'"
    ),
    "how many clients are there per segment?": "SELECT segment, COUNT(*) FROM client GROUP BY segment",
    "how many payments were made per month in 2025?": (
        "SELECT strftime('%Y-%m', paid_on), COUNT(*) FROM payment "
        "WHERE paid_on >= '2025-01-01' AND paid_on < '2026-01-01' GROUP BY 1"
    ),
    "how many active hosts does each datacenter have?": (
        "SELECT d.name, COUNT(*) FROM compute c JOIN datacenter d ON d.id = c.dc_id "
        "WHERE c.status = 'active' GROUP BY d.id"
    ),
    "what was the total income per product line in 2025?": (
        "SELECT i.product_line, SUM(a.amount) FROM income i JOIN payment_amount a ON a.id = i.amount_id "
        "JOIN payment p ON p.id = a.payment_id WHERE p.paid_on >= '2025-01-01' AND p.paid_on < '2026-01-01' "
        "GROUP BY i.product_line"
    ),
    # 'serve' names no join path: datacenters reach clients through their pools' assignments
    # (pool_client), as 'which datacenters serve the most clients?' is read
    "which datacenters starting with dev serve the most clients?": (
        "WITH n AS (SELECT d.name, COUNT(DISTINCT pc.client_id) AS c FROM datacenter d "
        "JOIN resource_pool r ON r.dc_id = d.id JOIN pool_client pc ON pc.pool_id = r.id "
        "WHERE LOWER(d.name) LIKE 'dev%' GROUP BY d.id) SELECT name, c FROM n WHERE c = (SELECT MAX(c) FROM n)"
    ),
}
DECLINED = {
    # 'R&D' is no stored value of the demo: it is named, whole, as the words it could not place
    "clients with > 5 pools in r&d": "'R&D'",
    # clients reach pools by assignment (pool_client) and by usage alike: which is meant is asked
    "which clients use more than three resource pools?": "pool_client",
}


def test_the_examples_are_found_in_their_sources(app):
    found = [q.lower() for q in examples()]
    assert "top 5 clients by total payments" in found  # README: make demo QUESTION="…"
    assert "which 10 clients paid the most in 2025?" in found  # the demo catalog
    assert "how many customers are based in paris?" in found  # docs/slack.md
    prompts = example_questions(app.database("demo").catalog)  # Slack's and Teams' suggested prompts
    assert prompts and {q.lower() for q in prompts} <= set(found)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from core.demo import ensure_demo
    from core.settings import load_settings

    var = tmp_path_factory.mktemp("examples")
    ensure_demo(var)
    askbase = Askbase(load_settings(var_dir=str(var)))
    assert askbase.llm is None  # keyword mode
    yield askbase
    askbase.close()


def _rows(rows: list[tuple]) -> Counter[tuple]:
    return Counter(tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows)


@pytest.mark.parametrize("question", examples())
def test_every_example_has_its_exact_outcome_in_keyword_mode(app, question):
    key = question.lower()
    assert key in ANSWERED or key in DECLINED, f"no expected outcome written for the example {question!r}"
    outcome = app.ask(question)
    assert outcome.mode == "keyword"
    if key in DECLINED:
        assert outcome.status == "error" and outcome.error_kind == "keyword_abstain", outcome.sql
        assert DECLINED[key] in outcome.error
        return
    assert outcome.status == "answer", outcome.error
    db = app.database("demo")
    with db.engine.connect() as conn:
        import sqlalchemy as sa

        want = [tuple(r) for r in conn.execute(sa.text(ANSWERED[key]))]
    assert _rows(outcome.rows) == _rows(want)
