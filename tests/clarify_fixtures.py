"""Small databases and scripted model replies for the clarification tests.

`nuclear_db` is modelled on GeoNuclearData, the database of Sphinteract's running example
(papers/sphinteract.txt, Examples 1.1 and 6.1): "Where is the first 'BWR' type power plant built
and located?" is ambiguous twice — "located" (country, or coordinates?) and "first" (construction
start, or start of operation?) — and the data makes every reading give a different answer.
`shop_db` has a city that is both a customer's and a supplier's.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.fakes import model_replies as mr
from tests.fakes.openai_server import FakeOpenAI, Reply

PLANTS = [
    # name, lat, lon, country, reactor type, construction start, operational from
    ("Dresden-1", 41.3897, -88.2711, "United States", "BWR", "1956-05-01", "1960-07-04"),
    ("Vallecitos", 37.6105, -121.843, "United States", "BWR", "1956-07-01", "1957-10-19"),
    ("Kahl", 50.0583, 9.0097, "Germany", "BWR", "1958-07-01", "1962-02-01"),
    ("Humboldt Bay", 40.7415, -124.2101, "United States", "BWR", "1960-11-01", "1963-08-01"),
    ("Shippingport", 40.6219, -80.4339, "United States", "PWR", "1954-04-01", "1958-05-26"),
    ("Calder Hall-1", 54.4205, -3.4975, "United Kingdom", "GCR", "1953-08-01", "1956-10-01"),
]
QUESTION = "Where is the first 'BWR' type power plant built and located?"
GOLD = (
    "SELECT Latitude, Longitude FROM nuclear_power_plants WHERE ReactorType = 'BWR' "
    "ORDER BY ConstructionStartAt ASC LIMIT 1"
)


def nuclear_db(path: Path) -> Path:
    if path.exists():
        return path
    with sqlite3.connect(path) as conn:
        conn.execute(
            """CREATE TABLE nuclear_power_plants (
                Id INTEGER PRIMARY KEY, Name TEXT NOT NULL, Latitude REAL, Longitude REAL,
                Country TEXT, Status TEXT, ReactorType TEXT, ReactorModel TEXT,
                ConstructionStartAt DATE, OperationalFrom DATE, OperationalTo DATE,
                Capacity INTEGER, LastUpdatedAt DATE, Source TEXT)"""
        )
        for i, (name, lat, lon, country, kind, built, running) in enumerate(PLANTS, 1):
            conn.execute(
                "INSERT INTO nuclear_power_plants VALUES (?,?,?,?,?,'Shutdown',?,NULL,?,?,NULL,100,"
                "'2015-05-24','WNA/IAEA')",
                (i, name, lat, lon, country, kind, built, running),
            )
    return path


def shop_db(path: Path) -> Path:
    """Customers and suppliers; 'Lyon' is a city of both, and orders link them."""
    if path.exists():
        return path
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
            CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
            CREATE TABLE orders (
                id INTEGER PRIMARY KEY,
                customer_id INTEGER NOT NULL REFERENCES customers (id),
                supplier_id INTEGER NOT NULL REFERENCES suppliers (id),
                amount REAL NOT NULL);
            """
        )
        customer_cities = ["Lyon", "Berlin", "Porto", "Lyon", "Madrid", "Oslo"]
        supplier_cities = ["Lyon", "Gdansk", "Turin", "Ghent"]
        for i, city in enumerate(customer_cities, 1):
            conn.execute("INSERT INTO customers VALUES (?, ?, ?)", (i, f"Customer {i}", city))
        for i, city in enumerate(supplier_cities, 1):
            conn.execute("INSERT INTO suppliers VALUES (?, ?, ?)", (i, f"Supplier {i}", city))
        for i in range(1, 41):
            customer = 1 + (i * 7) % len(customer_cities)
            supplier = 1 + (i * 3) % len(supplier_cities)
            conn.execute("INSERT INTO orders VALUES (?, ?, ?, ?)", (i, customer, supplier, 10.0 * i))
    return path


def rows(path: Path, sql: str) -> list[list[Any]]:
    with sqlite3.connect(path) as conn:
        return [list(r) for r in conn.execute(sql).fetchall()]


# ---------------------------------------------------------------- the scripted model of Example 6.1

LOCATED_ANSWER = "The Latitude and the Longitude"
FIRST_ANSWER = "The power plant whose construction started first"


def answered(prompt: str, answer: str) -> bool:
    """Whether the prompt's transcript says the user gave `answer` (not merely that it was offered)."""
    return f"answered: {answer}" in prompt


def script_paper_model(fake: FakeOpenAI) -> None:
    """A model that behaves as GPT-4 Turbo does in Example 6.1: it reads the transcript it is given."""
    understanding = mr.understanding(
        "Find where the first BWR power plant is",
        ["Keep plants whose reactor type is BWR", "Take the first plant"],
        ["power plant", "reactor type"],
        [("equal to", "reactor type is BWR", "BWR")],
    )
    fake.respond("understand", lambda body: Reply(content=mr.json_fenced(understanding)))

    def generate(body: dict[str, Any]) -> Reply:
        prompt = "\n".join(m["content"] for m in body["messages"])
        output = "Latitude, Longitude" if answered(prompt, LOCATED_ANSWER) else "Country, Name"
        order = "ConstructionStartAt" if answered(prompt, FIRST_ANSWER) else "OperationalFrom"
        sql = f"SELECT {output} FROM nuclear_power_plants WHERE ReactorType = 'BWR' ORDER BY {order} ASC LIMIT 1"
        return Reply(content=mr.candidates(sql, task="The first BWR plant"))

    fake.respond("generate", generate)

    def clarify(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        if not answered(prompt, LOCATED_ANSWER):
            reply = {
                "summary": "The user wants the first BWR plant; the output columns are unclear.",
                "review": {
                    "AmbQuestion": "'first' could be by construction or by operation",
                    "AmbTableColumn": "none",
                    "AmbOutput": "the question does not say whether the country or the coordinates "
                    "(Latitude and Longitude) are wanted for 'located'",
                    "AmbValue": "none",
                },
                "ask": True,
                "kind": "AmbOutput",
                "question": "What do you mean by 'located' in the context of finding the power plant?",
                "options": [
                    {"text": "A) The country where it is built", "candidate": None},
                    {"text": f"B) {LOCATED_ANSWER}", "candidate": None},
                    {"text": "C) The name of the power plant and the country", "candidate": None},
                    {"text": "D) Others (please specify)", "candidate": None},
                ],
            }
        else:
            reply = {
                "summary": "Show Latitude and Longitude of the first BWR plant.",
                "review": {
                    "AmbQuestion": "'first' could mean the earliest ConstructionStartAt or the earliest "
                    "OperationalFrom",
                    "AmbTableColumn": "none",
                    "AmbOutput": "resolved: Latitude and Longitude",
                    "AmbValue": "none",
                },
                "ask": True,
                "kind": "AmbQuestion",
                "question": "What does 'first' refer to in the context of the BWR type power plant?",
                "options": [
                    f"(A) {FIRST_ANSWER}.",
                    "(B) The power plant that became operational first.",
                    "(C) The power plant that has the oldest update date.",
                    "(D) Other (please specify).",
                ],
            }
        return Reply(content=mr.json_fenced(reply))

    fake.respond("clarify", clarify)


def sra_reply(**fields: Any) -> str:
    base = {"summary": "", "review": {}, "ask": False, "kind": "AmbQuestion", "question": "", "options": []}
    return mr.json_fenced({**base, **fields})


def dumps(obj: Any) -> str:
    return json.dumps(obj)


# ---------------------------------------------------------------- LLM mode: two readings of 'Lyon'

BY_CUSTOMER = (
    "SELECT COUNT(*) AS orders FROM orders JOIN customers ON customers.id = orders.customer_id "
    "WHERE customers.city = 'Lyon'"
)
BY_SUPPLIER = (
    "SELECT COUNT(*) AS orders FROM orders JOIN suppliers ON suppliers.id = orders.supplier_id "
    "WHERE suppliers.city = 'Lyon'"
)
LYON = "How many orders came from Lyon?"


def script_two_readings(fake_llm, ambiguous: bool = True) -> None:
    """A writer that, told 'Lyon' is stored in two places, writes both readings; a judge that
    calls the question ambiguous (or picks the supplier's reading)."""

    def generate(body):
        told = "'Lyon' is stored in" in body["messages"][0]["content"]
        return Reply(
            content=mr.candidates(
                BY_CUSTOMER,
                BY_SUPPLIER if told else None,
                task="Orders from Lyon",
                reading="orders whose supplier is in Lyon",
            )
        )

    fake_llm.respond("generate", generate)
    fake_llm.respond(
        "judge",
        lambda body: Reply(
            content=mr.json_fenced(
                {
                    "choice": "B",
                    "ambiguous": ambiguous,
                    "question": "Orders from Lyon: whose city should be Lyon?",
                    "readings": ["the customer's city", "the supplier's city"],
                    "why": "Both customers and suppliers have a city.",
                }
            )
        ),
    )
