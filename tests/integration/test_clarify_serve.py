"""The acceptance check, as an outside harness runs it: `python -m bot serve --http`, no LLM key,
a small SQLite database where one city is both a customer's and a supplier's; the question comes
back as a clarification with one button per reading, a click answers it with that reading's count.
"""

from __future__ import annotations

import copy

import pytest

from core.bench.fakes.slack_api import FakeSlack
from tests.clarify_fixtures import rows, shop_db
from tests.e2e.test_slack_serve import Served, base_env

CHANNEL = "C0001"
COUNT_BY = "SELECT COUNT(*) FROM orders JOIN {table} ON {table}.id = orders.{key} WHERE {table}.city = 'Lyon'"


@pytest.mark.slow
def test_serve_without_an_llm_asks_which_city_and_counts_the_chosen_reading(tmp_path):
    db = shop_db(tmp_path / "shop.sqlite")
    config = tmp_path / "askbase.yaml"
    config.write_text(f"databases:\n  shop:\n    url: sqlite:///{db}\n")
    with FakeSlack() as slack:
        env = {
            **base_env(slack, tmp_path, tmp_path / "var"),
            "ASKBASE_CONFIG": str(config),
            "ASKBASE_DEFAULT_DB": "shop",
        }
        served = Served(env, tmp_path)
        try:
            _, ts = served.sender.mention("How many orders from Lyon?")
            question = copy.deepcopy(
                slack.wait_for(
                    lambda s: next(
                        (m for m in s.thread(CHANNEL, ts) if "clarify_other" in m.action_ids()), None
                    ),
                    timeout=30,
                )
            )
            buttons = [a for a in question.action_ids() if a.startswith("clarify_option_")]
            texts = question.all_text()
            assert len(buttons) == 2 and "customers" in texts and "suppliers" in texts

            supplier = next(
                button
                for block in question.blocks
                if block.get("type") == "actions"
                for button in block["elements"]
                if "suppliers" in button["text"]["text"]
            )
            response = served.sender.click(
                supplier["action_id"],
                supplier["value"],
                channel=CHANNEL,
                message_ts=question.ts,
                thread_ts=ts,
            )
            assert response.status == 200
            answer = slack.wait_for(
                lambda s: next((m for m in s.thread(CHANNEL, ts) if m.result()), None), timeout=30
            )
            (want,) = rows(db, COUNT_BY.format(table="suppliers", key="supplier_id"))
            (other,) = rows(db, COUNT_BY.format(table="customers", key="customer_id"))
            assert want != other  # the two readings really give different counts
            assert answer.result() == [[str(want[0])]]
        finally:
            assert served.stop() == 0, served.output()
