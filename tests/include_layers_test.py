#!/usr/bin/env python3
"""Checks that every #include in src/ runs from a layer down to a lower one
(docs/architecture.md, "Layers"): a file may include its own directory and
the layers below its own, never one beside or above it.

A unit is a directory of src/stg (`models/families/x.cc` is in `models`), a
file directly in src/stg (`stg/options.h` is `options`), `cli` or `python`.
Run: tests/include_layers_test.py --repo REPO (exit status 1 on an edge that
goes up or sideways, listing each with its file).
"""
import argparse
import pathlib
import re
import sys

# Lowest first; a unit may include the units of the rows above its own.
LAYERS = [
    ["util", "hardware", "trace_format", "io"],
    ["expr"],
    ["mesh"],
    ["graph"],
    ["lower", "passes"],
    ["options"],
    ["emit", "report"],
    ["models"],
    ["frameworks"],
    ["workloads"],
    ["tools"],
    ["generate"],
    ["sweep", "summary_json"],
    ["cli"],
    ["python"],
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def unit_of_path(parts):
    """The unit of a path relative to src/ (a list of its parts)."""
    if parts[0] == "stg":
        return parts[1].split(".")[0] if len(parts) == 2 else parts[1]
    return parts[0]


def rank_table():
    return {unit: rank for rank, row in enumerate(LAYERS) for unit in row}


def edges(src):
    """(from unit, to unit) -> the first 'file -> include' that makes it."""
    found = {}
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(src).parts
        here = unit_of_path(rel)
        for line in path.read_text(errors="replace").splitlines():
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue  # a file of the same directory, or a generated header
            there = unit_of_path(m.group(1).split("/"))
            if there != here:
                found.setdefault((here, there), f"{'/'.join(rel)} -> {m.group(1)}")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    rank = rank_table()
    found = edges(pathlib.Path(args.repo) / "src")
    bad = []
    for (a, b), example in sorted(found.items()):
        if a not in rank or b not in rank:
            bad.append(f"unit not in the table of layers: {example}")
        elif rank[b] >= rank[a]:
            bad.append(f"{a} -> {b} goes {'sideways' if rank[a] == rank[b] else 'up'}: {example}")
    for line in bad:
        print(line)
    print(f"{len(found)} edges between units, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
