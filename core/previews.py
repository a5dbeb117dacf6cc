"""What the state database keeps of an answer: a preview of at most `state.preview_bytes`, cut visibly.

An answer may hold `engine.byte_cap` (20 MB) of rows, each cell up to `cell_cap` (256 KiB), and
its sentence quotes cells. Stored whole in each turn, trace and schedule snapshot, five answers made
a 1 GB state file. What reads them back — a follow-up's context, the Details button, "what
changed" under a scheduled post — needs a glimpse, not the whole (the CSV button runs the SQL
again). So every store that keeps answer data keeps at most a preview, and a cut is always stated:
text ends with `marker`, lists end with a note of what was left out, and rows come back with the
flags a caller stores beside them — a diff, or anything else comparing, must never take a preview
for the whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

PREVIEW_BYTES = 262_144  # the default of `state.preview_bytes`
MIN_TEXT = 32  # bytes of a text kept at least, so a cut value still says what it was about
_MARKER = re.compile(r" … \[preview: [\d,]+ of [\d,]+ bytes\]$")


def marker(kept: int, size: int) -> str:
    """What follows the start of a text cut to `kept` of its `size` bytes."""
    return f" … [preview: {kept:,} of {size:,} bytes]"


def is_cut(text: str) -> bool:
    return bool(_MARKER.search(text))


def size_of(data: Any) -> int:
    """Bytes `data` takes as the JSON the state database stores."""
    text = json.dumps(data, default=str, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "replace"))


def cut_text(text: str, budget: int) -> str:
    """`text` when its UTF-8 fits in `budget` bytes, else its start (whole characters) and `marker`."""
    if len(text) * 4 <= budget:  # fits whatever the characters (no encoding needed)
        return text
    raw = text.encode("utf-8", "replace")
    if len(raw) <= budget:
        return text
    kept = raw[: max(0, budget)].decode("utf-8", "ignore")
    return kept + marker(len(kept.encode("utf-8")), len(raw))


def json_preview(data: Any, budget: int) -> tuple[Any, bool]:
    """`data` (JSON values) when it fits in `budget` bytes; else a preview of it and True.

    One pass, first things first: each text keeps at most a quarter of the budget, and once the
    budget is spent the rest of every list and object is replaced by a note of how many items it
    held. The result takes about `budget` bytes (plus a marker per cut).
    """
    if size_of(data) <= budget:
        return data, False
    shrink = _Shrink(budget, max(MIN_TEXT, budget // 4))
    return shrink.walk(data), True


class _Shrink:
    def __init__(self, budget: int, text_limit: int) -> None:
        self.left = budget
        self.text_limit = text_limit

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            kept = cut_text(value, max(MIN_TEXT, min(self.text_limit, self.left)))
            self.left -= size_of(kept)
            return kept
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for i, (key, item) in enumerate(value.items()):
                if self.left <= 0:
                    out["…"] = f"[{len(value) - i:,} more entries left out]"
                    break
                self.left -= size_of(str(key)) + 1
                out[str(key)] = self.walk(item)
            return out
        if isinstance(value, list | tuple):
            items: list[Any] = []
            for i, item in enumerate(value):
                if self.left <= 0:
                    items.append(f"… [{len(value) - i:,} more items left out]")
                    break
                items.append(self.walk(item))
            return items
        self.left -= size_of(value)
        return value


@dataclass(frozen=True)
class RowsPreview:
    """The first rows of a result that fit a budget, long texts cut: what a snapshot keeps."""

    rows: tuple[tuple[Any, ...], ...]
    values_cut: bool  # some texts are only their start (with `marker`)
    rows_left_out: int  # rows after the kept ones


def rows_preview(rows: Sequence[Sequence[Any]], budget: int) -> RowsPreview:
    """The leading rows (JSON values) that fit in `budget` bytes, no text longer than a sixteenth of
    it, so one huge cell does not push every other row out."""
    text_limit = max(MIN_TEXT, budget // 16)
    kept: list[tuple[Any, ...]] = []
    left, values_cut = budget, False
    for row in rows:
        cells = [cut_text(v, text_limit) if isinstance(v, str) else v for v in row]
        size = size_of(cells)
        if size > left:
            break
        values_cut = values_cut or any(a is not b for a, b in zip(cells, row, strict=True))
        kept.append(tuple(cells))
        left -= size
    return RowsPreview(tuple(kept), values_cut, len(rows) - len(kept))
