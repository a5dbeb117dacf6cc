"""Keyword mode's binding pass on its own (core/keyword/bind.py): a question's tree on the demo
schema → the query it asks for — which table, column or stored value each phrase means, with no
SQL run — and what it declines, in the question's terms."""

from __future__ import annotations

import datetime as dt

import pytest

from core.keyword.bind import CUE_IS_COLUMN, Bound, SchemaNames, bind
from core.keyword.grammar import read
from core.keyword.match import lexicon
from core.keyword.plan import Decline, Filter, Measure, Query, Ref
from core.settings import load_settings
from core.verified.match import facts

TODAY = dt.date(2026, 6, 30)


@pytest.fixture(scope="module")
def lex(tmp_path_factory):
    from core.database import Databases
    from core.demo import ensure_demo
    from core.settings import load_settings

    var = tmp_path_factory.mktemp("bind-demo")
    ensure_demo(var)
    databases = Databases(load_settings(var_dir=str(var)))
    yield lexicon(databases.get("demo"))
    databases.close()


def bound(lex, question: str) -> Bound:
    reading = read(question, SchemaNames(lex))
    assert reading.trees, question
    first: Decline | None = None
    for tree in reading.trees:  # as keyword mode does: the first tree the schema binds
        try:
            return bind(reading.with_tree(tree), lex, TODAY)
        except Decline as d:
            first = first or d
    assert first is not None
    raise first


def test_a_value_said_before_a_thing_filters_it(lex):
    q = bound(lex, "How many active hosts are there?").query
    assert q.measures == (Measure("COUNT", "compute", words="active hosts"),)
    assert q.filters == (Filter(Ref("compute", "status"), "=", "active", "active"),)


def test_a_column_said_with_its_value_names_the_value_s_place(lex):
    q = bound(lex, "How many clients are in the enterprise segment?").query
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("client", "segment"), "enterprise")]


@pytest.mark.parametrize(
    "question, op",
    [
        ("how many payments have an amount > 100", ">"),
        ("payments with amount ≥ 100", ">="),
        ("payments with amount != 100", "!="),
    ],
)
def test_a_comparison_sign_is_never_dropped(lex, question, op):
    q = bound(lex, question).query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("payment_amount", "amount"), op, 100)]


def test_listing_every_row_shows_what_names_it_never_its_id_alone(lex):
    assert [r.column for r in bound(lex, "List all datacenters").query.projection] == ["code", "name"]
    payments = bound(lex, "List all payments").query.projection
    assert len(payments) > 1 and {"paid_on", "invoice_no"} <= {r.column for r in payments}


def test_a_column_the_rows_are_only_sorted_by_is_not_shown_when_what_to_show_is_said(lex):
    q = bound(lex, "Show the names of clients sorted by signup date").query
    assert Ref("client", "signup_date") not in q.projection and q.projection
    assert q.order[0].key == Ref("client", "signup_date")


def test_an_average_of_a_number_of_rows_is_declined(lex):
    with pytest.raises(Decline) as info:
        bound(lex, "What is the average number of payments per month?")
    assert "over counts" in info.value.reason


def test_a_decline_says_which_column_a_verb_spells(lex):
    """An analyst sees the column a rewording could use ('paid' → the payment date)."""
    with pytest.raises(Decline) as info:
        bound(lex, "how many clients paid in the blue moon?")
    assert "'paid' → payment.paid_on" in info.value.understood


def test_a_superlative_keeps_every_row_tied_for_first(lex):
    q = bound(lex, "which datacenter has the most hosts").query
    assert q.ties and q.limit is None
    assert q.order[0].key == Measure("COUNT", "compute", words="hosts") and q.order[0].desc
    assert Ref("datacenter", "name") in q.groups


def test_a_ranking_by_payments_adds_up_their_amounts(lex):
    q = bound(lex, "Top 5 clients by total payments").query
    assert q.limit == 5 and q.order[0].key == Measure("SUM", "payment_amount", "amount", words="payments")
    paid = bound(lex, "Which 10 clients paid the most in 2025?").query
    assert paid.order[0].key.table == "payment_amount"  # type: ignore[union-attr]
    assert any(f.ref == Ref("payment", "paid_on") for f in paid.filters)  # the payments' own date


def test_the_words_pick_the_date_a_period_restricts(lex):
    q = bound(lex, "How many clients signed up per month in 2024?").query
    assert q.groups == (Ref("client", "signup_date", "month"),)
    assert q.filters[0].ref == Ref("client", "signup_date")
    assert bound(lex, "new clients per month, 2026").query.groups == (Ref("client", "signup_date", "month"),)


def test_things_no_row_of_another_table_refers_to(lex):
    q = bound(lex, "Which clients have no payments?").query
    assert [(a.table, a.column) for a in q.absent] == [("payment", "client_id")]


@pytest.mark.parametrize(
    "question, reason",
    [
        ("How many unicorns are there?", "unicorns"),
        ("Which clients have no payments in 2025?", "negation with a period"),
        ("How many active clients are rated blue?", "blue"),
    ],
)
def test_what_it_cannot_place_is_declined_with_the_words(lex, question, reason):
    with pytest.raises(Decline) as info:
        bound(lex, question)
    assert reason in info.value.reason or reason in " ".join(info.value.words)


def test_a_share_keeps_its_numerator_and_denominator_in_their_places(lex):
    failed_by_card = facts(bound(lex, "What percentage of card payments failed in 2025?"))
    card_of_failed = facts(bound(lex, "What percentage of failed payments in 2025 were made by card?"))
    assert failed_by_card != card_of_failed  # the ratio turned round is another question
    predicate = [f for f in failed_by_card if f.kind == "predicate"]
    assert [(f.key[:2], f.value) for f in predicate] == [(("payment", "status"), "failed")]


def test_a_figure_per_another_figure_is_a_ratio(lex):
    b = bound(lex, "What was the usage cost per CPU hour each month in 2025?")
    assert b.ratio == (
        Measure("SUM", "usage", "cost"),
        Measure("SUM", "usage", "cpu_hours", words="CPU hour"),
    )
    assert b.computable  # keyword mode does not compute it; the verified matcher reads it


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A small schema with the names the demo lacks: a 'count' column, a number-of column
    ('citation_num'), a cue word inside a column name ('minimum_connect_time')."""
    import sqlite3

    from core.database import Database
    from core.settings import DatabaseSettings

    path = tmp_path_factory.mktemp("bind-tiny") / "tiny.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(
            """
            CREATE TABLE checkin (id INTEGER PRIMARY KEY, business_id TEXT, count INTEGER);
            CREATE TABLE publication (pid INTEGER PRIMARY KEY, title TEXT, year INTEGER, citation_num INTEGER);
            CREATE TABLE time_zone (time_zone_code TEXT, time_zone_name TEXT, hours_from_gmt INTEGER);
            CREATE TABLE flight (flight_id INTEGER PRIMARY KEY, connections INTEGER);
            CREATE TABLE airport (airport_code TEXT, airport_name TEXT, minimum_connect_time INTEGER);
            CREATE TABLE station (station_id INTEGER PRIMARY KEY, name TEXT, city TEXT);
            CREATE TABLE pilot (pilot_id INTEGER PRIMARY KEY, pilot_name TEXT, age INTEGER);
            CREATE TABLE aircraft (aircraft_id INTEGER PRIMARY KEY, fleet_series TEXT,
                pilot_id INTEGER REFERENCES pilot (pilot_id));
            CREATE TABLE ref_document_types (document_type_code TEXT PRIMARY KEY, document_type_name TEXT);
            CREATE TABLE skipper (skipper_code INTEGER PRIMARY KEY, skipper_name TEXT, born DATE);
            INSERT INTO skipper VALUES (1, 'Ida', '1980-02-01'), (2, 'Ole', '1991-07-12');
            CREATE TABLE all_documents (document_id INTEGER PRIMARY KEY, document_name TEXT,
                document_type_code TEXT REFERENCES ref_document_types (document_type_code));
            INSERT INTO checkin VALUES (1, 'a', 3), (2, 'a', 4), (3, 'b', 1);
            INSERT INTO publication VALUES (1, 'On Keys', 2020, 5), (2, 'On Joins', 2021, 9);
            INSERT INTO time_zone VALUES ('PST', 'Pacific', -8);
            INSERT INTO flight VALUES (1, 0);
            INSERT INTO airport VALUES ('SFO', 'San Francisco', 30), ('OAK', 'Oakland', 20);
            INSERT INTO station VALUES (1, 'North', 'Leeds'), (2, 'South', 'Leeds'), (3, 'East', 'York');
            INSERT INTO ref_document_types VALUES ('BK', 'Book'), ('PP', 'Paper');
            INSERT INTO all_documents VALUES (1, 'How to read a book', 'BK'), (2, 'Notes', 'PP');
            """
        )
    db = Database(name="tiny", config=DatabaseSettings(url=f"sqlite:///{path}"), var_dir=path.parent)
    yield lexicon(db)
    db.dispose()


def test_a_cue_word_that_is_also_a_figure_of_the_rows_is_a_doubt(tiny):
    """'total count of check-ins' where check-ins carry a 'count' column: counting the rows and
    adding up the column differ, so the reading carries a doubt that says which two it could not
    choose between — below the confidence threshold, which declines it with that reason."""
    doubts = bound(tiny, "What is the total count of check-ins for each business id?").doubts
    assert [score for score, _ in doubts] == [CUE_IS_COLUMN] and "count column" in doubts[0][1]
    assert load_settings().engine.keyword_min_confidence > CUE_IS_COLUMN


def test_more_than_n_of_the_rows_a_listed_column_belongs_to_counts_them_per_value(tiny):
    """'which cities have more than two stations': the cities are a column of the stations, so
    the stations are counted per city, compared; a count they are only sorted by is not shown."""
    q = bound(tiny, "Which cities have more than two stations? Sort them by the number of stations.").query
    assert q.groups == (Ref("station", "city"),)
    assert [(h.measure, h.op, h.value) for h in q.having] == [
        (Measure("COUNT", "station", words="stations"), ">", 2)
    ]
    assert q.hidden == q.measures and q.order[0].key == q.measures[0]


def test_a_word_that_names_no_column_alone_names_the_things_column_said_with_it(tiny):
    """'what type of document is …': 'type' alone names nothing; 'document type' is the column."""
    q = bound(tiny, 'What type of document is "How to read a book"?').query
    assert [r.column for r in q.projection] == ["document_type_code"]
    assert [(f.ref.column, f.value) for f in q.filters] == [("document_name", "How to read a book")]


def test_a_comparison_with_no_column_is_said_of_the_thing_named_just_before_it(tiny):
    """'aircraft flown by pilots younger than 34': aircraft have no age, the pilots do."""
    q = bound(tiny, "fleet series of aircraft flown by pilots younger than 34").query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("pilot", "age"), "<", 34)]


def test_the_number_of_things_a_column_holds_is_that_column(tiny):
    q = bound(tiny, "What are the top 3 publications with the highest number of citations?").query
    assert q.order[0].key == Measure("SUM", "publication", "citation_num", words="citations")
    assert q.limit == 3


def test_a_name_spelled_with_a_cue_word_is_read_as_that_name(tiny):
    """'minimum connect time' is a column of airports: not MIN over 'connect' + 'time', which
    would name two unrelated things (flight.connections, time_zone)."""
    q = bound(tiny, "Which airports have the shortest minimum connect time?").query
    assert [k.key for k in q.order] == [Ref("airport", "minimum_connect_time")]


def test_an_order_said_with_no_key_sorts_by_what_is_shown(lex):
    q = bound(lex, "What are the names of all clients, ordered alphabetically?").query
    assert [(k.key, k.desc) for k in q.order] == [(Ref("client", "name"), False)]
    q = bound(lex, "How many clients per segment? Order the results by the segment name.").query
    assert [(k.key, k.desc) for k in q.order] == [(Ref("client", "segment"), False)]


def test_a_share_of_a_set_said_first_keeps_the_sets_restrictions_below_the_line(lex):
    """'Of all the clients in Switzerland, what fraction are smb': Switzerland restricts the whole,
    smb the part counted above the line."""
    b = bound(lex, "Of all the clients in Switzerland, what fraction are smb, as a percentage?")
    assert [(f.ref.column, f.value) for f in b.query.filters] == [("country", "Switzerland")]
    assert [(f.ref.column, f.value) for f in b.predicate] == [("segment", "smb")]


def test_a_figure_for_each_row_listed_is_grouped_by_it(lex):
    q = bound(lex, "List every segment with its number of clients located in Spain.").query
    assert q.groups == (Ref("client", "segment"),)
    assert q.measures == (Measure("COUNT", "client", words="clients"),)


def test_the_number_each_one_has_on_average_is_its_column_averaged(lex):
    q = bound(lex, "How many cores does an active host have on average, datacenter by datacenter?").query
    assert q.measures == (Measure("AVG", "compute", "cpu_cores", words="cores"),)
    assert q.groups == (Ref("datacenter", "name"),)


def test_the_highest_figure_of_a_thing_is_its_own_or_declined(lex):
    """'how much CPU is the busiest pool using': 'CPU' also names the hosts' cores, which are no
    figure of a pool — declined, not answered with the most cores of any host."""
    with pytest.raises(Decline):
        bound(lex, "how much CPU is the busiest resource pool using right now?")


def test_said_last_ranks_by_the_things_date(lex):
    q = bound(lex, "which machine in prod-sydney-1 was installed last?").query
    assert q.order[0].key == Ref("compute", "commissioned_on") and q.order[0].desc and q.ties


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A small schema of counts stored as numbers (faculty.faculty, degrees.degrees), a money
    column that is owed beside a table of payments, ids beside names (trip.start_station_id and
    start_station_name), a code column named like a table (routes.airline beside airlines), and
    dated rows (accounts opened, orders placed)."""
    import sqlite3

    from core.database import Database
    from core.settings import DatabaseSettings

    path = tmp_path_factory.mktemp("bind-shop") / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(
            """
            CREATE TABLE campus (id INTEGER PRIMARY KEY, campus TEXT, county TEXT);
            CREATE TABLE faculty (campus INTEGER REFERENCES campus (id), year INTEGER, faculty REAL);
            CREATE TABLE degrees (year INTEGER, campus INTEGER REFERENCES campus (id), degrees INTEGER,
                PRIMARY KEY (year, campus));
            CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
                amount_outstanding REAL);
            CREATE TABLE customer_payments (customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
                datetime_payment DATETIME, amount_payment REAL, PRIMARY KEY (customer_id, datetime_payment));
            CREATE TABLE customer_orders (order_id INTEGER PRIMARY KEY,
                customer_id INTEGER REFERENCES customers (customer_id), order_status TEXT, order_date DATETIME);
            CREATE TABLE accounts (account_id INTEGER PRIMARY KEY,
                customer_id INTEGER REFERENCES customers (customer_id), date_account_opened DATETIME,
                account_name TEXT);
            CREATE TABLE trip (id INTEGER PRIMARY KEY, duration INTEGER, start_station_id INTEGER,
                start_station_name TEXT);
            CREATE TABLE airlines (alid INTEGER PRIMARY KEY, name TEXT, country TEXT);
            CREATE TABLE routes (rid INTEGER PRIMARY KEY, alid INTEGER REFERENCES airlines (alid), airline TEXT,
                src TEXT);
            CREATE TABLE station (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE status (station_id INTEGER REFERENCES station (id), bikes_available INTEGER);
            CREATE TABLE disciplines (campus INTEGER REFERENCES campus (id), discipline INTEGER,
                students INTEGER, PRIMARY KEY (campus, discipline));
            CREATE TABLE products (product_id INTEGER PRIMARY KEY, product_name TEXT, product_price REAL);
            CREATE TABLE stadiums (stadium_id INTEGER PRIMARY KEY, stadium_name TEXT, year INTEGER);
            CREATE TABLE peaks (peak_id INTEGER PRIMARY KEY, peak_name TEXT, elevation INTEGER,
                prominence INTEGER);
            INSERT INTO campus VALUES (1, 'North Campus', 'Kent'), (2, 'South Campus', 'Kent'), (3, 'Bay', 'Avon');
            INSERT INTO faculty VALUES (1, 2004, 310.5), (2, 2004, 120.0), (3, 2004, 95.0), (1, 2005, 320.0);
            INSERT INTO degrees VALUES (2004, 1, 900), (2004, 2, 1200), (2004, 3, 40);
            INSERT INTO customers VALUES (1, 'Ann', 'Lee', 9000), (2, 'Bo', 'Diaz', 10), (3, 'Cy', 'Orr', 50);
            INSERT INTO customer_payments VALUES (1, '2018-01-02', 10), (2, '2018-02-03', 700),
                (2, '2018-03-04', 800), (3, '2018-03-05', 300);
            INSERT INTO customer_orders VALUES (1, 1, 'done', '2018-01-01'), (2, 1, 'done', '2018-02-01'),
                (30, 2, 'done', '2018-03-01'), (4, 3, 'done', '2018-03-02'), (5, 1, 'open', '2018-04-01');
            INSERT INTO accounts VALUES (1, 1, '2014-05-01', 'Savings'), (2, 2, '2015-01-09', 'Current');
            INSERT INTO trip VALUES (1, 60, 7, 'Market'), (2, 90, 7, 'Market'), (3, 30, 8, 'Howard');
            INSERT INTO airlines VALUES (1, 'Ryanair', 'Ireland'), (2, 'Aer Lingus', 'Ireland');
            INSERT INTO routes VALUES (1, 1, 'FR', 'DUB'), (2, 1, 'FR', 'STN'), (3, 2, 'EI', 'DUB');
            INSERT INTO station VALUES (1, 'Market'), (2, 'Howard');
            INSERT INTO status VALUES (1, 0), (1, 0), (1, 3), (2, 4);
            INSERT INTO disciplines VALUES (1, 10, 5), (1, 11, 6), (2, 10, 7);
            INSERT INTO products VALUES (1, 'Jeans', 600), (2, 'Shirt', 700);
            INSERT INTO stadiums VALUES (1, 'Old Park', 1890), (2, 'New Arena', 1990);
            INSERT INTO peaks VALUES (1, 'Tall One', 8800, 4000), (2, 'Low One', 900, 300);
            """
        )
    db = Database(name="shop", config=DatabaseSettings(url=f"sqlite:///{path}"), var_dir=path.parent)
    yield lexicon(db)
    db.dispose()


def test_a_count_the_rows_store_is_added_up_not_counted(shop):
    """'how many faculty' where each faculty row holds the number Faculty: the column added up,
    never the rows counted — for the figure asked, a ranking and a figure per group alike."""
    q = bound(shop, "how many faculty did North Campus have in 2004").query
    assert q.measures == (Measure("SUM", "faculty", "faculty", words="faculty"),)
    ranked = bound(shop, "which 2 campuses gave out the most degrees in 2004").query
    assert ranked.order[0].key == Measure("SUM", "degrees", "degrees", words="degrees") and ranked.limit == 2
    smallest = bound(shop, "the 2 campuses with the smallest faculty in 2004").query
    assert smallest.order[0].key == Measure("SUM", "faculty", "faculty", words="faculty")
    assert not smallest.order[0].desc


def test_ranking_by_a_column_that_identifies_rows_counts_them(shop):
    """'placed the most orders' read as customer_orders.order_id: adding up ids is no ranking."""
    q = bound(shop, "which customer placed the most orders").query
    assert q.order[0].key == Measure("COUNT", "customer_orders", words="orders") and q.ties


def test_a_money_verb_that_names_a_table_below_reads_that_tables_amount(shop):
    """'total paid': the customers' payments (amount_payment), not the money column customers
    owe (amount_outstanding), which only loosely fits 'paid'."""
    q = bound(shop, "top 2 customers by total paid").query
    assert q.order[0].key == Measure("SUM", "customer_payments", "amount_payment", words="paid")


def test_when_of_several_rows_lists_their_dates(shop, lex):
    """'when did Ann Lee place her orders': each order's date; the latest alone only when 'last'
    says so."""
    q = bound(shop, "when did Ann Lee place her orders").query
    assert not q.measures and Ref("customer_orders", "order_date") in q.projection
    last = bound(lex, "when did Kestrel Fashion GmbH last make a payment").query
    assert [m.func for m in last.measures] == ["MAX"]


def test_rows_named_by_their_date_in_a_period_are_the_rows(shop):
    """'accounts opened in 2014': the accounts (by their name), restricted by the date the verb
    names — not the different opening dates."""
    q = bound(shop, "accounts opened in 2014").query
    assert Ref("accounts", "account_name") in q.projection and not q.distinct
    assert [f.ref for f in q.filters] == [Ref("accounts", "date_account_opened")]


def test_a_thing_read_as_an_id_is_shown_by_the_name_kept_beside_it(shop):
    q = bound(shop, "top 3 start stations by number of trips").query
    assert q.groups == (Ref("trip", "start_station_name"),)


def test_words_that_name_a_table_as_well_as_a_column_are_the_tables_rows(shop):
    """'airlines' is the airlines table and also routes.airline (a code): the rows are airlines."""
    q = bound(shop, "top 5 airlines by number of routes").query
    assert q.target == "airlines" and Ref("airlines", "name") in q.groups


def compiled(lex, query: Query) -> str:
    from core.keyword.compile import compile_query
    from core.view import build_view

    return compile_query(query, build_view(lex.db, list(query.tables)), lex, "sqlite")


def test_rows_picked_through_a_table_that_points_at_them_are_listed_once(shop):
    """'which stations ever had 0 bikes available': the status rows only pick stations; a station
    they pick twice is listed once."""
    q = Query(
        target="station",
        projection=(Ref("station", "name"),),
        filters=(Filter(Ref("status", "bikes_available"), "=", 0),),
        tables=("station", "status"),
    )
    assert compiled(shop, q).startswith("SELECT DISTINCT")


def test_rows_with_a_key_of_several_columns_are_not_counted_by_one_of_them(shop):
    """Counting disciplines through a join that repeats them: one column of their key (campus)
    would count campuses — declined, not answered."""
    from core.keyword.compile import CompileError

    q = Query(
        target="campus",
        measures=(Measure("COUNT", "disciplines", words="disciplines"),),
        groups=(Ref("campus", "campus"),),
        tables=("disciplines", "campus", "faculty"),
    )
    with pytest.raises(CompileError):
        compiled(shop, q)


def test_who_answered_by_a_number_alone_is_a_doubt(tmp_path):
    """'Who is the advisor of Linda Smith' where Student.Advisor is a number no key declares: it
    names nobody; the reading carries a doubt below the threshold, with the reason."""
    import sqlite3

    from core.database import Database
    from core.keyword.bind import WHO_BY_NUMBER
    from core.settings import DatabaseSettings

    path = tmp_path / "school.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(
            """
            CREATE TABLE student (stuid INTEGER PRIMARY KEY, fname TEXT, lname TEXT, advisor INTEGER);
            CREATE TABLE faculty (facid INTEGER PRIMARY KEY, fname TEXT, lname TEXT);
            INSERT INTO student VALUES (1, 'Linda', 'Smith', 1121), (2, 'Tracy', 'Kim', 1148);
            INSERT INTO faculty VALUES (1121, 'Michael', 'Goodrich'), (1148, 'Ada', 'Byron');
            """
        )
    db = Database(name="school", config=DatabaseSettings(url=f"sqlite:///{path}"), var_dir=tmp_path)
    try:
        doubts = bound(lexicon(db), "Who is the advisor of Linda Smith?").doubts
    finally:
        db.dispose()
    assert [score for score, _ in doubts] == [WHO_BY_NUMBER] and "only a number" in doubts[0][1]
    assert load_settings().engine.keyword_min_confidence > WHO_BY_NUMBER


def test_a_ratio_of_two_numbers_of_each_row_divides_them_row_by_row(lex):
    """'the ratio of A to B for each X': both numbers of one row, said with no aggregate, are
    divided row by row, each row shown by what the words name; turned round, it is another
    question to the verified-answer matcher."""
    b = bound(lex, "ratio of memory gb to cpu cores for each host")
    assert b.query.ratio == (Ref("compute", "memory_gb"), Ref("compute", "cpu_cores"))
    assert b.query.projection and not b.query.measures and not b.computable
    turned = bound(lex, "ratio of cpu cores to memory gb for each host")
    assert turned.query.ratio == (Ref("compute", "cpu_cores"), Ref("compute", "memory_gb"))
    assert facts(b) != facts(turned)


def test_a_ratio_of_counts_is_carried_but_not_computed(lex):
    b = bound(lex, "What is the ratio of the number of hosts to the number of datacenters?")
    assert b.ratio is not None and [m.func for m in b.ratio] == ["COUNT", "COUNT"]
    assert b.query.ratio is None and b.computable


def test_a_word_that_ends_one_column_named_for_its_table_names_that_column(shop):
    """'price' of Products is product_price: the dictionary keeps a one-word rest of a column's
    name out ('name' ends many), so a word that names nothing else names the one column it ends."""
    q = bound(shop, "products with a price between 600 and 700").query
    assert {f.ref for f in q.filters} == {Ref("products", "product_price")}
    avg = bound(shop, "average price of products").query
    assert avg.measures == (Measure("AVG", "products", "product_price", words="price"),)
    with pytest.raises(Decline):
        bound(shop, "products by name between 1 and 2")  # 'name' ends several: no column for it


def test_a_table_said_after_its_own_column_ranks_by_the_column(lex):
    """'by CPU-hour consumption': the usage rows' CPU hours added up, not the usage rows counted."""
    q = bound(lex, "List the 4 biggest resource pools by CPU-hour consumption for 2024.").query
    assert q.order[0].key == Measure("SUM", "usage", "cpu_hours", words="CPU hour consumption")
    assert q.order[0].desc and q.limit == 4


def test_a_catalog_synonym_of_one_column_said_whole_names_that_column(lex):
    """'current CPU usage' is the catalog's synonym of runtime_cpu.overall_usage: never split
    into 'current CPU' (the table) and 'usage' (another table)."""
    q = bound(lex, "What is the highest current CPU usage of a resource pool in prod-frankfurt-1?").query
    assert q.measures == (Measure("MAX", "runtime_cpu", "overall_usage", words="current CPU usage"),)
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("datacenter", "name"), "prod-frankfurt-1")]


def test_a_verb_that_names_a_key_says_no_date(lex):
    """'surcharges were charged in Q3 2025': 'charged' names a charge's id, which is no date; the
    period is on the surcharges' own date (their payment's)."""
    q = bound(lex, "How many egress overage surcharges were charged in Q3 2025?").query
    assert q.measures == (Measure("COUNT", "supercharge", words="egress overage surcharges"),)
    period = [f for f in q.filters if f.op == "range"]
    assert [f.ref for f in period] == [Ref("payment", "paid_on")]
    assert period[0].value == (dt.date(2025, 7, 1), dt.date(2025, 10, 1))


def test_a_price_verb_compares_the_money_column(shop):
    """'products that cost less than 650': the products' price, the money column the verb implies."""
    q = bound(shop, "products that cost less than 650").query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("products", "product_price"), "<", 650)]
    counted = bound(shop, "how many products cost at least 650").query
    assert [(f.ref, f.op, f.value) for f in counted.filters] == [
        (Ref("products", "product_price"), ">=", 650)
    ]


def test_a_verb_that_names_nothing_names_the_table_of_its_noun(lex):
    """'When did Acme Logistics GmbH last pay?': paying makes payments (pay → payment); the
    latest of their dates, for that client."""
    q = bound(lex, "When did Acme Logistics GmbH last pay?").query
    assert q.measures == (Measure("MAX", "payment", "paid_on", words="date"),)
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("client", "name"), "Acme Logistics GmbH")]


def test_a_debt_verb_compares_the_money_column(shop):
    """'customers who owe more than 100': the one money column of customers, what they owe."""
    q = bound(shop, "customers who owe more than 100").query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("customers", "amount_outstanding"), ">", 100)]


def test_a_participle_before_a_period_names_the_year_the_rows_are_listed_with(shop):
    """'stadiums opened before 1900': 'opened' is a verb (the period is of the stadiums' own
    year), and the rows are listed with the year they were compared on."""
    q = bound(shop, "stadiums opened before 1900").query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("stadiums", "year"), "<", 1900)]
    assert Ref("stadiums", "year") in q.projection


def test_an_extreme_of_words_naming_a_table_and_its_column_is_the_column(lex):
    """'cpu usage' is a synonym of runtime_cpu and of its overall_usage alike: 'the highest cpu
    usage' asks for a figure, so the column, never the table's rows."""
    q = bound(lex, "what's the highest cpu usage of a pool in dev-zurich-1").query
    assert q.measures == (Measure("MAX", "runtime_cpu", "overall_usage", words="cpu usage"),)


def test_a_height_in_feet_compares_the_elevation(shop):
    """'peaks above 8000 ft': feet imply the elevation (lexicon.yaml `implied`), not the
    prominence, the table's other number."""
    q = bound(shop, "peaks above 8000 ft").query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("peaks", "elevation"), ">", 8000)]


def test_a_function_word_never_picks_the_date(lex):
    """'clients that signed up in 2022' reads as 'clients signed up in 2022': 'that' is no
    spelling of birth_date, so the words that are left pick signup_date."""
    for question in ("Show clients that signed up in 2022", "Show clients signed up in 2022"):
        q = bound(lex, question).query
        assert [f.ref for f in q.filters] == [Ref("client", "signup_date")], question


@pytest.fixture(scope="module")
def rated(tmp_path_factory):
    """Stores rated by their visits (a figure of another table's rows), visits dated by a month
    name and a year, books with a stored number of pages and writers linked to them."""
    import sqlite3

    from core.database import Database
    from core.settings import DatabaseSettings

    path = tmp_path_factory.mktemp("bind-rated") / "rated.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(
            """
            CREATE TABLE store (store_id INTEGER PRIMARY KEY, name TEXT, city TEXT, latitude REAL,
                longitude REAL);
            CREATE TABLE visit (visit_id INTEGER PRIMARY KEY, store_id INTEGER REFERENCES store (store_id),
                rating INTEGER, month TEXT, year INTEGER);
            CREATE TABLE writer (writer_id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE book (book_id INTEGER PRIMARY KEY, title TEXT, page_num INTEGER);
            CREATE TABLE writes (writer_id INTEGER REFERENCES writer (writer_id),
                book_id INTEGER REFERENCES book (book_id));
            INSERT INTO store VALUES (1, 'Corner', 'Leeds', 53.8, -1.5), (2, 'Market', 'York', 53.9, -1.1);
            INSERT INTO visit VALUES (1, 1, 5, 'January', 2021), (2, 1, 3, 'February', 2021),
                (3, 2, 4, 'April', 2021), (4, 2, 2, 'March', 2020);
            INSERT INTO writer VALUES (1, 'Ann Reed'), (2, 'Bo Stone');
            INSERT INTO book VALUES (1, 'Dune Roads', 320), (2, 'Quiet Rivers', 180);
            INSERT INTO writes VALUES (1, 1), (2, 1), (2, 2);
            """
        )
    db = Database(name="rated", config=DatabaseSettings(url=f"sqlite:///{path}"), var_dir=path.parent)
    yield lexicon(db)
    db.dispose()


def test_month_names_a_count_is_ordered_by_are_in_calendar_order(rated):
    q = bound(rated, "How many visits were made in each month of the year 2021, ordered by the month?").query
    assert q.groups == (Ref("visit", "month"),) and dict(q.calendar) == {Ref("visit", "month"): "month"}


def test_the_columns_of_the_one_row_ranked_by_a_figure_of_its_rows(rated):
    """'the city of the store with the highest rating': each store's visits averaged, the one
    store first, only its city shown (the average only orders)."""
    q = bound(rated, "What is the city of the store with the highest rating?").query
    assert Ref("store", "city") in q.groups and q.limit == 1 and not q.ties
    assert q.hidden == (Measure("AVG", "visit", "rating", words="rating"),)


def test_a_stored_number_of_things_orders_the_one_row_without_being_shown(rated):
    q = bound(rated, "What is the title of the book that has the highest number of pages?").query
    assert q.projection == (Ref("book", "title"),) and q.limit == 1
    assert q.order[0].key == Ref("book", "page_num") and q.order[0].desc


def test_a_table_after_a_relation_verb_says_whose_rows(rated):
    q = bound(
        rated, 'What are the names of the writers who wrote the book with the title "Dune Roads"?'
    ).query
    assert q.projection == (Ref("writer", "name"),)
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("book", "title"), "Dune Roads")]


def test_the_id_of_the_grouped_rows_is_no_figure_to_rank_by(rated):
    with pytest.raises(Decline) as info:
        bound(rated, "How many visits are associated with each store, ordered by the store ID?")
    assert "identifies" in info.value.reason


def test_columns_listed_with_no_thing_are_rows_of_their_one_table(rated):
    q = bound(rated, "show the latitudes and longitudes with a York city").query
    assert q.target == "store" and q.projection == (Ref("store", "latitude"), Ref("store", "longitude"))
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("store", "city"), "York")]
    where = bound(rated, "what cities do we have stores in").query
    assert where.projection == (Ref("store", "city"),) and where.distinct


def test_a_count_asked_for_each_row_listed(rated):
    q = bound(rated, "Which stores received visits in 2021 and how many visits did they receive?").query
    assert q.measures == (Measure("COUNT", "visit", words="visits"),) and Ref("store", "name") in q.groups
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("visit", "year"), 2021)]


def test_quoted_words_in_a_name_match_inside_the_one_column_that_holds_them(rated):
    q = bound(rated, 'how many writers are associated with books with "Rivers" in the title').query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("book", "title"), "contains", "Rivers")]
    with pytest.raises(Decline):
        bound(rated, 'how many books with "Zzyzx" in the title')  # held by no column: not guessed


def test_a_month_of_a_year_on_rows_that_keep_a_year_and_a_month_name(rated):
    q = bound(rated, "How many visits were made in February 2021?").query
    assert [(f.ref, f.value) for f in q.filters] == [
        (Ref("visit", "year"), 2021),
        (Ref("visit", "month"), "February"),
    ]


@pytest.mark.parametrize(
    "question",
    [
        "How many hosts does each Tier III datacenter have?",
        "number of hosts per Tier III datacenter",
        "for each tier iii datacenter, how many hosts are there?",
    ],
)
def test_a_value_said_with_what_is_grouped_keeps_only_those_groups(lex, question):
    """'each Tier III datacenter' groups the Tier III datacenters only (the value was dropped and
    every datacenter counted — a wrong answer, and a verified question's ✅ reused for it)."""
    q = bound(lex, question).query
    assert Filter(Ref("datacenter", "tier"), "=", "Tier III", q.filters[0].words) in q.filters
    assert [r.table for r in q.groups] == ["datacenter"] * len(q.groups) and q.groups


def test_no_of_a_number_is_zero_and_no_of_a_text_is_empty(lex):
    """'hosts with no cpu cores': the number is 0 (or not recorded) — read as only 'not recorded'
    it counted none of the rows that say 0; 'clients without an email': the column is empty."""
    cores = bound(lex, "how many hosts have no cpu cores?").query
    assert [(f.ref, f.op) for f in cores.filters] == [(Ref("compute", "cpu_cores"), "none")]
    email = bound(lex, "clients without an email").query
    assert [(f.ref, f.op, f.value) for f in email.filters] == [(Ref("client", "email"), "present", False)]


def test_the_count_asked_for_again_is_shown_once(lex):
    """'How many hosts does each datacenter have? Show the name and the count.': one count column."""
    q = bound(lex, "How many hosts does each datacenter have? Show the datacenter name and the count.").query
    assert [m.func for m in q.measures] == ["COUNT"]


def test_stored_values_said_in_the_plural_are_the_rows_counted(lex):
    """'how many failed SEPA direct debits': payments (the one table holding both values), those
    failed and paid by SEPA; a name said alone names no rows to count."""
    q = bound(lex, "how many failed SEPA direct debits").query
    assert [m.table for m in q.measures] == ["payment"] and [m.func for m in q.measures] == ["COUNT"]
    assert {(f.ref.column, f.value) for f in q.filters} == {("status", "failed"), ("method", "sepa")}
    with pytest.raises(Decline):
        bound(lex, "how many Germany")


def test_columns_asked_for_by_name_are_all_that_is_shown(lex):
    """'the names of the 3 oldest clients': names, as asked — the birth date they are ranked by
    is in the SQL and the answer's words, not a column nobody asked for."""
    q = bound(lex, "the names of the 3 oldest clients").query
    assert q.projection == (Ref("client", "name"),) and q.limit == 3
    assert bound(lex, "the 3 oldest clients").query.projection != q.projection  # unnamed: label and figure


@pytest.mark.parametrize(
    "question, column, value",
    [
        ("how many wire transfers were pending in Q4 2025", "method", "wire"),  # "bank wire transfer"
        ("how many bank wire payments failed in 2025", "method", "wire"),  # a run holding the code
        ("how many declined card payments were there in 2025", "status", "failed"),  # "declined or bounced"
        ("how many credit card payments failed in 2025", "method", "card"),  # "credit or debit card"
    ],
)
def test_words_of_a_code_s_description_name_the_code(lex, question, column, value):
    q = bound(lex, question).query
    assert (column, value) in {(f.ref.column, f.value) for f in q.filters}
    assert [m.table for m in q.measures] == ["payment"]


def test_a_code_and_its_description_side_by_side_are_one_filter(lex):
    q = bound(lex, "how many failed SEPA direct debits in 2025").query
    assert [(f.ref.column, f.value) for f in q.filters if f.ref.column == "method"] == [("method", "sepa")]


def test_a_lone_head_word_of_a_description_names_no_code(lex):
    """'transfer' is the last word of "bank wire transfer" but not a description of its own;
    'received' ends two descriptions ("money received", "not yet received"): neither is a value."""
    from core.keyword.meanings import index, lent

    assert ("transfer",) not in lent("bank wire transfer", "wire")
    lents = index(
        [("p", "status", "settled", "money received"), ("p", "status", "pending", "not yet received")]
    )
    assert ("received",) not in lents
    assert lents[("money", "received")][0][2] == "settled"


@pytest.mark.parametrize(
    "question, kind, value",
    [
        ("how many payments failed between July and September 2025", "quarter", (2025, 3)),
        ("how many payments failed between January and December 2024", "year", 2024),
    ],
)
def test_whole_months_between_two_months_are_the_quarter_or_year_they_make(lex, question, kind, value):
    b = bound(lex, question)
    assert [(v.kind, v.value) for _, v in b.periods] == [(kind, value)]


def test_the_first_of_two_months_takes_the_year_said_with_the_second(lex):
    q = bound(lex, "how many payments failed between November and February 2025").query
    dates = [f.value for f in q.filters if f.op == "range"]
    assert dates == [(dt.date(2024, 11, 1), dt.date(2025, 3, 1))]


def test_a_country_said_by_its_adjective_is_its_stored_name(lex):
    """'Swiss clients': the clients in Switzerland (demonyms.yaml), as 'clients in Switzerland'."""
    q = bound(lex, "When did each Swiss client last make a payment?").query
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("location", "country"), "Switzerland")]
    with pytest.raises(Decline):  # a word that is no demonym names no country
        bound(lex, "When did each Swissish client last make a payment?")


def test_the_demonyms_file_fits_its_schema():
    from core.keyword.meanings import DemonymsError, country, parse_demonyms

    assert country("Danes") == "Denmark" and country("customer") is None
    with pytest.raises(DemonymsError):
        parse_demonyms({"version": 1, "countries": {"Austria": ["Austrian"]}})  # not lower case
    with pytest.raises(DemonymsError):
        parse_demonyms({"version": 1, "countries": {"A": ["x"], "B": ["x"]}})  # two countries


def test_an_event_noun_names_the_date_called_after_it(lex):
    """'registrations per month': the date whose synonym is 'registration date' (signup_date)."""
    q = bound(lex, "Number of client registrations by month during 2021").query
    assert q.groups == (Ref("client", "signup_date", "month"),)


def test_a_table_s_synonym_whose_head_is_its_column_groups_by_the_column(lex):
    """'per marketing campaign' (a synonym of retention, whose rows keep a campaign): one figure per
    campaign, not per retention action."""
    q = bound(lex, "Sum of gift value for startup clients in each marketing campaign").query
    assert q.groups == (Ref("retention", "campaign"),)


def test_a_value_as_stored_is_not_read_as_words_of_another_code_s_description(lex):
    """'United States' is a stored country; that the region North America is described as
    "United States and Canada" does not make it the region."""
    q = bound(lex, "How many clients are based in the United States?").query
    assert [(f.ref, f.value) for f in q.filters] == [(Ref("location", "country"), "United States")]


def test_part_of_a_name_said_unquoted_is_matched_in_the_column_that_holds_it(lex):
    """'datacenters with names starting with dev': the words after the cue, as typed, are the
    start of the stored names — in the column said with them."""
    q = bound(lex, "which datacenters have names starting with dev?").query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("datacenter", "name"), "prefix", "dev")]


def test_things_listed_sorted_by_a_count_are_each_counted(lex):
    """'list the datacenter names sorted by number of hosts': one row per datacenter, ranked by its
    own count — not one count over every host."""
    q = bound(lex, "list the datacenter names sorted by number of hosts from fewest to most").query
    assert q.groups and all(r.table == "datacenter" for r in q.groups)
    assert [(o.key, o.desc) for o in q.order] == [(q.measures[0], False)]


def test_the_key_asked_for_beside_a_count_is_the_group(lex):
    """'for each datacenter, show the datacenter id and the number of hosts': grouped by the id
    asked for, which stands for the datacenter — not its name beside it."""
    q = bound(lex, "for each datacenter, show the datacenter id and the number of hosts").query
    assert q.groups == (Ref("datacenter", "id"),)


@pytest.mark.parametrize(
    "question, span",
    [
        ("how many clients signed up since 2024", (dt.date(2024, 1, 1), None)),  # 2024 kept
        ("how many clients signed up 2024 or earlier", (None, dt.date(2025, 1, 1))),  # to its end
    ],
)
def test_a_period_said_kept_is_in_the_range(lex, question, span):
    q = bound(lex, question).query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("client", "signup_date"), "range", span)]


def test_when_the_latest_thing_happened_is_its_latest_date(lex):
    q = bound(lex, "When did the latest payment happen?").query
    assert q.measures == (Measure("MAX", "payment", "paid_on", words="date"),)


def test_a_tables_name_then_ids_is_its_one_key(tiny):
    """'the skipper ids' where no column is spelled so: the skippers' one key column."""
    q = bound(tiny, "list the skipper ids").query
    assert q.projection == (Ref("skipper", "skipper_code"),)


def test_youngest_first_by_a_birth_date_is_the_latest_date_first(tiny):
    q = bound(tiny, "skipper names sorted by born, youngest first").query
    assert [(o.key, o.desc) for o in q.order] == [(Ref("skipper", "born"), True)]


def test_which_value_has_the_row_ranked_first_binds_as_the_value_of_that_row(rated):
    """'which city has the store with the highest rating' asks what 'the city of the store with
    the highest rating' asks."""
    q = bound(rated, "Which city has the store with the highest rating?").query
    assert q == bound(rated, "What is the city of the store with the highest rating?").query


def test_distinct_before_a_listing_lists_each_value_once(lex):
    q = bound(lex, "what are the distinct segments of clients?").query
    assert q.projection == (Ref("client", "segment"),) and q.distinct


def test_a_direction_before_alphabetical_orders_the_names_that_way(lex):
    q = bound(lex, "list clients in descending alphabetical order").query
    assert [(k.key, k.desc) for k in q.order] == [(Ref("client", "name"), True)]


@pytest.fixture(scope="module")
def carriers(tmp_path_factory):
    """Airlines with a name and a call sign: 'Orbit' is a whole call sign and the start of a name."""
    import sqlite3

    from core.database import Database
    from core.settings import DatabaseSettings

    path = tmp_path_factory.mktemp("bind-carriers") / "carriers.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(
            """
            CREATE TABLE airline (airline_id INTEGER PRIMARY KEY, name TEXT, callsign TEXT, country TEXT);
            INSERT INTO airline VALUES (1, 'Orbit Air', 'SKY', 'Chile'), (2, 'Bolt Air', 'ORBIT', 'Peru'),
                (3, 'Cirrus', 'CIR', 'Peru');
            """
        )
    db = Database(name="carriers", config=DatabaseSettings(url=f"sqlite:///{path}"), var_dir=path.parent)
    yield lexicon(db)
    db.dispose()


def test_text_said_to_start_a_thing_is_first_its_name(carriers):
    """'starting with "Orbit"': the airlines whose name starts so, not the one whose call sign is ORBIT."""
    q = bound(carriers, "what country are the airlines starting with 'Orbit' from?").query
    assert [(f.ref, f.op, f.value) for f in q.filters] == [(Ref("airline", "name"), "prefix", "Orbit")]
    assert q.projection == (Ref("airline", "country"),)


def test_a_count_that_names_no_rows_counts_those_of_the_column_grouped_by(lex):
    q = bound(lex, "how many per segment").query
    assert q.target == "client" and q.groups == (Ref("client", "segment"),)
    assert [m.func for m in q.measures] == ["COUNT"]


def test_columns_listed_alone_are_the_rows_of_their_one_table(lex):
    q = bound(lex, "client names and segments").query
    assert q.target == "client" and q.projection == (Ref("client", "name"), Ref("client", "segment"))


def test_different_values_sorted_by_another_column_are_each_listed_once(lex):
    q = bound(lex, "list the different client segments, sorted by name").query
    assert q.distinct and q.projection == (Ref("client", "segment"),)
    assert [k.key for k in q.order] == [Ref("client", "name")]


def test_rows_in_more_than_n_other_rows_compare_the_count_of_those(lex):
    q = bound(lex, "clients that are in more than 2 resource pools").query
    assert q.target == "client"
    assert [(h.measure.func, h.measure.table, h.op, h.value) for h in q.having] == [
        ("COUNT", "resource_pool", ">", 2.0)
    ]


def test_a_column_asked_for_of_a_ranked_rows_neighbour_is_shown_or_declined(lex):
    """'which country has the datacenter with the most hosts' was answered with the datacenter's
    name: the country asked for was dropped. Declined until a rule reads it; the datacenter's own
    column is still shown."""
    with pytest.raises(Decline):
        bound(lex, "which country has the datacenter with the most hosts")
    q = bound(lex, "which datacenter has the host with the most cpu cores").query
    assert [r.table for r in q.projection] == ["datacenter"]


def test_via_a_stored_value_is_how_the_rows_were_made(lex):
    """'payments via SEPA direct debit': 'via' reads as 'by' — a value after it keeps the rows made so."""
    q = bound(lex, "how many payments via SEPA direct debit in 2025").query
    assert [(f.ref.column, f.value) for f in q.filters if f.ref.column == "method"] == [("method", "sepa")]
