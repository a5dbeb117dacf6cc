"""What check() returns, and how a check inside the guard says no."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    sql: str  # the SQL to run (LIMIT applied), in the target dialect; "" when denied
    reason: str = ""  # when denied, plain English that follows "it": "writes data (UPDATE)"
    tables: tuple[str, ...] = ()


class Deny(Exception):
    """Raised by any check; check() turns it into a DENY verdict with this reason."""

    def __init__(self, reason: str, *, unparsable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unparsable = unparsable  # the text is not SQL at all (the database would refuse it too)
