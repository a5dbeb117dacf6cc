"""Benchmark of the value index: recall@1/@5, lookup latency, build time and size, against CHESS's LSH.

    python -m core.bench values --synthetic 1000000 [--json]
    python -m core.bench values --db PATH --queries FILE [--json]
    python -m core.bench values --spider ../shared/bench/spider-train [--json]

--synthetic N builds a SQLite database of N distinct realistic values (people, companies,
invoice numbers, host names, SKUs, product titles, addresses) and queries perturbed the way
people type: case, dropped punctuation, swapped, missing or wrong letters, a missing word,
words in another order. FILE holds JSON lines {"query", "table", "column", "value"}. --spider
takes the string literals of Spider's gold SQL (`col = 'value'`), lightly perturbed, per database.

The baseline, measured in the same run, is CHESS's (papers/chess.txt, appendix A.1 and its code):
datasketch MinHash over character 3-grams (100 permutations, one MinHash object per value as CHESS
stores them), MinHashLSH with threshold 0.01, the top 10 by estimated Jaccard re-ranked by edit
distance. Its 3-grams are taken of the lower-cased value, which only helps it. It costs about
1 ms and 4 KB per value, so on large inputs it is built on a sample (--baseline-sample) that
contains every queried value; our index is also measured on that same sample, so the recall
comparison is like for like, and the per-value build cost is extrapolated to N and labelled so.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import random
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.database import Database
from core.settings import DatabaseSettings
from core.values import ValueIndex, build_index, iter_index_values


@dataclass(frozen=True)
class Query:
    query: str
    table: str
    column: str
    value: str
    kind: str = ""


# ---------------------------------------------------------------------------------------------
# synthetic data: combinations of realistic parts, so a million values stay distinct and plausible


def _words(text: str) -> list[str]:
    return text.split()


FIRST = _words(
    """
James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan
Joseph Jessica Thomas Sarah Charles Karen Christopher Nancy Daniel Lisa Matthew Betty Anthony
Margaret Mark Sandra Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth
Carol Kevin Amanda Brian Melissa George Deborah Timothy Stephanie Ronald Rebecca Edward Sharon Jason
Laura Jeffrey Cynthia Ryan Kathleen Jacob Amy Gary Angela Nicholas Shirley Eric Anna Jonathan Brenda
Stephen Pamela Larry Emma Justin Nicole Scott Helen Brandon Samantha Benjamin Katherine Samuel
Christine Gregory Debra Alexander Rachel Frank Carolyn Patrick Janet Raymond Catherine Jack Maria
Dennis Heather Jerry Diane Tyler Ruth Aaron Julie José Zoë Björn François Łukasz Renée Søren
Małgorzata Jürgen Ines Chloé Mateo Sofía Giulia Luca Hiroshi Yuki Wei Priya Arjun Olumide Fatima
Ahmed Noor Aylin Mehmet Sven Ingrid Pieter Anouk Kai Lena Tomasz Agnieszka Dmitri Olga Ana Pedro
"""
)

LAST = _words(
    """
Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez
Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark
Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams
Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Müller Schmidt Schneider Fischer Weber
Meyer Wagner Becker Schulz Hoffmann Koch Richter Klein Wolf Schröder Neumann Schwarz Zimmermann
Braun Krüger Hofmann Hartmann Lange Schmitt Werner Krause Meier Lehmann Köhler Dubois Lefèvre Moreau
Laurent Fournier Girard Bonnet Dupont Lambert Fontaine Rousseau Rossi Russo Ferrari Esposito Bianchi
Romano Colombo Ricci Marino Greco Bruno Gallo Conti Costa Giordano Mancini O'Brien O'Connor McCarthy
Murphy Kelly Sullivan Walsh Byrne Ryan Nowak Kowalski Wiśniewski Wójcik Kowalczyk Kamiński Jansen
Visser Smit Bakker Mulder Bos Vos Peters Hendriks Andersson Johansson Karlsson Nilsson Eriksson
Larsson Olsen Hansen Pedersen Nielsen Sato Suzuki Takahashi Tanaka Watanabe Kim Park Chen Wang Singh
Patel Gupta Silva Santos Oliveira Pereira Almeida Yilmaz Kaya Demir Ivanov Petrov Novak
"""
)

COMPANY_A = _words(
    """
Blue Northern Alpine Golden Pacific Atlantic Silver Green Red Bright Swift Summit Pioneer Royal
United Global Prime Central Eastern Western Southern Coastal Urban Rapid Solid Clear True Bold Noble
Grand Iron Crystal Polar Sunny Misty Quiet Vivid Modern Classic Rocky Sandy Velvet Amber Cedar Maple
Harbor Meadow Granite Copper Cobalt Scarlet Ivory Emerald Sapphire Crimson Lunar Solar Stellar
Arctic Tropical Highland Lowland Riverside Lakeside Hilltop Oakwood Pinecrest Stonebridge Brookfield
"""
)

COMPANY_B = _words(
    """
Harbor Peak River Falcon Oak Bridge Stone Valley Ridge Forest Lake Field Point Crest Gate Tower Wave
Wind Fox Bear Wolf Eagle Hawk Lion Tiger Owl Raven Heron Crane Maple Cedar Pine Birch Willow Aspen
Rock Mountain Ocean Bay Coast Island Harvest Anchor Compass Beacon Lantern Arrow Shield Crown Castle
Forge Mill Works Path Trail Road Line Circle Square Spark Flame Star Moon Sun Sky Cloud Rain Storm
Thunder Frost
"""
)

INDUSTRY = _words(
    """
Logistics Software Foods Consulting Pharma Textiles Energy Robotics Analytics Capital Partners
Holdings Systems Solutions Technologies Networks Media Studios Labs Motors Aviation Marine
Construction Engineering Insurance Finance Ventures Brewing Coffee Bakery Outfitters Apparel
Furniture Hardware Electronics Telecom Biotech Medical Dental Fitness Travel Realty
"""
)

SUFFIX = [
    "Inc.",
    "LLC",
    "GmbH",
    "Ltd",
    "AG",
    "S.A.",
    "B.V.",
    "& Co. KG",
    "Pty Ltd",
    "SARL",
    "Oy",
    "AB",
    "S.p.A.",
    "plc",
]

SITES = _words(
    """
fra ams lhr iad sfo nrt sin syd gru bom cdg mad fco arn hel waw prg vie zrh muc ber dub cph osl lis
ath ist dxb jnb ord dfw lax sea yyz mex scl bog hkg icn pvg del
"""
)
HOST_TYPES = ["esx", "web", "db", "k8s", "gpu", "app", "cache", "lb", "mq", "etl"]
DOC_PREFIX = ["INV", "PO", "CN", "SO", "DN", "RMA"]

BRANDS = _words(
    """
Nordlys Acme Kestrel Fjord Solano Vireo Aurora Tundra Zephyr Larkspur Corvid Halcyon Juniper Marlowe
Orion Pinnacle Quarry Redwood Sierra Talon Umbra Vantage Wexford Yarrow Zenith Alder Bramble Cascade
Dune Ember Flint Glacier Hollow Inlet Jasper Kinfolk Lumen Meridian Nimbus Oxbow Prairie Quill Rune
Saltmarsh Thicket Upland Verdant Willowmere Apex Boreal Cinder Drift Evergreen Fable Grove Heath
Ironbark
"""
)
LINES = _words(
    """
UltraSoft ProFlex AirLite ThermoCore EcoWeave StormShield TrailMaster CityWalk AllDay Everyday
Summit Explorer Classic Heritage Urban Active Performance Comfort Essential Premium Signature Travel
Studio Outdoor Weekend Alpine Coastal Nomad Voyager Horizon Element Origin Prime Motion Balance
Pulse Stride Drift Core
"""
)
MATERIALS = _words(
    """
Cotton Merino Linen Denim Leather Suede Fleece Cashmere Bamboo Hemp Nylon Polyester Wool Silk Canvas
Corduroy Jersey Twill Down Softshell
"""
)
TYPES = _words(
    """
T-Shirt Hoodie Sweater Jacket Parka Vest Shirt Polo Blouse Dress Skirt Jeans Chinos Shorts Leggings
Joggers Socks Beanie Scarf Gloves Cap Backpack Tote Duffel Wallet Belt Sneakers Boots Sandals
Loafers Raincoat Cardigan Blazer Overshirt Pullover Tank Top Windbreaker Anorak Poncho Tunic Kimono
Romper Jumpsuit Pajamas Robe Apron Bandana
"""
)
COLORS = _words(
    """
Black White Navy Grey Charcoal Olive Khaki Beige Burgundy Maroon Teal Mustard Rust Sage Sand Ivory
Cobalt Forest Crimson Lavender
"""
)
SIZES = ["XS", "S", "M", "L", "XL", "XXL", "3XL", "One Size"]

STREETS_DE = _words(
    """
Linden Haupt Bahnhof Schul Garten Berg Kirch Wald Ring Dorf Wiesen Sonnen Mühlen Rosen Birken Eichen
Buchen Feld Friedhof Markt Post Schiller Goethe Mozart Beethoven Kant Luther Bismarck Kaiser König
"""
)
STREETS_EN = _words(
    """
Oak Maple Cedar Pine Elm Willow Birch Chestnut Walnut Cherry Church High Station Mill Park Victoria
King Queen Albert Grange Manor Orchard Meadow Brook River Bridge Castle Market Green North
"""
)
EN_TYPES = ["Street", "Road", "Lane", "Avenue", "Close", "Drive", "Way", "Crescent"]
CITIES_DE = _words(
    """
Berlin Hamburg München Köln Frankfurt Stuttgart Düsseldorf Leipzig Dortmund Essen Bremen Dresden
Hannover Nürnberg Duisburg Bochum Wuppertal Bielefeld Bonn Münster Mannheim Karlsruhe Augsburg
Wiesbaden Göttingen Würzburg Regensburg Lübeck Saarbrücken Zürich Wien Graz Salzburg Basel Bern
"""
)
CITIES_EN = _words(
    """
London Manchester Birmingham Leeds Glasgow Liverpool Bristol Sheffield Edinburgh Cardiff Belfast
Leicester Coventry Nottingham Newcastle Brighton Oxford Cambridge York Bath Dublin Cork Galway
Boston Chicago Seattle Portland Denver Austin Dallas Houston Phoenix Atlanta Miami Toronto Vancouver
Sydney Melbourne
"""
)


def _person(rng: random.Random) -> str:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    r = rng.random()
    if r < 0.4:
        return f"{first} {last}"
    if r < 0.75:
        return f"{first} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {last}"
    return f"{first} {last}-{rng.choice(LAST)}"


def _company(rng: random.Random) -> str:
    return f"{rng.choice(COMPANY_A)} {rng.choice(COMPANY_B)} {rng.choice(INDUSTRY)} {rng.choice(SUFFIX)}"


def _document(rng: random.Random) -> str:
    return f"{rng.choice(DOC_PREFIX)}-{rng.randint(2012, 2025)}-{rng.randint(1, 99999):05d}"


def _host(rng: random.Random) -> str:
    return f"{rng.choice(HOST_TYPES)}-{rng.choice(SITES)}{rng.randint(1, 4)}-{rng.randint(1, 999):03d}"


def _sku(rng: random.Random) -> str:
    letters = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(rng.choice((2, 3))))
    return f"{letters}-{rng.randint(100, 9999)}-{rng.choice(SIZES[:7])}"


def _product(rng: random.Random) -> str:
    material = f" {rng.choice(MATERIALS)}" if rng.random() < 0.7 else ""
    return f"{rng.choice(BRANDS)} {rng.choice(LINES)}{material} {rng.choice(TYPES)}, {rng.choice(COLORS)}, {rng.choice(SIZES)}"


def _address(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{rng.choice(STREETS_DE)}straße {rng.randint(1, 180)}, {rng.choice(CITIES_DE)}"
    return f"{rng.randint(1, 250)} {rng.choice(STREETS_EN)} {rng.choice(EN_TYPES)}, {rng.choice(CITIES_EN)}"


# (table, column, generator, share of the values)
CATEGORIES: list[tuple[str, str, Callable[[random.Random], str], float]] = [
    ("person", "full_name", _person, 0.24),
    ("company", "name", _company, 0.14),
    ("document", "number", _document, 0.10),
    ("host", "hostname", _host, 0.10),
    ("part", "sku", _sku, 0.10),
    ("product", "title", _product, 0.20),
    ("address", "street_address", _address, 0.12),
]


def synthetic_values(n: int, seed: int = 7) -> dict[tuple[str, str], list[str]]:
    """N distinct values spread over the categories (distinct across all of them)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: dict[tuple[str, str], list[str]] = {}
    remaining = n
    for i, (table, column, make, share) in enumerate(CATEGORIES):
        want = remaining if i == len(CATEGORIES) - 1 else round(n * share)
        got: list[str] = []
        misses = 0
        while len(got) < want and misses < 50 * want + 1000:
            v = make(rng)
            if v in seen:
                misses += 1
                continue
            seen.add(v)
            got.append(v)
        out[(table, column)] = got
        remaining -= len(got)
    return out


def write_sqlite(path: Path, values: dict[tuple[str, str], list[str]]) -> None:
    """One table per table name, its columns side by side (shorter ones padded with NULL)."""
    tables: dict[str, dict[str, list[str]]] = {}
    for (table, column), vs in values.items():
        tables.setdefault(table, {})[column] = vs
    conn = sqlite3.connect(path)
    for table, columns in tables.items():
        names = list(columns)
        ddl = ", ".join(f'"{c}" TEXT' for c in names)
        conn.execute(f'CREATE TABLE "{table}" (id INTEGER PRIMARY KEY, {ddl})')
        quoted = ", ".join(f'"{c}"' for c in names)
        marks = ", ".join("?" * len(names))
        rows = itertools.zip_longest(*columns.values())
        conn.executemany(f'INSERT INTO "{table}" ({quoted}) VALUES ({marks})', rows)
    conn.commit()
    conn.close()


# ---------------------------------------------------------------------------------------------
# perturbations: how people type a value they half remember

_LETTER_RUN = re.compile(r"[^\W\d_]{4,}")
_PUNCT = re.compile(r"[^\w\s]")


def _typo(rng: random.Random, text: str) -> str | None:
    """Swap, drop or replace one letter inside a word of 4+ letters (digits are never touched)."""
    runs = list(_LETTER_RUN.finditer(text))
    if not runs:
        return None
    run = rng.choice(runs)
    i = rng.randrange(run.start(), run.end() - 1)
    kind = rng.choice(("swap", "drop", "replace"))
    if kind == "swap":
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    if kind == "drop":
        return text[:i] + text[i + 1 :]
    return text[:i] + rng.choice("aeioulnrst") + text[i + 1 :]


def _word(w: str) -> bool:
    bare = _PUNCT.sub("", w)
    return len(bare) >= 3 and bare.isalpha()


def _missing_word(rng: random.Random, text: str) -> str | None:
    """Leave out an inner word: people keep the first and last words, which often are the only
    ones telling two values apart ('Priya R. Lewis' typed as 'Priya R.' has no right answer)."""
    words = text.split()
    eligible = [i for i in range(1, len(words) - 1) if _word(words[i])]
    if not eligible:
        return None
    i = rng.choice(eligible)
    return " ".join(words[:i] + words[i + 1 :])


def _reorder(rng: random.Random, text: str) -> str | None:
    """Swap two neighbouring words ('Smith John'); parts of codes keep their order."""
    words = _PUNCT.sub(" ", text).split()
    pairs = [i for i in range(len(words) - 1) if _word(words[i]) and _word(words[i + 1])]
    if not pairs:
        return None
    i = rng.choice(pairs)
    words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def _case(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.5:
        return text.lower()
    if r < 0.6:
        return text.upper()
    if r < 0.75:
        return text.title()
    return text


def _punctuation(rng: random.Random, text: str) -> str | None:
    return _PUNCT.sub(rng.choice(("", " ")), text) if _PUNCT.search(text) else None


# edit → (how to make it, how often people make it relative to the others)
EDITS: dict[str, tuple[Callable[[random.Random, str], str | None], int]] = {
    "punctuation": (_punctuation, 1),
    "typo": (_typo, 2),
    "missing word": (_missing_word, 1),
    "word order": (_reorder, 1),
}


def perturb(rng: random.Random, value: str) -> tuple[str, str]:
    """A typed form of `value` and what was done to it: one edit (sometimes two different ones,
    or two typos) chosen among those that apply to this value, and a change of case."""
    text, done = value, []
    for _ in range(2 if rng.random() < 0.2 else 1):
        options = []
        for name, (edit, weight) in EDITS.items():
            if name in done and name != "typo":
                continue
            changed = edit(rng, text)
            if changed and changed.strip() and changed != text:
                options.extend([(name, changed)] * weight)
        if not options:
            break
        name, text = rng.choice(options)
        done.append(name)
    return _case(rng, text), "+".join(done) or "case"


def synthetic_queries(values: dict[tuple[str, str], list[str]], count: int, seed: int = 11) -> list[Query]:
    rng = random.Random(seed)
    pool = [(t, c, v) for (t, c), vs in values.items() for v in rng.sample(vs, min(len(vs), count))]
    out = []
    for table, column, value in rng.sample(pool, min(count, len(pool))):
        typed, kind = perturb(rng, value)
        out.append(Query(typed, table, column, value, kind))
    return out


# ---------------------------------------------------------------------------------------------
# Spider: string literals of gold SQL, per database


def spider_queries(root: Path, seed: int = 5, per_db: int = 40) -> dict[str, list[Query]]:
    """`col = 'literal'` pairs from Spider's gold SQL that exist in the data, as typed and perturbed."""
    import sqlglot
    from sqlglot import exp

    rng = random.Random(seed)
    by_db: dict[str, set[tuple[str, str, str]]] = {}
    for line in (root / "train_gold.sql").read_text().splitlines():
        sql, _, db_id = line.rpartition("\t")
        try:
            tree = sqlglot.parse_one(sql, read="sqlite")
        except Exception:
            continue
        for select in tree.find_all(exp.Select):
            aliases = {}
            for t in select.find_all(exp.Table):
                aliases[(t.alias or t.name).lower()] = t.name
            tables = [t.name for t in select.find_all(exp.Table)]
            for eq in select.find_all(exp.EQ):
                col, lit = eq.left, eq.right
                if isinstance(col, exp.Literal):
                    col, lit = lit, col
                if not (isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string):
                    continue
                table = (
                    aliases.get(col.table.lower()) if col.table else (tables[0] if len(tables) == 1 else None)
                )
                if table and lit.this.strip() and "%" not in lit.this:
                    by_db.setdefault(db_id, set()).add((table, col.name, lit.this))
    out: dict[str, list[Query]] = {}
    for db_id, triples in sorted(by_db.items()):
        path = root / "database" / db_id / f"{db_id}.sqlite"
        if not path.is_file():
            continue
        conn = sqlite3.connect(path)
        found = []
        for table, column, value in sorted(triples):
            try:
                row = conn.execute(
                    f'SELECT "{table}", "{column}" FROM (SELECT 1 AS "{table}", "{column}" FROM "{table}" '
                    f'WHERE "{column}" = ? LIMIT 1)',
                    (value,),
                ).fetchone()
                real = conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND lower(name) = lower(?)", (table,)
                ).fetchone()
                cols = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            except sqlite3.Error:
                continue
            col_name = next((c[1] for c in cols if c[1].lower() == column.lower()), None)
            if row and real and col_name:
                found.append((real[0], col_name, value))
        conn.close()
        queries = []
        for table, column, value in rng.sample(found, min(per_db, len(found))):
            queries.append(Query(value, table, column, value, "as written"))
            typed, kind = perturb(rng, value)
            if typed != value:
                queries.append(Query(typed, table, column, value, kind))
        if queries:
            out[db_id] = queries
    return out


# ---------------------------------------------------------------------------------------------
# measuring


def _percentile(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def _hit(q: Query, found: list[tuple[str, str, str]]) -> int | None:
    """Rank (0-based) of the expected value among `found`, or None."""
    for i, (t, c, v) in enumerate(found):
        if t.lower() == q.table.lower() and c.lower() == q.column.lower() and v == q.value:
            return i
    return None


def evaluate(lookup: Callable[[str], list[tuple[str, str, str]]], queries: list[Query]) -> dict[str, Any]:
    ranks: list[int | None] = []
    times: list[float] = []
    misses: list[dict[str, Any]] = []
    for q in queries:
        t0 = time.perf_counter()
        found = lookup(q.query)
        times.append((time.perf_counter() - t0) * 1000)
        rank = _hit(q, found)
        ranks.append(rank)
        if rank is None and len(misses) < 15:
            misses.append(
                {"query": q.query, "expected": q.value, "kind": q.kind, "got": [v for _, _, v in found[:3]]}
            )
    n = max(len(queries), 1)
    return {
        "queries": len(queries),
        "recall_at_1": round(sum(r == 0 for r in ranks) / n, 4),
        "recall_at_5": round(sum(r is not None and r < 5 for r in ranks) / n, 4),
        "p50_ms": round(_percentile(times, 50), 3),
        "p95_ms": round(_percentile(times, 95), 3),
        "misses": misses,
    }


def _database(sqlite_path: Path, var_dir: Path, name: str = "bench") -> Database:
    return Database(name=name, config=DatabaseSettings(url=f"sqlite:///{sqlite_path}"), var_dir=var_dir)


def _ours(db: Database) -> Callable[[str], list[tuple[str, str, str]]]:
    index = ValueIndex(db)

    def lookup(text: str) -> list[tuple[str, str, str]]:
        return [(m.table, m.column, m.value) for m in index.lookup(text, k=5, min_score=0.0)]

    return lookup


class LshBaseline:
    """CHESS's value retrieval: MinHash LSH over 3-grams, top 10 by Jaccard, re-ranked by edit distance."""

    def __init__(
        self, entries: list[tuple[str, str, str]], num_perm: int = 100, threshold: float = 0.01
    ) -> None:
        from datasketch import MinHash, MinHashLSH

        self._minhash_cls = MinHash
        self.num_perm = num_perm
        self.entries = entries
        self.lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self.minhashes: dict[int, Any] = {}
        for i, (_, _, value) in enumerate(entries):
            m = self._minhash(value)
            self.minhashes[i] = m
            self.lsh.insert(i, m)

    def _minhash(self, text: str) -> Any:
        m = self._minhash_cls(num_perm=self.num_perm)
        text = text.lower()
        for i in range(len(text) - 2):
            m.update(text[i : i + 3].encode("utf8"))
        return m

    def size_bytes(self) -> int:
        return len(pickle.dumps(self.lsh, protocol=pickle.HIGHEST_PROTOCOL)) + len(
            pickle.dumps(self.minhashes, protocol=pickle.HIGHEST_PROTOCOL)
        )

    def lookup(self, text: str) -> list[tuple[str, str, str]]:
        from rapidfuzz.distance import Levenshtein

        q = self._minhash(text)
        near = sorted(((q.jaccard(self.minhashes[c]), c) for c in self.lsh.query(q)), reverse=True)[:10]
        ranked = sorted(
            near,
            key=lambda x: -Levenshtein.normalized_similarity(text.lower(), self.entries[x[1]][2].lower()),
        )
        return [self.entries[c] for _, c in ranked[:5]]


def run_baseline(entries: list[tuple[str, str, str]], queries: list[Query]) -> dict[str, Any]:
    t0 = time.perf_counter()
    baseline = LshBaseline(entries)
    build_s = time.perf_counter() - t0
    result = evaluate(baseline.lookup, queries)
    size = baseline.size_bytes()
    return {
        "values": len(entries),
        "build_s": round(build_s, 3),
        "bytes_per_value": round(size / max(len(entries), 1), 1),
        **{k: result[k] for k in ("recall_at_1", "recall_at_5", "p50_ms", "p95_ms", "queries")},
    }


def _index_size(db: Database) -> int:
    from core.values import index_path

    return sum(f.stat().st_size for f in index_path(db).iterdir())


def measure(
    sqlite_path: Path,
    queries: list[Query],
    work: Path,
    *,
    baseline_sample: int,
    baseline_queries: int,
    progress: bool,
) -> dict[str, Any]:
    """Build our index on `sqlite_path`, run the queries, then the LSH baseline on a sample."""
    from core.values import text_progress

    db = _database(sqlite_path, work / "var")
    t0 = time.perf_counter()
    stats = build_index(db, text_progress() if progress else None)
    build_s = time.perf_counter() - t0
    ours = evaluate(_ours(db), queries)
    size = _index_size(db)
    result: dict[str, Any] = {
        "values": stats.values,
        "columns": stats.columns,
        "recall_at_1": ours["recall_at_1"],
        "recall_at_5": ours["recall_at_5"],
        "p50_ms": ours["p50_ms"],
        "p95_ms": ours["p95_ms"],
        "build_s": round(build_s, 3),
        "bytes_per_value": round(size / max(stats.values, 1), 1),
        "queries": len(queries),
    }
    if baseline_sample <= 0:
        return {**result, "misses": ours["misses"]}

    # The baseline on a sample holding every queried value (it cannot find what it did not index).
    rng = random.Random(3)
    sub_queries = rng.sample(queries, min(baseline_queries, len(queries)))
    wanted = {(q.table.lower(), q.column.lower(), q.value) for q in sub_queries}
    entries = list(iter_index_values(db))
    must = [e for e in entries if (e[0].lower(), e[1].lower(), e[2]) in wanted]
    rest = [e for e in entries if (e[0].lower(), e[1].lower(), e[2]) not in wanted]
    sample = must + rng.sample(rest, max(0, min(len(rest), baseline_sample - len(must))))
    if progress:
        print(f"[bench] LSH baseline on {len(sample):,} of {len(entries):,} values", file=sys.stderr)
    base = run_baseline(sample, sub_queries)
    # Our index on exactly the same sample and queries, for a like-for-like recall.
    same = _sample_database(sample, work / "sample.sqlite")
    same_db = _database(same, work / "var-sample", name="bench-sample")
    build_index(same_db)
    ours_same = evaluate(_ours(same_db), sub_queries)
    scale = len(entries) / max(len(sample), 1)
    return {
        **result,
        "baseline_recall_at_5": base["recall_at_5"],
        "baseline_p95_ms": base["p95_ms"],
        "baseline_build_s": base["build_s"],
        "baseline_values": base["values"],
        "baseline_queries": base["queries"],
        "baseline_recall_at_1": base["recall_at_1"],
        "baseline_p50_ms": base["p50_ms"],
        "baseline_bytes_per_value": base["bytes_per_value"],
        "baseline_build_s_extrapolated": round(base["build_s"] * scale, 1),
        "recall_at_5_on_baseline_sample": ours_same["recall_at_5"],
        "p95_ms_on_baseline_sample": ours_same["p95_ms"],
        "build_speedup": round(base["build_s"] * scale / max(build_s, 1e-9), 1),
        "size_ratio": round(base["bytes_per_value"] / max(result["bytes_per_value"], 1e-9), 1),
        "misses": ours["misses"],
    }


def _sample_database(entries: Iterable[tuple[str, str, str]], path: Path) -> Path:
    values: dict[tuple[str, str], list[str]] = {}
    for t, c, v in entries:
        values.setdefault((t, c), []).append(v)
    path.unlink(missing_ok=True)
    write_sqlite(path, values)
    return path


def _load_queries(path: Path) -> list[Query]:
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(Query(str(d["query"]), d["table"], d["column"], str(d["value"]), d.get("kind", "")))
    return out


def _spider(root: Path, work: Path, progress: bool) -> dict[str, Any]:
    per_db = spider_queries(root)
    ranks_1 = ranks_5 = total = 0
    times: list[float] = []
    misses: list[dict[str, Any]] = []
    by_kind: dict[str, list[int]] = {}
    for db_id, queries in per_db.items():
        db = _database(root / "database" / db_id / f"{db_id}.sqlite", work / "var", name=db_id)
        build_index(db)
        lookup = _ours(db)
        for q in queries:
            t0 = time.perf_counter()
            found = lookup(q.query)
            times.append((time.perf_counter() - t0) * 1000)
            rank = _hit(q, found)
            total += 1
            ranks_1 += rank == 0
            ranks_5 += rank is not None and rank < 5
            by_kind.setdefault(q.kind.split("+")[0], []).append(int(rank is not None and rank < 5))
            if rank is None and len(misses) < 25:
                misses.append(
                    {
                        "db": db_id,
                        "query": q.query,
                        "expected": f"{q.table}.{q.column}={q.value}",
                        "got": [f"{t}.{c}={v}" for t, c, v in found[:3]],
                    }
                )
        if progress:
            print(f"[bench] {db_id}: {len(queries)} queries", file=sys.stderr)
    return {
        "databases": len(per_db),
        "queries": total,
        "recall_at_1": round(ranks_1 / max(total, 1), 4),
        "recall_at_5": round(ranks_5 / max(total, 1), 4),
        "p50_ms": round(_percentile(times, 50), 3),
        "p95_ms": round(_percentile(times, 95), 3),
        "recall_at_5_by_kind": {k: round(sum(v) / len(v), 3) for k, v in sorted(by_kind.items())},
        "misses": misses,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.bench values", description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--synthetic", type=int, metavar="N", help="N distinct synthetic values")
    source.add_argument("--db", type=Path, help="a SQLite database file (with --queries)")
    source.add_argument(
        "--spider", type=Path, metavar="DIR", help="Spider folder (train_gold.sql, database/)"
    )
    parser.add_argument("--queries", type=Path, help='JSON lines {"query", "table", "column", "value"}')
    parser.add_argument("--count", type=int, default=2000, help="synthetic queries (default 2000)")
    parser.add_argument(
        "--baseline-sample", type=int, default=20_000, help="values the LSH baseline indexes (0: skip)"
    )
    parser.add_argument("--baseline-queries", type=int, default=500, help="queries run against the baseline")
    parser.add_argument("--work", type=Path, help="keep the generated database and indexes here")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    if args.db and not args.queries:
        parser.error("--db needs --queries")
    progress = not args.json or sys.stderr.isatty()
    with tempfile.TemporaryDirectory(prefix="askbase-bench-values-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.spider:
            result = {"mode": "spider", **_spider(args.spider, work, progress)}
        elif args.synthetic:
            t0 = time.perf_counter()
            values = synthetic_values(args.synthetic)
            path = work / "synthetic.sqlite"
            path.unlink(missing_ok=True)
            write_sqlite(path, values)
            queries = synthetic_queries(values, args.count)
            if progress:
                print(
                    f"[bench] generated {args.synthetic:,} values in {time.perf_counter() - t0:.1f}s",
                    file=sys.stderr,
                )
            result = {
                "mode": "synthetic",
                **measure(
                    path,
                    queries,
                    work,
                    baseline_sample=args.baseline_sample,
                    baseline_queries=args.baseline_queries,
                    progress=progress,
                ),
            }
            kinds: dict[str, int] = {}
            for q in queries:
                kinds[q.kind] = kinds.get(q.kind, 0) + 1
            result["query_kinds"] = kinds
        else:
            result = {
                "mode": "queries",
                **measure(
                    args.db.resolve(),
                    _load_queries(args.queries),
                    work,
                    baseline_sample=args.baseline_sample,
                    baseline_queries=args.baseline_queries,
                    progress=progress,
                ),
            }
    misses = result.pop("misses", [])
    if args.json:
        print(json.dumps(result))
    else:
        for m in misses:
            print("miss:", json.dumps(m, ensure_ascii=False))
        width = max(len(k) for k in result)
        for k, v in result.items():
            print(f"{k:<{width}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
