"""Keyword mode is right or silent: on schemas made for these tests (real SQLite, the real entry
`Askbase.ask`), a word it cannot place, a negation, a comparison between things, a join that links
two tables only through a third, or two equally good join paths make it decline — and saying
why — while the plain questions next to them are answered with the rows SQL written by hand gives."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from core.askbase import Askbase
from core.insurance_demo import build_insurance
from core.settings import DatabaseSettings
from tests.paths import ROOT

FLIGHTS = """
CREATE TABLE airline (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE flight (
    id INTEGER PRIMARY KEY, airline_id INTEGER REFERENCES airline (id),
    source_city TEXT, dest_city TEXT, departs_on DATE, seats INTEGER
);
INSERT INTO airline VALUES (1, 'North Air'), (2, 'Coastal'), (3, 'Highland Jet');
INSERT INTO flight VALUES
    (1, 1, 'Aberdeen', 'Boston', '2024-01-05', 120), (2, 1, 'Aberdeen', 'Denver', '2024-02-11', 90),
    (3, 2, 'Boston', 'Aberdeen', '2024-03-02', 150), (4, 2, 'Denver', 'Boston', '2024-03-09', 80),
    (5, 3, 'Aberdeen', 'Boston', '2024-04-20', 60), (6, 3, 'Boston', 'Denver', '2024-05-01', 200),
    (7, 1, 'Denver', 'Aberdeen', '2024-06-15', 110);
"""

# Publications and conferences share a domain, but nothing says which conference a publication
# was presented at; `WITH_CONFERENCE` adds that key.
ACADEMIC = """
CREATE TABLE conference (cid INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE domain (did INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE publication (pid INTEGER PRIMARY KEY, title TEXT, year INTEGER {conference});
CREATE TABLE domain_conference (
    cid INTEGER REFERENCES conference (cid), did INTEGER REFERENCES domain (did), PRIMARY KEY (cid, did)
);
CREATE TABLE domain_publication (
    did INTEGER REFERENCES domain (did), pid INTEGER REFERENCES publication (pid), PRIMARY KEY (did, pid)
);
INSERT INTO conference VALUES (1, 'ICML'), (2, 'VLDB');
INSERT INTO domain VALUES (1, 'Machine Learning'), (2, 'Databases');
INSERT INTO publication VALUES {publications};
INSERT INTO domain_conference VALUES (1, 1), (2, 2), (2, 1);
INSERT INTO domain_publication VALUES (1, 1), (1, 2), (2, 3);
"""

# A student's courses are on the student's records; a program also lists courses.
ADVISING = """
CREATE TABLE program (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE student (id INTEGER PRIMARY KEY, name TEXT, program_id INTEGER REFERENCES program (id));
CREATE TABLE course (id INTEGER PRIMARY KEY, title TEXT);
CREATE TABLE program_course (
    program_id INTEGER REFERENCES program (id), course_id INTEGER REFERENCES course (id),
    PRIMARY KEY (program_id, course_id)
);
CREATE TABLE student_record (
    student_id INTEGER REFERENCES student (id), course_id INTEGER REFERENCES course (id),
    PRIMARY KEY (student_id, course_id)
);
INSERT INTO program VALUES (1, 'Physics'), (2, 'History');
INSERT INTO student VALUES (1, 'Ada', 1), (2, 'Ben', 1), (3, 'Cleo', 2);
INSERT INTO course VALUES (1, 'Mechanics'), (2, 'Optics'), (3, 'Rome'), (4, 'Poetry');
INSERT INTO program_course VALUES (1, 1), (1, 2), (2, 3);
INSERT INTO student_record VALUES (1, 1), (1, 4), (2, 3), (3, 3);
"""

# A check-in row carries its own count: 'the total count of check-ins' may mean either.
CHECKINS = """
CREATE TABLE business (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE checkin (id INTEGER PRIMARY KEY, business_id INTEGER REFERENCES business (id), count INTEGER);
INSERT INTO business VALUES (1, 'Cafe Blue'), (2, 'Book Nook');
INSERT INTO checkin VALUES (1, 1, 5), (2, 1, 7), (3, 2, 2);
"""


def make_db(tmp_path: Path, name: str, script: str) -> Path:
    path = tmp_path / f"{name}.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
    return path


def same_rows(outcome, want: list[tuple]) -> bool:
    return Counter(tuple(r) for r in outcome.rows) == Counter(want)


@pytest.fixture
def app(settings):
    app = Askbase(settings)  # no OPENAI_API_KEY in the isolated environment: keyword mode
    assert app.llm is None
    yield app
    app.close()


@pytest.fixture
def flights(tmp_path) -> Path:
    return make_db(tmp_path, "flights", FLIGHTS)


def ask(app: Askbase, path: Path, question: str, **kw):
    return app.ask(question, db=f"sqlite:///{path}", **kw)


def declined(outcome) -> bool:
    return outcome.status == "error" and outcome.error_kind == "keyword_abstain" and not outcome.rows


# ---------------------------------------------------------------------------------------------
# words


def test_a_word_it_cannot_place_makes_it_decline_and_name_the_word(app, flights):
    outcome = ask(app, flights, "How many flights fly from Aberdeen to Ashley")
    assert declined(outcome)
    assert "'Ashley'" in outcome.error and "Aberdeen" in outcome.error  # what it could not place, and did
    assert "could not place" in outcome.error


def test_role_words_place_both_cities_and_the_count_is_right(app, flights, hand):
    outcome = ask(app, flights, "How many flights go from Aberdeen to Boston?")
    assert outcome.status == "answer", outcome.error
    assert same_rows(
        outcome,
        hand("SELECT COUNT(*) FROM flight WHERE source_city = 'Aberdeen' AND dest_city = 'Boston'", flights),
    )


@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("How many flights do not go to Boston?", "negation"),
        ("List the flights without seats", "negation"),
        ("Which has more flights, Aberdeen or Denver?", "comparison"),
        ("Which airline has more flights than Coastal?", "comparison"),
        ("Which airlines fly from Aberdeen and from Boston?", "either of them or both"),
        ("airlines with flights in common with Coastal", "set operation"),
        ("flights that were delayed", "delayed"),
    ],
)
def test_wording_it_does_not_compute_is_declined_with_the_reason(app, flights, question, says):
    outcome = ask(app, flights, question)
    assert declined(outcome), outcome.interpretation
    assert says in outcome.error


def test_values_of_one_column_joined_by_or_are_either(app, flights, hand):
    outcome = ask(app, flights, "How many flights from Aberdeen or from Denver?")
    assert outcome.status == "answer", outcome.error
    want = hand("SELECT COUNT(*) FROM flight WHERE source_city IN ('Aberdeen', 'Denver')", flights)
    assert same_rows(outcome, want)


# ---------------------------------------------------------------------------------------------
# joins


def test_tables_linked_only_through_a_third_are_not_joined(app, tmp_path):
    path = make_db(
        tmp_path,
        "academic",
        ACADEMIC.format(
            conference="", publications="(1, 'Deep nets', 2020), (2, 'Kernels', 2021), (3, 'B-trees', 2020)"
        ),
    )
    outcome = ask(app, path, "How many publications were presented at each conference?")
    assert declined(outcome)
    assert "domain" in outcome.error  # the third table it would have gone through


def test_the_same_question_is_answered_once_the_schema_has_the_key(app, tmp_path, hand):
    path = make_db(
        tmp_path,
        "academic_keyed",
        ACADEMIC.format(
            conference=", cid INTEGER REFERENCES conference (cid)",
            publications="(1, 'Deep nets', 2020, 1), (2, 'Kernels', 2021, 1), (3, 'B-trees', 2020, 2)",
        ),
    )
    outcome = ask(app, path, "How many publications were presented at each conference?")
    assert outcome.status == "answer", outcome.error
    want = hand(
        "SELECT conference.name, COUNT(*) FROM publication JOIN conference ON publication.cid = conference.cid "
        "GROUP BY conference.name",
        path,
    )
    assert same_rows(outcome, want)


def test_two_equally_good_join_paths_make_it_decline(app, tmp_path):
    path = make_db(tmp_path, "advising", ADVISING)
    outcome = ask(app, path, "Which courses have been taken by students in the Physics program?")
    assert declined(outcome)
    assert "program" in outcome.error and "the words do not say which" in outcome.error


def test_one_join_path_is_answered(app, tmp_path, hand):
    path = make_db(tmp_path, "advising_one", ADVISING)
    outcome = ask(app, path, "How many courses per student?")
    assert outcome.status == "answer", outcome.error
    want = hand(
        "SELECT student.name, COUNT(*) FROM student JOIN student_record ON student_record.student_id = student.id "
        "GROUP BY student.id",
        path,
    )
    assert same_rows(outcome, want)


# ---------------------------------------------------------------------------------------------
# confidence


def test_a_doubt_below_the_threshold_is_declined_and_said(app, tmp_path, settings):
    path = make_db(tmp_path, "checkins", CHECKINS)
    outcome = ask(app, path, "What is the total count of check-ins for each business?")
    assert declined(outcome)
    assert "'count' is also the column checkin.count" in outcome.error
    assert "read this as" in outcome.error  # the reading it did not trust
    stage = next(s for s in outcome.trace.stages if s.name == "confidence")
    assert stage.outputs["score"] < stage.outputs["threshold"] == settings.engine.keyword_min_confidence

    trusting = Askbase(
        settings.model_copy(
            update={"engine": settings.engine.model_copy(update={"keyword_min_confidence": 0.0})}
        )
    )
    try:
        outcome = ask(trusting, path, "What is the total count of check-ins for each business?")
        assert outcome.status == "answer"  # the same reading, answered when the threshold allows it
    finally:
        trusting.close()


# Students and courses both belong to a department; students enroll in courses.
SCHOOL = """
CREATE TABLE department (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE student (id INTEGER PRIMARY KEY, name TEXT, dept_id INTEGER REFERENCES department (id));
CREATE TABLE course (id INTEGER PRIMARY KEY, title TEXT, dept_id INTEGER REFERENCES department (id));
CREATE TABLE enroll (
    student_id INTEGER REFERENCES student (id), course_id INTEGER REFERENCES course (id),
    PRIMARY KEY (student_id, course_id)
);
INSERT INTO department VALUES (1, 'Physics'), (2, 'History');
INSERT INTO student VALUES (1, 'Ada', 1), (2, 'Ben', 2), (3, 'Cleo', 2);
INSERT INTO course VALUES (1, 'Optics', 1), (2, 'Rome', 2);
INSERT INTO enroll VALUES (1, 1), (2, 1), (3, 2);
"""


def test_a_department_reached_by_two_keys_is_declined(app, tmp_path, hand):
    path = make_db(tmp_path, "school", SCHOOL)
    outcome = ask(app, path, "Which students are enrolled in courses of the Physics department?")
    assert declined(outcome)
    assert "dept_id" in outcome.error  # the other key it could have joined on

    per_department = ask(app, path, "How many students per department?")
    assert per_department.status == "answer", per_department.error
    assert same_rows(
        per_department,
        hand(
            "SELECT department.name, COUNT(*) FROM student JOIN department ON student.dept_id = department.id GROUP BY department.id",
            path,
        ),
    )


def test_a_tie_for_the_first_place_is_not_answered_with_one_of_them(app, flights):
    fewest = ask(app, flights, "Which airline has the fewest flights?")
    assert declined(fewest)
    assert "tie" in fewest.error and "Coastal" in fewest.error and "Highland Jet" in fewest.error
    top = ask(app, flights, "top 2 airlines with the fewest flights")
    assert top.status == "answer" and len(top.rows) == 2  # both of the tied pair fit
    most = ask(app, flights, "Which airline has the most flights?")
    assert most.status == "answer", most.error
    assert [r[0] for r in most.rows] == ["North Air"]


def test_identifiers_are_not_added_up(app, flights):
    outcome = ask(app, flights, "What is the total flight id per airline?")
    assert declined(outcome)
    assert "identifies rows" in outcome.error


POLICIES = """
CREATE TABLE policy (id INTEGER PRIMARY KEY, policy_type TEXT, holder TEXT);
INSERT INTO policy VALUES (1, 'Car', 'Ann'), (2, 'Car', 'Bo'), (3, 'Life', 'Cy'), (4, 'Travel', 'Di');
"""


def test_how_many_is_a_count_or_nothing(app, tmp_path, hand):
    path = make_db(tmp_path, "policies", POLICIES)
    outcome = ask(app, path, "How many car policies are there?")
    if outcome.status == "answer":
        assert same_rows(outcome, hand("SELECT COUNT(*) FROM policy WHERE policy_type = 'Car'", path))
    else:
        assert declined(outcome)  # never a list of policies for 'how many'


# ---------------------------------------------------------------------------------------------
# an enterprise model: party roles and typed facts (the insurance demo and its catalog)


@pytest.fixture
def insurance(settings, tmp_path):
    path = build_insurance(tmp_path / "insurance.sqlite")
    catalog = ROOT / "config" / "insurance_catalog.yaml"
    config = DatabaseSettings(url=f"sqlite:///{path}", catalog=str(catalog))
    app = Askbase(settings.model_copy(update={"databases": {"insurance": config}}))
    yield app, path
    app.close()


def test_a_party_role_the_words_do_not_name_is_declined(insurance):
    app, _ = insurance
    outcome = app.ask(
        "Which industries are the organisations that hold business policies in?", db="insurance"
    )
    assert declined(outcome)
    assert "which role" in outcome.error  # agent, broker, holder … all play a role in a policy


def test_a_value_asked_for_as_the_things_to_list_is_declined(insurance):
    app, _ = insurance
    outcome = app.ask("Which repairers worked on claims for Volkswagen vehicles?", db="insurance")
    assert declined(outcome)  # not a list of claims filtered by the role name 'repairer'
    assert "'repairers'" in outcome.error


def test_several_things_to_count_at_once_are_declined(insurance):
    app, _ = insurance
    outcome = app.ask("How many loss payments and loss reserves does each claim have?", db="insurance")
    assert declined(outcome)
    assert "at once" in outcome.error


def test_a_role_the_words_name_is_answered(insurance, hand):
    app, path = insurance
    outcome = app.ask("Number of claims per claimant city.", db="insurance")
    assert outcome.status == "answer", outcome.error
    want = hand(
        "SELECT p.city, COUNT(DISTINCT c.claim_id) FROM claim c JOIN claim_party_role r ON r.claim_id = c.claim_id "
        "AND r.role_code = 'CL' JOIN party p ON p.party_id = r.party_id GROUP BY p.city",
        path,
    )
    assert same_rows(outcome, want)


def test_a_word_that_names_a_table_and_a_stored_value_alike_is_asked_back(insurance):
    app, _ = insurance
    first = app.ask("Total premium per policy number.", db="insurance")
    assert first.status == "clarify" and first.mode == "keyword"  # all amounts, or the premiums?
    options = first.clarification.options
    assert len(options) == 2 and any("premium" in o.label and "amount type" in o.label for o in options)
