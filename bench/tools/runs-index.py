#!/usr/bin/env python3
"""Writes bench/runs/INDEX.md from every bench/runs/<run>/summary.json.

Usage: python3 bench/tools/runs-index.py   (from anywhere; rewrites the file in place)

The preamble is bench/tools/runs-index.head.md; one table row per run follows, oldest first.
crates/report/tests/bench_runs.rs checks that every run has a row.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = os.path.join(HERE, "..", "runs")


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def main():
    rows = []
    for run in sorted(os.listdir(RUNS)):
        path = os.path.join(RUNS, run, "summary.json")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            s = json.load(f)
        sup = s.get("superseded_by")
        sup = f"[{sup}]({sup}/)" if sup else ""
        rows.append(
            f"| [{run}]({run}/) | {s['date']} | {cell(s['question'])} | {cell(s['answer'])} "
            f"| {s['commit']} | {sup} |"
        )
    with open(os.path.join(HERE, "runs-index.head.md"), encoding="utf-8") as f:
        head = f.read()
    with open(os.path.join(RUNS, "INDEX.md"), "w", encoding="utf-8") as f:
        f.write(head)
        f.write("| run | date | question | answer | commit | superseded by |\n")
        f.write("|---|---|---|---|---|---|\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
