"""Write README.md's settings reference from the settings schema.

``python scripts/settings_reference.py`` replaces the table between the README's
``settings-reference`` markers with :func:`sepne_spark.settings.reference_table`;
``--check`` only says whether it is up to date (exit 1 if not).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sepne_spark.settings import reference_table  # noqa: E402

START = "<!-- settings-reference: start (scripts/settings_reference.py writes it) -->\n"
END = "<!-- settings-reference: end -->\n"


def with_table(text: str) -> str:
    """``text`` (README's) with the table between the markers replaced."""
    head, sep, rest = text.partition(START)
    if not sep or END not in rest:
        raise SystemExit("README.md has no settings-reference markers")
    return head + START + reference_table() + END + rest.partition(END)[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that README.md is up to date")
    args = ap.parse_args()
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    new = with_table(text)
    if args.check:
        return 0 if new == text else 1
    readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
