"""Keyword mode on the short words people type in chat, seen on Spider-style databases it had
never seen: orders said as 'high to low', 'least first', 'a-z'; a question that starts with
'distinct'; amounts as '30k' or '$30k', and 'making more than …' as an amount of money; 'doc',
'prof', and a column named with an abbreviation ('enr' for enrollment); a verb that names a column
('wines scoring above 90'); 'gmail', which is no misspelt 'email'; 'lowest paid' (the salary);
'vote %' (Vote_Percent, where 'rating %' stays Rating_in_percent); 'customers who ordered a
food product' (a purchase, not a sort); 'statement ids and details' (both the statement's); 'the
oldest employee' (by birth date, not hire date); 'the database course' where 'database', a
filler word, is also a course's name (declined, never every course). Each is answered with the rows hand-written SQL gives, or declined —
never answered with something else."""

from __future__ import annotations

from tests.unit.test_keyword_unseen_shapes import answered, app, ask, declined, gives, hand, make_db, rows

__all__ = ["app"]  # the fixture, used by name


STAFF = """
CREATE TABLE employee (ssn INTEGER PRIMARY KEY, fname TEXT, lname TEXT, salary INTEGER, dno INTEGER, years INTEGER);
INSERT INTO employee VALUES (1, 'John', 'Smith', 30000, 5, 12), (2, 'Franklin', 'Wong', 40000, 5, 3),
    (3, 'Alicia', 'Zelaya', 25000, 4, 7), (4, 'Jennifer', 'Wallace', 43000, 4, 20);
"""


def test_orders_said_the_chat_way(app, tmp_path):
    path = make_db(tmp_path, "staff", STAFF)
    outcome = answered(app, path, "first names sorted by salary high to low")
    assert [r[0] for r in outcome.rows] == ["Jennifer", "Franklin", "John", "Alicia"]
    outcome = answered(app, path, "first names sorted by salary low to high")
    assert [r[0] for r in outcome.rows] == ["Alicia", "John", "Franklin", "Jennifer"]
    outcome = answered(app, path, "last names sorted by years, least first")
    assert [r[0] for r in outcome.rows] == ["Wong", "Zelaya", "Smith", "Wallace"]
    outcome = answered(app, path, "distinct last names a-z")
    assert [r[0] for r in outcome.rows] == ["Smith", "Wallace", "Wong", "Zelaya"]
    gives(app, path, "distinct dno", "SELECT DISTINCT dno FROM employee")


def test_thousands_typed_with_a_k_and_pay_verbs(app, tmp_path):
    path = make_db(tmp_path, "staff", STAFF)
    want = "SELECT fname, lname FROM employee WHERE salary > 30000"
    gives(app, path, "first and last names of employees making more than 30k", want)
    gives(app, path, "first and last names of employees with salary over $30k", want)
    gives(
        app,
        path,
        "first names of employees with salary under 30k",
        "SELECT fname FROM employee WHERE salary < 30000",
    )


SCHOOL = """
CREATE TABLE college (cname TEXT PRIMARY KEY, state TEXT, enr INTEGER);
CREATE TABLE documents (document_id INTEGER PRIMARY KEY, receipt_date TEXT, document_type_code TEXT);
INSERT INTO college VALUES ('LSU', 'LA', 18000), ('ASU', 'AZ', 12000), ('OU', 'OK', 22000), ('FSU', 'FL', 19000);
INSERT INTO documents VALUES (1, '2008-04-21', 'CD'), (2, '1974-05-08', 'Paper'), (3, '2014-12-25', 'Paper');
"""


def test_abbreviations_typed_and_in_column_names(app, tmp_path):
    path = make_db(tmp_path, "school", SCHOOL)
    gives(app, path, "colleges with enrollment over 15k", "SELECT cname FROM college WHERE enr > 15000")
    gives(
        app,
        path,
        "doc ids and receipt dates for all documents",
        "SELECT document_id, receipt_date FROM documents",
    )


WINES = """
CREATE TABLE wine (no INTEGER PRIMARY KEY, name TEXT, score INTEGER, price INTEGER);
INSERT INTO wine VALUES (1, 'Alpha', 93, 40), (2, 'Beta', 88, 70), (3, 'Gamma', 91, 30);
"""


def test_a_verb_that_names_a_column(app, tmp_path):
    path = make_db(tmp_path, "wines", WINES)
    gives(app, path, "wines scoring above 90", "SELECT name FROM wine WHERE score > 90")


CUSTOMERS = """
CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, first_name TEXT, email TEXT, address TEXT);
INSERT INTO customer VALUES (1, 'Luis', 'luisg@embraer.com.br', 'Av. Brigadeiro'), (2, 'Leonie', 'leonekohler@surfeu.de', 'Theodor-Heuss'),
    (3, 'Frank', 'fharris@google.com', '1600 Amphitheatre'), (4, 'Jack', 'jacksmith@microsoft.com', '1 Microsoft Way');
"""


def test_a_word_is_no_misspelt_column_when_its_first_letter_differs(app, tmp_path):
    path = make_db(tmp_path, "customers", CUSTOMERS)
    # 'gmail' is not 'email' mistyped: every customer has an email, none a gmail address
    outcome = ask(app, path, "how many customers have a gmail address")
    assert declined(outcome) or rows(outcome) == hand(
        path, "SELECT COUNT(*) FROM customer WHERE email LIKE '%gmail%'"
    )
    gives(app, path, "the adress of Jack", "SELECT address FROM customer WHERE first_name = 'Jack'")


ELECTIONS = """
CREATE TABLE election (election_id INTEGER PRIMARY KEY, date TEXT, votes REAL, vote_percent REAL, seats REAL);
CREATE TABLE channel (channel_id INTEGER PRIMARY KEY, owner TEXT, rating_in_percent REAL);
INSERT INTO election VALUES (1, 'July 1942', 9423, 16.2, 6), (2, 'October 1942', 11059, 18.5, 9),
    (3, 'February 1943', 20412, 29.4, 13);
INSERT INTO channel VALUES (1, 'CCTV', 1.7), (2, 'HBS', 0.3), (3, 'Hunan', 1.9);
"""


def test_pay_words_and_percent_signs(app, tmp_path):
    path = make_db(tmp_path, "staff", STAFF)
    gives(
        app, path, "3 lowest paid employees first names", "SELECT fname FROM employee ORDER BY salary LIMIT 3"
    )
    want = "SELECT fname FROM employee ORDER BY salary DESC LIMIT 1"
    gives(app, path, "first name of the highest paid employee", want)
    path = make_db(tmp_path, "elections", ELECTIONS)
    # 'vote %' is Vote_Percent, not the number of votes; 'rating %' is Rating_in_percent
    gives(app, path, "date and vote % of every election", "SELECT date, vote_percent FROM election")
    want = "SELECT owner FROM channel ORDER BY rating_in_percent DESC LIMIT 1"
    gives(app, path, "who owns the channel with the highest rating %?", want)


ORDERS = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, customer_name TEXT);
CREATE TABLE products (product_id INTEGER PRIMARY KEY, product_name TEXT);
CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (customer_id));
CREATE TABLE order_items (order_item_id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders (order_id),
    product_id INTEGER REFERENCES products (product_id));
INSERT INTO customers VALUES (1, 'Savannah'), (2, 'George'), (3, 'Alberto');
INSERT INTO products VALUES (1, 'food'), (2, 'book'), (3, 'clothes');
INSERT INTO orders VALUES (1, 2), (2, 3), (3, 1), (4, 2);
INSERT INTO order_items VALUES (1, 1, 1), (2, 2, 2), (3, 3, 1), (4, 4, 3);
"""


def test_ordered_is_a_purchase_after_who_and_a_sort_before_by(app, tmp_path):
    path = make_db(tmp_path, "orders", ORDERS)
    want = (
        "SELECT DISTINCT c.customer_name FROM customers c JOIN orders o USING (customer_id) "
        "JOIN order_items i USING (order_id) JOIN products p USING (product_id) WHERE p.product_name = 'food'"
    )
    gives(app, path, "customers who've ordered a food product", want)  # not sorted by the product
    outcome = answered(app, path, "customer names ordered alphabetically")
    assert [r[0] for r in outcome.rows] == ["Alberto", "George", "Savannah"]


STATEMENTS = """
CREATE TABLE documents (document_id INTEGER PRIMARY KEY, document_name TEXT, other_details TEXT);
CREATE TABLE statements (statement_id INTEGER PRIMARY KEY REFERENCES documents (document_id), statement_details TEXT);
CREATE TABLE employee (emp_num INTEGER PRIMARY KEY, emp_fname TEXT, emp_lname TEXT, emp_hiredate TEXT, emp_dob TEXT);
INSERT INTO documents VALUES (57, 'Learning English', NULL), (192, 'Noel CV', NULL), (300, 'Chapter 1', 'z');
INSERT INTO statements VALUES (57, 'Open Project'), (192, 'Private Project');
INSERT INTO employee VALUES (1, 'Anne', 'Weiss', '1990-08-01', '1962-01-13'), (2, 'Robert', 'Ramsey', '1978-02-14', '1979-10-03'),
    (3, 'Edward', 'Smith', '1982-03-01', '1955-06-07');
"""


def test_generic_words_after_a_thing_and_oldest_of_people(app, tmp_path):
    path = make_db(tmp_path, "statements", STATEMENTS)
    # the statement's details, not documents.other_details
    assert declined(ask(app, path, "statement ids and details"))  # no grammar rule reads it (issue 33)
    # the earliest birth date, not the earliest hire date (Robert was hired first)
    want = "SELECT emp_fname, emp_lname FROM employee ORDER BY emp_dob LIMIT 1"
    gives(app, path, "What are the first and last name of the oldest employee?", want)


COURSES = """
CREATE TABLE courses (course_id INTEGER PRIMARY KEY, course_name TEXT, course_description TEXT);
INSERT INTO courses VALUES (1, 'database', 'relational models'), (2, 'os', 'processes and threads'),
    (3, 'art history', 'painting'), (4, 'french', 'grammar');
"""


def test_a_filler_word_that_is_a_stored_value_is_not_dropped_in_silence(app, tmp_path):
    path = make_db(tmp_path, "courses", COURSES)
    # 'database' is a course's name: never every course's description
    outcome = ask(app, path, "what's the description of the database course?")
    want = "SELECT course_description FROM courses WHERE course_name = 'database'"
    assert declined(outcome) or rows(outcome) == hand(path, want)
    # said of the data, after 'the', it is no condition
    gives(app, path, "how many courses are in the database", "SELECT COUNT(*) FROM courses")
