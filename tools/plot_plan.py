#!/usr/bin/python3
# Debian's python, where apt's python3-matplotlib is (tools/setup.sh installs
# it); a pyenv or venv python first on PATH does not see that package.
"""Plot and tabulate `lanecast plan --json` output.

    lanecast plan --algo all --nodes 2:1024 --size 64K,8M --json > plan.json
    tools/plot_plan.py plan.json -o docs/plan.png        # one panel per size
    tools/plot_plan.py plan.json --table                 # markdown table
    tools/plot_plan.py plan.json --table --into docs/algorithms.md
                       # the table replaces what stands between the lines
                       # <!-- plan-table --> and <!-- /plan-table --> of that file

Input: one or more files (or stdin) holding JSON arrays of plan objects, or one
object per line. Each object needs algo, nodes, size and predicted_us (the
fields of issue 3); other fields are ignored.
"""
import argparse
import json
import sys
from collections import defaultdict

from plot_labels import size_text, time_text


def load(paths):
    runs = []
    texts = [open(p).read() for p in paths] if paths else [sys.stdin.read()]
    for text in texts:
        dec = json.JSONDecoder()
        i = 0
        while i < len(text):
            while i < len(text) and text[i] in " \t\r\n,":
                i += 1
            if i >= len(text):
                break
            obj, i = dec.raw_decode(text, i)
            runs.extend(obj if isinstance(obj, list) else [obj])
    for r in runs:
        for field in ("algo", "nodes", "size", "predicted_us"):
            if field not in r:
                sys.exit(f"plot_plan: an object lacks '{field}': {json.dumps(r)[:120]}")
    return runs


def table(runs, out):
    """Rows: algorithm x nodes; columns: sizes; cells: predicted time."""
    sizes = sorted({r["size"] for r in runs})
    cell = {(r["algo"], r["nodes"], r["size"]): r for r in runs}
    keys = sorted({(r["algo"], r["nodes"]) for r in runs}, key=lambda k: (k[0], k[1]))
    out.write("| algorithm | nodes | " + " | ".join(size_text(s) for s in sizes) + " |\n")
    out.write("|---|---:|" + "---:|" * len(sizes) + "\n")
    for algo, p in keys:
        cells = []
        for s in sizes:
            r = cell.get((algo, p, s))
            if r is None:
                cells.append("")
            elif r.get("complete", True) is False:
                cells.append("incomplete")
            else:
                cells.append(time_text(r["predicted_us"], 4))
        out.write(f"| {algo} | {p} | " + " | ".join(cells) + " |\n")


def plot(runs, path, title):
    try:
        import matplotlib
    except ImportError:
        sys.exit("plot_plan: needs matplotlib: Debian's python3-matplotlib for /usr/bin/python3 "
                 "(tools/setup.sh installs it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({r["size"] for r in runs})
    cols = min(2, len(sizes))
    rows = (len(sizes) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.6 * rows), squeeze=False)
    for ax in axes.flat[len(sizes):]:
        ax.set_visible(False)
    for ax, size in zip(axes.flat, sizes):
        series = defaultdict(list)
        for r in runs:
            if r["size"] == size and r.get("complete", True):
                series[r["algo"]].append((r["nodes"], r["predicted_us"]))
        for algo in sorted(series):
            pts = sorted(series[algo])
            ax.plot([p for p, _ in pts], [t / 1e3 for _, t in pts], marker="o", ms=3, label=algo)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("nodes (root included)")
        ax.set_ylabel("predicted completion (ms)")
        ax.set_title(f"{size_text(size)} message")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*", help="JSON files from lanecast plan --json (default: stdin)")
    ap.add_argument("-o", "--output", default="docs/plan.png", help="PNG to write [docs/plan.png]")
    ap.add_argument("--table", action="store_true", help="print a markdown table instead of plotting")
    ap.add_argument("--title", default="", help="figure title")
    ap.add_argument("--into", metavar="MARKDOWN", help="with --table: replace the table in this file "
                    "between <!-- plan-table --> and <!-- /plan-table -->")
    args = ap.parse_args()
    runs = load(args.inputs)
    if not runs:
        sys.exit("plot_plan: no plan objects in the input")
    if args.table and args.into:
        import io
        buf = io.StringIO()
        table(runs, buf)
        text = open(args.into).read()
        begin, end = "<!-- plan-table -->\n", "<!-- /plan-table -->"
        i, j = text.find(begin), text.find(end)
        if i < 0 or j < i:
            sys.exit(f"plot_plan: {args.into} has no {begin.strip()} ... {end} block")
        open(args.into, "w").write(text[: i + len(begin)] + buf.getvalue() + text[j:])
        print(f"updated the table in {args.into}")
    elif args.table:
        table(runs, sys.stdout)
    else:
        plot(runs, args.output, args.title)
        print(f"wrote {args.output} ({len(runs)} runs)")


if __name__ == "__main__":
    main()
