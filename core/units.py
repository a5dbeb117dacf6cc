"""Units of measure of a catalog column, and numbers written with them.

A catalog may name a column's unit (`unit: €`); most catalogs only say it in words ("Credit
granted, in euros", "CPU guaranteed to the pool, in MHz"), so a closed vocabulary of unit words
is read from the description too. Unknown words give no unit: a missing unit is better than a
wrong one. Pure functions, no I/O.
"""

from __future__ import annotations

import re

from core.catalog import Column

# Words people write after "in" in a description → the symbol shown next to numbers.
UNIT_WORDS: dict[str, str] = {
    "euro": "€",
    "euros": "€",
    "eur": "€",
    "dollars": "$",
    "us dollars": "$",
    "usd": "$",
    "pounds": "£",
    "british pounds": "£",
    "gbp": "£",
    "swiss francs": "CHF",
    "chf": "CHF",
    "percent": "%",
    "per cent": "%",
    "percentage points": "pp",
    "hz": "Hz",
    "khz": "kHz",
    "mhz": "MHz",
    "ghz": "GHz",
    "bytes": "B",
    "kb": "KB",
    "kilobytes": "KB",
    "mb": "MB",
    "megabytes": "MB",
    "gb": "GB",
    "gigabytes": "GB",
    "tb": "TB",
    "terabytes": "TB",
    "gigabyte-hours": "GB·h",
    "gb-hours": "GB·h",
    "hours": "h",
    "minutes": "min",
    "seconds": "s",
    "milliseconds": "ms",
    "days": "days",
    "kilometres": "km",
    "kilometers": "km",
    "km": "km",
    "metres": "m",
    "meters": "m",
    "miles": "mi",
    "kilograms": "kg",
    "kg": "kg",
    "grams": "g",
    "tonnes": "t",
    "litres": "l",
    "liters": "l",
    "kwh": "kWh",
    "watts": "W",
    "degrees": "°",
    "decimal degrees": "°",
}
IN_WORDS = re.compile(r"\b(?:in|measured in|expressed in)\s+([a-z][a-z\- ]{0,24}?)\s*(?=[.,;:()]|$)", re.I)
PREFIX_UNITS = frozenset({"$", "£"})
GLUED_UNITS = frozenset({"%", "°"})


def unit_of(column: Column) -> str:
    """The column's unit: the catalog's `unit`, else one named in its description, else ""."""
    if column.unit:
        return column.unit
    for match in IN_WORDS.finditer(column.description or ""):
        words = " ".join(match.group(1).lower().split())
        for candidate in (words, words.removeprefix("the "), words.rsplit(" ", 1)[-1]):
            if candidate in UNIT_WORDS:
                return UNIT_WORDS[candidate]
    return ""


def with_unit(number: str, unit: str) -> str:
    """'12,300' and '€' → '12,300 €'; '$' and '£' lead; '%' and '°' are written without a space."""
    if not unit:
        return number
    if unit in PREFIX_UNITS:
        return f"-{unit}{number[1:]}" if number.startswith("-") else f"{unit}{number}"
    if unit in GLUED_UNITS:
        return f"{number}{unit}"
    return f"{number} {unit}"
