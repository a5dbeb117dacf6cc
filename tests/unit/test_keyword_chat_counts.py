"""Keyword mode on counts and comparisons as people type them in chat, seen on Spider-style
databases it had never seen: '20+ floors' (20 or more, not exactly 20), 'swimmers with more than
one win' (a count of the rows holding the value, not the swimmer's one number), 'number of records
per pilot' where the database has pilot_record (its rows, not the pilots), 'the total number of
customers across all banks' (the sum of a stored count, bank.no_of_customers), 'for each subject:
id, name, and …' (the subject's id, not the first table's), 'hq city' (Headquartered_City),
'…, alphabetical' after a count that only keeps some groups, '# of people' and 'gymnast count' (a
count, not a list), and 'store 1' read on inventory.store_id rather than through a join to store. Each is answered with the rows
hand-written SQL gives, or declined — never answered with something else."""

from __future__ import annotations

from tests.unit.test_keyword_unseen_shapes import answered, app, ask, declined, gives, hand, make_db, rows

__all__ = ["app"]  # the fixture, used by name


BUILDINGS = """
CREATE TABLE building (building_id INTEGER PRIMARY KEY, name TEXT, floors INTEGER);
CREATE TABLE institution (institution_id INTEGER PRIMARY KEY, institution TEXT,
    building_id INTEGER REFERENCES building (building_id));
INSERT INTO building VALUES (1, 'Tower', 20), (2, 'Spire', 31), (3, 'Annex', 4);
INSERT INTO institution VALUES (1, 'Ames Lab', 1), (2, 'Bryn Lab', 2), (3, 'Cole Lab', 3), (4, 'Dart Lab', 2);
"""


def test_a_number_with_a_plus_is_that_number_or_more(app, tmp_path):
    path = make_db(tmp_path, "buildings", BUILDINGS)
    # the rows listed show the figure they were kept for (bind.py: rows that differ in it show it)
    gives(app, path, "buildings with 20+ floors", "SELECT name, floors FROM building WHERE floors >= 20")
    want = "SELECT COUNT(*) FROM institution JOIN building USING (building_id) WHERE building.floors >= 20"
    gives(app, path, "how many institutions are in a building with 20+ floors", want)


SWIMMING = """
CREATE TABLE swimmer (id INTEGER PRIMARY KEY, name TEXT, nationality TEXT, meter_100 REAL);
CREATE TABLE record (id INTEGER, result TEXT, swimmer_id INTEGER REFERENCES swimmer (id), event_id INTEGER,
    PRIMARY KEY (swimmer_id, event_id));
INSERT INTO swimmer VALUES (1, 'Ann', 'AUS', 57.2), (2, 'Bo', 'USA', 58.0), (3, 'Cy', 'NZL', 56.1);
INSERT INTO record VALUES (1, 'Win', 1, 1), (2, 'Win', 1, 2), (3, 'Loss', 2, 1), (4, 'Win', 2, 2),
    (5, 'Loss', 3, 1), (6, 'Loss', 3, 2), (7, 'Win', 3, 3);
"""


def test_more_than_n_of_a_stored_value_counts_the_rows_that_hold_it(app, tmp_path):
    path = make_db(tmp_path, "swimming", SWIMMING)
    want = (
        "SELECT s.name, s.nationality FROM swimmer s JOIN record r ON r.swimmer_id = s.id "
        "WHERE r.result = 'Win' GROUP BY s.id HAVING COUNT(*) > 1"
    )
    # Ann won twice; not every swimmer whose meter_100 time is above 1
    gives(app, path, "name and nationality of swimmers with more than one win", want)


WINES = """
CREATE TABLE appellations (no INTEGER PRIMARY KEY, appelation TEXT UNIQUE, county TEXT);
CREATE TABLE wine (no INTEGER PRIMARY KEY, name TEXT, appelation TEXT REFERENCES appellations (appelation),
    price INTEGER, score INTEGER);
INSERT INTO appellations VALUES (1, 'Monterey County', 'Monterey'), (2, 'Napa Valley', 'Napa');
INSERT INTO wine VALUES (1, 'Alpha', 'Monterey County', 40, 90), (2, 'Beta', 'Monterey County', 70, 88),
    (3, 'Gamma', 'Napa Valley', 30, 91);
"""


def test_a_value_further_on_is_not_what_a_number_counts(app, tmp_path):
    path = make_db(tmp_path, "wines", WINES)
    outcome = ask(app, path, "names of wines under 50 from Monterey county appellations")
    want = "SELECT name FROM wine WHERE appelation = 'Monterey County' AND price < 50"
    assert declined(outcome) or rows(outcome) == hand(path, want)


PILOTS = """
CREATE TABLE pilot (pilot_id INTEGER PRIMARY KEY, pilot_name TEXT, team TEXT);
CREATE TABLE aircraft (aircraft_id INTEGER PRIMARY KEY, model TEXT);
CREATE TABLE pilot_record (record_id INTEGER PRIMARY KEY, pilot_id INTEGER REFERENCES pilot (pilot_id),
    aircraft_id INTEGER REFERENCES aircraft (aircraft_id), date TEXT);
INSERT INTO pilot VALUES (1, 'Prof. Zackery', 'Bradley'), (2, 'Katheryn Gorczany', 'Bradley'), (3, 'Mr. Cristian', 'Fordham');
INSERT INTO aircraft VALUES (1, 'Cargo'), (2, 'Viper');
INSERT INTO pilot_record VALUES (1, 1, 1, '2003'), (2, 1, 2, '2004'), (3, 1, 1, '2005'), (4, 2, 2, '2006'),
    (5, 3, 1, '2007');
"""


def test_records_are_the_rows_of_the_one_table_named_for_them(app, tmp_path):
    path = make_db(tmp_path, "pilots", PILOTS)
    want = "SELECT p.pilot_name, COUNT(*) FROM pilot_record r JOIN pilot p USING (pilot_id) GROUP BY p.pilot_name"
    gives(app, path, "number of records per pilot name", want)
    gives(app, path, "each pilot name with how many records they have", want)


BANKS = """
CREATE TABLE bank (branch_id INTEGER PRIMARY KEY, bname TEXT, no_of_customers INTEGER, city TEXT, state TEXT);
CREATE TABLE customer (cust_id TEXT PRIMARY KEY, cust_name TEXT, branch_id INTEGER REFERENCES bank (branch_id),
    state TEXT);
INSERT INTO bank VALUES (1, 'morningside', 203, 'New York City', 'New York'),
    (2, 'downtown', 123, 'Salt Lake City', 'Utah'), (3, 'broadway', 453, 'New York City', 'New York');
INSERT INTO customer VALUES ('1', 'Mary', 2, 'Utah'), ('2', 'Jack', 1, 'Texas'), ('3', 'Owen', 3, 'New York');
"""


def test_the_total_number_across_a_table_with_a_stored_count_sums_it(app, tmp_path):
    path = make_db(tmp_path, "banks", BANKS)
    gives(app, path, "total number of customers across all banks", "SELECT SUM(no_of_customers) FROM bank")
    # without the banks named, the customers are counted
    gives(app, path, "total number of customers", "SELECT COUNT(*) FROM customer")
    gives(app, path, "number of customers per state", "SELECT state, COUNT(*) FROM customer GROUP BY state")


COURSES = """
CREATE TABLE authors (author_id INTEGER PRIMARY KEY, login_name TEXT);
CREATE TABLE subjects (subject_id INTEGER PRIMARY KEY, subject_name TEXT);
CREATE TABLE courses (course_id INTEGER PRIMARY KEY, author_id INTEGER REFERENCES authors (author_id),
    subject_id INTEGER REFERENCES subjects (subject_id), course_name TEXT);
INSERT INTO authors VALUES (11, 'jo'), (12, 'al');
INSERT INTO subjects VALUES (1, 'Computer Science'), (2, 'Arts'), (3, 'Language');
INSERT INTO courses VALUES (1, 11, 1, 'db'), (2, 12, 1, 'os'), (3, 11, 2, 'art'), (4, 12, 3, 'french');
"""


def test_generic_words_after_a_colon_are_the_things_before_it(app, tmp_path):
    path = make_db(tmp_path, "courses", COURSES)
    want = (
        "SELECT s.subject_id, s.subject_name, COUNT(*) FROM courses c JOIN subjects s USING (subject_id) "
        "GROUP BY s.subject_id"
    )
    gives(app, path, "for each subject: id, name, and how many courses it has", want)
    # the thing grouped by, not the last one named before the colon
    gives(app, path, "for each subject with courses: id, name and number of courses", want)


STORES = """
CREATE TABLE district (district_id INTEGER PRIMARY KEY, district_name TEXT, headquartered_city TEXT,
    city_population REAL, city_area REAL);
CREATE TABLE store (store_id INTEGER PRIMARY KEY, store_name TEXT);
CREATE TABLE store_district (store_id INTEGER PRIMARY KEY REFERENCES store (store_id),
    district_id INTEGER REFERENCES district (district_id));
INSERT INTO district VALUES (1, 'Attock', 'Attock City', 94620, 20), (2, 'Bahawalnagar', 'Bahawalnagar City', 134936, 13),
    (3, 'Khanewal', 'Khanewal City', 165038, 17);
INSERT INTO store VALUES (1, 'Miramichi'), (2, 'Neguac'), (3, 'Rogersville'), (4, 'Blackville');
INSERT INTO store_district VALUES (1, 3), (2, 3), (3, 2), (4, 1);
"""


def test_hq_is_headquarters(app, tmp_path):
    path = make_db(tmp_path, "stores", STORES)
    want = (
        "SELECT d.headquartered_city FROM store_district sd JOIN district d USING (district_id) "
        "GROUP BY d.headquartered_city ORDER BY COUNT(*) DESC LIMIT 1"
    )
    gives(app, path, "which hq city has the most stores", want)


EVENTS = """
CREATE TABLE products (product_id INTEGER PRIMARY KEY, product_name TEXT);
CREATE TABLE events (event_id INTEGER PRIMARY KEY, event_type TEXT);
CREATE TABLE products_in_events (id INTEGER PRIMARY KEY, event_id INTEGER REFERENCES events (event_id),
    product_id INTEGER REFERENCES products (product_id));
INSERT INTO products VALUES (1, 'TV Equipments'), (2, 'Dinning'), (3, 'Bath Set'), (4, 'Apples');
INSERT INTO events VALUES (1, 'Trade'), (2, 'Fair'), (3, 'Show');
INSERT INTO products_in_events VALUES (1, 1, 1), (2, 2, 1), (3, 1, 2), (4, 3, 3), (5, 2, 3), (6, 1, 4), (7, 3, 4);
"""


def test_alphabetical_orders_the_groups_a_count_keeps(app, tmp_path):
    path = make_db(tmp_path, "events", EVENTS)
    outcome = answered(app, path, "product names that are in 2+ events, alphabetical")
    assert [r[0] for r in outcome.rows] == ["Apples", "Bath Set", "TV Equipments"]


PEOPLE = """
CREATE TABLE people (people_id INTEGER PRIMARY KEY, name TEXT, country TEXT, hometown TEXT);
CREATE TABLE gymnast (gymnast_id INTEGER PRIMARY KEY REFERENCES people (people_id), total_points REAL);
INSERT INTO people VALUES (1, 'Paul', 'Russia', 'Santo Domingo'), (2, 'Lorraine', 'Bulgaria', 'Bonao'),
    (3, 'Elizabeth', 'Russia', 'Santo Domingo'), (4, 'Marina', 'Russia', 'Santiago');
INSERT INTO gymnast VALUES (1, 57.4), (3, 57.6), (4, 55.9);
"""


def test_a_count_sign_or_word_after_a_thing_counts_it(app, tmp_path):
    path = make_db(tmp_path, "people", PEOPLE)
    gives(app, path, "# of people per country", "SELECT country, COUNT(*) FROM people GROUP BY country")
    want = "SELECT p.hometown, COUNT(*) FROM gymnast g JOIN people p ON p.people_id = g.gymnast_id GROUP BY p.hometown"
    gives(app, path, "gymnast count per hometown", want)


STORES_AND_STOCK = """
CREATE TABLE store (store_id INTEGER PRIMARY KEY, address TEXT);
CREATE TABLE inventory (inventory_id INTEGER PRIMARY KEY, film_id INTEGER, store_id INTEGER REFERENCES store (store_id));
INSERT INTO inventory VALUES (1, 1, 1), (2, 1, 1), (3, 2, 2), (4, 3, 1);
"""


def test_a_key_named_by_number_is_read_on_the_foreign_key_that_holds_it(app, tmp_path):
    # the store table was never filled in: its inventory still says store 1
    path = make_db(tmp_path, "stock", STORES_AND_STOCK)
    want = "SELECT COUNT(*) FROM inventory WHERE store_id = 1"
    gives(app, path, "How many inventory items does store 1 have?", want)
