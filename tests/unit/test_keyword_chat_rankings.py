"""Keyword mode on rankings and lists as people type them in chat, seen on Spider-style databases
it had never seen: 'all details of the airport with the most passengers' (the airport, not the
largest number), 'tallest building name?' (ranked by height, never the greatest name), "who's the
author with the top score" (the highest score, not every author with one), 'the account id with
the most transactions' (a count, though no key is declared), 'the name of each protein along
with the institution' (both, in the order asked), 'the most common value' beside another column
(declined), 'ranked above 3' (the rank column), 'churches opened in 1840' (the date the verb
names), 'games with no injuries' where injury_accident holds them, what to show after a dash
('… - name and capacity'), '? just names' of a thing whose only label is its id, 'the winning
aircraft' of a match (by its name, not the id the match holds), 'whose highest weekly
precipitation is above 50' (each one's maximum compared), and 'which game …' where 'game' matched
a table whose rows pair a student and a game (declined, never a student id), 'race tracks'
(every track, not only those a race was held on), and '… and what is it' after a ranking (the
figure is shown). Each is answered with the rows hand-written SQL gives, or declined — never answered with
something else."""

from __future__ import annotations

from tests.unit.test_keyword_unseen_shapes import answered, app, ask, declined, gives, hand, make_db, rows

__all__ = ["app"]  # the fixture, used by name


AIRPORTS = """
CREATE TABLE airport (airport_id INTEGER PRIMARY KEY, airport_name TEXT, international_passengers REAL,
    domestic_passengers REAL);
INSERT INTO airport VALUES (1, 'London Heathrow', 61344438, 5562516), (2, 'London Gatwick', 27554869, 3478458),
    (3, 'Manchester', 18119230, 2943719);
"""


def test_all_details_of_the_one_ranked_first_is_its_row(app, tmp_path):
    path = make_db(tmp_path, "airports", AIRPORTS)
    want = "SELECT * FROM airport ORDER BY international_passengers DESC LIMIT 1"
    gives(app, path, "all details of the airport w/ the most international passengers", want)


BUILDINGS = """
CREATE TABLE building (building_id INTEGER PRIMARY KEY, name TEXT, height_feet INTEGER, floors INTEGER);
INSERT INTO building VALUES (1, 'Citizens Bank', 330, 22), (2, 'Zion Tower', 500, 40), (3, 'Annex', 60, 4);
"""
PEOPLE = """
CREATE TABLE people (people_id INTEGER PRIMARY KEY, name TEXT, height REAL, weight REAL);
CREATE TABLE perpetrator (perpetrator_id INTEGER PRIMARY KEY, people_id INTEGER REFERENCES people (people_id),
    year INTEGER);
INSERT INTO people VALUES (1, 'Ron Baxter', 6.4, 205), (2, 'Brent Boyd', 6.3, 215), (3, 'Zach Ross', 6.1, 190);
INSERT INTO perpetrator VALUES (1, 1, 1994), (2, 3, 1995);
"""


def test_a_size_adjective_before_a_name_ranks_by_the_size_it_implies(app, tmp_path):
    path = make_db(tmp_path, "buildings", BUILDINGS)
    # not MAX(name), the last name in alphabetical order (Zion Tower is also the tallest: Annex is not)
    gives(app, path, "tallest building name?", "SELECT name FROM building ORDER BY height_feet DESC LIMIT 1")
    gives(app, path, "shortest building name", "SELECT name FROM building ORDER BY height_feet LIMIT 1")
    path = make_db(tmp_path, "people", PEOPLE)
    # the perpetrator is a people row, which has the weight; Brent Boyd is heavier but no perpetrator
    want = "SELECT p.name FROM perpetrator JOIN people p USING (people_id) ORDER BY p.weight DESC LIMIT 1"
    gives(app, path, "heaviest perpetrator's name", want)


SUBMISSIONS = """
CREATE TABLE submission (submission_id INTEGER PRIMARY KEY, scores REAL, author TEXT, college TEXT);
INSERT INTO submission VALUES (1, 72, 'Steve Niehaus', 'Notre Dame'), (2, 79, 'Sammy Green', 'Florida'),
    (3, 78, 'Sherman Smith', 'Miami (OH)'), (4, 93, 'Steve Raible', 'Georgia Tech');
"""


def test_the_top_score_is_the_highest(app, tmp_path):
    path = make_db(tmp_path, "submissions", SUBMISSIONS)
    want = "SELECT author FROM submission ORDER BY scores DESC LIMIT 1"
    outcome = answered(app, path, "who's the author with the top submission score?")
    assert [r[0] for r in outcome.rows] == [
        a for (a,) in hand(path, want)
    ]  # the score that ranks is shown too


TRANSACTIONS = """
CREATE TABLE accounts (account_id INTEGER PRIMARY KEY, account_name TEXT);
CREATE TABLE financial_transactions (transaction_id INTEGER NOT NULL, account_id INTEGER REFERENCES accounts (account_id),
    transaction_amount REAL);
INSERT INTO accounts VALUES (7, 'Checking'), (8, 'Savings'), (9, 'Travel');
INSERT INTO financial_transactions VALUES (1, 9, 10), (2, 7, 20), (3, 9, 5), (6, 8, 1), (5, 9, 7);
"""


def test_the_most_of_an_id_no_key_declares_counts_its_rows(app, tmp_path):
    path = make_db(tmp_path, "transactions", TRANSACTIONS)
    # account 9 has three transactions; account 8 has the transaction with the largest id
    want = "SELECT account_id FROM financial_transactions GROUP BY account_id ORDER BY COUNT(*) DESC LIMIT 1"
    gives(app, path, "which account id has the most transactions?", want)


PROTEINS = """
CREATE TABLE institution (institution_id INTEGER PRIMARY KEY, institution TEXT);
CREATE TABLE protein (common_name TEXT PRIMARY KEY, protein_name TEXT,
    institution_id INTEGER REFERENCES institution (institution_id));
CREATE TABLE aircraft (aircraft_id INTEGER PRIMARY KEY, aircraft TEXT);
CREATE TABLE "match" (round INTEGER PRIMARY KEY, location TEXT, winning_aircraft INTEGER REFERENCES aircraft (aircraft_id));
INSERT INTO institution VALUES (1, 'Ave Maria University'), (2, 'Dakota State University');
INSERT INTO protein VALUES ('Tropical Clawed Frog', 'uncharacterized protein C20orf117-like', 1),
    ('porkworm', 'surface antigen repeat family protein', 2), ('body louse', 'Hypothetical protein', 2);
INSERT INTO aircraft VALUES (1, 'Robinson R-22'), (2, 'Bell 206B3 JetRanger');
INSERT INTO "match" VALUES (1, 'Mina Zayid , Abu Dhabi', 1), (2, 'Swan River , Perth', 2);
"""


def test_a_thing_listed_after_each_is_shown_in_the_order_asked(app, tmp_path):
    path = make_db(tmp_path, "proteins", PROTEINS)
    outcome = answered(app, path, "List the name of each protein along with the institution it belongs to.")
    want = "SELECT p.protein_name, i.institution FROM protein p JOIN institution i USING (institution_id)"
    assert rows(outcome) == hand(path, want)  # both columns, the protein's name first
    # the winning aircraft is an aircraft id: never shown as if it were the aircraft
    outcome = ask(app, path, "location of each match and the winning aircraft")
    want = (
        'SELECT m.location, a.aircraft FROM "match" m JOIN aircraft a ON a.aircraft_id = m.winning_aircraft'
    )
    assert declined(outcome) or rows(outcome) == hand(path, want)


CATALOG = """
CREATE TABLE catalog_contents (catalog_entry_id INTEGER PRIMARY KEY, catalog_entry_name TEXT);
CREATE TABLE catalog_contents_additional_attributes (catalog_entry_id INTEGER REFERENCES catalog_contents
    (catalog_entry_id), attribute_id INTEGER, attribute_value TEXT);
INSERT INTO catalog_contents VALUES (1, 'Cola'), (2, 'Root beer'), (3, 'Cream Soda');
INSERT INTO catalog_contents_additional_attributes VALUES (1, 4, '1'), (2, 4, '0'), (3, 2, '0'), (3, 3, '1'),
    (2, 3, '0');
"""


def test_the_most_common_value_beside_another_column_is_declined(app, tmp_path):
    path = make_db(tmp_path, "catalog", CATALOG)
    outcome = ask(app, path, "catalog entry names with the most common attribute value")
    want = (
        "SELECT DISTINCT c.catalog_entry_name FROM catalog_contents c JOIN catalog_contents_additional_attributes a "
        "USING (catalog_entry_id) WHERE a.attribute_value = (SELECT attribute_value FROM "
        "catalog_contents_additional_attributes GROUP BY attribute_value ORDER BY COUNT(*) DESC LIMIT 1)"
    )
    assert declined(outcome) or rows(outcome) == hand(path, want)
    gives(
        app,
        path,
        "what is the most common attribute value",
        "SELECT attribute_value FROM catalog_contents_additional_attributes GROUP BY attribute_value "
        "ORDER BY COUNT(*) DESC LIMIT 1",
    )


REVIEWS = """
CREATE TABLE item (i_id INTEGER PRIMARY KEY, title TEXT);
CREATE TABLE review (a_id INTEGER PRIMARY KEY, i_id INTEGER REFERENCES item (i_id), rating INTEGER, "rank" INTEGER);
INSERT INTO item VALUES (1, 'pear'), (2, 'orange'), (3, 'apple');
INSERT INTO review VALUES (1, 1, 10, 1), (2, 2, 5, 4), (3, 3, 7, 2), (4, 3, 4, 5);
"""

CHURCHES = """
CREATE TABLE church (church_id INTEGER PRIMARY KEY, name TEXT, organized_by TEXT, open_date INTEGER);
CREATE TABLE wedding (church_id INTEGER REFERENCES church (church_id), male_id INTEGER, female_id INTEGER,
    year INTEGER, PRIMARY KEY (church_id, male_id, female_id));
INSERT INTO church VALUES (1, 'Pure Church of Christ', 'Wycam Clark', 1831), (2, 'Independent Church', 'Alston', 1832),
    (3, 'Church of Christ', 'Ezra Booth', 1836), (4, 'Church of Zion', 'Hulet', 1840);
INSERT INTO wedding VALUES (1, 1, 2, 2014), (3, 3, 4, 2015), (4, 5, 6, 2016);
"""


def test_a_verb_names_the_column_spelled_with_its_base_word(app, tmp_path):
    path = make_db(tmp_path, "reviews", REVIEWS)
    # 'ranked above 3' is the rank column, not the rating
    gives(
        app,
        path,
        "titles of items that have a review ranked above 3",
        'SELECT DISTINCT title FROM item JOIN review USING (i_id) WHERE review."rank" > 3',
    )
    path = make_db(tmp_path, "churches", CHURCHES)
    gives(app, path, "how many churches opened in 1836", "SELECT COUNT(*) FROM church WHERE open_date = 1836")


GAMES = """
CREATE TABLE stadium (id INTEGER PRIMARY KEY, name TEXT, capacity INTEGER);
CREATE TABLE game (id INTEGER PRIMARY KEY, stadium_id INTEGER REFERENCES stadium (id), season INTEGER);
CREATE TABLE injury_accident (id INTEGER PRIMARY KEY, game_id INTEGER REFERENCES game (id), player TEXT,
    injury TEXT);
INSERT INTO stadium VALUES (1, 'Cowboys Stadium', 80000), (2, 'FedEx Field', 82000), (3, 'Alamo', 65000);
INSERT INTO game VALUES (1, 1, 2007), (2, 2, 2007), (3, 1, 2008), (4, 3, 2009);
INSERT INTO injury_accident VALUES (1, 1, 'Davide', 'Clean-up'), (2, 1, 'Dino', 'Sustained'), (3, 3, 'Lee', 'Knee');
"""


def test_no_rows_of_a_table_named_for_the_word_and_a_list_after_a_dash(app, tmp_path):
    path = make_db(tmp_path, "games", GAMES)
    # 'injuries' matched injury_accident.injury: the rows of the table named for it
    want = "SELECT COUNT(*) FROM game WHERE id NOT IN (SELECT game_id FROM injury_accident)"
    gives(app, path, "how many games had no injuries", want)
    want = "SELECT name, capacity FROM stadium WHERE capacity > 70000"
    gives(app, path, "stadiums with capacity over 70k - name and capacity", want)


GYMNASTS = """
CREATE TABLE people (people_id INTEGER PRIMARY KEY, name TEXT, hometown TEXT);
CREATE TABLE gymnast (gymnast_id INTEGER PRIMARY KEY REFERENCES people (people_id), total_points REAL);
INSERT INTO people VALUES (1, 'Paul Hamm', 'Santo Domingo'), (2, 'Lorraine Lopez', 'Bonao'), (3, 'Elsa Ortiz', 'Santiago');
INSERT INTO gymnast VALUES (1, 57.4), (2, 55.9), (3, 56.2);
"""


def test_just_names_of_a_thing_with_no_name_column_are_the_names_it_matched(app, tmp_path):
    path = make_db(tmp_path, "gymnasts", GYMNASTS)
    want = "SELECT p.name FROM gymnast g JOIN people p ON p.people_id = g.gymnast_id WHERE p.hometown != 'Santo Domingo'"
    gives(app, path, "gymnasts not from Santo Domingo - names pls", want)  # not their ids
    gives(app, path, "gymnasts not from Santo Domingo? just names", want)


MATCHES = """
CREATE TABLE aircraft (aircraft_id INTEGER PRIMARY KEY, aircraft TEXT);
CREATE TABLE "match" (round INTEGER PRIMARY KEY, location TEXT, winning_aircraft INTEGER REFERENCES aircraft (aircraft_id));
CREATE TABLE station (id INTEGER PRIMARY KEY, network_name TEXT, local_authority TEXT);
CREATE TABLE weekly_weather (station_id INTEGER REFERENCES station (id), day_of_week TEXT, precipitation REAL,
    PRIMARY KEY (station_id, day_of_week));
INSERT INTO aircraft VALUES (1, 'Robinson R-22'), (2, 'Bell 206B3 JetRanger');
INSERT INTO "match" VALUES (1, 'Mina Zayid , Abu Dhabi', 1), (2, 'Swan River , Perth', 2), (3, 'Flamengo Beach', 2);
INSERT INTO station VALUES (1, 'Amersham', 'Chiltern'), (2, 'Bushey', 'Watford'), (3, 'Brentwood', 'Brentwood');
INSERT INTO weekly_weather VALUES (1, 'Monday', 50), (1, 'Tuesday', 90), (2, 'Monday', 40), (2, 'Tuesday', 60),
    (3, 'Monday', 30), (3, 'Tuesday', 20);
"""


def test_a_key_of_another_thing_is_shown_by_its_name_and_a_highest_compared_is_a_maximum(app, tmp_path):
    path = make_db(tmp_path, "matches", MATCHES)
    want = (
        'SELECT m.location, a.aircraft FROM "match" m JOIN aircraft a ON a.aircraft_id = m.winning_aircraft'
    )
    gives(app, path, "location and winning aircraft for each match", want)  # not the aircraft ids
    want = (
        "SELECT s.id, s.local_authority FROM weekly_weather w JOIN station s ON s.id = w.station_id "
        "GROUP BY s.id HAVING MAX(w.precipitation) > 50"
    )
    question = (
        "What are the IDs and local authorities of stations whose highest weekly precipitation is above 50?"
    )
    gives(app, path, question, want)  # each station's maximum, not the one station ranked first


GAMES_PLAYED = """
CREATE TABLE student (stuid INTEGER PRIMARY KEY, lname TEXT);
CREATE TABLE video_games (gameid INTEGER PRIMARY KEY, gname TEXT, gtype TEXT);
CREATE TABLE plays_games (stuid INTEGER REFERENCES student (stuid), gameid INTEGER REFERENCES video_games (gameid),
    hours_played INTEGER);
INSERT INTO student VALUES (1001, 'Smith'), (1002, 'Kim');
INSERT INTO video_games VALUES (1, 'RNG Stone', 'Collectible card game'), (2, 'Call of Destiny', 'Frist-person shooter');
INSERT INTO plays_games VALUES (1001, 1, 35), (1001, 2, 15), (1002, 2, 1);
"""


def test_a_row_that_pairs_two_things_names_neither(app, tmp_path):
    path = make_db(tmp_path, "games", GAMES_PLAYED)
    # 'game' matched plays_games: never a student id (1001 played the most hours) for the game
    outcome = ask(app, path, "which game has the most total hours played")
    want = (
        "SELECT v.gname FROM plays_games p JOIN video_games v USING (gameid) GROUP BY v.gameid "
        "ORDER BY SUM(p.hours_played) DESC LIMIT 1"
    )
    assert declined(outcome) or rows(outcome) == hand(path, want)


TRACKS = """
CREATE TABLE track (track_id INTEGER PRIMARY KEY, name TEXT, location TEXT, seating REAL);
CREATE TABLE race (race_id INTEGER PRIMARY KEY, name TEXT, class TEXT, track_id INTEGER REFERENCES track (track_id));
INSERT INTO track VALUES (1, 'Auto Club Speedway', 'Fontana, CA', 92000), (2, 'Chicagoland Speedway', 'Joliet, IL', 75000),
    (3, 'Darlington Raceway', 'Darlington, SC', 63000);
INSERT INTO race VALUES (1, 'Rolex 24', 'DP/GT', 1), (2, 'Gainsco Grand Prix', 'DP', 1);
"""


def test_a_table_before_a_table_names_a_kind_of_its_rows(app, tmp_path):
    path = make_db(tmp_path, "tracks", TRACKS)
    # every race track, not only the one a race was held on
    gives(
        app,
        path,
        "What are the distinct locations of the race tracks?",
        "SELECT DISTINCT location FROM track",
    )
    want = "SELECT COUNT(*) FROM track WHERE seating > 70000"
    gives(app, path, "how many race tracks have seating over 70000", want)


CITIES = """
CREATE TABLE city (city_id INTEGER PRIMARY KEY, city TEXT, gdp REAL, regional_population INTEGER);
INSERT INTO city VALUES (1, 'Shanghai', 1919.57, 23019148), (2, 'Nanjing', 614.48, 8004680), (3, 'Zhoushan', 77.72, 1121261);
"""


def test_and_what_is_it_after_a_ranking_shows_the_figure(app, tmp_path):
    path = make_db(tmp_path, "cities", CITIES)
    want = "SELECT city, gdp FROM city ORDER BY gdp LIMIT 1"
    gives(app, path, "which city has the lowest gdp and what is it", want)
    gives(app, path, "which city has the lowest gdp", "SELECT city FROM city ORDER BY gdp LIMIT 1")
