"""Print the validation log (``benchmarks/results/quality_validation_log.jsonl``) as a
Markdown table, in the order the configurations were tried.

Usage::

    python benchmarks/quality/render_log.py [path/to/log.jsonl]
"""
from __future__ import annotations

import json
import sys

from dataclasses import asdict

from common import AS_WRITTEN
from study import LOG


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else LOG
    rows = [json.loads(line) for line in open(path) if line.strip()]
    names = list(rows[0]["val"]) if rows else []
    print("| # | round | change from the as-written settings | mean | "
          + " | ".join(f"{n} 10% | {n} 90%" for n in names) + " |")
    print("|---|---|---|---|" + "---|---|" * len(names))
    for i, r in enumerate(rows, 1):
        cells = " | ".join(f"{r['val'][n][0]:.4f} | {r['val'][n][1]:.4f}" if n in r["val"] else " | "
                           for n in names)
        ref = asdict(AS_WRITTEN)
        change = ", ".join(f"{k}={v}" for k, v in r["config"].items() if ref.get(k) != v) or "(as written)"
        print(f"| {i} | {r.get('note', '')} | {change} | {r['val_mean']:.4f} | {cells} |")


if __name__ == "__main__":
    main()
