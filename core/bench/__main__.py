"""Dispatch `python -m core.bench NAME ...` to `core.bench.NAME.main(argv)`."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "joins": "join-view synthesis against Spider gold joins",
    "values": "value index recall, latency and size against a MinHash-LSH baseline",
    "ask": "execution accuracy of whole questions: keyword, LLM or the plain-prompt baseline",
    "clarify": "accuracy after 0-4 clarification rounds with a scripted user",
    "slack-load": "a burst of signed Slack events against serve --http: resets, ack latency, answered once",
    "teams-load": "a burst of activities against serve --teams, and a locked state DB: ack latency, answered once",
    "keyword_joins": "keyword mode's join rules against Spider gold joins (what they decline)",
    "verified": "verified-query reuse on a paraphrase set: precision, recall, match latency",
    "reflect": "a 10,000-table schema in DuckDB: bulk reflection and cache re-read against table by table",
    "linking": "retrieve, scope and prompt synthesis per question: the demo among 10,000 tables vs the demo alone",
    "learn": "definitions learned from corrections on half a question set, measured on the other half",
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in BENCHMARKS:
        print("usage: python -m core.bench {" + "|".join(BENCHMARKS) + "} [options]\n")
        for name, what in BENCHMARKS.items():
            print(f"  {name:10} {what}")
        return 2
    module = importlib.import_module(f"core.bench.{argv[0].replace('-', '_')}")
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
