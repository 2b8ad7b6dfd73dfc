#!/usr/bin/python3
# Debian's python, where apt's python3-matplotlib is (tools/setup.sh installs
# it); a pyenv or venv python first on PATH does not see that package.
"""What a newcomer wants from `lanecast bench --json`: per message size, the
best algorithm with its bandwidth and its share of the link rate, and the
worst; and a plot of bandwidth against size, one line per algorithm.

    build/apps/lanecast bench --nodes 8 --algo all --sizes 1:16M --json > bench.json
    tools/bench_summary.py bench.json                     # the summary table
    tools/bench_summary.py bench.json --plot bench.svg    # and the plot (SVG or PNG)

The plot needs matplotlib (python3-matplotlib, which tools/setup.sh installs); without it
the summary is still printed and the plot is skipped, saying why. Rows that
failed or were not verified count as failed: never the best.
"""
import argparse
import json
import sys
from collections import defaultdict


def size_text(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def summary(rows):
    by_size = defaultdict(list)
    for r in rows:
        by_size[r["size"]].append(r)
    nodes = rows[0]["nodes"] if rows else 0
    rate = rows[0].get("rate_mbit", 0) if rows else 0
    line_mbs = rate / 8 if rate else 0  # Mbit/s -> MB/s (10^6 bytes)
    out = [f"# {nodes} members, links at {rate:g} Mbit/s ({line_mbs:g} MB/s); "
           "share = the best's MB/s / the link's; every member's bytes checked against the root's"]
    out.append(f"{'size':>6}  {'best':<18} {'MB/s':>9} {'share':>6}   {'worst':<18} {'MB/s':>9}  failed")
    for size in sorted(by_size):
        good = [r for r in by_size[size] if r.get("verified") and not r.get("error")]
        bad = [r["algo"] for r in by_size[size] if r not in good]
        # MB/s in the JSON is bytes / us (10^6 bytes per second).
        if good:
            best = max(good, key=lambda r: r["mbps"])
            worst = min(good, key=lambda r: r["mbps"])
            share = f"{best['mbps'] / line_mbs:.2f}" if line_mbs else "-"
            out.append(f"{size_text(size):>6}  {best['algo']:<18} {best['mbps']:>9.1f} {share:>6}   "
                       f"{worst['algo']:<18} {worst['mbps']:>9.1f}  {' '.join(bad) or '-'}")
        else:
            out.append(f"{size_text(size):>6}  (every algorithm failed: {' '.join(bad)})")
    return "\n".join(out)


def plot(rows, path):
    try:
        import matplotlib
    except ImportError:
        return ("no plot: matplotlib is missing: Debian's python3-matplotlib for /usr/bin/python3 "
                "(tools/setup.sh installs it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = defaultdict(list)
    for r in rows:
        if r.get("verified") and not r.get("error"):
            lines[r["algo"]].append((r["size"], r["mbps"]))
    fig, ax = plt.subplots(figsize=(8, 5))
    for algo in sorted(lines):
        pts = sorted(lines[algo])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=algo)
    rate = rows[0].get("rate_mbit", 0) if rows else 0
    if rate:
        ax.axhline(rate / 8, color="grey", linestyle="--", linewidth=1, label=f"link ({rate:g} Mbit/s)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("MB/s (size / time until every member holds it)")
    ax.set_title(f"lanecast bench: {rows[0]['nodes'] if rows else 0} members, in-process fabric")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    return f"plot: {path}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="the output of lanecast bench --json")
    ap.add_argument("--plot", metavar="FILE", help="also write a plot (.svg or .png)")
    a = ap.parse_args()
    try:
        rows = json.load(open(a.json))
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"bench_summary: {a.json}: {e}")
    if not isinstance(rows, list) or not rows:
        sys.exit(f"bench_summary: {a.json}: no rows (expected lanecast bench --json output)")
    print(summary(rows))
    if a.plot:
        print(plot(rows, a.plot))
    return 0 if all(r.get("verified") and not r.get("error") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
