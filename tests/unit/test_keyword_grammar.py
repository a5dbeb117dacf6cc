"""Keyword mode's grammar on its own (core/keyword/grammar.py): tokens, values and lexemes, and each
rule of the grammar, text → tree, with no database (the lexicon alone; a fake schema where a rule
reads a name spelled with cue or function words)."""

from __future__ import annotations

import datetime as dt

import pytest

from core.keyword.grammar import Lex, continues, lexemes, read, read_change, tokenize, values
from core.keyword.tree import Condition, Group, Measure, Order, Phrase, Question, Value, Window, days


def brief(tree: Question | None) -> str:
    """A tree in one line: what is asked and each part, phrases by their words."""
    if tree is None:
        return "—"

    def said(x: object) -> str:
        if isinstance(x, Phrase):
            return x.text
        if isinstance(x, Value):
            return x.text
        if isinstance(x, Measure) and x.func == "ratio" and x.top is not None and x.over is not None:
            return f"ratio({said(x.top)} / {said(x.over)})"
        if isinstance(x, Measure):
            inner = said(x.of) if x.of else x.hint
            return f"{x.func}({'distinct ' if x.distinct else ''}{inner})"
        if isinstance(x, Condition):
            value = (said(x.value) if x.value is not None else "") + (f"..{said(x.upper)}" if x.upper else "")
            words = [said(x.subject) if x.subject else "", x.op, value]
            return "[" + " ".join(w for w in words if w) + "]"
        if isinstance(x, Window):
            return f"<{x.prep} {said(x.value)}{'..' + said(x.upper) if x.upper else ''}>"
        if isinstance(x, Group):
            return f"per({said(x.by) if x.by else ''}{' ' + x.unit if x.unit else ''})".replace("( ", "(")
        if isinstance(x, Order):
            key = said(x.key) if x.key is not None else x.hint
            return f"{'desc' if x.desc else 'asc'}({key}){'*' if x.ties else ''}"
        return str(x)

    parts = [tree.ask, said(tree.thing) if tree.thing else "-"]
    parts += [said(m) for m in tree.measures]
    parts += [f"show:{said(s)}" for s in tree.shown]
    parts += [said(c) for c in tree.conditions]
    parts += [said(w) for w in tree.windows]
    parts += [said(g) for g in tree.groups]
    if tree.order is not None:
        parts.append(said(tree.order))
    if tree.limit:
        parts.append(f"limit {tree.limit}")
    return " ".join(parts)


def tree(question: str) -> str:
    return brief(read(question).tree)


# ---------------------------------------------------------------------------------------------
# tokens, values, lexemes


def test_contractions_signs_and_typos_are_read_as_said():
    lows = [t.low for t in tokenize("Whats teh count of hosts that don't have memory ≥ 1024?")]
    assert lows == [
        "what",
        "is",
        "the",
        "count",
        "of",
        "hosts",
        "that",
        "do",
        "not",
        "have",
        "memory",
        "≥",
        "1024",
        "?",
    ]


@pytest.mark.parametrize(
    "question, kind, value",
    [
        ("payments in Q4 2024", "quarter", (2024, 4)),
        ("payments in the fourth quarter of 2024", "quarter", (2024, 4)),
        ("payments in 2024 Q4", "quarter", (2024, 4)),
        ("payments in March 2025", "month", (2025, 3)),
        ("payments in 2025", "year", 2025),
        ("payments since 2025-03-01", "date", dt.date(2025, 3, 1)),
        ("payments in the last 30 days", "period", ("day", -30, 0)),
        ("payments last year", "period", ("year", -1, 1)),
        ("circuits with lat < -30", "number", -30),
        ("top three clients", "number", 3),
    ],
)
def test_values_are_read_with_their_kind(question, kind, value):
    found = [v for v in values(tokenize(question)).values() if v.kind == kind]
    assert [v.value for v in found] == [value]


def test_the_days_of_a_value():
    q4 = Value("quarter", (2024, 4), 0, 2, "Q4 2024")
    assert days(q4) == (dt.date(2024, 10, 1), dt.date(2025, 1, 1))
    assert days(Value("month", (2025, 12), 0, 2, "December 2025")) == (
        dt.date(2025, 12, 1),
        dt.date(2026, 1, 1),
    )


class Names:
    """A schema that spells 'rank', 'AC/DC', 'Let There Be Rock' and 'helpfulness score(s)' as
    names, and has one column total_gpa (which 'GPA' stands for)."""

    def spells(self, words: str) -> bool:
        return words.lower() in (
            "rank",
            "ac/dc",
            "let there be rock",
            "helpfulness scores",
            "clarity scores",
            "fax number",
            "places of birth",
            "or",
        )

    def defined(self, words: str) -> str:
        return "total_loss" if words.lower() == "total loss" else ""

    def acronym(self, word: str) -> str:
        return "total gpa" if word == "gpa" else ""


def cats(question: str) -> list[str]:
    first: list[Lex] = next(lexemes(tuple(tokenize(question)), Names()))
    return [f"{x.cat}:{x.text}" for x in first]


def test_names_spelled_with_signs_or_function_words_are_one_phrase():
    assert "np:AC/DC" in cats("Which albums are by AC/DC?")
    assert "np:album Let There Be Rock" in cats("show the tracks on the album Let There Be Rock")
    assert "def:total loss" in cats("total loss by line of business")


def test_a_cue_word_the_schema_spells_is_read_as_that_name_when_the_cue_reading_fails():
    reading = read("How many faculty members are there per rank?", Names())
    assert brief(reading.tree) == "count faculty members count(faculty members) per(rank)"


# ---------------------------------------------------------------------------------------------
# the heads: what is asked


@pytest.mark.parametrize(
    "question, want",
    [
        # count := COUNT DISTINCT? DET? NP (OF DET? NP)?
        ("How many active hosts are there?", "count active hosts count(active hosts)"),
        ("Hwo many different majors do students have?", "count majors count(distinct majors) [= students]"),
        ("What is the total number of points scored across all races?", "count races count(points)"),
        # postfix := NP (COUNT | AGG)
        ("payment count for Q3 2025", "count payment count(payment) <in Q3 2025>"),
        # measure := AGG COUNT? DET? NP (OF DET? NP)? | AGG OF NP | AGG AUX? NP? VERB (PREP NP)?
        ("What is the average age of students?", "measure students avg(age)"),
        ("What is the total of all invoices?", "measure - sum(invoices)"),
        ("What is the maximum number of CPU cores on a host?", "measure host max(CPU cores)"),
        ("average and total capacity of cinemas", "measure cinemas avg(capacity) sum(capacity)"),
        ("How much did we sell in March 2010?", "measure - sum(sell) <in March 2010>"),
        ("what's the age of the oldest student", "measure student min(age)"),  # bound: MAX of an age
        # share := SHARE OF? DET? NP
        ("What percentage of payments failed in 2025?", "measure payments failed share() <in 2025>"),
        # when := WHEN AUX NP LAST? VERB* DET? NP
        (
            "When did Kestrel Fashion GmbH last make a payment?",
            "measure payment max(date) [= Kestrel Fashion GmbH]",
        ),
        # top := TOP NUMBER? DET? NP (BY key)? | WH? NUMBER NP link DET SUPER key? | NUMBER SUPER NP
        ("Top 5 clients by total payments", "rank clients desc(sum(payments)) limit 5"),
        ("top 3 genres by number of tracks", "rank genres desc(count(tracks)) limit 3"),
        ("Which 10 clients paid the most in 2025?", "rank clients <in 2025> desc(paid) limit 10"),
        ("Which 3 majors have the most students?", "rank majors desc(students) limit 3"),
        ("the 3 shortest tracks", "rank tracks asc(shortest) limit 3"),
        (
            "the 3 faculty members with the lowest phone numbers",
            "rank faculty members asc(phone numbers) limit 3",
        ),
        ("top 3 most valuable gifts", "rank gifts desc(most valuable) limit 3"),
        # a key said after 'top N' with no direction ranks in the head's direction
        ("the top 10 pools ranked by total CPU hours", "rank pools desc(sum(CPU hours)) limit 10"),
        ("top 3 pools ordered by total CPU hours", "rank pools desc(sum(CPU hours)) limit 3"),
        ("top 5 clients sorted by name", "rank clients asc(name) limit 5"),
        (
            "the top 3 publications with the highest number of citations",
            "rank publications desc(count(citations)) limit 3",
        ),
        # best := WH NP link DET SUPER key? | (WH BE)? DET? SUPER NP — every row tied for first
        ("which datacenter has the most hosts", "rank datacenter desc(hosts)*"),
        ("Which actor appears in the most films?", "rank actor desc(films)*"),
        ("What is the longest track?", "rank track desc(longest)*"),
        ("Which month had the most payments?", "rank - per(month) desc(payments)*"),
        # listing := LIST? DET? items (OF DET? NP)? | WH NP (AUX | BE) NP VERB* PREP?
        ("List all payments", "list payments"),
        ("show me the names of all students", "list students show:names"),
        ("name and age of each member", "list member show:name show:age"),
        ("Which courses does Mingoz teach?", "list courses [= Mingoz]"),
        ("Which city is each datacenter in?", "list datacenter show:city"),
        ("What product lines do we sell?", "list product lines"),
    ],
)
def test_each_head_reads_its_shape(question, want):
    assert tree(question) == want


# ---------------------------------------------------------------------------------------------
# modifiers: conditions, periods, groups, order


@pytest.mark.parametrize(
    "question, want",
    [
        # compare := LINK* NP? (CMP NUMBER | BETWEEN NUMBER AND NUMBER) UNIT? — a sign is never dropped
        ("how many payments have an amount > 100", "count payments count(payments) [amount > 100]"),
        ("Which students have age <= 17?", "list students [age <= 17]"),
        ("Which hosts have memory ≥ 1024 GB?", "list hosts [memory >= 1024]"),
        ("how mnay students have age != 18", "count students count(students) [age != 18]"),
        ("Instructors with a salary over 115000", "list Instructors [salary > 115000]"),
        ("How many students are at least 19 years old?", "count students count(students) [>= 19]"),
        ("Hosts with between 32 and 48 cores", "list Hosts [cores between 32..48]"),
        ("buildings with 20+ floors", "list buildings [floors >= 20]"),
        ("how many courses are worth 4 credits", "count courses count(courses) [credits = 4]"),
        ("how many films have rating != R", "count films count(films) [rating != R]"),
        # absent := LINK* NEG VERB? DET? NP
        ("Which clients have no payments?", "list clients [payments absent]"),
        ("Clients without an email address", "list Clients [email address absent]"),
        # is := LINK* NEG? DET? NP — a value said of the rows
        ("which clients are churned?", "list clients [= churned]"),
        ("resource pools that are not active", "list resource pools [!= active]"),
        # prep := LINK* VERB* NEG? PREP DET? NP — 'in Berlin', 'from Aberdeen or from Denver'
        ("clients in Berlin", "list clients [= Berlin]"),
        ("how many customers are not from the USA", "count customers count(customers) [!= USA]"),
        ("How many customers belong to store 2?", "count customers count(customers) [store = 2]"),
        ("customers in the state of CA", "list customers [state = CA]"),
        ("How many flights from Aberdeen or from Denver?", "count flights count(flights) [= Aberdeen]"),
        # a verb and its object say which rows: 'serve Italian food'
        ("How many restaurants serve Italian food?", "count restaurants count(restaurants) [= Italian food]"),
        # a verb's 'by' names whose rows (the agent), not a grouping: 'taken by students'
        ("Which courses were taken by students?", "list courses [= students]"),
        # window := DATE_PREP? TIME | BETWEEN TIME AND TIME | OF DET? YEAR NP
        ("How many payments were made in Q4 2024?", "count payments count(payments) <in Q4 2024>"),
        ("Which employees were born between 1960 and 1970?", "list employees <between 1960..1970>"),
        ("list the races of the 2018 season", "list races <in 2018>"),
        ("In 2025, how many clients signed up?", "count clients count(clients) <in 2025>"),
        # group := (GROUP | BY) NP? UNIT? (AND NP)* | BUCKET
        ("How many clients are there per segment?", "count clients count(clients) per(segment)"),
        ("count of faculty by building and sex", "count faculty count(faculty) per(building) per(sex)"),
        ("number of orders via courier", "count orders count(orders) per(courier)"),  # the binder: a value
        ("number of new clients per signup year", "count new clients count(new clients) per(signup year)"),
        ("monthly cost per CPU hour, 2025", "list cost <in 2025> per(month) per(CPU hour)"),
        (
            "number of restaurants serving each type of food",
            "count restaurants count(restaurants) per(type of food)",
        ),
        (
            "How many resource pools does each datacenter have?",
            "count resource pools count(resource pools) per(datacenter)",
        ),
        # order := ORDER BY? NP | DIR | FROM SUPER TO SUPER NP?
        ("list ship names from lightest to heaviest tonnage", "list ship names asc(tonnage)"),
        ("titles of all publications ordered alphabetically", "list publications show:titles asc(alpha)"),
        (
            "average rating per region? Order the results by the region name.",
            "measure - avg(rating) per(region) asc(region name)",
        ),
        ("reviews per month, ordered by the month", "list reviews per(month)"),
        # an order said after a superlative lists every row in it, not the ties for first
        ("Which lakes have the largest areas, ordered from largest to smallest?", "rank lakes desc(areas)"),
        ("Which lakes have the largest areas?", "rank lakes desc(areas)*"),
        # what adds nothing: a unit after 'in', a link back to what is named
        ("Which lakes have the largest areas in square kilometers?", "rank lakes desc(areas)*"),
        (
            "top 5 domains with the most authors associated with them",
            "rank domains desc(authors) limit 5",
        ),
        # show := END (LIST | just)? items — what to show, said after the question
        (
            "who are the employees with the Editor role? just names",
            "list employees show:names [= Editor role]",
        ),
        (
            "the top 5 cities by population? Give both city names and the population.",
            "rank cities show:city names show:population desc(population) limit 5",
        ),
    ],
)
def test_each_modifier_reads_its_part(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # front := (window | group | prep | TIME | NP)+ (',' | ':' | '-') — said first, as a topic
        (
            "In Q3 2025, how many surcharges were for egress overage?",
            "count surcharges count(surcharges) [= egress overage] <in Q3 2025>",
        ),
        (
            "Germany: how many clients are there per segment?",
            "count clients count(clients) [= Germany] per(segment)",
        ),
        ("In Berlin, how many clients are active?", "count clients count(clients) [= Berlin] [= active]"),
        (
            "2024 broken down by month: how many payments were settled?",
            "count payments count(payments) [= settled] <in 2024> per(month)",
        ),
        # no topic after all when the rest reads only without one
        ("clients in Berlin - which are they?", "list clients [= Berlin]"),
        # OF DET? NP prep* ',' SHARE BE NP — the set a share is of, said first
        (
            "Of all the clients in Switzerland, what fraction are smb, as a percentage?",
            "measure clients share() [= Switzerland] [= smb]",
        ),
        # chat fillers and frames
        (
            "quick q - how many surcharges in Q4 2024 were down to late payment fees?",
            "count surcharges count(surcharges) [= late payment fees] <in Q4 2024>",
        ),
        ("hosts w/ at least 768 gb of memory pls", "list hosts [memory >= 768]"),
        # a number's unit, then what it measures, the comparison said before or after
        ("hosts with no less than 2048 GB memory", "list hosts [memory >= 2048]"),
        ("hosts with >= 1536 GB RAM", "list hosts [RAM >= 1536]"),
        ("List the servers with 1024 GB of RAM or more", "list servers [RAM >= 1024]"),
        ("how many hosts have 5 or more cores", "count hosts count(hosts) [cores >= 5]"),
        # with its COUNT NP: a figure for each row listed
        (
            "List every segment with its number of clients located in Spain.",
            "count clients count(clients) [= Spain] per(segment)",
        ),
        (
            "list the datacenters with their average host memory",
            "measure - avg(host memory) per(datacenters)",
        ),
        # turned round: the number each one has, aggregated; 'X by X' groups by X
        (
            "How many cores does an active host have on average, datacenter by datacenter?",
            "measure active host avg(cores) per(datacenter)",
        ),
        (
            "Average core count of retired servers per datacenter",
            "measure retired servers avg(core) per(datacenter)",
        ),
        # the highest figure of the one that has the most, or of any one
        ("how much CPU is the busiest resource pool using right now?", "measure resource pool max(CPU)"),
        (
            "the highest memory usage of any pool in edge-paris-1",
            "measure pool max(memory usage) [= edge-paris-1]",
        ),
        # said last: ranked by the date the words name, every row tied for first
        (
            "which machine in prod-sydney-1 was installed last?",
            "rank machine [= prod-sydney-1] desc(latest installed)*",
        ),
        ("which host went into service first", "rank host asc(earliest went into service)*"),
    ],
)
def test_wordings_of_the_blind_paraphrase_set(question, want):
    assert tree(question) == want


def test_a_number_with_its_unit_is_no_year():
    (v,) = values(tokenize("hosts with at least 2048 GB")).values()
    assert (v.kind, v.value) == ("number", 2048)


def test_an_aggregate_of_a_number_of_rows_is_marked_as_counted():
    """'the average number of payments' is a figure over counts (bind.py declines it); 'the
    maximum number of CPU cores' reads the same way, and the binding pass finds the column; 'the
    total amount of' is no count of rows."""
    (m,) = read("What is the average number of payments per month?").tree.measures  # type: ignore[union-attr]
    assert (m.func, m.of.text if m.of else "", m.counted) == ("avg", "payments", True)
    (m,) = read("What is the total amount of all payments?").tree.measures  # type: ignore[union-attr]
    assert not m.counted


def test_the_or_of_values_keeps_every_value():
    (cond,) = read("How many flights from Aberdeen or from Denver?").tree.conditions  # type: ignore[union-attr]
    assert [p.text for p in (cond.value, *cond.also)] == ["Aberdeen", "Denver"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "question",
    [
        "Which has more flights, Aberdeen or Denver?",  # a comparison between things
        "How many clients are in Lyon today compared to last year?",  # a difference
        "Why did revenue drop?",
    ],
)
def test_what_no_rule_places_gets_no_tree(question):
    assert read(question).tree is None


# ---------------------------------------------------------------------------------------------
# ratios, participles, short forms, figures for each parent


@pytest.mark.parametrize(
    "question, want",
    [
        # ratio := SHARE(ratio) OF side (TO | PER | OVER | DIVIDED BY) side: each side in its place
        (
            "What is the ratio of helpfulness scores to clarity scores for each course ID?",
            "measure - ratio(value(helpfulness scores) / value(clarity scores)) per(course ID)",
        ),
        (
            "ratio of aircraft capacity to its range in miles for each aircraft code",
            "measure - ratio(value(aircraft capacity) / value(range)) per(aircraft code)",
        ),
        (
            "Get the ratio of population per area for each state",
            "measure - ratio(value(population) / value(area)) per(state)",
        ),
        (
            "the ratio of the total number of publications to the total number of keywords per domain",
            "measure - ratio(count(publications) / count(keywords)) per(domain)",
        ),
        ("ratio of maximum range to maximum payload", "measure - ratio(max(range) / max(payload))"),
    ],
)
def test_a_ratio_keeps_its_numerator_and_denominator_in_their_places(question, want):
    assert brief(read(question, Names()).tree) == want


def test_a_ratio_turned_round_is_another_tree():
    one = read("ratio of capacity to range").tree
    other = read("ratio of range to capacity").tree
    assert one is not None and other is not None and one != other


def test_a_verb_that_spells_a_name_with_the_words_before_it_is_part_of_the_name():
    assert "np:helpfulness scores" in cats("ratio of helpfulness scores to clarity")
    assert "verb:scores" in cats("which player scores the most goals")  # no name: a verb


def test_a_participle_before_a_period_names_the_date_it_restricts():
    (w,) = read("How many students were predicted to graduate in the last 10 years?").tree.windows  # type: ignore[union-attr]
    assert w.subject is not None and w.subject.text == "predicted to graduate"
    # said with no period the participle stays a value: 'cancelled' is a status
    assert tree("how many lessons were cancelled") == "count lessons count(lessons) [= cancelled]"


def test_a_word_in_capitals_reads_as_the_column_it_stands_for():
    reading = read("What is the average GPA of students?", Names())
    assert [t.low for t in reading.tokens if t.text == "GPA"] == ["total gpa"]
    assert brief(reading.tree) == "measure students avg(GPA)"
    assert [t.low for t in read("What is the average GPA?").tokens][4] == "gpa"  # no schema: as typed


def test_figures_for_each_parent_group_by_it_and_show_what_is_asked():
    assert (
        tree("Return the name and average rating for each business in new york")
        == "measure business avg(rating) show:name [= new york] per(business)"
    )


@pytest.mark.parametrize(
    "question, want",
    [
        # BE? VERB (LAST | MOST RECENTLY | FIRST) (END | PREP …): a place may follow the adverb
        (
            "Which host was commissioned most recently in prod-london-1?",
            "rank host [= prod-london-1] desc(latest commissioned)*",
        ),
        (
            "which host was installed first at prod-london-1",
            "rank host [= prod-london-1] asc(earliest installed)*",
        ),
        # (MOST RECENTLY | EARLIEST …) PARTICIPLE NP: the participle names the date, not the thing
        (
            "Show me the most recently commissioned node in dev-zurich-1.",
            "rank node [= dev-zurich-1] desc(latest commissioned)*",
        ),
        ("the earliest founded campus", "rank campus asc(earliest founded)*"),
        ("the latest invoice date", "rank invoice date desc(latest)*"),  # no participle: as before
    ],
)
def test_an_adverb_of_time_with_a_participle_ranks_by_the_date_it_names(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # SUPER NP (OF (A | ANY) | AMONG | OF THE NP(plural)) NP: the set the figure is over
        (
            "the highest CPU usage of a resource pool in prod-frankfurt-1",
            "measure resource pool max(CPU usage) [= prod-frankfurt-1]",
        ),
        ("the highest usage of the pools", "measure pools max(usage)"),
        ("the largest usage among the pools", "measure pools max(usage)"),
        ("the largest usage amongst the pools", "measure pools max(usage)"),
        ("the highest usage across pools", "measure pools max(usage)"),
        # a name after 'of' still restricts
        ("the latest payment date of Acme", "measure - max(payment date) [= Acme]"),
    ],
)
def test_a_superlative_figure_of_a_set_is_taken_over_the_set_not_restricted_by_it(question, want):
    assert want in [brief(t) for t in read(question).trees]


@pytest.mark.parametrize(
    "question, want",
    [
        # 'cost' before a comparison is a verb that implies the money column; a noun elsewhere
        ("which products cost less than $600?", "list products [< $600]"),
        ("how many products cost at least 800", "count products count(products) [>= 800]"),
        ("lessons costing between 300 and 400", "list lessons [between 300..400]"),
        ("what is the total cost of usage", "measure usage sum(cost)"),
    ],
)
def test_a_price_verb_before_a_comparison_is_a_verb(question, want):
    assert tree(question) == want
    conditions = read(question).tree.conditions  # type: ignore[union-attr]
    assert all(c.hint.startswith("cost") for c in conditions)


@pytest.mark.parametrize(
    "question, want, verb",
    [
        # a past participle before a period or a time grouping is a verb, not part of the thing
        ("campuses founded before 1900", "list campuses <before 1900>", "founded"),
        ("campuses founded between 1950 and 1970", "list campuses <between 1950..1970>", "founded"),
        ("total degrees awarded per year", "measure - sum(degrees) per(year)", "awarded"),
        # a money verb compares the money column; a noun in '-eed' is no participle
        ("customers who owe more than 9000", "list customers [> 9000]", ""),
        ("the speed before 2000", "list speed <before 2000>", ""),
    ],
)
def test_a_participle_before_a_period_is_a_verb_not_part_of_the_thing(question, want, verb):
    """A later reading: the first keeps the participle in the phrase, for a stored value
    ('payments failed in 2025': the status); the binder tries the verb reading when it fails."""
    assert want in [brief(t) for t in read(question).trees]


def test_a_share_keeps_its_participle_as_what_it_counts():
    assert [brief(t) for t in read("What percentage of payments declined in 2025?").trees] == [
        "measure payments declined share() <in 2025>"
    ]


@pytest.mark.parametrize(
    "question, want",
    [
        # AGG AUX NP ((PREP) NP)? VERB: who did it, and where they are, restrict what is added up
        (
            "How much did clients in Paris spend on usage in 2024?",
            "measure usage sum(spend) [= clients] [= Paris] <in 2024>",
        ),
        ("How much did Glacier Payments spend on usage?", "measure usage sum(spend) [= Glacier Payments]"),
    ],
)
def test_who_spent_and_where_restrict_the_amount(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # 'ended up' is a copula ('were'); 'rack up' a verb of several words; 'in total' after a
        # total adds nothing
        ("how many payments ended up settled?", "count payments count(payments) [= settled]"),
        (
            "2024 broken down by month: how many payments ended up settled?",
            "count payments count(payments) [= settled] <in 2024> per(month)",
        ),
        (
            "In 2024, how much usage cost did our public sector clients rack up in total?",
            "measure - sum(usage cost) [= public sector clients] <in 2024>",
        ),
        ("how much did clients in Paris spend in total", "measure - sum(spend) [= clients] [= Paris]"),
        ("average cost in total", "—"),  # 'in total' of an average is not read
    ],
)
def test_copulas_verbs_and_totals_said_in_other_words(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # TOP NUMBER said last after a ranking: how many of the ranked rows, in its direction
        (
            "which pools consumed teh most cpu hours in 2025? top 5 pls",
            "rank pools <in 2025> desc(cpu hours) limit 5",
        ),
        ("which pools consumed the least cpu hours in 2025? top 5", "—"),
    ],
)
def test_a_limit_said_after_a_ranking(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # what to show said after the question, with a filler after it; after 'last' too
        (
            "most recently commissioned server at prod-london-1 - name and date please",
            "rank server show:name show:date [= prod-london-1] desc(latest commissioned)*",
        ),
        (
            "which host was commissioned last - name and date",
            "rank host show:name show:date desc(latest commissioned)*",
        ),
    ],
)
def test_what_to_show_said_after_a_ranking_by_date(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # SUPER NP TO (VERB | EVENT …): the infinitive names the event whose date ranks the rows
        (
            "latest host to enter service at edge-paris-1",
            "rank host [= edge-paris-1] desc(latest enter service)*",
        ),
        ("the newest client to sign up", "rank client desc(latest sign up)*"),
        # to whom: a restriction, never a date
        ("the latest payment to Acme", "rank payment [= Acme] desc(latest)*"),
    ],
)
def test_an_infinitive_after_a_superlative_names_the_event_ranked_by(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # front := piece (',' | ':' | '-') (piece (',' | ':' | '-'))*: several topics said first
        (
            "enterprise segment, 2026 - total usage cost?",
            "measure - sum(usage cost) [= enterprise segment] <in 2026>",
        ),
        ("In 2025, how many clients?", "count clients count(clients) <in 2025>"),
    ],
)
def test_several_topics_said_in_front(question, want):
    assert tree(question) == want


# ---------------------------------------------------------------------------------------------
# kinds of question the first reader (walk.py) answered, each read by a rule of its own


@pytest.mark.parametrize(
    "question, want",
    [
        # 'in total' after a count: the count already asked for
        ("how many invoices are there in total", "count invoices count(invoices)"),
        # HAVE END after a figure over a set: the set's own figure
        ("what is the highest salary any instructor has", "measure instructor max(salary)"),
        # HAVE GROUP: one count per value ('how many X have each Y')
        ("how many hosts have each rack number", "count hosts count(hosts) per(rack number)"),
        # HAVE | WITH NUMBER NP: the figure is that number
        ("which pools ever had 0 spare hosts?", "list pools [spare hosts = 0]"),
        ("hosts with 64 cores", "list hosts [cores = 64]"),
        # a priced word after a determiner is the noun, compared ('have a cost over 20')
        ("how many orders have a cost over 20?", "count orders count(orders) [cost > 20]"),
        ("products that cost less than 600", "list products [< 600]"),
    ],
)
def test_links_that_add_nothing_and_figures_said_after_have(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # a participle before LAST | FIRST | MOST RECENTLY names the date that ranks the rows
        ("which client signed up most recently?", "rank client desc(latest signed up)*"),
        ("which ship launched first", "rank ship asc(earliest launched)*"),
        # items OF (top | DET? NUMBER? SUPER NP): the rows ranked, showing what is named
        ("the names of the 5 oldest hosts", "rank hosts show:names asc(oldest) limit 5"),
        ("the name of the top client by total payments", "rank client show:name desc(sum(payments)) limit 1"),
        # (REL | WH | WITH) … DET SUPER key after the rows: ranked, every row tied for first …
        ("the names of the students who got the most awards", "rank students show:names desc(awards)*"),
        # … or, what to show said of one thing, that one row
        (
            "the title of the album that has received the highest number of awards",
            "rank album show:title desc(count(awards)) limit 1",
        ),
        (
            "the name and city of the client with the highest balance",
            "rank client show:name show:city desc(balance) limit 1",
        ),
        # the head's key said again after an order keeps the head's direction
        (
            "which authors wrote the most books, ordered by the number of books they have written",
            "rank authors desc(count(books))",
        ),
    ],
)
def test_rankings_said_after_the_rows(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # BE? VERB+ (WITH | PREP) GROUP: the verb links the rows to what they are counted for
        ("How many tracks are linked to each album?", "count tracks count(tracks) per(album)"),
        ("the total number of orders associated with each client", "count orders count(orders) per(client)"),
        # a verb with no preposition before a grouping is the event that dates the rows
        ("How many clients signed up per month?", "count clients count(clients) per(month)"),
        # OF DET? UNIT VALUE: 'each month of the year 2024'
        (
            "How many invoices were issued in each month of the year 2024?",
            "count invoices count(invoices) <in 2024> per(month)",
        ),
        # WITH DET? NP QUOTED: the column and the value said of it
        (
            'the names of the members who joined the club with the name "Chess"',
            'list members show:names [= club] [name = "Chess"]',
        ),
    ],
)
def test_groups_periods_and_values_said_with_a_link(question, want):
    assert tree(question) == want


def test_an_unsupported_word_the_schema_names_a_column_by_is_that_column():
    """'duration' asks for a computed duration unless a column is called so: then it is read."""

    class Durations(Names):
        def spells(self, words: str) -> bool:
            return words in ("duration", "flight duration")

    assert brief(read("what was the longest flight duration?", Durations()).tree) == (
        "rank flight duration desc(longest)*"
    )
    assert read("what was the longest flight duration?").tree is None  # no such column: declined


@pytest.mark.parametrize(
    "question, want",
    [
        # items with no owner: the columns, of the rows the restrictions after them name
        (
            "give me the names and prices with a discount code",
            "list - show:names show:prices [= discount code]",
        ),
        # WH NP EXIST NP IN: the values of a column the rows are in, each once
        ("what countries do we have offices in", "list offices show:countries"),
        # AND COUNT NP … BACK … VERB: one count for each row listed …
        (
            "Which clients placed orders for products in the Garden category and how many orders have they placed?",
            "count orders count(orders) [= orders] [= products] [= Garden category] per(clients)",
        ),
        # … or the figure that ranks asked for again (a ranking shows it)
        (
            "Which pilot flew the most missions in 2020 and how many missions did he/she fly that year?",
            "rank pilot <in 2020> desc(missions)*",
        ),
    ],
)
def test_what_to_show_said_around_the_rows(question, want):
    assert tree(question) == want


def test_a_figure_asked_for_again_must_be_the_one_that_ranks():
    assert read("which pilot flew the most missions and how many hours did he fly").tree is None


@pytest.mark.parametrize(
    "question, want",
    [
        # WITH? QUOTED TEXT(in its name …) | TEXT QUOTED: part of a stored name, as quoted
        ('how many journals with "Nature" in the name', 'count journals count(journals) [contains "Nature"]'),
        ('which labels start with "Blue"', 'list labels [prefix "Blue"]'),
        # a verb and 'with' before a thing link the rows counted to it
        (
            'the number of tags associated with threads in the forum with "Rust" in its name',
            'count tags count(tags) [= threads] [= forum] [contains "Rust"]',
        ),
    ],
)
def test_text_said_in_quotes_as_part_of_a_name(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # (WITH | HAVE | REL)? (DET? NP)? TEXT NP: the words after the cue, unquoted
        ("titles of albums containing Blue", "list albums show:titles [contains Blue]"),
        ("which rivers have a name starting with Rio", "list rivers [name prefix Rio]"),
        ("list bakeries whose name ends with Bros", "list bakeries [name suffix Bros]"),
        # HAVE NP TEXT(in the name …)
        ("which ferries have Star in the name?", "list ferries [contains Star]"),
        # said right after the thing, before a ranking
        (
            "which harbours starting with Port serve the most ferries",
            "rank harbours [prefix Port] desc(ferries)*",
        ),
    ],
)
def test_text_said_unquoted_as_part_of_a_name(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # ORDER? FROM DIR NP?: the key said before ('sorted by …') keeps, the direction is the one said
        (
            "list the bakery names sorted by number of ovens from fewest to most",
            "list bakery names asc(count(ovens))",
        ),
        (
            "list the bakery names sorted by number of ovens from most to fewest",
            "list bakery names desc(count(ovens))",
        ),
        # the key said after the direction; a count asked for and said again is that count
        (
            "for each harbour, how many ferries are there? sort from fewest to most ferries",
            "count ferries count(ferries) per(harbour) asc(count(ferries))",
        ),
        # ORDER? FROM SUPER NP TO SUPER: the key said inside
        (
            "for each harbour, show the harbour id and the number of ferries, sorted from fewest ferries to most",
            "measure - count(ferries) show:harbour id per(harbour) asc(count(ferries))",
        ),
    ],
)
def test_from_one_end_to_the_other_said_after_a_key(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # WHEN (AUX | BE) DET? SUPER(latest | earliest) NP VERB*: that date of the rows
        ("when did the latest shipment happen?", "measure shipment max(date)"),
        ("when was the earliest booking made", "measure booking min(date)"),
    ],
)
def test_when_the_latest_or_earliest_thing_happened(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        # 'since' keeps the period said, 'after' does not
        ("how many ferries were launched since 2001", "count ferries count(ferries) <since 2001>"),
        ("ferries launched after 2001", "list ferries launched <after 2001>"),
        # TIME DATE_PREP(since | until): said after the period
        ("ferries launched 2001 onwards", "list ferries launched <since 2001>"),
        ("ferries launched in 2001 or earlier", "list ferries launched <until 2001>"),
        # a four-digit number after before, after or since is a year however early
        ("lighthouses built before 1790", "list lighthouses built <before 1790>"),
        ("lighthouses with 1790 keepers", "list lighthouses [keepers = 1790]"),  # no date word: a number
    ],
)
def test_a_period_said_with_whether_it_is_kept(question, want):
    assert tree(question) == want


def test_the_date_said_by_its_name_then_a_period_is_that_dates_period():
    """(HAVE | WITH) DET? NP OF TIME (or later)? — 'have a launch year of 1990 or later'."""

    class Launches(Names):
        def spells(self, words: str) -> bool:
            return words in ("launch year", "ferries")

    assert brief(read("how many ferries have a launch year of 1990 or later", Launches()).tree) == (
        "count ferries count(ferries) <since 1990>"
    )
    window = read("ferries with a launch year of 1990", Launches()).tree.windows[0]  # type: ignore[union-attr]
    assert (window.prep, window.subject.text if window.subject else "") == ("in", "launch year")


def test_how_many_different_values_across_a_set_counts_over_all_of_it():
    """COUNT DISTINCT NP EXIST? (ACROSS | AMONG) NP END: the values of all of them, not per one."""
    assert tree("how many different hull colors are there across ferries?") == (
        "count ferries count(distinct hull colors)"
    )
    assert "per(ferry)" in tree("how many different hull colors are there per ferry?")


@pytest.mark.parametrize(
    "question, want",
    [
        # LIST GROUP(each | every) NP (AND (ITS | THEIR)? NP)+: the columns named, of each row
        ("list each ferry and its captain", "list - show:ferry show:captain"),
        # items OF GROUP(of each): each one's columns, as 'the names of all captains'
        ("show the first and last name of each captain", "list captain show:names"),
        ("show the tonnage of each ferry", "list ferry show:tonnage"),
        # ORDER then a direction from one end to the other around its key
        (
            "list the ferry names ordered from the earliest launched to the latest",
            "list ferry names asc(launched)",
        ),
        # ORDER BY VERB: the date the verb names
        ("captain names sorted by born", "list captain names asc(born)"),
    ],
)
def test_each_row_listed_and_how_it_is_ordered(question, want):
    assert tree(question) == want


def test_a_direction_in_ages_said_after_a_key_is_kept_as_said():
    """'sorted by born, youngest first': the binder turns ages into dates, so the words are kept."""
    order = read("captain names sorted by born, youngest first").tree.order  # type: ignore[union-attr]
    assert order is not None and order.hint == "youngest first"


@pytest.mark.parametrize(
    "question, want",
    [
        # LIST? BE? DET? DISTINCT listing: each value once
        ("list the different hull colors of ferries", "list ferries show:hull colors"),
        ("what are the unique harbour cities?", "list harbour cities"),
        # ','? DISTINCT END after a listing
        ("hull colors of ferries, no duplicates", "list ferries show:hull colors"),
        # DET? SUPER NP beside a figure: its aggregate (the binder reads 'youngest' of an age as MIN)
        (
            "the average tonnage and the heaviest tonnage of ferries",
            "measure ferries avg(tonnage) max(tonnage)",
        ),
    ],
)
def test_each_value_once_and_a_superlative_beside_a_figure(question, want):
    got = read(question).tree
    assert brief(got) == want and (got is not None and (got.distinct or got.ask == "measure"))


def test_whose_column_is_one_value_or_another_is_either():
    """(WITH | REL) DET? NP BE NP (OR NP)+ — 'whose hull color is Red or Blue': one condition on
    the column said, any of the values."""
    got = read("names of ferries whose hull color is Red or Blue").tree
    assert got is not None
    [cond] = got.conditions
    assert (cond.subject.text if cond.subject else "", cond.value.text, [p.text for p in cond.also]) == (  # type: ignore[union-attr]
        "hull color",
        "Red",
        ["Blue"],
    )


# a follow-up: what it changes in the last question (read_change, continues)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("and only those in Germany?", "list - [= Germany]"),  # prep, the follow-on words taken off
        ("what about France?", "list - [= France]"),  # bare: a value said alone
        ("and only the failed ones?", "list - [= failed]"),  # 'the … ones' points back
        ("what about 2024?", "list - <in 2024>"),  # bare: a period said alone
        ("just Q3 2025", "list - <in Q3 2025>"),
        ("per country instead", "list - per(country)"),  # group; 'instead' is no part of the name
        ("how about by month", "list - per(month)"),
        ("between 2023 and 2024 instead", "list - <between 2023..2024>"),
        ("now show only those with cost over 100", "list - [> 100]"),  # compare, with its verb
    ],
)
def test_a_follow_up_reads_as_the_conditions_periods_and_groupings_it_changes(message, expected):
    assert brief(read_change(message).tree) == expected


@pytest.mark.parametrize(
    "message",
    ["and the top 5 by cost?", "what is the average amount?", "and how many are there?", "sorted by name"],
)
def test_a_follow_up_that_ranks_or_measures_is_no_change(message):
    reading = read_change(message)
    assert reading.tree is None
    assert any(x.cat in ("top", "agg", "count", "order") for x in reading.lexemes)


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("and only those in Germany?", True),  # a follow-on word first
        ("what about 2024?", True),
        ("the failed ones", True),  # points at the last answer's rows
        ("how many payments are there?", False),
        ("what is the average amount?", False),  # no word says it: the schema decides (answer.py)
        ("per country instead", False),
    ],
)
def test_a_message_says_it_continues_the_last_answer_by_its_first_word_or_by_pointing(message, said):
    assert continues(message) is said


@pytest.mark.parametrize(
    "question",
    [
        "how many bridges has each engineer built?",  # 'has' an auxiliary: the verb is the engineer's
        "how many songs has each composer composed?",
        "all details of the river with the largest basin",  # every column: no rule reads it yet
        "all the information of the three longest rivers",
    ],
)
def test_wording_no_rule_reads_yet_gets_no_tree(question):
    assert read(question).tree is None


def test_has_each_before_a_noun_is_what_the_rows_have():
    assert tree("how many hosts have each rack number") == "count hosts count(hosts) per(rack number)"


def test_the_figure_a_ranking_ranks_by_asked_for_again_is_shown():
    asked = read(
        "What is the name of the author who has written the most books, and how many books have they written?"
    )
    alone = read("What is the name of the author who has written the most books?")
    assert brief(asked.tree) == brief(alone.tree) == "rank author show:name desc(books) limit 1"
    assert alone.tree is not None and alone.tree.only_shown  # the name alone
    assert asked.tree is not None and not asked.tree.only_shown  # the name and the count


@pytest.mark.parametrize(
    "question, want",
    [
        # rows described first, then counted: their count
        (
            "hosts with more than 100 cpu cores - how many are there?",
            "count hosts count(hosts) [cpu cores > 100]",
        ),
        ("clients in Berlin: how many?", "count clients count(clients) [= Berlin]"),
        ("clients in Berlin - which are they?", "list clients [= Berlin]"),  # a list stays a list
        # 'rank' leads into the ranking the rest says; alone it is no ranking
        (
            "Rank the 6 datacentres with the most CPU hours consumed during 2026",
            "rank datacentres <in 2026> desc(CPU hours) limit 6",
        ),
        ("rank the top 5 clients by revenue", "rank clients desc(revenue) limit 5"),
        ("Rank the 6 datacentres", "—"),
        # chat forms of politeness: 'could you', 'can u' lead in and say nothing
        (
            "could u tell me the number of failed payments in Q1 2025?",
            "count failed payments count(failed payments) <in Q1 2025>",
        ),
        ("can you give me the average usage cost per segment", "measure - avg(usage cost) per(segment)"),
    ],
)
def test_rows_counted_after_ranking_verbs_and_polite_leads(question, want):
    assert tree(question) == want


# -- listings and rankings said around the thing they are about (issue 33) ---------------------


@pytest.mark.parametrize(
    "question, want",
    [
        ("what are the distinct genres of the films?", "list films show:genres"),
        ("the different colours of cars", "list cars show:colours"),
        ("which unique brands appear on receipts", "list brands [= receipts]"),
        (
            "show the distinct titles of books that have a hardcover edition",
            "list books show:titles [= hardcover edition]",
        ),
    ],
)
def test_distinct_before_a_listing_lists_each_value_once(question, want):
    got = read(question).tree
    assert brief(got) == want
    assert got is not None and got.distinct


@pytest.mark.parametrize(
    "question, want",
    [
        (
            "Which region has the warehouse with the largest floor area?",
            "rank warehouse show:region desc(floor area) limit 1",
        ),
        ("which team has the player with the lowest salary", "rank player show:team asc(salary) limit 1"),
        (
            "which school has the teacher who has the most pupils",
            "rank teacher show:school desc(pupils) limit 1",
        ),
    ],
)
def test_what_the_one_ranked_first_has_is_shown(question, want):
    assert tree(question) == want


def test_a_plural_after_has_is_no_single_ranked_row():
    assert "limit 1" not in tree("which region has warehouses with the largest floor area")


@pytest.mark.parametrize(
    "question, want",
    [
        ("what genre are the bands starting with 'Black' from?", "list bands show:genre [prefix 'Black']"),
        (
            'which city are the shops whose names start with "Deli" in?',
            'list shops show:city [prefix "Deli"]',
        ),
        ("what city are the stations with more than 20 docks in?", "list stations show:city [docks > 20]"),
    ],
)
def test_what_is_asked_of_rows_said_between_a_noun_and_its_preposition(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        (
            "list the titles of all songs in descending alphabetical order",
            "list songs show:titles desc(alpha)",
        ),
        ("cities in ascending alphabetical order", "list cities asc(alpha)"),
    ],
)
def test_a_direction_before_alphabetical_says_which_way(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        ("what is the price of the dish named risotto?", "list dish show:price [= risotto]"),
        ("the age of the horse called Thunder", "list horse show:age [= Thunder]"),
        ("films that are titled Jaws", "list films [= Jaws]"),
    ],
)
def test_a_name_said_after_named_or_called_says_which_row(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        ("what is the name of the shop that opened earliest?", "rank shop show:name asc(earliest opened)*"),
        ("the player with the top rating", "rank player desc(rating)*"),
    ],
)
def test_a_relative_clause_or_top_ranks_the_rows(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        ("how many per genre", "count - count(how many) per(genre)"),
        ("how many for each colour?", "count - count(how many) per(colour)"),
        (
            "for books with more than 300 pages, how many per genre?",
            "count books count(how many) [pages > 300] per(genre)",
        ),
        ("for hosts without a pool, what is the average memory?", "measure hosts avg(memory) [pool absent]"),
    ],
)
def test_a_count_by_a_grouping_alone_and_the_rows_said_first_after_for(question, want):
    assert tree(question) == want


def test_rows_said_first_after_for_do_not_replace_rows_the_head_names():
    assert (
        tree("for clients in Berlin, how many payments?")
        == "count payments count(payments) [= clients] [= Berlin]"
    )


@pytest.mark.parametrize(
    "question, want",
    [
        ("book titles and prices, cheapest prices first", "list - show:book titles show:prices asc(prices)"),
        ("song titles and lengths", "list - show:song titles show:lengths"),
    ],
)
def test_columns_said_with_no_rows_after_them(question, want):
    assert tree(question) == want


def test_a_name_spelled_with_the_first_words_of_a_cue_is_read_as_that_name():
    """'fax number of Bo': the schema's 'fax number', not a count of Bo ('number of')."""
    reading = read("What is the fax number of Bo?", Names())
    assert brief(reading.tree) == "list Bo show:fax number"


@pytest.mark.parametrize(
    "question, want",
    [
        ("invoices where the amount is over 500", "list invoices [amount > 500]"),
        ("how many trips are on record?", "count trips count(trips)"),
        ("the average fare by month of departure", "measure - avg(fare) per(departure month)"),
        ("number of loans per year of the signing", "count loans count(loans) per(signing year)"),
    ],
)
def test_where_before_a_condition_words_that_add_nothing_and_a_unit_of_a_date(question, want):
    assert tree(question) == want


def test_a_code_in_capitals_or_words_joined_by_of_read_as_the_name_they_spell():
    """'region OR': the stored code, not the word 'or'; 'the places of birth': one column."""
    assert (
        brief(read("How many clinics are in region OR?", Names()).tree)
        == "count clinics count(clinics) [= region OR]"
    )
    assert brief(read("the places of birth of the female players", Names()).tree) == (
        "list female players show:places of birth"
    )
    assert (
        brief(read("clinics in region or state", Names()).tree)
        != "count clinics count(clinics) [= region OR]"
    )


@pytest.mark.parametrize(
    "question, want",
    [
        ("average fare by drop-off month", "measure - avg(fare) per(drop off month)"),
        ("how many sign-ups in 2024", "count sign ups count(sign ups) <in 2024>"),
        ("parcels with a pick-up in Leeds", "list parcels [= pick up] [= Leeds]"),
    ],
)
def test_a_preposition_hyphenated_to_a_noun_is_part_of_it(question, want):
    assert tree(question) == want


@pytest.mark.parametrize(
    "question, want",
    [
        ("actors who appear in more than 3 films", "list actors [films > 3]"),
        ("songs that are on 2+ albums", "list songs [albums >= 2]"),
        ("players who played in at least 5 games", "list players [games >= 5]"),
        ("clients in 2024", "list clients <in 2024>"),
    ],
)
def test_how_many_other_rows_a_row_is_in_compared(question, want):
    assert tree(question) == want
