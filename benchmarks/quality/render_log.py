"""Print the validation log (``benchmarks/results/quality_validation_log.jsonl``) as a
Markdown table, in the order the configurations were tried.

Usage::

    python benchmarks/quality/render_log.py [path/to/log.jsonl] [--first N]

``--first N`` numbers the rows from N, to append a later log to a table already
rendered (``VALIDATION_LOG.md`` rows 1-73 were rendered from an earlier log).
"""
from __future__ import annotations

import argparse
import json

from dataclasses import asdict

from common import AS_WRITTEN
from study import LOG


def main() -> None:
    ap = argparse.ArgumentParser(description="Render the validation log as a Markdown table.")
    ap.add_argument("log", nargs="?", default=LOG, help="JSON-lines log (default: %(default)s)")
    ap.add_argument("--first", type=int, default=1, help="number of the first row (default: 1)")
    args = ap.parse_args()
    path, first = args.log, args.first
    rows = [json.loads(line) for line in open(path) if line.strip()]
    names = list(rows[0]["val"]) if rows else []
    print("| # | round | change from the as-written settings | mean | "
          + " | ".join(f"{n} 10% | {n} 90%" for n in names) + " |")
    print("|---|---|---|---|" + "---|---|" * len(names))
    for i, r in enumerate(rows, first):
        cells = " | ".join(f"{r['val'][n][0]:.4f} | {r['val'][n][1]:.4f}" if n in r["val"] else " | "
                           for n in names)
        ref = asdict(AS_WRITTEN)
        change = ", ".join(f"{k}={v}" for k, v in r["config"].items() if ref.get(k) != v) or "(as written)"
        mean = f"{r['val_mean']:.4f}" if all(n in r["val"] for n in names) else "(not all graphs)"
        print(f"| {i} | {r.get('note', '')} | {change} | {mean} | {cells} |")


if __name__ == "__main__":
    main()
