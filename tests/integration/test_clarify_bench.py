"""`python -m core.bench clarify`: accuracy rises with rounds, and no question is asked twice."""

from __future__ import annotations

import json

from core.answer import Clarification, Option
from core.bench.clarify import INTENDED, Oracle, main
from core.keyword import Reading
from tests.clarify_fixtures import sra_reply
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply


def figures(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_keyword_mode_accuracy_rises_with_rounds_and_nothing_is_asked_twice(settings, capsys, tmp_path):
    details = tmp_path / "details.jsonl"
    assert main(["--json", "--details", str(details)]) == 0
    got = figures(capsys)
    accuracy = got["accuracy_after_rounds"]
    assert len(accuracy) == 5 and accuracy == sorted(accuracy) and accuracy[-1] > accuracy[0]
    assert got["asked_twice"] == 0 and got["plain_asked_back"] == 0
    assert 0 < got["average_rounds"] <= 4
    sessions = [json.loads(line) for line in details.read_text().splitlines()]
    assert len(sessions) == len(INTENDED)
    assert max(s["rounds"] for s in sessions) >= 2  # some questions need two rounds
    for s in sessions:
        asked = [q.split(" [")[0] for q in s["asked"]]
        assert len(asked) == len(set(asked))


def test_the_oracle_picks_the_reading_the_intended_sql_uses_or_gives_a_hint(demo_db):
    oracle = Oracle(
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id WHERE location.city = 'Singapore'",
        demo_db.catalog,
    )
    city = Option("city", Reading("Singapore", "location", "city", "Singapore").encode())
    country = Option("country", Reading("Singapore", "location", "country", "Singapore").encode())
    picked = oracle.reply(Clarification("Which Singapore?", (country, city), "AmbValue"), keyword_mode=True)
    assert picked.value == city.value
    plain = Clarification("Which one?", (Option("the birth date", "a"), Option("the signup date", "b")))
    other = oracle.reply(plain, keyword_mode=False)
    assert other.own_words and "city" in other.answer


def test_llm_mode_runs_against_an_endpoint(settings, fake_llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)

    def generate(body):
        prompt = "\n".join(m["content"] for m in body["messages"])
        column = "signup_date" if "answered: the signup date" in prompt else "birth_date"
        sql = f"SELECT COUNT(*) FROM client WHERE {column} >= '2024-01-01' AND {column} < '2025-01-01'"
        return Reply(content=mr.candidates(sql, task="Clients in 2024"))

    fake_llm.respond("generate", generate)
    fake_llm.respond("revise", generate)  # an empty count is revised; the model stands by its query
    fake_llm.respond(
        "clarify",
        lambda body: Reply(
            content=sra_reply(
                ask=True,
                kind="AmbTableColumn",
                question="Which date should fall in 2024?",
                options=["the birth date", "the signup date"],
            )
        ),
    )
    assert main(["--mode", "llm", "--limit", "1", "--json"]) == 0
    got = figures(capsys)
    assert got["mode"] == "llm" and got["accuracy_after_rounds"][:2] == [0.0, 100.0]
    assert got["average_rounds"] == 1 and got["asked_twice"] == 0
    assert "clarify" in {c.task for c in fake_llm.calls()}
