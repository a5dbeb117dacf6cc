"""Searching an opened index: trigram IDF overlap picks candidates, `similarity` ranks them.

Rarest trigrams are scored first, within POSTINGS_BUDGET, so a common trigram never dominates the
time; the best CANDIDATES by that score go on, and at most RERANKED of them (picked by cheaper
rapidfuzz ratios) are scored by `similarity`. Short values with two typos share no trigram with
the keyword, so when nothing close is found the smallest columns are also compared one by one.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import numpy as np
from rapidfuzz import fuzz, process

from core.values.folding import SEP, fold_many, similarity
from core.values.store import LoadedIndex

CANDIDATES = 150  # values taken from the trigram index per lookup
RERANKED = 60  # of which this many are scored word by word by `similarity`
CLOSE = 0.8  # a match this good needs no second pass
POSTINGS_BUDGET = 400_000  # posting entries scored per lookup, rarest trigrams first


def _trigrams(b: bytes) -> set[int]:
    """The 24-bit trigram codes of `b`, as `core.values.store` computes them for values."""
    return {(b[i] << 16) | (b[i + 1] << 8) | b[i + 2] for i in range(len(b) - 2)}


def _query_grams(query: str) -> np.ndarray:
    """Trigrams of the folded query as typed, plus those of its words in any order.

    The index holds values without spaces, so 'thomas wei' and 'wei thomas' differ in their start,
    end and word-junction trigrams; adding those of every order keeps a swapped pair of words
    from losing its candidates.
    """
    ws = query.split()
    codes = _trigrams((SEP + "".join(ws) + SEP).encode())
    if 1 < len(ws) <= 6:
        parts = [w.encode() for w in ws]
        for a in parts:
            codes |= _trigrams(SEP.encode() + a[:2]) | _trigrams(a[-2:] + SEP.encode())
            for b in parts:
                if a is not b:
                    codes |= _trigrams(a[-2:] + b[:1]) | _trigrams(a[-1:] + b[:2])
    return np.fromiter(codes, dtype=np.uint32, count=len(codes))


def _same_number(typed: str, stored: str) -> bool:
    typed, stored = typed.strip(), stored.strip()
    if typed == stored:
        return True
    try:
        return Decimal(typed.replace(",", ".")) == Decimal(stored)
    except InvalidOperation:
        return False


def search(
    idx: LoadedIndex, query: str, k: int, numeric: str | None = None, candidates: int = CANDIDATES
) -> list[tuple[int, float]]:
    """Best value ids for a folded query: trigram IDF overlap picks candidates, `similarity` ranks them.

    `numeric`: the keyword as typed when it is a number; then only equal values count.
    """
    scored = _search_index(idx, query, numeric, candidates)
    if not numeric and (not scored or scored[0][0] < CLOSE):
        seen = {vid for _, _, vid in scored}
        vids, folded, compact = idx.small_columns()
        near = process.extract(
            query.replace(" ", ""), compact, scorer=fuzz.ratio, limit=3 * k, score_cutoff=50
        )
        for _, _, i in near:
            if vids[i] not in seen:
                scored.append((similarity(query, folded[i]), 0.0, vids[i]))
        scored.sort(key=lambda x: (-x[0], -x[1]))
    return [(vid, s) for s, _, vid in scored[:k]]


def _search_index(
    idx: LoadedIndex, query: str, numeric: str | None, candidates: int
) -> list[tuple[float, float, int]]:
    qc = query.replace(" ", "")
    if not qc or idx.n == 0 or len(idx.gram_keys) == 0:
        return []
    qgrams = np.sort(_query_grams(query))
    pos = np.searchsorted(idx.gram_keys, qgrams)
    inside = pos < len(idx.gram_keys)
    pos, qgrams = pos[inside], qgrams[inside]
    pos = pos[idx.gram_keys[pos] == qgrams]
    if not len(pos):
        return []
    starts = idx.gram_off[pos].astype(np.int64)
    ends = idx.gram_off[pos + 1].astype(np.int64)
    df = ends - starts
    order = np.argsort(df, kind="stable")
    budget = np.cumsum(df[order])
    take = order[: max(1, int(np.searchsorted(budget, POSTINGS_BUDGET, side="right")))]
    idf = np.log1p(idx.n / df[take])
    ids = np.concatenate([idx.postings[s:e] for s, e in zip(starts[take], ends[take], strict=True)])
    weights = np.repeat(idf, df[take])
    if len(ids) * 16 < idx.n:  # few postings: score only the ids present
        uniq, inverse = np.unique(ids, return_inverse=True)
        scores = np.bincount(inverse, weights=weights)
    else:
        scores_all = np.bincount(ids, weights=weights, minlength=idx.n)
        for c, ok in enumerate(idx.col_allowed):
            if not ok:
                end = idx.col_starts[c + 1] if c + 1 < len(idx.col_starts) else idx.n
                scores_all[idx.col_starts[c] : end] = 0
        floor = scores_all.max() * 0.25
        uniq = np.flatnonzero(scores_all > floor)
        scores = scores_all[uniq]
    if not idx.col_allowed.all():
        cols = np.searchsorted(idx.col_starts, uniq, side="right") - 1
        mask = idx.col_allowed[cols]
        uniq, scores = uniq[mask], scores[mask]
    if not len(uniq):
        return []
    # Among equal trigram overlap, shorter values are closer to the keyword.
    lengths = (idx.values_off[uniq + 1].astype(np.int64) - idx.values_off[uniq].astype(np.int64)).astype(
        float
    )
    rank = scores - 1e-3 * lengths
    if len(uniq) > candidates:
        top = np.argpartition(-rank, candidates)[:candidates]
        uniq, rank = uniq[top], rank[top]
    vids = uniq.tolist()
    texts = idx.values(uniq)
    if numeric is not None:
        return [
            (1.0, r, v)
            for v, t, r in zip(vids, texts, rank.tolist(), strict=True)
            if _same_number(numeric, t)
        ]
    folded = fold_many(texts)
    if len(vids) > RERANKED:
        # C++ proxies first (whole-string and word-set ratios), the word alignment only for the best.
        whole = process.cdist([qc], [f.replace(" ", "") for f in folded], scorer=fuzz.ratio)[0]
        words = process.cdist([query], folded, scorer=fuzz.token_set_ratio)[0]
        keep = np.argpartition(-np.maximum(whole, words), RERANKED)[:RERANKED].tolist()
        vids, folded, ranks = [vids[i] for i in keep], [folded[i] for i in keep], rank[keep].tolist()
    else:
        ranks = rank.tolist()
    scored = [(similarity(query, f), r, v) for v, f, r in zip(vids, folded, ranks, strict=True)]
    scored.sort(key=lambda x: (-x[0], -x[1]))
    return scored
