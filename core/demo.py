"""The bundled demo database: Lucy's DDO cloud-operations schema (paper §2.1), filled with data.

It is the first database every newcomer asks about, so it exercises what makes Askbase different
from "paste the DDL into a prompt": a many-to-many bridge (pool_client), a lookup table shared by
two tables (location), two stars (payment, retention), a subtype split (every payment_amount is
exactly one of tax / supercharge / income) and a snowflake (resource_pool → config / runtime →
cpu / memory). Lucy's three motivating questions have non-trivial answers here, and the wrong
joins an LLM tends to write give visibly different ones.

The rows come from one `random.Random(SEED)` stream consumed in a fixed order, with no clock and
no set iteration, so every machine builds the same data. The file is written under a temporary
name and renamed into place (core/demo_file.py, as every demo), so a crash or two processes building at once never leave a
half-built database; `ensure_demo` rebuilds when the file is missing, damaged or from another
DEMO_VERSION.

    python -m core.demo [--out PATH]     # build and print row counts
"""

from __future__ import annotations

import argparse
import calendar
import math
import random
import sqlite3
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from core import demo_file
from core.demo_file import Rows
from core.demo_file import stored_version as stored_version  # tests and tools read a file's version
from core.settings import CONFIG_PACKAGE, DatabaseSettings, package_file

DEMO_PATH_NAME = "demo.sqlite"
# Bump whenever the schema or the generated data changes: existing files are then rebuilt, and
# because the number is part of the DDL text, cached catalogs and indexes notice the change too.
DEMO_VERSION = 1
DEMO_DESCRIPTION = "Cloud operations demo (clients, datacenters, resource pools, payments)"
CATALOG_PATH = package_file(CONFIG_PACKAGE, "demo_catalog.yaml")  # shipped in config/ as package data
SEED = 20240607
FIRST_DAY = date(2024, 1, 1)  # payments, usage and retention campaigns span FIRST_DAY..LAST_DAY
LAST_DAY = date(2026, 6, 30)

SCHEMA = """
CREATE TABLE location (  -- Askbase demo database version {version}
    id INTEGER PRIMARY KEY,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    region TEXT NOT NULL,
    zip_code TEXT,
    latitude REAL NOT NULL,
    longitude REAL NOT NULL
);
CREATE TABLE client (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    gender TEXT,
    birth_date DATE,
    segment TEXT NOT NULL,
    email TEXT,
    status TEXT NOT NULL,
    signup_date DATE NOT NULL,
    loc_id INTEGER NOT NULL REFERENCES location (id)
);
CREATE TABLE datacenter (
    id INTEGER PRIMARY KEY,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    opened_on DATE NOT NULL,
    loc_id INTEGER NOT NULL REFERENCES location (id)
);
CREATE TABLE compute (
    id INTEGER PRIMARY KEY,
    hostname TEXT NOT NULL UNIQUE,
    dc_id INTEGER NOT NULL REFERENCES datacenter (id),
    cpu_cores INTEGER NOT NULL,
    memory_gb INTEGER NOT NULL,
    status TEXT NOT NULL,
    commissioned_on DATE NOT NULL
);
CREATE TABLE resource_pool (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    dc_id INTEGER NOT NULL REFERENCES datacenter (id),
    status TEXT NOT NULL,
    created_on DATE NOT NULL
);
CREATE TABLE pool_client (
    id INTEGER PRIMARY KEY,
    pool_id INTEGER NOT NULL REFERENCES resource_pool (id),
    client_id INTEGER NOT NULL REFERENCES client (id),
    since DATE NOT NULL,
    UNIQUE (pool_id, client_id)
);
CREATE TABLE pool_config (
    id INTEGER PRIMARY KEY,
    pool_id INTEGER NOT NULL REFERENCES resource_pool (id),
    version INTEGER NOT NULL,
    updated_on DATE NOT NULL
);
CREATE TABLE config_cpu (
    id INTEGER PRIMARY KEY,
    config_id INTEGER NOT NULL REFERENCES pool_config (id),
    reservation_mhz INTEGER NOT NULL,
    limit_mhz INTEGER,
    overhead_limit INTEGER,
    shares INTEGER NOT NULL
);
CREATE TABLE config_memory (
    id INTEGER PRIMARY KEY,
    config_id INTEGER NOT NULL REFERENCES pool_config (id),
    reservation_mb INTEGER NOT NULL,
    limit_mb INTEGER,
    overhead_limit INTEGER
);
CREATE TABLE pool_runtime (
    id INTEGER PRIMARY KEY,
    pool_id INTEGER NOT NULL REFERENCES resource_pool (id),
    sampled_at DATETIME NOT NULL
);
CREATE TABLE runtime_cpu (
    id INTEGER PRIMARY KEY,
    runtime_id INTEGER NOT NULL REFERENCES pool_runtime (id),
    overall_usage INTEGER NOT NULL,
    max_usage INTEGER NOT NULL
);
CREATE TABLE runtime_memory (
    id INTEGER PRIMARY KEY,
    runtime_id INTEGER NOT NULL REFERENCES pool_runtime (id),
    overall_usage INTEGER NOT NULL,
    guest_usage INTEGER NOT NULL
);
CREATE TABLE payment (
    id INTEGER PRIMARY KEY,
    client_id INTEGER NOT NULL REFERENCES client (id),
    paid_on DATE NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    invoice_no TEXT NOT NULL UNIQUE
);
CREATE TABLE payment_amount (
    id INTEGER PRIMARY KEY,
    payment_id INTEGER NOT NULL REFERENCES payment (id),
    amount REAL NOT NULL,
    currency TEXT NOT NULL
);
CREATE TABLE tax (
    id INTEGER PRIMARY KEY,
    amount_id INTEGER NOT NULL UNIQUE REFERENCES payment_amount (id),
    rate REAL NOT NULL,
    jurisdiction TEXT NOT NULL
);
CREATE TABLE supercharge (
    id INTEGER PRIMARY KEY,
    amount_id INTEGER NOT NULL UNIQUE REFERENCES payment_amount (id),
    reason TEXT NOT NULL
);
CREATE TABLE income (
    id INTEGER PRIMARY KEY,
    amount_id INTEGER NOT NULL UNIQUE REFERENCES payment_amount (id),
    product_line TEXT NOT NULL
);
CREATE TABLE retention (
    id INTEGER PRIMARY KEY,
    client_id INTEGER NOT NULL REFERENCES client (id),
    started_on DATE NOT NULL,
    campaign TEXT NOT NULL,
    channel TEXT
);
CREATE TABLE gift (
    id INTEGER PRIMARY KEY,
    retention_id INTEGER NOT NULL REFERENCES retention (id),
    item TEXT NOT NULL,
    value REAL NOT NULL
);
CREATE TABLE bonus (
    id INTEGER PRIMARY KEY,
    retention_id INTEGER NOT NULL REFERENCES retention (id),
    credit_amount REAL NOT NULL,
    expires_on DATE NOT NULL
);
CREATE TABLE usage (
    id INTEGER PRIMARY KEY,
    pool_id INTEGER NOT NULL REFERENCES resource_pool (id),
    client_id INTEGER NOT NULL REFERENCES client (id),
    month DATE NOT NULL,
    cpu_hours REAL NOT NULL,
    memory_gb_hours REAL NOT NULL,
    cost REAL NOT NULL,
    UNIQUE (pool_id, client_id, month)
);
"""

# ---------------------------------------------------------------------------------------------
# reference data

EUROPE, NORTH_AMERICA, LATIN_AMERICA, ASIA_PACIFIC, MEA = (
    "Europe",
    "North America",
    "Latin America",
    "Asia Pacific",
    "Middle East & Africa",
)

# city, country, ISO code, region, zip code, latitude, longitude, weight as a client's home
CITIES: tuple[tuple[str, str, str, str, str | None, float, float, int], ...] = (
    ("Berlin", "Germany", "DE", EUROPE, "10115", 52.5200, 13.4050, 14),
    ("München", "Germany", "DE", EUROPE, "80331", 48.1374, 11.5755, 12),
    ("Frankfurt am Main", "Germany", "DE", EUROPE, "60311", 50.1109, 8.6821, 10),
    ("Hamburg", "Germany", "DE", EUROPE, "20095", 53.5511, 9.9937, 9),
    ("Köln", "Germany", "DE", EUROPE, "50667", 50.9375, 6.9603, 6),
    ("Düsseldorf", "Germany", "DE", EUROPE, "40213", 51.2277, 6.7735, 5),
    ("Stuttgart", "Germany", "DE", EUROPE, "70173", 48.7758, 9.1829, 5),
    ("Leipzig", "Germany", "DE", EUROPE, "04109", 51.3397, 12.3731, 3),
    ("Zürich", "Switzerland", "CH", EUROPE, "8001", 47.3769, 8.5417, 8),
    ("Genève", "Switzerland", "CH", EUROPE, "1201", 46.2044, 6.1432, 3),
    ("Vienna", "Austria", "AT", EUROPE, "1010", 48.2082, 16.3738, 6),
    ("Paris", "France", "FR", EUROPE, "75001", 48.8566, 2.3522, 10),
    ("Lyon", "France", "FR", EUROPE, "69001", 45.7640, 4.8357, 4),
    ("Toulouse", "France", "FR", EUROPE, "31000", 43.6047, 1.4442, 2),
    ("London", "United Kingdom", "GB", EUROPE, "EC1A 1BB", 51.5074, -0.1278, 12),
    ("Manchester", "United Kingdom", "GB", EUROPE, "M1 1AE", 53.4808, -2.2426, 3),
    ("Edinburgh", "United Kingdom", "GB", EUROPE, "EH1 1YZ", 55.9533, -3.1883, 2),
    ("Dublin", "Ireland", "IE", EUROPE, "D02 X285", 53.3498, -6.2603, 4),
    ("Amsterdam", "Netherlands", "NL", EUROPE, "1012 JS", 52.3676, 4.9041, 7),
    ("Rotterdam", "Netherlands", "NL", EUROPE, "3011 AD", 51.9244, 4.4777, 2),
    ("Brussels", "Belgium", "BE", EUROPE, "1000", 50.8503, 4.3517, 3),
    ("Luxembourg", "Luxembourg", "LU", EUROPE, "L-1118", 49.6116, 6.1319, 2),
    ("Madrid", "Spain", "ES", EUROPE, "28013", 40.4168, -3.7038, 5),
    ("Barcelona", "Spain", "ES", EUROPE, "08002", 41.3874, 2.1686, 4),
    ("Lisbon", "Portugal", "PT", EUROPE, "1100-148", 38.7223, -9.1393, 3),
    ("Milano", "Italy", "IT", EUROPE, "20121", 45.4642, 9.1900, 4),
    ("Roma", "Italy", "IT", EUROPE, "00184", 41.9028, 12.4964, 2),
    ("Stockholm", "Sweden", "SE", EUROPE, "111 20", 59.3293, 18.0686, 4),
    ("Malmö", "Sweden", "SE", EUROPE, "211 20", 55.6050, 13.0038, 2),
    ("Oslo", "Norway", "NO", EUROPE, "0150", 59.9139, 10.7522, 2),
    ("København", "Denmark", "DK", EUROPE, "1050", 55.6761, 12.5683, 3),
    ("Helsinki", "Finland", "FI", EUROPE, "00100", 60.1699, 24.9384, 2),
    ("Warszawa", "Poland", "PL", EUROPE, "00-001", 52.2297, 21.0122, 3),
    ("Kraków", "Poland", "PL", EUROPE, "30-001", 50.0647, 19.9450, 2),
    ("Praha", "Czech Republic", "CZ", EUROPE, "110 00", 50.0755, 14.4378, 2),
    ("Budapest", "Hungary", "HU", EUROPE, "1051", 47.4979, 19.0402, 1),
    ("Tallinn", "Estonia", "EE", EUROPE, "10111", 59.4370, 24.7536, 1),
    ("Athens", "Greece", "GR", EUROPE, "105 57", 37.9838, 23.7275, 1),
    ("New York", "United States", "US", NORTH_AMERICA, "10001", 40.7128, -74.0060, 8),
    ("San Francisco", "United States", "US", NORTH_AMERICA, "94105", 37.7749, -122.4194, 5),
    ("Seattle", "United States", "US", NORTH_AMERICA, "98101", 47.6062, -122.3321, 3),
    ("Chicago", "United States", "US", NORTH_AMERICA, "60601", 41.8781, -87.6298, 3),
    ("Austin", "United States", "US", NORTH_AMERICA, "78701", 30.2672, -97.7431, 3),
    ("Boston", "United States", "US", NORTH_AMERICA, "02108", 42.3601, -71.0589, 2),
    ("Ashburn", "United States", "US", NORTH_AMERICA, "20147", 39.0438, -77.4874, 1),
    ("Toronto", "Canada", "CA", NORTH_AMERICA, "M5H 2N2", 43.6532, -79.3832, 3),
    ("Montréal", "Canada", "CA", NORTH_AMERICA, "H2Y 1C6", 45.5017, -73.5673, 2),
    ("Ciudad de México", "Mexico", "MX", LATIN_AMERICA, "06000", 19.4326, -99.1332, 2),
    ("São Paulo", "Brazil", "BR", LATIN_AMERICA, "01001-000", -23.5505, -46.6333, 4),
    ("Rio de Janeiro", "Brazil", "BR", LATIN_AMERICA, "20010-000", -22.9068, -43.1729, 1),
    ("Buenos Aires", "Argentina", "AR", LATIN_AMERICA, "C1002", -34.6037, -58.3816, 2),
    ("Santiago", "Chile", "CL", LATIN_AMERICA, "8320000", -33.4489, -70.6693, 1),
    ("Bogotá", "Colombia", "CO", LATIN_AMERICA, "110111", 4.7110, -74.0721, 1),
    ("Singapore", "Singapore", "SG", ASIA_PACIFIC, "018956", 1.3521, 103.8198, 4),
    ("Tokyo", "Japan", "JP", ASIA_PACIFIC, "100-0005", 35.6762, 139.6503, 3),
    ("Seoul", "South Korea", "KR", ASIA_PACIFIC, "04524", 37.5665, 126.9780, 1),
    ("Hong Kong", "Hong Kong", "HK", ASIA_PACIFIC, None, 22.3193, 114.1694, 2),
    ("Sydney", "Australia", "AU", ASIA_PACIFIC, "2000", -33.8688, 151.2093, 3),
    ("Melbourne", "Australia", "AU", ASIA_PACIFIC, "3000", -37.8136, 144.9631, 2),
    ("Auckland", "New Zealand", "NZ", ASIA_PACIFIC, "1010", -36.8485, 174.7633, 1),
    ("Bengaluru", "India", "IN", ASIA_PACIFIC, "560001", 12.9716, 77.5946, 2),
    ("Jakarta", "Indonesia", "ID", ASIA_PACIFIC, "10110", -6.2088, 106.8456, 1),
    ("Dubai", "United Arab Emirates", "AE", MEA, None, 25.2048, 55.2708, 2),
    ("Tel Aviv", "Israel", "IL", MEA, "6100000", 32.0853, 34.7818, 2),
    ("Johannesburg", "South Africa", "ZA", MEA, "2001", -26.2041, 28.0473, 1),
    ("Cape Town", "South Africa", "ZA", MEA, "8001", -33.9249, 18.4241, 1),
    ("Nairobi", "Kenya", "KE", MEA, "00100", -1.2921, 36.8219, 1),
)

# code, name, tier, opened on, city, site code used in host names
DATACENTERS: tuple[tuple[str, str, str, date, str, str], ...] = (
    ("DC-01", "prod-frankfurt-1", "Tier III", date(2013, 4, 15), "Frankfurt am Main", "fra1"),
    ("DC-02", "prod-frankfurt-2", "Tier IV", date(2017, 9, 4), "Frankfurt am Main", "fra2"),
    ("DC-03", "dev-frankfurt-1", "Tier II", date(2019, 2, 11), "Frankfurt am Main", "fra3"),
    ("DC-04", "prod-amsterdam-1", "Tier III", date(2014, 6, 30), "Amsterdam", "ams1"),
    ("DC-05", "prod-london-1", "Tier III", date(2015, 3, 2), "London", "lon1"),
    ("DC-06", "dev-london-1", "Tier II", date(2020, 10, 5), "London", "lon2"),
    ("DC-07", "prod-ashburn-1", "Tier IV", date(2016, 1, 18), "Ashburn", "iad1"),
    ("DC-08", "dev-zurich-1", "Tier II", date(2021, 5, 17), "Zürich", "zrh1"),
    ("DC-09", "edge-paris-1", "Tier II", date(2022, 5, 9), "Paris", "par1"),
    ("DC-10", "prod-singapore-1", "Tier III", date(2018, 8, 20), "Singapore", "sin1"),
    ("DC-11", "edge-saopaulo-1", "Tier II", date(2023, 3, 14), "São Paulo", "gru1"),
    ("DC-12", "prod-sydney-1", "Tier III", date(2021, 11, 1), "Sydney", "syd1"),
)

SEGMENTS = ("enterprise", "smb", "startup", "public sector")
SEGMENT_WEIGHTS = (22, 40, 26, 12)

# fmt: off
STEMS = (
    "Acme", "Nordlicht", "Bluewave", "Alpenrose", "Helix", "Quantum", "Silverline", "Redwood", "Polaris",
    "Orbit", "Kestrel", "Falcon", "Granite", "Harbor", "Ironbridge", "Juniper", "Kraken", "Lighthouse",
    "Meridian", "Nimbus", "Oakridge", "Pinnacle", "Quartz", "Riverstone", "Sapphire", "Tundra", "Vertex",
    "Willow", "Yellowfin", "Zephyr", "Brightpath", "Cobalt", "Driftwood", "Evergreen", "Fjord", "Glacier",
    "Highland", "Inkwell", "Keystone", "Lumen", "Mosaic", "Northwind", "Obsidian", "Pebble", "Rheinland",
    "Sonnenschein", "Tidewater", "Vanguard", "Westbrook", "Apex", "Beacon", "Cedar", "Elbe", "Fernweh",
    "Greenleaf", "Horizon", "Isar", "Lakeside", "Mistral", "Nova", "Olympus", "Prairie", "Sierra",
    "Solstice", "Starling", "Summit", "Tessera", "Trident", "Wolkenkratzer", "Zenith", "Lumière",
    "Brückner", "Müller", "Sørensen", "Öresund", "Château", "Aurora", "Basalt", "Copperfield", "Dünenwind",
)
INDUSTRIES = (
    "Logistics", "Media", "Analytics", "Health", "Robotics", "Foods", "Energy", "Software", "Systems",
    "Games", "Labs", "Retail", "Mobility", "Finance", "Insurance", "Biotech", "Consulting", "Data",
    "Security", "Telecom", "Fashion", "Travel", "Pharma", "Engineering", "Networks", "Payments", "Studios",
    "Maschinenbau", "Logistik", "Solar",
)
LEGAL_SUFFIXES: dict[str, tuple[str, ...]] = {
    "DE": ("GmbH", "GmbH", "AG", "GmbH & Co. KG", "SE"), "AT": ("GmbH", "AG"), "CH": ("AG", "GmbH", "SA"),
    "FR": ("SAS", "SA", "SARL"), "GB": ("Ltd", "Ltd", "plc"), "IE": ("Ltd", "DAC"), "NL": ("B.V.", "N.V."),
    "BE": ("BV", "SA"), "LU": ("S.à r.l.", "S.A."), "ES": ("S.L.", "S.A."), "PT": ("Lda.", "S.A."),
    "IT": ("S.r.l.", "S.p.A."), "SE": ("AB",), "NO": ("AS",), "DK": ("A/S", "ApS"), "FI": ("Oy",),
    "PL": ("Sp. z o.o.", "S.A."), "CZ": ("s.r.o.", "a.s."), "HU": ("Kft.", "Zrt."), "EE": ("OÜ",),
    "GR": ("S.A.",), "US": ("Inc.", "LLC", "Corp."), "CA": ("Inc.", "Ltd."), "MX": ("S.A. de C.V.",),
    "BR": ("Ltda.", "S.A."), "AR": ("S.A.", "S.R.L."), "CL": ("SpA",), "CO": ("S.A.S.",),
    "SG": ("Pte. Ltd.",), "JP": ("K.K.",), "KR": ("Co., Ltd.",), "HK": ("Limited",), "AU": ("Pty Ltd",),
    "NZ": ("Limited",), "IN": ("Pvt. Ltd.",), "ID": ("Tbk",), "AE": ("FZ-LLC", "LLC"), "IL": ("Ltd.",),
    "ZA": ("(Pty) Ltd",), "KE": ("Ltd",),
}
TLD = {"GB": "co.uk", "US": "com", "AE": "ae", "KR": "co.kr", "JP": "co.jp", "AU": "com.au", "BR": "com.br"}
EURO = {"DE", "AT", "FR", "IE", "NL", "BE", "LU", "ES", "PT", "IT", "FI", "EE", "GR"}
SEPA = EURO | {"CH", "GB", "SE", "NO", "DK", "PL", "CZ", "HU"}
# The seller invoices in four currencies; everything outside Europe is billed in US dollars.
CURRENCY = {**dict.fromkeys(EURO, "EUR"), "GB": "GBP", "CH": "CHF"}
TAX: dict[str, tuple[float, str]] = {
    "DE": (0.19, "DE VAT"), "AT": (0.20, "AT VAT"), "CH": (0.081, "CH MWST"), "FR": (0.20, "FR TVA"),
    "GB": (0.20, "UK VAT"), "IE": (0.23, "IE VAT"), "NL": (0.21, "NL BTW"), "BE": (0.21, "BE VAT"),
    "LU": (0.17, "LU TVA"), "ES": (0.21, "ES IVA"), "PT": (0.23, "PT IVA"), "IT": (0.22, "IT IVA"),
    "SE": (0.25, "SE moms"), "NO": (0.25, "NO MVA"), "DK": (0.25, "DK moms"), "FI": (0.24, "FI ALV"),
    "PL": (0.23, "PL VAT"), "CZ": (0.21, "CZ DPH"), "HU": (0.27, "HU ÁFA"), "EE": (0.22, "EE KM"),
    "GR": (0.24, "GR FPA"), "US": (0.0625, "US sales tax"), "CA": (0.05, "CA GST"), "AU": (0.10, "AU GST"),
    "NZ": (0.15, "NZ GST"), "SG": (0.09, "SG GST"), "JP": (0.10, "JP consumption tax"),
    "IN": (0.18, "IN GST"), "ZA": (0.15, "ZA VAT"), "AE": (0.05, "AE VAT"), "MX": (0.16, "MX IVA"),
}
PRODUCT_LINES = (
    "Compute", "Compute", "Compute", "Storage", "Storage", "Managed Kubernetes", "Backup & Recovery",
    "Network & CDN", "Professional Services", "Support Plan",
)
SURCHARGE_REASONS = (
    "late payment fee", "egress overage", "egress overage", "support overage", "express provisioning",
    "currency conversion fee",
)
POOL_PURPOSES = (
    "analytics", "web", "batch", "ml-training", "db", "ci", "staging", "backup", "streaming", "vdi", "k8s",
    "etl", "gpu", "cache", "search",
)
# fmt: on

# campaign, first day, last day, segments it targets (empty: all)
CAMPAIGNS: tuple[tuple[str, date, date, tuple[str, ...]], ...] = (
    ("Spring Renewal 2024", date(2024, 3, 1), date(2024, 5, 31), ()),
    ("Win-back Q3 2024", date(2024, 7, 1), date(2024, 9, 30), ()),
    ("Black Friday 2024", date(2024, 11, 22), date(2024, 12, 6), ("smb", "startup")),
    ("Loyalty Rewards 2025", date(2025, 1, 15), date(2025, 12, 15), ("enterprise", "public sector")),
    ("Startup Boost 2025", date(2025, 4, 1), date(2025, 6, 30), ("startup",)),
    ("Public Sector Renewal 2025", date(2025, 9, 1), date(2025, 10, 31), ("public sector",)),
    ("Black Friday 2025", date(2025, 11, 21), date(2025, 12, 5), ("smb", "startup")),
    ("Win-back Q1 2026", date(2026, 1, 12), date(2026, 3, 31), ()),
)
CHANNELS = ("email", "email", "phone", "account manager", "in-app")
GIFTS = (  # item, value in euros
    ("branded hoodie", 45.0), ("coffee voucher", 25.0), ("conference ticket", 890.0),
    ("Raspberry Pi kit", 120.0), ("team lunch", 300.0), ("training voucher", 1200.0),
    ("noise-cancelling headphones", 349.0),
)  # fmt: skip
# seasonality of invoicing and usage, January..December (year-end budget flush, August lull)
SEASON = (0.92, 0.94, 1.05, 1.0, 1.0, 1.06, 0.95, 0.82, 1.02, 1.05, 1.1, 1.2)


# ---------------------------------------------------------------------------------------------
# generation


@dataclass(frozen=True)
class _Client:
    """What later tables need to know about a client, including facts never stored (churn day)."""

    id: int
    segment: str
    iso: str
    region: str
    status: str
    signup: date
    last_active: date  # churn or suspension day; LAST_DAY for active clients


@dataclass(frozen=True)
class _Pool:
    id: int
    dc_id: int
    region: str
    status: str
    created: date
    last_active: date
    price: float  # cost per CPU hour; edge and Tier IV sites cost more


def _day(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randint(0, max((last - first).days, 0)))


def _months(first: date, last: date) -> list[date]:
    out, month = [], date(first.year, first.month, 1)
    while month <= last:
        out.append(month)
        month = date(month.year + month.month // 12, month.month % 12 + 1, 1)
    return out


def _ascii_slug(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text.replace("ø", "o").replace("Ø", "O"))
    plain = plain.encode("ascii", "ignore").decode().lower()
    return "-".join("".join(ch if ch.isalnum() else " " for ch in plain).split())


def _locations() -> list[tuple[Any, ...]]:
    return [(i, c[0], c[1], c[3], c[4], c[5], c[6]) for i, c in enumerate(CITIES, start=1)]


def _clients(rng: random.Random) -> tuple[list[tuple[Any, ...]], list[_Client]]:
    rows: list[tuple[Any, ...]] = []
    facts: list[_Client] = []
    taken: set[str] = set()
    showcase = {
        1: ("enterprise", 3, "Acme Logistics GmbH", "acme-logistics"),
        2: ("smb", 4, "Nordlicht Media", "nordlicht"),
    }
    weights = [c[7] for c in CITIES]
    for cid in range(1, 301):
        if cid in showcase:
            segment, loc, name, domain = showcase[cid]
        else:
            segment = rng.choices(SEGMENTS, SEGMENT_WEIGHTS)[0]
            loc = rng.choices(range(1, len(CITIES) + 1), weights)[0]
            name, domain = _company_name(rng, segment, loc, taken)
        taken.add(name)
        iso, region = CITIES[loc - 1][2:4]
        box = rng.choice(("billing", "finance", "accounts", "it", "ops", "procurement"))
        email = None if rng.random() < 0.05 else f"{box}@{domain}.{TLD.get(iso, iso.lower())}"
        gender = rng.choices(("F", "M", None), (46, 48, 6))[0]
        birth = None if rng.random() < 0.06 else _day(rng, date(1958, 1, 1), date(1999, 12, 31))
        # Growth: later years sign up more clients.
        year = rng.choices((2019, 2020, 2021, 2022, 2023, 2024, 2025, 2026), (5, 6, 8, 10, 13, 17, 19, 6))[0]
        signup = _day(rng, date(year, 1, 1), min(date(year, 12, 31), date(2026, 3, 31)))
        status = "ACT" if cid in showcase else rng.choices(("ACT", "SUS", "CHN"), (77, 7, 16))[0]
        if status == "ACT" or signup > date(2026, 1, 1):
            status, last_active = "ACT", LAST_DAY
        else:
            last_active = _day(rng, max(signup + timedelta(days=120), FIRST_DAY), date(2026, 5, 31))
        birth_text = birth.isoformat() if birth else None
        rows.append((cid, name, gender, birth_text, segment, email, status, signup.isoformat(), loc))
        facts.append(_Client(cid, segment, iso, region, status, signup, last_active))
    return rows, facts


def _company_name(rng: random.Random, segment: str, loc: int, taken: set[str]) -> tuple[str, str]:
    """A company name not in `taken`, and the domain its e-mail addresses use (without the TLD)."""
    city, _country, iso = CITIES[loc - 1][:3]
    while True:
        if segment == "public sector":
            templates: tuple[str, ...]
            if iso in ("DE", "AT") or city == "Zürich":
                templates = (
                    "Stadtwerke {c}",
                    "Stadt {c}",
                    "Universitätsklinikum {c}",
                    "Landesbibliothek {c}",
                )
            elif iso in ("FR", "BE", "LU", "CH"):
                templates = ("Ville de {c}", "Université de {c}", "Métropole de {c}")
            else:
                templates = ("City of {c}", "University of {c}", "{c} Metro Transit", "{c} Public Library")
            name = rng.choice(templates).format(c=city)
            domain = _ascii_slug(name)
        else:
            stem, industry = rng.choice(STEMS), rng.choice(INDUSTRIES)
            domain = _ascii_slug(f"{stem} {industry}")
            if segment == "startup" and rng.random() < 0.5:
                kind = rng.choice(("AI", "Labs", "Cloud", "Health", "Pay"))
                name, domain = f"{stem} {kind}", _ascii_slug(f"{stem}{kind}")
            elif segment == "smb" and rng.random() < 0.3:
                name = f"{stem} {industry}"
            elif iso == "ID":
                name = f"PT {stem} {industry} Tbk"
            else:
                name = f"{stem} {industry} {rng.choice(LEGAL_SUFFIXES[iso])}"
        if name not in taken:
            return name, domain


def _datacenters() -> list[tuple[Any, ...]]:
    loc_of = {c[0]: i for i, c in enumerate(CITIES, start=1)}
    return [(i, d[0], d[1], d[2], d[3].isoformat(), loc_of[d[4]]) for i, d in enumerate(DATACENTERS, start=1)]


def _computes(rng: random.Random) -> list[tuple[Any, ...]]:
    rows = []
    sizes = [6 if d[1].startswith("dev") else 9 if d[1].startswith("edge") else 17 for d in DATACENTERS]
    hid = 0
    for dc_id, (count, d) in enumerate(zip(sizes, DATACENTERS, strict=True), start=1):
        for n in range(1, count + 1):
            hid += 1
            cores = rng.choice((16, 24, 32, 48, 64, 64, 96, 128))
            memory = cores * rng.choice((4, 8, 8, 16))
            status = rng.choices(("active", "maintenance", "retired"), (84, 8, 8))[0]
            commissioned = _day(rng, d[3], date(2026, 3, 31))
            rows.append((hid, f"esx-{d[5]}-{n:03d}", dc_id, cores, memory, status, commissioned.isoformat()))
    return rows


def _pools(rng: random.Random) -> tuple[list[tuple[Any, ...]], list[_Pool]]:
    rows: list[tuple[Any, ...]] = []
    facts: list[_Pool] = []
    numbers: dict[str, int] = {}
    region_of = {c[0]: c[3] for c in CITIES}
    # Every datacenter gets at least four pools so Lucy's Q1 ("datacenters named dev...") has answers.
    dcs = [i for i in range(1, len(DATACENTERS) + 1) for _ in range(4)]
    big = [i for i, d in enumerate(DATACENTERS, start=1) if d[1].startswith("prod")]
    dcs += [rng.choice(big) for _ in range(80 - len(dcs))]
    for pid, dc_id in enumerate(dcs, start=1):
        _code, name, tier, opened, city, _site = DATACENTERS[dc_id - 1]
        if name.startswith("dev"):
            purpose = rng.choice(("ci", "staging", "k8s", "batch", "analytics"))
        else:
            purpose = rng.choice(POOL_PURPOSES)
        numbers[purpose] = numbers.get(purpose, 0) + 1
        status = rng.choices(("active", "suspended", "decommissioned"), (84, 6, 10))[0]
        created = _day(rng, max(opened, date(2018, 1, 1)), date(2026, 2, 28))
        last = (
            LAST_DAY if status != "decommissioned" else _day(rng, max(created, FIRST_DAY), date(2026, 4, 30))
        )
        price = 0.042 * (1.25 if name.startswith("edge") else 1.0) * (1.15 if tier == "Tier IV" else 1.0)
        price *= 0.7 if name.startswith("dev") else 1.0
        rows.append((pid, f"rp-{purpose}-{numbers[purpose]:02d}", dc_id, status, created.isoformat()))
        facts.append(_Pool(pid, dc_id, region_of[city], status, created, last, price))
    return rows, facts


def _pool_clients(
    rng: random.Random, clients: list[_Client], pools: list[_Pool]
) -> list[tuple[int, int, int, date]]:
    """(id, pool_id, client_id, since) rows of the bridge table, in order of `since`."""
    pairs: list[tuple[int, int, date]] = []
    k_by_segment = {"enterprise": (2, 5), "public sector": (1, 3), "smb": (1, 3), "startup": (1, 2)}
    for client in clients:
        if client.id % 37 == 0:  # a few clients hold no pools (yet): inner joins drop them
            continue
        low, high = k_by_segment[client.segment]
        local = [p for p in pools if p.region == client.region] or pools
        chosen: list[_Pool] = []
        for _ in range(rng.randint(low, high)):
            pool = rng.choice(local if rng.random() < 0.75 else pools)
            if pool not in chosen:
                chosen.append(pool)
        for pool in chosen:
            first = max(client.signup, pool.created)
            last = min(client.last_active, pool.last_active, LAST_DAY)
            if first > last:
                first = last
            pairs.append((pool.id, client.id, _day(rng, first, min(first + timedelta(days=200), last))))
    pairs.sort(key=lambda p: (p[2], p[0], p[1]))
    return [(i, *pair) for i, pair in enumerate(pairs, start=1)]


def _snowflake(rng: random.Random, pools: list[_Pool]) -> Rows:
    rows: Rows = {
        t: []
        for t in (
            "pool_config",
            "config_cpu",
            "config_memory",
            "pool_runtime",
            "runtime_cpu",
            "runtime_memory",
        )
    }
    for pool in pools:
        # Pools created in the last weeks have no configuration yet; decommissioned pools no runtime.
        if pool.created < date(2026, 1, 15):
            cid = len(rows["pool_config"]) + 1
            updated = _day(rng, pool.created, min(pool.last_active, date(2026, 6, 15)))
            rows["pool_config"].append((cid, pool.id, rng.randint(1, 9), updated.isoformat()))
            reservation = rng.choice((0, 0, 2000, 4000, 8000, 16000))
            limit = None if rng.random() < 0.3 else max(reservation, 2000) * rng.choice((2, 3, 4))
            overhead = None if rng.random() < 0.06 else rng.randrange(200, 3000, 10)
            shares = rng.choice((2000, 4000, 4000, 8000, 6000))
            rows["config_cpu"].append(
                (len(rows["config_cpu"]) + 1, cid, reservation, limit, overhead, shares)
            )
            if rng.random() < 0.95:  # a few configurations lack a memory section
                mem_res = rng.choice((0, 4096, 8192, 16384, 32768))
                mem_limit = None if rng.random() < 0.3 else max(mem_res, 8192) * rng.choice((2, 4))
                mem_overhead = rng.randrange(128, 2048, 16)
                rows["config_memory"].append(
                    (len(rows["config_memory"]) + 1, cid, mem_res, mem_limit, mem_overhead)
                )
        if pool.status != "decommissioned":
            rid = len(rows["pool_runtime"]) + 1
            sampled = datetime(2026, 6, 30, 23, 0) + timedelta(seconds=rng.randint(0, 3599))
            rows["pool_runtime"].append((rid, pool.id, sampled.strftime("%Y-%m-%d %H:%M:%S")))
            # Usage straddles the overhead limits, so "overhead limit > usage + 100" splits the pools.
            overall = int(rng.uniform(150, 3400)) if pool.status == "active" else rng.randint(0, 120)
            rows["runtime_cpu"].append((rid, rid, overall, overall + rng.randint(50, 4000)))
            mem_overall = rng.randint(512, 65536) if pool.status == "active" else rng.randint(0, 256)
            rows["runtime_memory"].append((rid, rid, mem_overall, int(mem_overall * rng.uniform(0.55, 0.97))))
    return rows


def _payments(rng: random.Random, clients: list[_Client]) -> Rows:
    out: Rows = {t: [] for t in ("payment", "payment_amount", "tax", "supercharge", "income")}
    segment_weight = {"enterprise": 3.0, "public sector": 2.0, "smb": 1.4, "startup": 1.0}
    segment_size = {"enterprise": 9000.0, "public sector": 5000.0, "smb": 1100.0, "startup": 520.0}
    drafts: list[tuple[date, int, _Client]] = []
    months = _months(FIRST_DAY, LAST_DAY)
    for t, month in enumerate(months):
        end = date(month.year, month.month, calendar.monthrange(month.year, month.month)[1])
        eligible = [c for c in clients if c.signup <= end and c.last_active >= month]
        target = round(62 * (1 + 0.022 * t) * SEASON[month.month - 1] * rng.uniform(0.93, 1.07))
        picks = rng.choices(eligible, [segment_weight[c.segment] for c in eligible], k=target)
        for client in picks:
            last = min(end, client.last_active)
            first = max(month, client.signup) if max(month, client.signup) <= last else last
            drafts.append((_day(rng, first, last), t, client))
    drafts.sort(key=lambda d: (d[0], d[2].id))
    sequence: dict[int, int] = {}
    for pid, (paid_on, t, client) in enumerate(drafts, start=1):
        sequence[paid_on.year] = sequence.get(paid_on.year, 0) + 1
        invoice = f"INV-{paid_on.year}-{sequence[paid_on.year]:05d}"
        if client.iso in SEPA:
            method = rng.choices(("sepa", "card", "wire"), (50, 25, 25))[0]
        else:
            method = rng.choices(("card", "wire"), (55, 45))[0]
        if client.segment in ("enterprise", "public sector") and rng.random() < 0.3:
            method = "wire"
        recent = (LAST_DAY - paid_on).days < 45
        if client.status == "SUS" and (client.last_active - paid_on).days < 60:
            status = rng.choices(("failed", "pending", "settled"), (60, 20, 20))[0]
        elif recent:
            status = rng.choices(("settled", "pending", "failed"), (55, 42, 3))[0]
        else:
            status = rng.choices(("settled", "pending", "failed"), (95, 1, 4))[0]
        out["payment"].append((pid, client.id, paid_on.isoformat(), method, status, invoice))
        currency = CURRENCY.get(client.iso, "USD")
        net = segment_size[client.segment] * math.exp(rng.gauss(0, 0.55)) * (1 + 0.012 * t)
        net = round(net * (1.15 if paid_on.month == 12 else 1.0), 2)
        out["payment_amount"].append((len(out["payment_amount"]) + 1, pid, net, currency))
        out["income"].append((len(out["income"]) + 1, len(out["payment_amount"]), rng.choice(PRODUCT_LINES)))
        rate, jurisdiction = TAX.get(client.iso, (0.0, ""))
        # Public bodies are often exempt; cross-border rules leave some invoices without tax.
        if rate and not (client.segment == "public sector" and rng.random() < 0.5) and rng.random() < 0.9:
            out["payment_amount"].append(
                (len(out["payment_amount"]) + 1, pid, round(net * rate, 2), currency)
            )
            out["tax"].append((len(out["tax"]) + 1, len(out["payment_amount"]), rate, jurisdiction))
        if rng.random() < 0.2:
            reason = rng.choice(SURCHARGE_REASONS)
            fee = round(net * rng.uniform(0.02, 0.12), 2) if reason != "late payment fee" else 40.0
            out["payment_amount"].append((len(out["payment_amount"]) + 1, pid, fee, currency))
            out["supercharge"].append((len(out["supercharge"]) + 1, len(out["payment_amount"]), reason))
    return out


def _retention(rng: random.Random, clients: list[_Client]) -> Rows:
    out: Rows = {"retention": [], "gift": [], "bonus": []}
    drafts: list[tuple[date, int, str, str | None]] = []
    for name, first, last, segments in CAMPAIGNS:
        for client in clients:
            if segments and client.segment not in segments:
                continue
            at_risk = client.status != "ACT" and client.last_active >= first - timedelta(days=120)
            if rng.random() >= (0.5 if at_risk else 0.12) or client.signup > last:
                continue
            started = _day(rng, max(first, client.signup), last)
            channel = None if rng.random() < 0.04 else rng.choice(CHANNELS)
            if (
                client.segment in ("enterprise", "public sector")
                and channel is not None
                and rng.random() < 0.5
            ):
                channel = "account manager"
            drafts.append((started, client.id, name, channel))
    drafts.sort(key=lambda d: (d[0], d[1]))
    for rid, (started, client_id, name, channel) in enumerate(drafts, start=1):
        out["retention"].append((rid, client_id, started.isoformat(), name, channel))
        offer = rng.choices(("gift", "bonus", "both", "neither"), (30, 35, 20, 15))[0]
        if offer in ("gift", "both"):
            item, value = rng.choice(GIFTS)
            out["gift"].append((len(out["gift"]) + 1, rid, item, value))
        if offer in ("bonus", "both"):
            credit = float(rng.choice((100, 250, 500, 500, 1000, 2500, 5000)))
            expires = started + timedelta(days=rng.choice((90, 180, 365)))
            out["bonus"].append((len(out["bonus"]) + 1, rid, credit, expires.isoformat()))
    return out


def _usage(
    rng: random.Random,
    pairs: list[tuple[int, int, int, date]],
    clients: list[_Client],
    pools: list[_Pool],
) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    scale = {"enterprise": 2400.0, "public sector": 1100.0, "smb": 380.0, "startup": 240.0}
    for _, pool_id, client_id, since in pairs:
        client, pool = clients[client_id - 1], pools[pool_id - 1]
        base = scale[client.segment] * math.exp(rng.gauss(0, 0.6))
        growth = rng.uniform(-0.01, 0.05)  # per month
        memory_ratio = rng.choice((2.0, 4.0, 4.0, 8.0))
        steady = rng.random() < 0.65  # the rest use their pool only in some months
        end = min(client.last_active, pool.last_active)
        for t, month in enumerate(_months(max(since, FIRST_DAY), end)):
            if not steady and rng.random() < 0.5:
                continue
            cpu = base * (1 + growth) ** t * SEASON[month.month - 1] * rng.uniform(0.85, 1.15)
            memory = cpu * memory_ratio * rng.uniform(0.9, 1.1)
            cost = cpu * pool.price + memory * 0.0045
            rows.append(
                (pool_id, client_id, month.isoformat(), round(cpu, 1), round(memory, 1), round(cost, 2))
            )
    rows.sort(key=lambda r: (r[2], r[0], r[1]))
    return [(i, *row) for i, row in enumerate(rows, start=1)]


def generate(seed: int = SEED) -> Rows:
    """All rows of the demo database, table by table in foreign-key order."""
    rng = random.Random(seed)
    rows: Rows = {"location": _locations()}
    rows["client"], clients = _clients(rng)
    rows["datacenter"] = _datacenters()
    rows["compute"] = _computes(rng)
    rows["resource_pool"], pools = _pools(rng)
    pairs = _pool_clients(rng, clients, pools)
    rows["pool_client"] = [(i, p, c, since.isoformat()) for i, p, c, since in pairs]
    rows.update(_snowflake(rng, pools))
    rows.update(_payments(rng, clients))
    rows.update(_retention(rng, clients))
    rows["usage"] = _usage(rng, pairs, clients, pools)
    return rows


# ---------------------------------------------------------------------------------------------
# the file


def build_demo(path: Path) -> None:
    """Write the demo database to `path`, atomically replacing whatever is there."""
    demo_file.build(path, lambda conn: _write(conn, generate()))


def _write(conn: sqlite3.Connection, rows: Rows) -> None:
    demo_file.write_rows(conn, SCHEMA.format(version=DEMO_VERSION), rows, DEMO_VERSION)


def ensure_demo(var_dir: Path) -> Path:
    """The demo file under `var_dir`, built first if it is missing, damaged or from another version."""
    return demo_file.ensure(Path(var_dir) / DEMO_PATH_NAME, DEMO_VERSION, build_demo)


def ensure_demo_duckdb(var_dir: Path) -> Path:
    """A DuckDB copy of the demo (core/warehouse/duckdb.py `copy_sqlite`), made again whenever the
    SQLite demo is newer: the same data on DuckDB, for the engine tests and `--engine duckdb`."""
    from core.warehouse.duckdb import copy_sqlite

    source = ensure_demo(var_dir)
    target = Path(var_dir) / f"demo-v{DEMO_VERSION}.duckdb"
    with demo_file.build_lock(target):
        if not target.is_file() or target.stat().st_mtime < source.stat().st_mtime:
            copy_sqlite(source, target)
    return target


def demo_duckdb_settings(var_dir: Path) -> DatabaseSettings:
    """The demo on DuckDB, with the demo's catalog."""
    return DatabaseSettings(
        url=f"duckdb:///{ensure_demo_duckdb(var_dir)}",
        catalog=str(CATALOG_PATH),
        description=DEMO_DESCRIPTION,
    )


def demo_settings(var_dir: Path) -> DatabaseSettings:
    path = ensure_demo(var_dir)
    return DatabaseSettings(
        url=f"sqlite:///{path}",
        catalog=str(CATALOG_PATH),
        description=DEMO_DESCRIPTION,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.demo", description="Build the bundled demo database."
    )
    parser.add_argument("--out", type=Path, help=f"file to write (default: <var dir>/{DEMO_PATH_NAME})")
    args = parser.parse_args(argv)
    if args.out is None:
        from core.settings import load_settings

        args.out = Path(load_settings().var_dir) / DEMO_PATH_NAME
    build_demo(args.out)
    demo_file.print_counts(args.out)
    print(f"wrote {Path(args.out).resolve()} (demo version {DEMO_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
