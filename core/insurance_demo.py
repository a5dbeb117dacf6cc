"""A second demo database: a property & casualty insurer, modelled the way enterprise data models are.

The cloud demo (core/demo.py) exercises Lucy's textbook patterns. This one exercises the
patterns that make joins hard in enterprise models, with no gold join in reach of a plain
foreign-key walk:

- supertype / subtype: `policy` and `broker_agreement` are `agreement`s — their primary key is a
  foreign key to agreement_id — and `person` / `organization` are `party`s;
- party roles: `agreement_party_role` says which party is the agent ('AG'), the policy holder
  ('PH'), the insured ('IN'), the broker ('BR') or the underwriter ('UW') of an agreement;
  `claim_party_role` does the same for claims, its codes explained by the code table
  `claim_role_type` (claimant, adjuster, witness, attorney, repairer);
- a typed fact: every `claim_amount` is exactly one of loss payment, loss reserve, expense payment
  or expense reserve, each a one-to-one table keyed by claim_amount_id;
- parallel paths: `policy_amount` reaches `policy` directly and through `policy_coverage_detail`;
  so does `claim`;
- a self-reference: a policy renews an earlier policy;
- a declared foreign key to a table that is not in the database (claim → claims_office), which
  Askbase must skip with a warning, and four foreign keys nobody declared (premium_payment →
  policy_amount, insured_vehicle → policy, claim → catastrophe, loss_payment → party as payee),
  which inference must find — and next to them dates, amounts and codes it must never join on.

The rows come from one `random.Random(SEED)` stream consumed in a fixed order (no clock, no set
iteration), so every machine builds the same file, written as core/demo_file.py writes every demo.

    python -m core.insurance_demo [--out PATH]     # build and print row counts
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from core import demo_file
from core.demo_file import Rows
from core.settings import CONFIG_PACKAGE, package_file

INSURANCE_PATH_NAME = "insurance.sqlite"
INSURANCE_VERSION = 1
CATALOG_PATH = package_file(CONFIG_PACKAGE, "insurance_catalog.yaml")  # shipped in config/ as package data
SEED = 20250214
FIRST_DAY = date(2022, 1, 1)
LAST_DAY = date(2025, 12, 31)

SCHEMA = """
CREATE TABLE party (  -- Askbase insurance demo version {version}
    party_id INTEGER PRIMARY KEY,
    party_type TEXT NOT NULL,
    party_name TEXT NOT NULL,
    email TEXT,
    city TEXT NOT NULL,
    country_code TEXT NOT NULL,
    created_date DATE NOT NULL
);
CREATE TABLE person (
    party_id INTEGER PRIMARY KEY REFERENCES party (party_id),
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    birth_date DATE,
    gender TEXT
);
CREATE TABLE organization (
    party_id INTEGER PRIMARY KEY REFERENCES party (party_id),
    legal_name TEXT NOT NULL,
    registration_number TEXT NOT NULL UNIQUE,
    industry TEXT NOT NULL
);
CREATE TABLE agreement (
    agreement_id INTEGER PRIMARY KEY,
    agreement_type TEXT NOT NULL,
    signed_date DATE NOT NULL,
    agreement_status TEXT NOT NULL
);
CREATE TABLE policy (
    policy_id INTEGER PRIMARY KEY REFERENCES agreement (agreement_id),
    policy_number TEXT NOT NULL UNIQUE,
    line_of_business TEXT NOT NULL,
    effective_date DATE NOT NULL,
    expiration_date DATE NOT NULL,
    policy_status TEXT NOT NULL,
    renewed_policy_id INTEGER REFERENCES policy (policy_id)
);
CREATE TABLE broker_agreement (
    broker_agreement_id INTEGER PRIMARY KEY REFERENCES agreement (agreement_id),
    commission_rate DECIMAL(5, 4) NOT NULL,
    territory TEXT NOT NULL
);
CREATE TABLE agreement_party_role (
    agreement_id INTEGER NOT NULL REFERENCES agreement (agreement_id),
    party_id INTEGER NOT NULL REFERENCES party (party_id),
    party_role_code TEXT NOT NULL,
    effective_date DATE NOT NULL,
    end_date DATE,
    PRIMARY KEY (agreement_id, party_id, party_role_code)
);
CREATE TABLE coverage (
    coverage_id INTEGER PRIMARY KEY,
    coverage_code TEXT NOT NULL UNIQUE,
    coverage_name TEXT NOT NULL,
    line_of_business TEXT NOT NULL
);
CREATE TABLE policy_coverage_detail (
    policy_coverage_detail_id INTEGER PRIMARY KEY,
    policy_id INTEGER NOT NULL REFERENCES policy (policy_id),
    coverage_id INTEGER NOT NULL REFERENCES coverage (coverage_id),
    coverage_limit DECIMAL(12, 2) NOT NULL,
    deductible DECIMAL(10, 2) NOT NULL,
    effective_date DATE NOT NULL
);
CREATE TABLE policy_amount (
    policy_amount_id INTEGER PRIMARY KEY,
    policy_id INTEGER NOT NULL REFERENCES policy (policy_id),
    policy_coverage_detail_id INTEGER REFERENCES policy_coverage_detail (policy_coverage_detail_id),
    amount_type TEXT NOT NULL,
    amount DECIMAL(12, 2) NOT NULL,
    effective_date DATE NOT NULL
);
CREATE TABLE premium_payment (
    premium_payment_id INTEGER PRIMARY KEY,
    policy_amount_id INTEGER NOT NULL,
    payer_party_id INTEGER NOT NULL REFERENCES party (party_id),
    paid_date DATE NOT NULL,
    amount_paid DECIMAL(12, 2) NOT NULL
);
CREATE TABLE insured_vehicle (
    vehicle_id INTEGER PRIMARY KEY,
    policy_id INTEGER NOT NULL,
    vin TEXT NOT NULL UNIQUE,
    make TEXT NOT NULL,
    model TEXT NOT NULL,
    model_year INTEGER NOT NULL
);
CREATE TABLE catastrophe (
    catastrophe_id INTEGER PRIMARY KEY,
    catastrophe_name TEXT NOT NULL UNIQUE,
    catastrophe_type TEXT NOT NULL,
    start_date DATE NOT NULL,
    affected_region TEXT NOT NULL
);
CREATE TABLE claim (
    claim_id INTEGER PRIMARY KEY,
    claim_number TEXT NOT NULL UNIQUE,
    policy_id INTEGER NOT NULL REFERENCES policy (policy_id),
    policy_coverage_detail_id INTEGER NOT NULL REFERENCES policy_coverage_detail (policy_coverage_detail_id),
    catastrophe_id INTEGER,
    vehicle_id INTEGER REFERENCES insured_vehicle (vehicle_id),
    loss_date DATE NOT NULL,
    reported_date DATE NOT NULL,
    claim_status TEXT NOT NULL,
    loss_description TEXT NOT NULL,
    handling_office_id INTEGER REFERENCES claims_office (office_id)
);
CREATE TABLE claim_role_type (
    role_code TEXT PRIMARY KEY,
    role_name TEXT NOT NULL,
    role_description TEXT NOT NULL
);
CREATE TABLE claim_party_role (
    claim_id INTEGER NOT NULL REFERENCES claim (claim_id),
    party_id INTEGER NOT NULL REFERENCES party (party_id),
    role_code TEXT NOT NULL REFERENCES claim_role_type (role_code),
    PRIMARY KEY (claim_id, party_id, role_code)
);
CREATE TABLE claim_amount (
    claim_amount_id INTEGER PRIMARY KEY,
    claim_id INTEGER NOT NULL REFERENCES claim (claim_id),
    amount DECIMAL(12, 2) NOT NULL,
    amount_date DATE NOT NULL,
    currency_code TEXT NOT NULL
);
CREATE TABLE loss_payment (
    claim_amount_id INTEGER PRIMARY KEY REFERENCES claim_amount (claim_amount_id),
    payee_party_id INTEGER NOT NULL,
    payment_method TEXT NOT NULL
);
CREATE TABLE loss_reserve (
    claim_amount_id INTEGER PRIMARY KEY REFERENCES claim_amount (claim_amount_id),
    reserve_reason TEXT NOT NULL
);
CREATE TABLE expense_payment (
    claim_amount_id INTEGER PRIMARY KEY REFERENCES claim_amount (claim_amount_id),
    expense_category TEXT NOT NULL,
    vendor_party_id INTEGER REFERENCES party (party_id)
);
CREATE TABLE expense_reserve (
    claim_amount_id INTEGER PRIMARY KEY REFERENCES claim_amount (claim_amount_id),
    expense_category TEXT NOT NULL
);
"""

# fmt: off
FIRST_NAMES = (
    "Amelia", "Bastian", "Chiara", "Dmitri", "Elif", "Felix", "Greta", "Hamza", "Ines", "Jonas", "Kaia",
    "Luca", "Maren", "Nikos", "Olga", "Pablo", "Quinn", "Rosa", "Soren", "Tamsin", "Ulrich", "Vera",
    "Wiebke", "Xavier", "Yara", "Zeno", "Anouk", "Bruno", "Carla", "Dario", "Emil", "Frida", "Gustav",
    "Hanna", "Ivo", "Jule", "Karim", "Lotte", "Milan", "Nora",
)
LAST_NAMES = (
    "Achterberg", "Brandt", "Castellano", "Dvorak", "Eriksen", "Fontaine", "Gruber", "Hollander",
    "Ivanova", "Jansen", "Kowalczyk", "Lindqvist", "Marchetti", "Novak", "Oosterhuis", "Petrov",
    "Quaresma", "Rossi", "Schubert", "Tanaka", "Urban", "Vogel", "Wagner", "Young", "Zielinski",
    "Albrecht", "Bauer", "Costa", "Dupont", "Engel",
)
ORG_WORDS = (
    "Harbor", "Granite", "Northwind", "Lakeside", "Summit", "Riverside", "Copper", "Beacon", "Meadow",
    "Falcon", "Orchard", "Pioneer", "Redwood", "Silverline", "Tideway",
)
ORG_KINDS = (
    ("Logistics", "transport"), ("Bakery", "food"), ("Dental Clinic", "health"), ("Builders", "construction"),
    ("Software", "technology"), ("Hotels", "hospitality"), ("Farms", "agriculture"), ("Brokers", "insurance"),
)
CITIES = (
    ("Hamburg", "DE"), ("Köln", "DE"), ("München", "DE"), ("Wien", "AT"), ("Zürich", "CH"),
    ("Rotterdam", "NL"), ("Lyon", "FR"), ("Porto", "PT"), ("Göteborg", "SE"), ("Gdańsk", "PL"),
)
# code, name, line of business, limit range, deductible choices
COVERAGES = (
    ("AUTO-LIAB", "Motor third-party liability", "auto", (500_000, 5_000_000), (0, 250)),
    ("AUTO-COLL", "Collision damage", "auto", (10_000, 80_000), (250, 500, 1000)),
    ("AUTO-THEFT", "Vehicle theft", "auto", (10_000, 80_000), (150, 300)),
    ("AUTO-GLASS", "Windscreen and glass", "auto", (1_000, 5_000), (0, 100)),
    ("HOME-BLDG", "Buildings", "home", (150_000, 900_000), (500, 1000, 2500)),
    ("HOME-CONT", "Home contents", "home", (20_000, 150_000), (250, 500)),
    ("HOME-WATER", "Water damage", "home", (10_000, 100_000), (500, 1000)),
    ("HOME-NAT", "Natural hazards (storm, flood, hail)", "home", (50_000, 600_000), (1000, 2500)),
    ("BUS-PROP", "Commercial property", "business", (200_000, 3_000_000), (2500, 5000)),
    ("BUS-LIAB", "General liability", "business", (1_000_000, 10_000_000), (1000, 5000)),
    ("BUS-INTR", "Business interruption", "business", (50_000, 1_000_000), (5000,)),
    ("TRAV-MED", "Travel medical expenses", "travel", (50_000, 1_000_000), (0, 150)),
)
LINES = ("auto", "auto", "auto", "home", "home", "business", "travel")
MAKES = (
    ("Volkswagen", ("Golf", "Passat", "ID.4")), ("Toyota", ("Corolla", "Yaris", "RAV4")),
    ("Skoda", ("Octavia", "Fabia")), ("BMW", ("320d", "X3")), ("Renault", ("Clio", "Megane")),
    ("Volvo", ("XC40", "V60")), ("Fiat", ("500", "Panda")),
)
CATASTROPHES = (
    ("Storm Brigitta", "windstorm", date(2022, 2, 17), "North Sea coast"),
    ("Rhine Valley Flood", "flood", date(2022, 7, 14), "Rhineland"),
    ("Hailstorm Odile", "hail", date(2023, 6, 22), "Bavaria"),
    ("Storm Kasimir", "windstorm", date(2023, 10, 20), "Baltic coast"),
    ("Alpine Floods 2024", "flood", date(2024, 5, 31), "Alpine region"),
    ("Provence Wildfire", "wildfire", date(2024, 8, 9), "Southern France"),
    ("Hailstorm Theresia", "hail", date(2025, 6, 3), "Austria"),
    ("Storm Leandra", "windstorm", date(2025, 11, 2), "North Sea coast"),
)
CLAIM_ROLES = (
    ("CL", "claimant", "The party who makes the claim and receives the settlement."),
    ("AD", "adjuster", "The insurer's employee who assesses the loss and sets reserves."),
    ("WI", "witness", "A party who saw the loss happen and gave a statement."),
    ("AT", "attorney", "A lawyer representing the claimant or a third party."),
    ("RP", "repairer", "The garage or contractor that repairs the damage."),
)
LOSS_STORIES = {
    "auto": (
        "Rear-end collision at a traffic light; bumper, boot lid and parking sensors damaged.",
        "Vehicle stolen overnight from a residential street; police report filed the next morning.",
        "Windscreen cracked by a stone on the motorway; replacement glass fitted at an approved partner.",
        "Side impact while leaving a supermarket car park; the other driver disputes liability.",
    ),
    "home": (
        "Burst pipe in the upstairs bathroom flooded the kitchen ceiling and damaged the flooring.",
        "Storm tore off roof tiles; rain entered the attic and soaked the insulation and stored items.",
        "Break-in through a rear window; jewellery, a laptop and two bicycles were taken.",
        "Hail dented the conservatory roof and shattered two skylights.",
    ),
    "business": (
        "Fire in the delivery bay interrupted operations for eleven days; stock partly destroyed.",
        "A customer slipped on a wet floor at the shop entrance and claims compensation for injuries.",
        "Flooding of the basement warehouse destroyed packaged goods and two forklifts.",
    ),
    "travel": (
        "Emergency appendectomy while abroad; hospital stay of four days and a rebooked flight home.",
        "Broken wrist during a skiing holiday; treatment at a local clinic and physiotherapy.",
    ),
}
# fmt: on


@dataclass(frozen=True)
class _Policy:
    id: int
    line: str
    start: date
    end: date
    holder: int
    insured: int


def _day(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randint(0, max((last - first).days, 0)))


def _money(value: float) -> float:
    return round(value, 2)


def generate(seed: int = SEED) -> Rows:
    """All rows, table by table in foreign-key order."""
    rng = random.Random(seed)
    rows: Rows = {name: [] for name in _table_names()}

    # parties: 220 people, 60 organisations, ids shuffled so the subtypes interleave
    kinds = ["person"] * 220 + ["organization"] * 60
    rng.shuffle(kinds)
    people: list[int] = []
    orgs: list[int] = []
    for pid, kind in enumerate(kinds, start=1):
        city, country = rng.choice(CITIES)
        created = _day(rng, date(2018, 1, 1), date(2023, 12, 31))
        if kind == "person":
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            name = f"{first} {last}"
            email = f"{first.lower()}.{last.lower()}{pid}@example.org" if rng.random() < 0.85 else None
            birth = (
                _day(rng, date(1950, 1, 1), date(2004, 12, 31)).isoformat() if rng.random() < 0.95 else None
            )
            rows["person"].append((pid, first, last, birth, rng.choice(("F", "M", "F", "M", "X"))))
            people.append(pid)
        else:
            word, (suffix, industry) = rng.choice(ORG_WORDS), rng.choice(ORG_KINDS)
            name = f"{word} {suffix} {pid}"
            email = f"office@{word.lower()}{pid}.example.com"
            rows["organization"].append((pid, f"{name} GmbH", f"HRB {100000 + pid * 7}", industry))
            orgs.append(pid)
        rows["party"].append((pid, kind, name, email, city, country, created.isoformat()))
    agents = people[:18]
    underwriters = people[18:26]
    adjusters = people[26:36]
    brokers = [o for o in orgs if rows["organization"][orgs.index(o)][3] == "insurance"][:6] or orgs[:6]
    customers = people[36:] + [o for o in orgs if o not in brokers]

    # agreements: 320 policies and 24 broker agreements, interleaved ids
    kinds = ["policy"] * 320 + ["broker"] * 24
    rng.shuffle(kinds)
    policies: list[_Policy] = []
    by_holder: dict[int, list[_Policy]] = {}
    for aid, kind in enumerate(kinds, start=1):
        signed = _day(rng, FIRST_DAY, date(2025, 6, 30))
        status = rng.choices(("active", "lapsed", "cancelled"), (8, 2, 1))[0]
        rows["agreement"].append((aid, kind, signed.isoformat(), status))
        role_day = signed.isoformat()
        if kind == "broker":
            rows["broker_agreement"].append(
                (
                    aid,
                    round(rng.choice((0.05, 0.075, 0.1, 0.125)), 4),
                    rng.choice(("north", "south", "east", "west")),
                )
            )
            rows["agreement_party_role"].append((aid, rng.choice(brokers), "BR", role_day, None))
            rows["agreement_party_role"].append((aid, rng.choice(underwriters), "UW", role_day, None))
            continue
        line = rng.choice(LINES)
        holder = rng.choice(customers)
        insured = holder if holder in people and rng.random() < 0.7 else rng.choice(people[36:])
        start = signed + timedelta(days=rng.randint(0, 20))
        end = start + timedelta(days=365 if line != "travel" else rng.choice((14, 30, 90)))
        earlier = [p for p in by_holder.get(holder, []) if p.line == line and p.end <= start]
        renewed = earlier[-1].id if earlier and rng.random() < 0.8 else None
        pstatus = (
            "expired" if end < date(2025, 12, 31) else ("cancelled" if status == "cancelled" else "in force")
        )
        number = f"{line[:2].upper()}-{start.year}-{aid:05d}"
        rows["policy"].append((aid, number, line, start.isoformat(), end.isoformat(), pstatus, renewed))
        policy = _Policy(aid, line, start, end, holder, insured)
        policies.append(policy)
        by_holder.setdefault(holder, []).append(policy)
        agent = rng.choice(agents)
        roles: list[tuple[Any, ...]] = [
            (aid, holder, "PH", role_day, None),
            (aid, agent, "AG", role_day, None),
        ]
        if insured != holder:
            roles.append((aid, insured, "IN", role_day, None))
        if rng.random() < 0.5:
            roles.append((aid, rng.choice(underwriters), "UW", role_day, None))
        if rng.random() < 0.08:  # the agent was replaced during the term
            new_agent = rng.choice([a for a in agents if a != agent])
            switch = (start + timedelta(days=rng.randint(60, 300))).isoformat()
            roles[1] = (aid, agent, "AG", role_day, switch)
            roles.append((aid, new_agent, "AG", switch, None))
        rows["agreement_party_role"].extend(roles)

    # coverages and the coverage details of each policy
    for cid, (code, name, line, _, _) in enumerate(COVERAGES, start=1):
        rows["coverage"].append((cid, code, name, line))
    details: dict[int, list[tuple[int, int]]] = {}  # policy → (detail id, coverage index)
    for p in policies:
        options = [i for i, c in enumerate(COVERAGES) if c[2] == p.line]
        chosen = sorted(rng.sample(options, k=rng.randint(1, len(options))))
        for i in chosen:
            low, high = COVERAGES[i][3]
            limit = round(rng.uniform(low, high), -3)
            did = len(rows["policy_coverage_detail"]) + 1
            rows["policy_coverage_detail"].append(
                (did, p.id, i + 1, _money(limit), _money(rng.choice(COVERAGES[i][4])), p.start.isoformat())
            )
            details.setdefault(p.id, []).append((did, i))

    # policy amounts: a premium per coverage detail, a policy fee and an insurance tax per policy
    for p in policies:
        premiums = []
        for did, i in details[p.id]:
            premium = _money(rng.uniform(40, 900) * (3 if COVERAGES[i][2] == "business" else 1))
            premiums.append(premium)
            rows["policy_amount"].append(
                (len(rows["policy_amount"]) + 1, p.id, did, "premium", premium, p.start.isoformat())
            )
        if rng.random() < 0.6:
            rows["policy_amount"].append(
                (len(rows["policy_amount"]) + 1, p.id, None, "fee", 25.0, p.start.isoformat())
            )
        tax = _money(sum(premiums) * 0.19)
        rows["policy_amount"].append(
            (len(rows["policy_amount"]) + 1, p.id, None, "tax", tax, p.start.isoformat())
        )
        if rng.random() < 0.15:
            rows["policy_amount"].append(
                (
                    len(rows["policy_amount"]) + 1,
                    p.id,
                    None,
                    "discount",
                    -_money(sum(premiums) * 0.1),
                    p.start.isoformat(),
                )
            )
    holder_of = {p.id: p.holder for p in policies}
    for amount_id, policy_id, _, kind, amount, start in rows["policy_amount"]:
        if kind == "discount" or rng.random() < 0.12:
            continue
        paid = date.fromisoformat(start) + timedelta(days=rng.randint(0, 40))
        payer = holder_of[policy_id] if rng.random() < 0.9 else rng.choice(customers)
        rows["premium_payment"].append(
            (len(rows["premium_payment"]) + 1, amount_id, payer, paid.isoformat(), amount)
        )

    # vehicles of motor policies
    vehicles: dict[int, list[int]] = {}
    for p in policies:
        if p.line != "auto":
            continue
        for _ in range(rng.choice((1, 1, 1, 2))):
            make, models = rng.choice(MAKES)
            vid = len(rows["insured_vehicle"]) + 1
            vin = f"W{rng.randrange(10**15, 10**16)}X"
            rows["insured_vehicle"].append(
                (vid, p.id, vin, make, rng.choice(models), rng.randint(2008, 2025))
            )
            vehicles.setdefault(p.id, []).append(vid)

    for cid, (name, kind, start, region) in enumerate(CATASTROPHES, start=1):
        rows["catastrophe"].append((cid, name, kind, start.isoformat(), region))
    for code, name, text in CLAIM_ROLES:
        rows["claim_role_type"].append((code, name, text))

    # claims, the parties around them, and their typed amounts
    repairers = [o for o in orgs if o not in brokers][:10]
    for p in rng.sample(policies, k=210):
        for _ in range(rng.choice((1, 1, 1, 2))):
            did, i = rng.choice(details[p.id])
            loss = _day(rng, p.start, min(p.end, LAST_DAY))
            cat = None
            if p.line in ("home", "business") and rng.random() < 0.35:
                near = [k for k, c in enumerate(CATASTROPHES, start=1) if abs((c[2] - loss).days) < 400]
                cat = rng.choice(near) if near else None
                if cat is not None:
                    loss = CATASTROPHES[cat - 1][2] + timedelta(days=rng.randint(0, 3))
            reported = loss + timedelta(days=rng.randint(0, 25))
            status = rng.choices(("open", "closed", "reopened", "denied"), (3, 6, 1, 1))[0]
            claim_id = len(rows["claim"]) + 1
            vehicle = rng.choice(vehicles[p.id]) if p.line == "auto" else None
            rows["claim"].append(
                (
                    claim_id,
                    f"CLM-{reported.year}-{claim_id:05d}",
                    p.id,
                    did,
                    cat,
                    vehicle,
                    loss.isoformat(),
                    reported.isoformat(),
                    status,
                    rng.choice(LOSS_STORIES[p.line]),
                    rng.randint(1, 6),
                )
            )
            claimant = p.insured if rng.random() < 0.6 else p.holder
            roles = [(claimant, "CL"), (rng.choice(adjusters), "AD")]
            for _ in range(rng.choice((0, 0, 1, 2))):
                roles.append((rng.choice(people[36:]), "WI"))
            if rng.random() < 0.2:
                roles.append((rng.choice(people[36:]), "AT"))
            if p.line == "auto" and rng.random() < 0.6:
                roles.append((rng.choice(repairers), "RP"))
            seen: set[tuple[int, str]] = set()
            for party, code in roles:
                if (party, code) not in seen:
                    seen.add((party, code))
                    rows["claim_party_role"].append((claim_id, party, code))
            _claim_amounts(rng, rows, claim_id, reported, status, claimant, repairers)
    return rows


def _claim_amounts(
    rng: random.Random,
    rows: Rows,
    claim_id: int,
    reported: date,
    status: str,
    claimant: int,
    vendors: list[int],
) -> None:
    """Reserves when a claim is reported, payments as it is settled: every amount is one type."""

    def amount(value: float, day: date) -> int:
        aid = len(rows["claim_amount"]) + 1
        rows["claim_amount"].append((aid, claim_id, _money(value), day.isoformat(), "EUR"))
        return aid

    size = rng.choice((800, 2500, 6000, 15000, 40000))
    aid = amount(size * rng.uniform(0.8, 1.3), reported)
    rows["loss_reserve"].append((aid, "initial estimate"))
    if rng.random() < 0.3:
        aid = amount(size * rng.uniform(0.1, 0.5), reported + timedelta(days=rng.randint(10, 60)))
        rows["loss_reserve"].append((aid, rng.choice(("reassessment", "additional damage found"))))
    if rng.random() < 0.55:
        aid = amount(rng.uniform(150, 2500), reported)
        rows["expense_reserve"].append((aid, rng.choice(("adjusting", "legal", "appraisal"))))
    if status in ("closed", "reopened"):
        for _ in range(rng.choice((1, 1, 2, 3))):
            aid = amount(size * rng.uniform(0.2, 0.9), reported + timedelta(days=rng.randint(15, 120)))
            rows["loss_payment"].append(
                (aid, claimant, rng.choice(("bank transfer", "bank transfer", "cheque")))
            )
        for _ in range(rng.choice((0, 1, 1, 2))):
            aid = amount(rng.uniform(90, 1800), reported + timedelta(days=rng.randint(5, 90)))
            vendor = rng.choice(vendors) if rng.random() < 0.7 else None
            rows["expense_payment"].append((aid, rng.choice(("adjusting", "legal", "appraisal")), vendor))


def _table_names() -> list[str]:
    names = []
    for line in SCHEMA.splitlines():
        if line.startswith("CREATE TABLE "):
            names.append(line.split()[2])
    return names


def build_insurance(path: Path) -> Path:
    """Write the database to `path`, atomically replacing whatever is there."""
    schema = SCHEMA.format(version=INSURANCE_VERSION)
    return demo_file.build(
        path, lambda conn: demo_file.write_rows(conn, schema, generate(), INSURANCE_VERSION)
    )


def ensure_insurance(var_dir: Path) -> Path:
    """The database under `var_dir`, built when missing, damaged or from another version."""
    return demo_file.ensure(Path(var_dir) / INSURANCE_PATH_NAME, INSURANCE_VERSION, build_insurance)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.insurance_demo", description="Build the insurance demo database."
    )
    parser.add_argument("--out", type=Path, default=Path("var") / INSURANCE_PATH_NAME)
    args = parser.parse_args(argv)
    path = build_insurance(args.out)
    demo_file.print_counts(path)
    print(f"wrote {path.resolve()} (insurance demo version {INSURANCE_VERSION}); catalog: {CATALOG_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
