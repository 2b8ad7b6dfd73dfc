#!/usr/bin/python3
# Debian's python, where apt's python3-matplotlib is (tools/setup.sh installs
# it); a pyenv or venv python first on PATH does not see that package.
"""Draw a PNG from the JSON of a lanecast command.

    lanecast bench --nodes 8 --algo chain,bintree --sizes 1K:8M --json > bench.json
    tools/plot.py bench.json -o bench.png            # MB/s against size, a line per algorithm
    lanecast bench --stream --messages 20000 --json > stream.json
    tools/plot.py stream.json -o stream.png          # latency histogram and percentiles
    lanecast replay --pcap feed.pcapng --json > replay.json
    tools/plot.py replay.json -o replay.png          # send-time error percentiles
    lanecast plan --algo chain,bintree --nodes 8 --size 1K:8M --json > plan.json
    tools/plot.py plan.json bench.json -o vs.png     # simulated (dashed) against measured (solid)

The kind of each input is told from its fields:
  bench   a list of rows with algo, size, avg_us, mbps (in process, --config),
          or --testbed's object {"testbed": ..., "results": [rows], "links": ...}
  stream  bench --stream's rows: p50_us, p99_us, p999_us, max_us, histogram_us
          (and bare_p50_us ... when a bare thread waited for the same schedule)
  replay  replay's object: send_error_p50_us, send_error_p99_us, send_error_max_us
          and, when there, send_error_histogram_us
  plan    plan's rows: algo, nodes, size, predicted_us
Several inputs of one kind are drawn together; a plan and a bench give the
comparison. "-" reads stdin. A file holding several JSON documents one after
another (runs appended with >>) is read as all of them.

Exit status: 0 written, 2 bad input (missing file, invalid JSON, not one of
these kinds, a field missing) or an unwritable output, 3 matplotlib missing
(apt-get install python3-matplotlib).
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

from plot_labels import size_text, time_text

PROG = "plot.py"


class BadInput(Exception):
    """A problem with the inputs or the output: reported on one line, exit 2."""


# ---------------------------------------------------------------- reading


def read_documents(path):
    """Every JSON document in the file, in order (usually exactly one)."""
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not valid JSON (not UTF-8 text)")
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror or e}")
    docs, dec, i = [], json.JSONDecoder(), 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i == len(text):
            break
        try:
            doc, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise BadInput(f"{path}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})")
        docs.append(doc)
    if not docs:
        raise BadInput(f"{path}: empty")
    return docs


# The fields each kind needs (others are optional and looked up with .get).
NEEDS = {
    "bench": ("algo", "nodes", "size", "avg_us", "mbps"),
    "stream": ("algo", "nodes", "size", "p50_us", "p99_us", "p999_us", "max_us"),
    "replay": ("send_error_p50_us", "send_error_p99_us", "send_error_max_us"),
    "plan": ("algo", "nodes", "size", "predicted_us"),
}


# Histograms: stream's latency, replay's send-time error.
HISTOGRAMS = ("histogram_us", "send_error_histogram_us")


def kind_of(obj):
    """Which command wrote this object (a row of a list, or a whole object)."""
    if not isinstance(obj, dict):
        return None
    if "predicted_us" in obj:
        return "plan"
    if "send_error_p50_us" in obj:
        return "replay"
    # Stream rows carry mbps too, so they are told apart first.
    if "histogram_us" in obj or "p999_us" in obj:
        return "stream"
    if "avg_us" in obj and "mbps" in obj:
        return "bench"
    return None


def load(path):
    """(kind, rows, meta) of one input; meta holds what a testbed run adds."""
    rows, meta = [], {}
    for doc in read_documents(path):
        if isinstance(doc, dict) and "testbed" in doc and "results" in doc:
            # bench --testbed: the rows are rank 0's bench --json, or null when
            # a member died before printing a whole array.
            if not isinstance(doc["results"], list):
                raise BadInput(f"{path}: the testbed run has no results (did a member fail?)")
            rows.extend(doc["results"])
            meta = doc["testbed"] if isinstance(doc["testbed"], dict) else {}
        elif isinstance(doc, list):
            rows.extend(doc)
        else:
            rows.append(doc)
    if not rows:
        raise BadInput(f"{path}: no rows (an empty run?)")
    kinds = {kind_of(r) for r in rows}
    if len(kinds) != 1 or None in kinds:
        raise BadInput(f"{path}: not the JSON of lanecast bench, bench --stream, replay or plan")
    kind = kinds.pop()
    for r in rows:
        for field in NEEDS[kind]:
            value = r.get(field)
            ok = isinstance(value, str) if field == "algo" else (
                isinstance(value, (int, float)) and not isinstance(value, bool))
            if not ok:
                raise BadInput(f"{path}: a {kind} row lacks a usable '{field}'")
        for field in HISTOGRAMS:
            hist = r.get(field, [])
            if not isinstance(hist, list) or not all(
                    isinstance(b, list) and len(b) == 2 and all(isinstance(x, (int, float)) for x in b) for b in hist):
                raise BadInput(f"{path}: a {field} that is not a list of [upper_us, count]")
    return kind, rows, meta


# ---------------------------------------------------------------- labels


def size_axis(ax, sizes):
    """A log2 axis of message sizes, ticked at the sizes run (thinned to ~10)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    ax.set_xscale("log", base=2)
    ticks = sorted(set(sizes))
    step = max(1, math.ceil(len(ticks) / 10))
    ax.xaxis.set_major_locator(FixedLocator(ticks[::step]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_text(x)))
    ax.set_xlabel("message size (bytes)")


def series_label(algo, nodes, all_nodes):
    # The group size joins the label only when the inputs mix several.
    return algo if len(all_nodes) == 1 else f"{algo}, {nodes} members"


# ---------------------------------------------------------------- drawings


def draw_bench(plt, rows, meta, title):
    good = [r for r in rows if not r.get("error")]
    if len(good) < len(rows):
        print(f"{PROG}: left out {len(rows) - len(good)} failed row(s)", file=sys.stderr)
    if not good:
        raise BadInput("every bench row failed: nothing to draw")
    nodes = {r["nodes"] for r in good}
    lines = defaultdict(list)
    for r in good:
        lines[(r["algo"], r["nodes"])].append((r["size"], r["mbps"]))
    fig, ax = plt.subplots(figsize=(9, 5))
    for algo, p in sorted(lines):
        pts = sorted(lines[(algo, p)])
        ax.plot([s for s, _ in pts], [m for _, m in pts], marker="o", ms=3, label=series_label(algo, p, nodes))
    # The links' rate as a ceiling: --testbed's tbf rate, or the fabric's
    # (rate_mbit 0 is an unlimited fabric: no line).
    rate = meta.get("rate_mbit") or good[0].get("rate_mbit") or 0
    if rate:
        ax.axhline(rate / 8, color="grey", ls=":", lw=1, label=f"link rate ({rate:g} Mbit/s = {rate / 8:g} MB/s)")
    size_axis(ax, [r["size"] for r in good])
    ax.set_yscale("log")
    ax.set_ylabel("MB/s (size / time until every member holds it)")
    where = (f"testbed of {meta.get('nodes', '?')} namespaces" if meta else "in-process fabric")
    ax.set_title(title or f"lanecast bench: {', '.join(map(str, sorted(nodes)))} members, {where}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return fig


def draw_histogram(ax, bands, color, label):
    """bands: [[upper_us, count], ...], powers of two (apps/bench/log_histogram.h):
    a band holds the values above half its upper end, up to it; empty bands
    are left out of the JSON and so stay empty here."""
    bands = sorted((float(u), int(n)) for u, n in bands)
    lefts = [u / 2 for u, _ in bands]
    ax.bar(lefts, [n for _, n in bands], width=[u / 2 for u, _ in bands], align="edge",
           color=color, alpha=0.45, edgecolor=color, label=label)


# Percentile markers on a histogram: (field suffix, name, line style).
MARKS = (("p50_us", "p50", ":"), ("p99_us", "p99", "--"), ("p999_us", "p99.9", "-."), ("max_us", "max", "-"))


def percentile_panel(ax, names, series):
    """Points per percentile, one line per series: (values, label, style kwargs).
    symlog: percentiles of 0 (a bare thread on time) still show."""
    for values, label, style in series:
        ax.plot(range(len(names)), values, label=label, **style)
    ax.set_xticks(range(len(names)), names)
    ax.set_yscale("symlog", linthresh=1)
    # From 0, so the axis spans decades and gets ticks even when every value
    # lies within one.
    top = max(v for values, _, _ in series for v in values)
    ax.set_ylim(0, max(10, top) * 2)
    ax.set_ylabel("us (linear below 1, log above)")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def draw_stream(plt, rows, title):
    fig, (hist, pct) = plt.subplots(1, 2, figsize=(9, 5), gridspec_kw={"width_ratios": [3, 2]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    names = [name for _, name, _ in MARKS]
    series = []
    for i, r in enumerate(rows):
        c = colors[i % len(colors)]
        what = f"{r['algo']}, {size_text(r['size'])} B" if len(rows) > 1 else "deliveries"
        if r.get("histogram_us"):
            draw_histogram(hist, r["histogram_us"], c, what)
        for field, name, ls in MARKS:
            hist.axvline(r[field], color=c, ls=ls, lw=1.2, label=f"{name} {time_text(r[field])}")
        series.append(([r[f] for f, _, _ in MARKS], f"stream{'' if len(rows) == 1 else ', ' + what}",
                       dict(color=c, marker="o")))
        if "bare_p50_us" in r:
            series.append(([r.get("bare_" + f, 0) for f, _, _ in MARKS], "bare thread, same schedule",
                           dict(color=c, marker="o", mfc="none", ls="--")))
    hist.set_xscale("log")
    hist.set_yscale("log")
    hist.set_xlabel("latency from publish() to delivery (us)")
    hist.set_ylabel("deliveries per power-of-two band")
    hist.grid(True, which="both", alpha=0.3)
    hist.legend(fontsize=7)
    percentile_panel(pct, names, series)
    pct.set_title("percentiles", fontsize=10)
    r = rows[0]
    rate = f"{r['msgs_per_s']:.0f} msgs/s" if "msgs_per_s" in r else ""
    fig.suptitle(title or f"lanecast bench --stream: {r['nodes']} members, {size_text(r['size'])} B messages"
                 + (f", {rate}" if len(rows) == 1 and rate else ""))
    return fig


def replay_facts(r):
    """What a replay run was, for a box beside the drawing."""
    facts = [f"{r.get('messages_published', '?')} messages published, {r.get('messages_per_s', 0):.0f} msgs/s "
             f"over {r.get('seconds', 0):.2f} s",
             f"file_waits {r.get('file_waits', '?')}, would_block {r.get('would_block', '?')}, "
             f"verified: {'yes' if r.get('verified') else 'no'}"]
    if r.get("timing") == "topspeed":
        facts.append("topspeed: no schedule, so no error")
    return "\n".join(facts)


def draw_replay(plt, rows, title):
    names = ("p50", "p99", "max")
    fields = ("send_error_p50_us", "send_error_p99_us", "send_error_max_us")
    styles = (":", "--", "-")
    fig, ax = plt.subplots(figsize=(9, 5))
    r = rows[0]

    def histogram(r):  # replays before send_error_histogram_us print none
        return r.get("send_error_histogram_us") or r.get("histogram_us")

    def run_label(r):
        return f"{os.path.basename(r.get('pcap', '?'))}, {r.get('timing', '?')}, {r.get('nodes', '?')} members"

    if any(histogram(r) for r in rows):
        # The histogram, with its percentiles marked as bench --stream's are.
        for i, r in enumerate(rows):
            if histogram(r):
                draw_histogram(ax, histogram(r), f"C{i}", run_label(r))
            for field, name, ls in zip(fields, names, styles):
                ax.axvline(r[field], color=f"C{i}", ls=ls, lw=1.2, label=f"{name} {time_text(r[field])}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("send-time error: publish() minus due time (us)")
        ax.set_ylabel("messages per power-of-two band")
        ax.grid(True, which="both", alpha=0.3)
        legend = ax.legend(fontsize=8, loc="upper center", title=replay_facts(r) if len(rows) == 1 else None,
                           title_fontsize=8)
        legend.get_title().set_multialignment("center")
    else:
        # Bars per percentile, a group per run, each bar labelled with its value.
        width = 0.8 / len(rows)
        for i, r in enumerate(rows):
            xs = [k + (i - (len(rows) - 1) / 2) * width for k in range(len(names))]
            values = [r[f] for f in fields]
            ax.bar(xs, values, width=width, color=f"C{i}", label=run_label(r))
            for x, v in zip(xs, values):
                ax.annotate(time_text(v), (x, v), ha="center", va="bottom", fontsize=8,
                            xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(range(len(names)), names)
        # symlog from 0: an error of 0 (topspeed) still gets its bar.
        ax.set_yscale("symlog", linthresh=1)
        top = max(r[f] for r in rows for f in fields)
        ax.set_ylim(0, max(10, top) * 40)  # room above the tallest bar for its label and the legend
        ax.set_ylabel("send-time error: publish() minus due time (us; linear below 1)")
        ax.grid(True, which="both", axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", title=replay_facts(r) if len(rows) == 1 else None,
                  title_fontsize=8)
    ax.set_title(title or (f"lanecast replay: send-time error, {r.get('packets', '?')} packets to "
                           f"{r.get('nodes', '?')} members" if len(rows) == 1 else "lanecast replay: send-time error"))
    return fig


def measured_us(r):
    # span_us: member processes (--config, --testbed), timed on the host's
    # clock as plan_vs_measured.sh compares; avg_us in process.
    return r["span_us"] if isinstance(r.get("span_us"), (int, float)) else r["avg_us"]


def draw_compare(plt, plan, bench, title):
    """Time against size: measured solid, simulated dashed, a colour per
    algorithm; only the (algo, nodes) both inputs have."""
    measured, simulated = defaultdict(dict), defaultdict(dict)
    for r in bench:
        if not r.get("error"):
            measured[(r["algo"], r["nodes"])][r["size"]] = measured_us(r)
    for r in plan:
        if r.get("complete", True) is not False:
            simulated[(r["algo"], r["nodes"])][r["size"]] = r["predicted_us"]
    keys = sorted(k for k in measured if k in simulated and set(measured[k]) & set(simulated[k]))
    if not keys:
        raise BadInput("the plan and the bench share no (algorithm, nodes, size): run plan with bench's "
                       "--algo, --nodes and --sizes")
    nodes = {p for _, p in keys}
    fig, ax = plt.subplots(figsize=(9, 5))
    sizes = []
    for i, key in enumerate(keys):
        label = series_label(key[0], key[1], nodes)
        for data, ls, what in ((measured[key], "-", "measured"), (simulated[key], "--", "simulated")):
            pts = sorted(data.items())
            sizes += [s for s, _ in pts]
            ax.plot([s for s, _ in pts], [t for _, t in pts], color=f"C{i % 10}", ls=ls, marker="o", ms=3,
                    label=f"{label}, {what}")
    size_axis(ax, sizes)
    ax.set_yscale("log")
    ax.set_ylabel("completion time (us)")
    ax.set_title(title or f"lanecast plan (dashed) against bench (solid): "
                 f"{', '.join(map(str, sorted(nodes)))} members")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, handlelength=3)  # long enough to show the dashes
    return fig


# ---------------------------------------------------------------- main


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        print(f"{PROG}: needs matplotlib: Debian's python3-matplotlib for /usr/bin/python3 "
              "(tools/setup.sh installs it)", file=sys.stderr)
        sys.exit(3)
    matplotlib.use("Agg")  # no display: files only
    import matplotlib.pyplot as plt
    return plt


def draw(inputs, title):
    """Load every input, and pick the drawing their kinds call for."""
    by_kind, meta = defaultdict(list), {}
    for path in inputs:
        kind, rows, m = load(path)
        by_kind[kind].extend(rows)
        meta = meta or m
    kinds = set(by_kind)
    plt = import_pyplot()
    if kinds == {"plan", "bench"}:
        return draw_compare(plt, by_kind["plan"], by_kind["bench"], title)
    if len(kinds) > 1:
        raise BadInput(f"cannot draw {' and '.join(sorted(kinds))} together (only a plan with a bench)")
    kind = kinds.pop()
    if kind == "plan":
        raise BadInput("a plan alone: give a bench JSON beside it (or tools/plot_plan.py for predictions alone)")
    if kind == "bench":
        return draw_bench(plt, by_kind[kind], meta, title)
    if kind == "stream":
        return draw_stream(plt, by_kind[kind], title)
    return draw_replay(plt, by_kind[kind], title)


def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", metavar="INPUT.json", help="JSON of lanecast bench, bench --stream, replay "
                    "or plan (a plan with a bench: simulated against measured); - for stdin")
    ap.add_argument("-o", "--output", required=True, metavar="OUT.png", help="the PNG to write")
    ap.add_argument("--title", default="", help="figure title (default: what the run was)")
    ap.add_argument("--dpi", type=int, default=100, help="dots per inch: 9 x 5 inches, so 900 x 500 at 100 [100]")
    args = ap.parse_args()
    try:
        fig = draw(args.inputs, args.title)
        fig.tight_layout()
        try:
            fig.savefig(args.output, dpi=args.dpi, format="png")
        except OSError as e:
            raise BadInput(f"{args.output}: cannot write: {e.strerror or e}")
    except BadInput as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        sys.exit(2)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        # A safety net for optional fields of an unexpected type: still one line.
        print(f"{PROG}: the input has a field of an unexpected shape ({type(e).__name__}: {e})", file=sys.stderr)
        sys.exit(2)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
