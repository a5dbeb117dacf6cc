"""The verified-answer matcher's rules, one pair of questions each: one that must reuse the
verified question (other values, other words for the same tree) and one that must not (the tree
differs in one place). Every question is matched on the real demo database, against all the
verified questions below at once, so a rule that lets a question through to the wrong verified
question fails here too.
"""

from __future__ import annotations

import pytest

from core.verified.lexicon import lexicon_for
from core.verified.match import match
from core.verified.params import detect
from core.verified.query import VerifiedQuery
from core.verified.typos import candidates, mend

VERIFIED = {
    "active_hosts_in_dc": (
        "How many active hosts are in prod-frankfurt-1?",
        "SELECT COUNT(*) FROM compute c JOIN datacenter d ON d.id = c.dc_id "
        "WHERE d.name = 'prod-frankfurt-1' AND c.status = 'active'",
    ),
    "payments_in_quarter": (
        "How many payments were made in Q4 2024?",
        "SELECT COUNT(*) FROM payment WHERE paid_on BETWEEN '2024-10-01' AND '2024-12-31'",
    ),
    "avg_memory_per_dc": (
        "What is the average host memory in each datacenter?",
        "SELECT d.name, AVG(c.memory_gb) FROM compute c JOIN datacenter d ON d.id = c.dc_id GROUP BY d.name",
    ),
    "cost_per_cpu_hour": (
        "What was the usage cost per CPU hour each month in 2025?",
        "SELECT strftime('%Y-%m', month), SUM(cost) / SUM(cpu_hours) FROM usage "
        "WHERE month BETWEEN '2025-01-01' AND '2025-12-31' GROUP BY strftime('%Y-%m', month)",
    ),
    "failed_share": (
        "What percentage of payments failed in 2025?",
        "SELECT 100.0 * SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) / COUNT(*) FROM payment "
        "WHERE paid_on BETWEEN '2025-01-01' AND '2025-12-31'",
    ),
    "signups_per_month": (
        "How many clients signed up per month in 2025?",
        "SELECT strftime('%Y-%m', signup_date), COUNT(*) FROM client "
        "WHERE signup_date BETWEEN '2025-01-01' AND '2025-12-31' GROUP BY strftime('%Y-%m', signup_date)",
    ),
    "top_revenue": (
        "Top 5 clients by revenue in 2024",
        "SELECT c.name, SUM(pa.amount) AS revenue FROM client c JOIN payment p ON p.client_id = c.id "
        "JOIN payment_amount pa ON pa.payment_id = p.id JOIN income i ON i.amount_id = pa.id "
        "WHERE p.paid_on >= '2024-01-01' AND p.paid_on < '2025-01-01' GROUP BY c.name "
        "ORDER BY revenue DESC LIMIT 5",
    ),
    "usage_cost_of_client": (
        "What was the total usage cost of Helix Finance in 2025?",
        "SELECT SUM(u.cost) FROM usage u JOIN client c ON c.id = u.client_id WHERE c.name = 'Helix Finance' "
        "AND u.month >= '2025-01-01' AND u.month < '2026-01-01'",
    ),
    "active_clients_in_city": (
        "How many active clients are in Berlin?",
        "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id "
        "WHERE l.city = 'Berlin' AND c.status = 'ACT'",
    ),
    "startup_share_in_country": (
        "What percentage of clients in Germany are startups?",
        "SELECT ROUND(100.0 * SUM(CASE WHEN c.segment = 'startup' THEN 1 ELSE 0 END) / COUNT(*), 1) "
        "FROM client c JOIN location l ON l.id = c.loc_id WHERE l.country = 'Germany'",
    ),
    "surcharges_in_quarter": (
        "How many egress overage surcharges were there in Q3 2025?",
        "SELECT COUNT(*) FROM supercharge s JOIN payment_amount pa ON pa.id = s.amount_id "
        "JOIN payment p ON p.id = pa.payment_id WHERE s.reason = 'egress overage' "
        "AND p.paid_on >= '2025-07-01' AND p.paid_on < '2025-10-01'",
    ),
    "big_memory_hosts": (
        "Which hosts have at least 1536 GB of memory?",
        "SELECT hostname FROM compute WHERE memory_gb >= 1536",
    ),
    "top_pools_by_cpu_hours": (
        "Which 5 resource pools used the most CPU hours in 2025?",
        "SELECT p.name, SUM(u.cpu_hours) FROM usage u JOIN resource_pool p ON p.id = u.pool_id "
        "WHERE u.month >= '2025-01-01' AND u.month < '2026-01-01' GROUP BY p.name "
        "ORDER BY SUM(u.cpu_hours) DESC LIMIT 5",
    ),
    "max_pool_cpu_in_dc": (
        "What is the highest current CPU usage of a resource pool in prod-frankfurt-1?",
        "SELECT MAX(rc.overall_usage) FROM runtime_cpu rc JOIN pool_runtime rt ON rt.id = rc.runtime_id "
        "JOIN resource_pool p ON p.id = rt.pool_id JOIN datacenter d ON d.id = p.dc_id "
        "WHERE d.name = 'prod-frankfurt-1'",
    ),
    "latest_host_in_dc": (
        "Which host was commissioned most recently in prod-london-1?",
        "SELECT h.hostname, h.commissioned_on FROM compute h JOIN datacenter d ON d.id = h.dc_id "
        "WHERE d.name = 'prod-london-1' ORDER BY h.commissioned_on DESC LIMIT 1",
    ),
    "usage_cost_in_city": (
        "What was the total usage cost of clients in Berlin in 2025?",
        "SELECT SUM(u.cost) FROM usage u JOIN client c ON c.id = u.client_id JOIN location l ON l.id = c.loc_id "
        "WHERE l.city = 'Berlin' AND u.month >= '2025-01-01' AND u.month < '2026-01-01'",
    ),
    "failed_card_payments_in_quarter": (
        "How many failed card payments were there in Q3 2025?",
        "SELECT COUNT(*) FROM payment WHERE method = 'card' AND status = 'failed' "
        "AND paid_on >= '2025-07-01' AND paid_on < '2025-10-01'",
    ),
    "gift_value_per_campaign": (
        "What was the total value of gifts given to enterprise clients, per campaign?",
        "SELECT r.campaign, SUM(g.value) FROM gift g JOIN retention r ON r.id = g.retention_id "
        "JOIN client c ON c.id = r.client_id WHERE c.segment = 'enterprise' GROUP BY r.campaign",
    ),
    # a question the schema does not bind ('suspended' inside the ranking key): read by its words
    "dc_most_pools": (
        "Which datacenter has the most suspended resource pools?",
        "SELECT d.name, COUNT(*) AS pools FROM resource_pool rp JOIN datacenter d ON d.id = rp.dc_id "
        "WHERE rp.status = 'suspended' GROUP BY d.name ORDER BY pools DESC LIMIT 1",
    ),
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from core.database import Databases
    from core.demo import ensure_demo
    from core.settings import load_settings

    var = tmp_path_factory.mktemp("verified-rules")
    ensure_demo(var)
    databases = Databases(load_settings(var_dir=str(var)))
    yield databases.get("demo")
    databases.close()


@pytest.fixture(scope="module")
def pool(demo) -> dict[str, VerifiedQuery]:
    tables = [t.name for t in demo.catalog.tables]
    out = {}
    for n, (name, (question, sql)) in enumerate(VERIFIED.items(), start=1):
        found = detect(question, sql, "sqlite", lexicon_for(demo), tables)
        out[name] = VerifiedQuery(
            n, "demo", question, sql, "sqlite", found.params, found.reusable, found.note
        )
    return out


def reused(demo, pool: dict[str, VerifiedQuery], question: str) -> str | None:
    m = match(question, list(pool.values()), lexicon_for(demo))
    return None if m.reuse is None else next(k for k, q in pool.items() if q.id == m.reuse.query.id)


# (verified, a question that must reuse it, a question that must not reuse anything)
RULES = {
    "words of a code's catalog description name the code": (
        "failed_card_payments_in_quarter",
        "how many wire transfers were pending in Q4 2025",
        "how many transfers were pending in Q4 2025",
    ),
    "an alternative a description lists names the code ('declined or bounced')": (
        "failed_card_payments_in_quarter",
        "How many declined credit card payments were there in Q1 2026?",
        "How many declined payments were there in Q1 2026?",
    ),
    "three whole months between two months are that quarter": (
        "failed_card_payments_in_quarter",
        "Count of failed card payments between July and September 2025",
        "Count of failed card payments between July and August 2025",
    ),
    "a noun of an event names the date called after it": (
        "signups_per_month",
        "Number of client registrations by month during 2024",
        "Number of client registrations by quarter during 2024",
    ),
    "a table named by a synonym whose head is its column groups by that column": (
        "gift_value_per_campaign",
        "total value of gifts given to startup clients per marketing campaign",
        "total value of gifts given to startup clients per channel",
    ),
    "a typo of a common word reads as the word, in both places": (
        "failed_share",
        "Waht percentge of payments failed in 2024?",
        "What percentge of payments did not fail in 2024?",
    ),
    "a typo of a common word: a letter doubled, one missing": (
        "avg_memory_per_dc",
        "avergae host memory per datacenter",
        "the totall host memory per datacenter",
    ),
    "an order said is part of the question; one keyword mode adds to show rows is not": (
        "avg_memory_per_dc",
        "average memory of hosts for each data centre",
        "What is the average host memory in each datacenter, lowest first?",
    ),
    "an aggregate said over a ratio: a total is the ratio, an average may not be": (
        "cost_per_cpu_hour",
        "What was the total usage cost per CPU hour each month in 2024?",
        "What was the average usage cost per CPU hour each month in 2024?",
    ),
    "a ratio's numerator and denominator stay in their places": (
        "cost_per_cpu_hour",
        "cost/CPU hour for each month of 2024",
        "What was the ratio of CPU hours to usage cost, month by month, in 2025?",
    ),
    "a share's rows and the rows counted above the line stay in their places": (
        "failed_share",
        "what % of payments were pending in 2024",
        "What percentage of the failed payments in 2025 were card payments?",
    ),
    "a value said with a possessive names the value whole": (
        "usage_cost_of_client",
        "What was Helix Finance's total usage cost in 2024?",
        "What was Helix Finance's average usage cost in 2024?",
    ),
    "a verb that links the things named restricts nothing ('brought in', 'happened')": (
        "top_revenue",
        "Which 3 clients brought in the most revenue in 2024?",
        "Which 3 clients brought in the least revenue in 2024?",
    ),
    "a verb that happens to the rows restricts nothing": (
        "payments_in_quarter",
        "How many payments happened in Q2 2025?",
        "How many payments happened in May 2025?",
    ),
    "the period's grain is part of the question": (
        "payments_in_quarter",
        "How many payments were there in the fourth quarter of 2023?",
        "How many payments were made in 2024?",
    ),
    "the grouping is part of the question": (
        "signups_per_month",
        "How many customers joined per month in 2024?",
        "How many clients signed up per quarter in 2024?",
    ),
    "a negation is part of the question": (
        "active_clients_in_city",
        "How many churned clients are in London?",
        "How many clients in Berlin are not active?",
    ),
    "a filter on another column is another question": (
        "active_clients_in_city",
        "how many active customers are based in Hamburg",
        "How many active clients are in Germany?",
    ),
    "an extra filter is another question": (
        "active_hosts_in_dc",
        "how many active servers does prod-amsterdam-1 have",
        "How many active hosts in prod-frankfurt-1 were commissioned in 2019?",
    ),
    "a share's denominator is the rows said before its verb, compared exactly": (
        "startup_share_in_country",
        "What percentage of clients based in France are enterprise?",
        "What percentage of all clients are enterprise in France?",
    ),
    "a stored value said in the plural is the value, a parameter like it": (
        "startup_share_in_country",
        "what share of clients in Spain are startups",
        "what share of clients in Spain are not startups",
    ),
    "a word of a stored value is never mended as a typo ('overage' is no slip of 'average')": (
        "surcharges_in_quarter",
        "How many late payment fee surcharges were there in Q1 2026?",
        "How many egress overage surcharges were there in 2025?",
    ),
    "the columns that name a listed row are what 'which X' lists; another column asked is not": (
        "big_memory_hosts",
        "Give me the hostnames of the hosts with at least 1024 GB of memory.",
        "Give me the CPU cores of the hosts with at least 1024 GB of memory.",
    ),
    "'consumed' links the things named as 'used' does (a lexicon relation verb)": (
        "top_pools_by_cpu_hours",
        "Which 3 resource pools consumed the most CPU hours in 2024?",
        "Which 3 resource pools consumed the fewest CPU hours in 2024?",
    ),
    "a verified question the schema does not bind keeps its value as a slot": (
        "max_pool_cpu_in_dc",
        "What is the highest current CPU usage of a resource pool in prod-london-1?",
        "What is the lowest current CPU usage of a resource pool in prod-london-1?",
    ),
    "a participle after 'most recently' names the date ranked by, not the thing": (
        "latest_host_in_dc",
        "Show me the most recently commissioned node in dev-zurich-1.",
        "Show me the earliest commissioned node in dev-zurich-1.",
    ),
    "'ranked by' after 'top N' ranks in the head's direction": (
        "top_pools_by_cpu_hours",
        "In 2025, what are the top 5 pools ranked by total CPU hours?",
        "In 2025, what are the top 5 pools ranked by average CPU hours?",
    ),
    "a table said after its own column ranks by the column ('CPU-hour consumption')": (
        "top_pools_by_cpu_hours",
        "List the 4 biggest resource pools by CPU-hour consumption for 2024.",
        "List the 4 smallest resource pools by CPU-hour consumption for 2024.",
    ),
    "the set a superlative figure is over ('among the pools') restricts nothing": (
        "max_pool_cpu_in_dc",
        "Largest overall CPU usage among the pools in prod-london-1?",
        "Smallest overall CPU usage among the pools in prod-london-1?",
    ),
    "a verb that names a key ('were charged') says no date, and restricts nothing": (
        "surcharges_in_quarter",
        "How many support overage surcharges were charged in Q1 2026?",
        "How many support overage surcharges were charged in 2026?",
    ),
    "who spent, and where they are, restrict what is added up": (
        "usage_cost_in_city",
        "How much did clients in Paris spend on usage in 2024?",
        "How much did clients in Paris spend on usage in March 2024?",
    ),
    "an extreme of words naming a table and its column is the column's figure": (
        "max_pool_cpu_in_dc",
        "waht's teh highest cpu usage of a pool in dev-zurich-1",
        "waht's teh lowest cpu usage of a pool in dev-zurich-1",
    ),
    "'top N' said after a ranking is its limit": (
        "top_pools_by_cpu_hours",
        "which pools consumed teh most cpu hours in 2024? top 3 pls",
        "which pools consumed the most cpu hours in 2024?",
    ),
    "an infinitive after a superlative names the date ranked by": (
        "latest_host_in_dc",
        "latest host to enter service at edge-paris-1",
        "earliest host to enter service at edge-paris-1",
    ),
    "several topics said in front restrict what follows": (
        "usage_cost_in_city",
        "Paris, 2024 - total usage cost of clients?",
        "Paris, 2024 - average usage cost of clients?",
    ),
    # the partial reading (core/verified/partial.py): words no rule places, left out
    "a word that says nothing is left out, a negation never": (
        "active_hosts_in_dc",
        "how many hosts in prod-frankfurt-2 are still active, thanks",
        "how many hosts are still not active in prod-frankfurt-2",
    ),
    "a word glued to a name is left out, a stored value's word never": (
        "active_hosts_in_dc",
        "how many active hosts are there in prod-frankfurt-2 thanks",
        "how many active hosts are there in prod-frankfurt-2 retired thanks",
    ),
    "an unknown word left out must be the verified question's too": (
        "active_hosts_in_dc",
        "how many active hosts are actually in prod-frankfurt-2",
        "how many active hosts are frobnicated in prod-frankfurt-2",
    ),
    "a ratio read with a word left out keeps its sides in their places": (
        "cost_per_cpu_hour",
        "What was actually the usage cost per CPU hour each month in 2024?",
        "What was actually the CPU hours per usage cost each month in 2024?",
    ),
    "rows described, then counted": (
        "active_hosts_in_dc",
        "active hosts in prod-frankfurt-2 - how many are there?",
        "active hosts in prod-frankfurt-2 - which are they?",
    ),
    "'rank' leads into the ranking it says": (
        "top_pools_by_cpu_hours",
        "Rank the 3 resource pools with the most CPU hours in 2024",
        "Rank the 3 resource pools with the fewest CPU hours in 2024",
    ),
    "an unbound tree's words are read through the schema's synonyms": (
        "dc_most_pools",
        "which DC has the largest number of active pools?",
        "which DC has the fewest active pools?",
    ),
    "an unbound tree keeps what is ranked and what is filtered": (
        "dc_most_pools",
        "which site has the most active resource pools?",
        "which DC has the most pools that are not suspended?",
    ),
}


@pytest.mark.parametrize("rule", list(RULES))
def test_rule(demo, pool, rule):
    verified, same, other = RULES[rule]
    assert reused(demo, pool, same) == verified, same
    assert reused(demo, pool, other) is None, other


def test_a_share_of_all_rows_is_not_the_share_of_some_of_them(demo):
    """The denominator rule the other way round: verified over all clients, the share of one
    country's clients is another question."""
    question = "What percentage of all clients are startups in Germany?"
    sql = (
        "SELECT ROUND(100.0 * SUM(CASE WHEN c.segment = 'startup' AND l.country = 'Germany' THEN 1 ELSE 0 END)"
        " / COUNT(*), 1) FROM client c JOIN location l ON l.id = c.loc_id"
    )
    found = detect(question, sql, "sqlite", lexicon_for(demo), [t.name for t in demo.catalog.tables])
    pool = {
        "of_all": VerifiedQuery(1, "demo", question, sql, "sqlite", found.params, found.reusable, found.note)
    }
    assert reused(demo, pool, "What percentage of all clients are enterprise in France?") == "of_all"
    assert reused(demo, pool, "What percentage of clients in France are enterprise?") is None
    assert reused(demo, pool, "What share of the clients in Germany are startups?") is None


# ---------------------------------------------------------------- mending typos on its own


def test_a_typo_is_mended_only_when_one_common_word_is_one_slip_away():
    assert mend("Waht percentge of payments failed, montly?", lambda w: False) == (
        "What percentage of payments failed, monthly?"
    )
    assert candidates("evry") == {"every", "very"}  # two words it could be: left as typed
    assert mend("evry client", lambda w: False) == "evry client"
    assert candidates("servers") == set()  # 'serves' with a letter more, but not a doubled one
    assert candidates("hour") == set()  # nor a word without its plural 's'


def test_a_word_of_a_stored_value_is_not_mended_inside_the_value():
    known = {"late payment fees"}.__contains__
    assert mend("How many late payment fees were there?", known) == "How many late payment fees were there?"
    assert mend("How many late payment fees were there?", lambda w: False) == (
        "How many later payment fees were there?"  # what the run guards against
    )


def test_names_and_schema_words_are_never_mended():
    never = lambda w: False  # noqa: E731
    assert (
        mend("hosts in prod-frankfurt-1 and edge-mnay-2", never)
        == "hosts in prod-frankfurt-1 and edge-mnay-2"
    )
    assert mend("payments of Averag Ltd", never) == "payments of Averag Ltd"  # capitalized inside: a name
    assert (
        mend("payments of averag ltd", lambda w: w == "averag") == "payments of averag ltd"
    )  # a stored value


# ---------------------------------------------------------------- the partial reading on its own


def test_only_words_that_cannot_change_the_question_are_left_out(demo):
    from core.keyword.bind import SchemaNames
    from core.verified.match import _known, keyword_lexicon  # the matcher's own view of the schema
    from core.verified.partial import reread

    lex = keyword_lexicon(demo)
    names, known = SchemaNames(lex), _known(lexicon_for(demo), lex)
    got = reread("how many wire payments were still pending in Q4 2025", names, known)
    assert got is not None and got.left == frozenset()  # 'still': a lexicon `unplaced` word
    assert got.reading.tree is not None and got.reading.tree.ask == "count"
    got = reread("how many payments were blorped pending in Q4 2025", names, known)
    assert got is not None and got.left == {"blorped"}  # unknown: the other question must say it
    # a cue word, a schema word or a stored value is never left out: no reading then
    for question in (
        "how many payments were not still pending in Q4 2025 more",
        "how many payments were still pending in Q4 2025 clients",
        "how many payments were still pending in Q4 2025 failed",
    ):
        found = reread(question, names, known)
        assert found is None or not ({"not", "more", "client", "clients", "failed"} & found.left), question


def test_the_unplaced_words_are_no_cue_of_a_meaning():
    from core.keyword.lexicon import WORDS

    meaning = {"count", "agg", "super", "top", "group", "by", "order", "dir", "cmp", "between", "date_prep"}
    meaning |= {"relative", "distinct", "text", "or", "unsupported", "neg", "share"}
    for word in WORDS.sets["unplaced"]:
        cue = WORDS.cues.get((word,))
        assert cue is None or cue[0] not in meaning, word
        assert word not in WORDS.numbers and word not in WORDS.time_units, word
