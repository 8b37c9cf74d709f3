#!/usr/bin/python3
"""Draws the figures of `weft report` from its results.json.

usage: plot.py RESULTS_JSON OUT_DIR

Draws the figures results.json's "registry" names, each under its
experiment's article (or "weft-own" for weft's own experiments): a drawer
of this file by its id, or, for an id "bars:METRIC", the generic bars of
that metric (plot_bars), which a new experiment can name without a drawer. Writes one
PNG per figure into OUT_DIR and OUT_DIR/plots.json, the manifest the report's
page is built from: {"drawn": [{figure, file, title, caption, section}],
"skipped": [{figure, file, title, section, reason}]}. A figure whose data is
missing, or whose id this plotter does not know, is listed as skipped with
the reason; it never stops the others. Every file is written as a new file
in OUT_DIR renamed over its name: a link standing there is replaced, never
written through.
Exit status: 0 when the manifest was written, 3 when matplotlib is missing,
2 on bad arguments or an unreadable results file.
"""

import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # no display: the report runs headless
    import matplotlib.pyplot as plt
    import matplotlib.ticker
except ImportError as e:
    print(f"matplotlib is not installed for {sys.executable} ({e}); "
          "on Debian: apt-get install python3-matplotlib", file=sys.stderr)
    sys.exit(3)

DPI = 100
SIZE = (8, 4.5)


class Skip(Exception):
    """The figure cannot be drawn from this results.json; says why."""


def experiment(results, name):
    for e in results.get("experiments", []):
        if e.get("experiment") == name:
            if e.get("built") is False:
                raise Skip(f"{name} is not built yet")
            return e
    raise Skip(f"no {name} experiment in results.json")


def published(results, name):
    """What results.json's "published" says of the article the registry
    files experiment `name` under ({} when none)."""
    for entry in results.get("registry") or []:
        if entry.get("name") == name and entry.get("article"):
            return (results.get("published") or {}).get(entry["article"]) or {}
    return {}


def rows(exp, metric, **match):
    """The measured rows with this metric whose fields equal `match`."""
    out = []
    for r in exp.get("results", []):
        if r.get("metric") != metric or not r.get("measured") or r.get("median") is None:
            continue
        if all(r.get(k) == v for k, v in match.items()):
            out.append(r)
    return out


def need_rows(exp, metric, why, **match):
    """rows(), or Skip(why) when there are none: the figure has nothing to draw."""
    out = rows(exp, metric, **match)
    if not out:
        raise Skip(why)
    return out


def need_experiment_rows(results, name, metric, why, **match):
    """experiment() and its need_rows(): (the experiment, the rows)."""
    exp = experiment(results, name)
    return exp, need_rows(exp, metric, why, **match)


def ordered(values):
    """Unique values in first-seen order."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def error_bars(rs):
    return [[r["median"] - r["min"] for r in rs], [r["max"] - r["median"] for r in rs]]


def grouped_bars(ax, groups, series, value, log=False, label=str):
    """Bars of value(group, series) (a row or None), one cluster per group;
    label(series) names each series in the legend."""
    width = 0.8 / max(1, len(series))
    for i, s in enumerate(series):
        xs, rs = [], []
        for g_index, g in enumerate(groups):
            r = value(g, s)
            if r is not None:
                xs.append(g_index + (i - (len(series) - 1) / 2) * width)
                rs.append(r)
        if rs:
            ax.bar(xs, [r["median"] for r in rs], width, yerr=error_bars(rs), capsize=2, label=label(s))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([str(g) for g in groups])
    if log:
        ax.set_yscale("log")


def row_bars(ax, rs, labels, colour, ylabel, width=0.8, capsize=3, **label_style):
    """One bar per row of rs (median, min–max whiskers) coloured colour(row),
    named by labels under the axis."""
    ax.bar(range(len(rs)), [r["median"] for r in rs], width, yerr=error_bars(rs), capsize=capsize,
           color=[colour(r) for r in rs])
    ax.set_xticks(range(len(rs)))
    ax.set_xticklabels(labels, fontsize=8, **label_style)
    ax.set_ylabel(ylabel)


def serial_grey(r):
    """The colour of a timing bar: grey for the serial baseline."""
    return "tab:grey" if r["variant"] == "serial" else "tab:blue"


def bars_by_variant(ax, rs, thread_label, log=False):
    """Bars of the rows rs: one cluster per variant, one bar per thread
    count, named thread_label(threads) in the legend."""
    by = {(r["variant"], r["threads"]): r for r in rs}
    grouped_bars(ax, ordered(r["variant"] for r in rs), ordered(r["threads"] for r in rs),
                 lambda v, t: by.get((v, t)), log=log, label=thread_label)


def titled(fig, ax, title, caption):
    """The axis titled; what a plot function returns."""
    ax.set_title(title)
    return fig, title, caption


def finish(fig, ax, title, caption, xlabel, ylabel):
    """Labels, title and legend of a one-axis figure; what a plot function returns."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return titled(fig, ax, title, caption)


def new_figure(ncols=1):
    fig, axes = plt.subplots(1, ncols, figsize=SIZE if ncols == 1 else (4.2 * ncols, 4.5), squeeze=False)
    return fig, list(axes[0])


def per_workload(rs):
    """A new figure with one panel per workload of the rows rs (first-seen
    order): the figure and [(ax, workload, the workload's rows)]."""
    workloads = ordered(r.get("workload", "?") for r in rs)
    fig, axes = new_figure(len(workloads))
    return fig, [(ax, w, [r for r in rs if r.get("workload", "?") == w]) for ax, w in zip(axes, workloads)]


def shown_workers(exp):
    """The worker count a figure of one count shows: 2 where the run measured
    it (or names no counts), else the first it measured. report_html.cpp's
    tables pick the same, so a figure and its table agree."""
    workers = exp.get("params", {}).get("workers") or []
    return 2 if 2 in workers or not workers else workers[0]


# Each plot function draws onto a new figure and returns (fig, title, caption).

def plot_c2c(results):
    exp = experiment(results, "c2c")
    matrix = exp.get("matrix_ns")
    cpus = exp.get("allowed_cpus")
    if not matrix or not cpus or len(cpus) < 2:
        raise Skip("c2c measured fewer than two CPUs")
    n = len(cpus)
    values = [[math.nan if v is None else v for v in row] for row in matrix]
    fig, (ax,) = new_figure()
    fig.set_size_inches(6.5, 5.5)
    # From 0: a few ns of noise between pairs should not look like topology.
    finite = [v for row in values for v in row if not math.isnan(v)]
    image = ax.imshow(values, cmap="viridis", vmin=0, vmax=max(finite) if finite else None)
    fig.colorbar(image, ax=ax, label="one-way latency (ns)")
    ticks = range(n)
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xticklabels(cpus)
    ax.set_yticklabels(cpus)
    ax.set_xlabel("CPU (responder)")
    ax.set_ylabel("CPU (initiator)")
    if n <= 16:
        for i in ticks:
            for j in ticks:
                v = values[i][j]
                if not math.isnan(v):
                    # viridis is bright at the top: dark text there, light below.
                    color = "k" if finite and v > 0.6 * max(finite) else "w"
                    ax.text(j, i, f"{v:.0f}", ha="center", va="center", color=color, fontsize=10 if n <= 4 else 8)
    title = "Core-to-core latency (ns, one way)"
    return titled(fig, ax, title, ("Median one-way latency of a cache-line ping-pong between each pair of allowed "
                                   "CPUs. SMT siblings and CPUs sharing a cache show as darker cells."))


def published_ring(results, threads):
    """The article's ns per hop for this thread count: {flag: ns}."""
    pub = published(results, "ring")
    columns = pub.get("columns", [])
    for row in pub.get("ns_per_hop", []):
        if row and row[0] == threads:
            names = {"condvar": "condvar", "atomic_seq_cst": "seq_cst", "release": "release"}
            return {names[c]: v for c, v in zip(columns[1:], row[1:]) if c in names}
    return {}


def plot_ring(results, threads):
    exp, wall = need_experiment_rows(results, "ring", "ns_per_hop", f"no ring rows at {threads} threads", threads=threads)
    flags = ordered(r["variant"] for r in wall)
    cpu = {r["variant"]: r for r in rows(exp, "cpu_ns_per_hop", threads=threads)}
    fig, (ax,) = new_figure()
    grouped_bars(ax, flags, ["wall ns per hop", "CPU ns per hop"],
                 lambda f, s: next((r for r in wall if r["variant"] == f), None)
                 if s == "wall ns per hop" else cpu.get(f), log=True)
    article = published_ring(results, threads)
    xs = [flags.index(f) for f in article if f in flags]
    if xs:
        ax.scatter(xs, [article[flags[x]] for x in xs], marker="D", color="k", zorder=3,
                   label="article (i7-4771), ns per hop")
    stopped = [flags.index(r["variant"]) for r in wall if "stopped" in r.get("note", "")]
    for x in stopped:
        ax.annotate("stopped", (x, ax.get_ylim()[0]), ha="center", va="bottom", fontsize=7, color="firebrick")
    ax.set_xlabel("flag")
    ax.set_ylabel("ns per hop (log scale)")
    allowed = len(exp.get("machine", {}).get("allowed_cpus", [])) or None
    over = f", oversubscribed on {allowed} CPUs" if allowed and threads > allowed else ""
    title = f"Token ring, {threads} threads{over}: latency per hop"
    ax.set_title(title)
    ax.legend(fontsize=8)
    caption = ("Median wall time and process CPU time per hop for each flag (bars: median, whiskers: "
               "min–max over repetitions); black diamonds are the article's figures.")
    if over:
        caption += (" With more threads than CPUs a spinning flag waits for the scheduler to run the "
                    "token holder; runs marked 'stopped' hit the time limit.")
    return fig, title, caption


def plot_tasks(results):
    exp = experiment(results, "tasks")
    rs = rows(exp, "tasks_per_s")
    pools = ordered(r["variant"] for r in rs if "threads" in r)
    if not pools:
        raise Skip("no pool rows in tasks")
    fig, (ax,) = new_figure()
    fig.set_size_inches(9, 5)
    for v in pools:
        pts = sorted((r["threads"], r["median"]) for r in rs if r["variant"] == v and "threads" in r)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v)
    for r in rs:
        if "threads" not in r and r["variant"] != "sync":
            ax.axhline(r["median"], linestyle=":", color="grey")
            ax.text(ax.get_xlim()[0], r["median"], " " + r["variant"], fontsize=7, va="bottom", color="grey")
    article = published(results, "tasks").get("tasks_per_s", {})
    for v, marker in (("article-pool", "x"), ("article-pool-future", "+")):
        pts = article.get(v)
        if isinstance(pts, dict):
            xs = sorted(int(k) for k in pts)
            ax.plot(xs, [pts[str(x)] for x in xs], linestyle="none", marker=marker, color="k", markersize=8,
                    label=f"article: {v}")
    ax.set_xscale("log", base=2)
    ticks = sorted({r["threads"] for r in rs if "threads" in r} |
                   {int(k) for v in article.values() if isinstance(v, dict) for k in v})
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_yscale("log")
    ax.set_xlabel("workers (log scale)")
    ax.set_ylabel("tasks per second (log scale)")
    title = "Tiny tasks through thread pools: tasks/s per worker count"
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig, title, ("Throughput of one-atomic-increment tasks per pool and worker count (median). "
                        "Dotted lines are the variants without workers (std::async, std::launch::deferred); "
                        "black markers are the article's i7-8550U figures.")


def plot_fib(results):
    exp, rs = need_experiment_rows(results, "fib", "ms", "no fib timings")
    labels = [r["variant"] + (f" ({r['threads']} thr)" if "threads" in r else "") +
              (f", cutoff {r['cutoff']}" if r.get("cutoff") else "") for r in rs]
    fig, (ax,) = new_figure()
    row_bars(ax, rs, labels, serial_grey, "time (ms)")
    n = exp.get("params", {}).get("n", "?")
    title = f"Recursive fork-join fib({n}): time per run"
    return titled(fig, ax, title, ("Wall time of one fib(n) computation that spawns a task per call (median, "
                                   "min–max whiskers); the serial bar is the same recursion without spawns."))


def plot_worker_strip(results):
    t = results.get("trace")
    if not t:
        raise Skip("no trace in results.json (weft report records one when pfor runs)")
    if t.get("error"):
        raise Skip(f"the trace failed: {t['error']}")
    strip = t.get("strip")
    if not strip:
        raise Skip("the trace has no pool that ran tasks")
    lanes = strip["rows"]
    window_ms = strip["window_us"] / 1000
    fig, (ax,) = new_figure()
    for i, lane in enumerate(lanes):
        ax.broken_barh([(s / 1000, d / 1000) for s, d in lane["busy"]], (i - 0.4, 0.8), color="tab:blue")
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"worker {lane['worker']}\n{lane['utilisation']:.0%} busy" for lane in lanes], fontsize=8)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlim(0, window_ms)
    ax.set_xlabel("time (ms)")
    title = f"Worker utilisation: weft {t['experiment']} {t['args']}, pool {strip['pool']}"
    ax.set_title(title)
    steals = sum(lane["steals"] for lane in lanes)
    parks = sum(lane["parks"] for lane in lanes)
    return fig, title, (f"Each bar is a stretch in which the worker ran tasks (gaps under 1/1000 of the "
                        f"window closed), from `weft trace` (WEFT_TRACE) of the pool that ran the most tasks, "
                        f"over the last {window_ms:.1f} ms every worker's trace ring still covers: {steals} steals "
                        f"and {parks} parks in it. The whole trace is {t['file']}: open it in ui.perfetto.dev.")


def plot_pfor(results):
    exp, rs = need_experiment_rows(results, "pfor", "ms", "no parallel_for timings")
    fig, panels = per_workload(rs)
    for ax, w, wr in panels:
        row_bars(ax, wr, [r["variant"] + (f" ({r['threads']})" if "threads" in r else "") for r in wr],
                 serial_grey, "time (ms)")
        ax.set_title(f"{w}: {wr[0].get('note', '')}", fontsize=9)
    title = "parallel_for: time per workload"
    fig.suptitle(title)
    return fig, title, ("Wall time of each workload (median, min–max whiskers): many small loops of "
                        "spinning items, and one big sum; threads in parentheses.")


def plot_algo(results):
    exp = experiment(results, "algo")
    rs = rows(exp, "ms")
    threads = shown_workers(exp)
    serial = {r.get("workload"): r["median"] for r in rs if r["variant"] == "serial"}
    parallel = [r for r in rs if r.get("threads") == threads and serial.get(r.get("workload"))]
    if not parallel:
        raise Skip(f"no parallel algorithm timings at {threads} workers beside a serial one")
    workloads = ordered(r.get("workload") for r in parallel)
    variants = ordered(r["variant"] for r in parallel)

    def normalised(w, v):
        for r in parallel:
            if r.get("workload") == w and r["variant"] == v:
                s = serial[w]
                return {"median": r["median"] / s, "min": r["min"] / s, "max": r["max"] / s}
        return None

    fig, (ax,) = new_figure()
    fig.set_size_inches(max(SIZE[0], 1.1 * len(workloads) + 2), SIZE[1])
    grouped_bars(ax, workloads, variants, normalised)
    ax.axhline(1.0, color="tab:grey", linewidth=1, linestyle="--", label="serial")
    ax.set_xticklabels(workloads, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("time / serial time")
    ax.legend(fontsize=8)
    title = f"Parallel algorithms at {threads} workers: time relative to serial"
    return titled(fig, ax, title, ("Each variant's median time over the serial standard algorithm's on the same workload "
                                   "(min–max whiskers; below 1 is faster than serial); a missing bar was not built or "
                                   "not offered."))


CORO_METRICS = [("fib", "ns_per_spawn", "ns per spawn"), ("hop", "ns_per_hop", "ns per hop"),
                 ("fan-in", "us_per_fan_in", "µs per fan-in"), ("cancel", "cancel_ms", "ms to cancel")]


def plot_coro(results):
    exp = experiment(results, "coro")
    threads = shown_workers(exp)
    panels = [(w, label, rows(exp, metric, workload=w, threads=threads)) for w, metric, label in CORO_METRICS]
    panels = [p for p in panels if p[2]]
    if not panels:
        raise Skip(f"no coro rows measured at {threads} workers")
    fig, axes = new_figure(len(panels))
    for ax, (w, label, rs) in zip(axes, panels):
        row_bars(ax, rs, [r["variant"] for r in rs],
                 lambda r: "tab:blue" if r["variant"].startswith("weft") else "tab:orange",
                 label, width=0.6, capsize=2, rotation=30, ha="right")
        ax.set_title(w, fontsize=9)
    title = f"Coroutines, futures and cancellation at {threads} workers: weft against oneTBB and Asio"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig, title, ("Median per variant with min–max whiskers (lower is better; weft blue, peers orange): "
                        "fork-join fib without cutoff, one coroutine hopping onto the pool, a fan-in of tiny "
                        "tasks, and cancelling a group's queued tasks; a missing bar was not built.")


def plot_scale(results):
    exp, rs = need_experiment_rows(results, "scale", "speedup", "no speed-up rows (no 1-worker run measured)")
    params = exp.get("params", {})
    cpus = params.get("cpus") or len(exp.get("machine", {}).get("allowed_cpus", [])) or 1
    fig, panels = per_workload(rs)
    for ax, w, wr in panels:
        counts = sorted(ordered(r["threads"] for r in wr))
        ideal = [min(t, cpus) for t in counts]
        ax.plot(counts, ideal, linestyle="--", color="tab:grey", linewidth=1, label=f"ideal ({cpus} CPUs)")
        for v in ordered(r["variant"] for r in wr):
            vr = sorted((r for r in wr if r["variant"] == v), key=lambda r: r["threads"])
            ax.errorbar([r["threads"] for r in vr], [r["median"] for r in vr], yerr=error_bars(vr), capsize=2,
                        marker="o", label=v)
        if counts[-1] > cpus:
            ax.axvline(cpus, linestyle=":", color="firebrick", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xticks(counts)
        ax.set_xlabel("workers")
        ax.set_ylabel("speed-up over 1 worker")
        ax.set_ylim(bottom=0)
        ax.set_title(w, fontsize=10)
        ax.legend(fontsize=7)
    title = "Scaling: speed-up over one worker, per workload"
    fig.suptitle(title)
    return fig, title, ("Each variant's 1-worker time over its time at each worker count (median, min–max "
                        "whiskers); dashed: ideal, linear up to the allowed CPUs and flat past them; right of "
                        "the dotted line the workers outnumber the CPUs (oversubscription).")


def idle_bars(results, series, ylabel, title, caption):
    """Bars per pool of the idle experiment, one per (label, metric) in series."""
    exp = experiment(results, "idle")
    by_series = {label: {r["variant"]: r for r in rows(exp, metric)} for label, metric in series}
    variants = ordered(v for by_variant in by_series.values() for v in by_variant)
    if not variants:
        raise Skip("no " + " or ".join(metric for _, metric in series) + " rows in idle")
    fig, (ax,) = new_figure()
    grouped_bars(ax, variants, list(by_series), lambda v, s: by_series[s].get(v), log=True)
    return finish(fig, ax, title, caption, "pool", ylabel)


def plot_idle(results):
    return idle_bars(results, [("idle, 1 s", "cpu_ms_idle_1s"), ("one task per ms, 2 s", "cpu_ms_tick_2s")],
                     "CPU time (ms, log scale)", "CPU burnt by an idle pool and by a pool ticking once per ms",
                     "Process CPU time while the pool has nothing to do for 1 s, and while one tiny task "
                     "arrives every millisecond for 2 s (median; baseline: no pool at all).")


def plot_idle_latency(results):
    return idle_bars(results, [("median", "start_latency_us"), ("p99", "start_latency_p99_us")],
                     "post-to-start latency (µs, log scale)",
                     "Post-to-start latency of a task posted to a waiting pool",
                     "Time from posting a task to an otherwise idle pool until the task starts, at one task "
                     "per millisecond: median and 99th percentile of the samples (bars: median over "
                     "repetitions, whiskers: min–max). A worker still spinning starts it at once; a parked "
                     "one pays a wake-up.")


def plot_alloc_seconds(results):
    rs = need_rows(experiment(results, "alloc"), "seconds", "no allocator timings")
    fig, (ax,) = new_figure()
    bars_by_variant(ax, rs, lambda t: f"{t} thread{'s' if t > 1 else ''}", log=True)
    return finish(fig, ax, "std::list push/pop benchmark: time per allocator",
                  "The article's list benchmark (each thread pushes and pops its own std::list); "
                  "wall time of the whole run, median with min–max whiskers.",
                  "allocator", "time (s, log scale)")


def plot_alloc_scalability(results):
    exp = experiment(results, "alloc")
    rs = [r for r in rows(exp, "scalability") if r.get("threads", 1) > 1]
    if not rs:
        raise Skip("no scalability rows (only one thread count measured)")
    cpus = len(exp.get("machine", {}).get("allowed_cpus", [])) or 1
    fig, (ax,) = new_figure()
    bars_by_variant(ax, rs, lambda t: f"{t} threads")
    for t in ordered(r["threads"] for r in rs):
        ax.axhline(1 / min(t, cpus), linestyle="--", color="grey", linewidth=1)
    ax.axhline(1, linestyle=":", color="firebrick", linewidth=1)
    return finish(fig, ax, "Allocator scalability t(N)/t(1)/N (lower is better)",
                  f"Every thread does the full work, so perfect scaling on {cpus} CPU(s) is 1/N "
                  "(dashed); 1 (dotted) means the threads ran one after the other; above 1 they "
                  "slow each other down.",
                  "allocator", "t(N) / t(1) / N")


def plot_io(results):
    rs = need_rows(experiment(results, "io"), "mb_per_s", "no file copy rows")
    fig, (ax,) = new_figure()
    fig.set_size_inches(9, 4.5)
    bars_by_variant(ax, rs, lambda t: f"{t} concurrent", log=True)
    ax.tick_params(axis="x", labelsize=8)
    return finish(fig, ax, "File copy throughput: byte by byte and by blocks",
                  "Aggregate MB/s (10^6 bytes) of concurrent copies of page-cached files: fgetc, "
                  "getc_unlocked, iostream and weft-bytes copy a byte at a time; the others by blocks.",
                  "copy method", "MB/s (log scale)")


def plot_smt(results):
    exp = experiment(results, "smt")
    all_rows = [r for r in exp.get("results", []) if r.get("metric") == "slowdown"]
    if not all_rows:
        raise Skip("no SMT slowdown rows")
    variants = ordered(r["variant"] for r in all_rows)
    workloads = ordered(r.get("workload", "?") for r in all_rows)
    measured = rows(exp, "slowdown")
    fig, (ax,) = new_figure()
    grouped_bars(ax, variants, workloads,
                 lambda v, w: next((r for r in measured if r["variant"] == v and r.get("workload") == w), None))
    for i, v in enumerate(variants):
        if not any(r["variant"] == v for r in measured):
            ax.text(i, 0.05, "not measured\n(no SMT siblings)", ha="center", va="bottom", fontsize=7)
    at_least = published(results, "smt").get("sin_smt_siblings_slowdown_at_least")
    if "smt-siblings" in variants and at_least:
        ax.scatter([variants.index("smt-siblings")], [at_least], marker="D", color="k", zorder=3,
                   label=f"article: sin on siblings, >{at_least}x")
    ax.axhline(1, linestyle=":", color="grey")
    return finish(fig, ax, "Two threads on two cores, on SMT siblings, on one CPU: slowdown",
                  "Time per thread relative to one thread alone (1 = no slowdown), for the "
                  "memory-bound plain sum and the execution-bound sin sum.",
                  "placement of the two threads", "slowdown vs one thread (x)")


def plot_spin(results):
    exp = experiment(results, "spin")
    wall = rows(exp, "wall_ms")
    cpu = rows(exp, "cpu_s")
    if not wall or not cpu:
        raise Skip("no spin rows")
    granularities = ordered(r.get("granularity", "?") for r in wall)
    variants = ordered(r["variant"] for r in wall)
    threads = ordered(r.get("threads") for r in wall)
    markers = "os^Dvx*P"
    fig, axes = new_figure(len(granularities))
    for ax, g in zip(axes, granularities):
        for vi, v in enumerate(variants):
            for ti, t in enumerate(threads):
                w = next((r for r in wall if r["variant"] == v and r.get("threads") == t
                          and r.get("granularity") == g), None)
                c = next((r for r in cpu if r["variant"] == v and r.get("threads") == t
                          and r.get("granularity") == g), None)
                if w and c:
                    ax.scatter(w["median"], c["median"], marker=markers[ti % len(markers)],
                               color=f"C{vi}", label=f"{v}, {t} thr" if g == granularities[0] else None)
        ax.set_xlabel("wall time (ms)")
        ax.set_title(g, fontsize=9)
    axes[0].set_ylabel("CPU time (s)")
    title = "Lock waiters: wall time vs CPU seconds per waiting strategy"
    fig.suptitle(title)
    fig.legend(fontsize=6, loc="lower center", ncol=min(6, len(variants) * len(threads)))
    fig.subplots_adjust(bottom=0.3, top=0.85, wspace=0.3)
    return fig, title, ("Each point is one waiting strategy at one thread count (marker shape); "
                        "lower-left is better: less waiting and less CPU burnt. One panel per work "
                        "granularity.")


def plot_bars(results, name, metric, title):
    """The generic figure an experiment gets by naming "bars:METRIC" in its
    registration: the metric's medians (with min-max) per variant, one
    cluster per workload or worker count; a log axis when they span more
    than 100x. A new experiment needs no drawer of its own here."""
    exp = experiment(results, name)
    rs = rows(exp, metric)
    if not rs:
        raise Skip(f"no measured {metric} rows in {name}")
    # One cluster per combination of the qualifiers that vary among the rows
    # (a fib run with a cutoff has two ms rows per variant and worker count).
    # A row without a worker count (a variant with no pool: serial) stands
    # in every worker count's cluster, not in one of its own.
    pooled = [r for r in rs if "threads" in r]
    workers = ordered(r["threads"] for r in pooled)
    quals = [q for q in ("workload", "granularity", "mode", "cutoff")
             if len(ordered(r.get(q) for r in rs)) > 1]
    if len(workers) > 1 or not quals:
        quals.append("threads")

    def group_of(r, threads=None):
        return ", ".join(str(r.get(q, threads) if q == "threads" else r.get(q)) for q in quals)

    by = {}
    for r in rs:
        if "threads" in quals and "threads" not in r:
            for t in workers or [None]:
                by[(group_of(r, t), r["variant"])] = r
        else:
            by[(group_of(r), r["variant"])] = r
    groups = ordered(g for g, _ in by)
    series = ordered(r["variant"] for r in rs)
    fig, (ax,) = new_figure()
    medians = [r["median"] for r in rs if r["median"] > 0]
    log = bool(medians) and max(medians) > 100 * min(medians)
    grouped_bars(ax, groups, series, lambda g, s: by.get((g, s)), log=log)
    if len(groups) > 6:  # many clusters: wider, and their names slanted so they do not overlap
        fig.set_size_inches(max(SIZE[0], 0.55 * len(groups)), SIZE[1] + 0.8)
        ax.tick_params(axis="x", labelrotation=45)
        for t in ax.get_xticklabels():
            t.set_horizontalalignment("right")
        fig.tight_layout()
    unit = rs[0].get("unit", "")
    xlabel = ", ".join("workers" if q == "threads" else q for q in quals)
    return finish(fig, ax, title, f"weft {name}: median {metric} per variant, bars from min to max over the "
                  "repetitions.", xlabel, f"{metric} ({unit})" if unit else metric)


def bars_figure(entry, fid):
    """The files of a "bars:METRIC" figure id: one, named NAME_bars_METRIC.png."""
    name, metric = entry.get("name"), fid[len("bars:"):]
    title = f"{entry.get('title') or name}: {metric}"
    return lambda results, _fid: [(f"{name}_bars_{metric}.png", title,
                                   lambda: plot_bars(results, name, metric, title))]


def one(draw, what):
    """A figure drawn as one file named after its id."""
    return lambda results, fid: [(f"{fid}.png", what, lambda: draw(results))]


def ring_figures(results, fid):
    """One file per thread count the ring ran at."""
    try:
        threads = ordered(r.get("threads") for r in experiment(results, "ring").get("results", [])
                          if r.get("threads"))
    except Skip:
        threads = []
    return [(f"{fid}_{t}_threads.png", f"Token ring, {t} threads", lambda t=t: plot_ring(results, t))
            for t in threads or [2, 3]]


# Figure id (as the registry names it) -> the files it makes: [(file, what, draw)].
FIGURES = {
    "c2c_heatmap": one(plot_c2c, "Core-to-core latency"),
    "ring": ring_figures,
    "tasks_per_s": one(plot_tasks, "Tasks per second"),
    "smt_slowdown": one(plot_smt, "SMT slowdowns"),
    "alloc_seconds": one(plot_alloc_seconds, "Allocator time"),
    "alloc_scalability": one(plot_alloc_scalability, "Allocator scalability"),
    "io_mb_per_s": one(plot_io, "File copy MB/s"),
    "spin_wall_vs_cpu": one(plot_spin, "Spin wall vs CPU"),
    "fib_ms": one(plot_fib, "fib"),
    "worker_strip": one(plot_worker_strip, "Worker utilisation"),
    "pfor_ms": one(plot_pfor, "parallel_for"),
    "algo_vs_serial": one(plot_algo, "Parallel algorithms"),
    "coro_vs_peers": one(plot_coro, "Coroutines and async"),
    "idle_cpu": one(plot_idle, "Idle CPU"),
    "idle_latency": one(plot_idle_latency, "Idle start latency"),
    "scale_speedup": one(plot_scale, "Scaling"),
}


def write_new(out_dir, name, write):
    """Calls write(file object) on a new file in out_dir, then renames it to
    name: O_EXCL never opens an existing name, so a link standing at name
    is replaced by the rename, never followed."""
    for attempt in range(100):
        tmp = os.path.join(out_dir, f".{name}.{os.getpid()}-{attempt}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"cannot create a temporary for {name} in {out_dir}")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, os.path.join(out_dir, name))
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv):
    if len(argv) != 3:
        print("usage: plot.py RESULTS_JSON OUT_DIR", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2
    out_dir = argv[2]
    manifest = {"drawn": [], "skipped": []}
    for entry in results.get("registry") or []:
        section = entry.get("article") or "weft-own"
        for fid in entry.get("figures", []):
            figure = bars_figure(entry, fid) if fid.startswith("bars:") else FIGURES.get(fid)
            if figure is None:
                manifest["skipped"].append({"figure": fid, "file": "", "title": fid, "section": section,
                                            "reason": f"this plotter has no figure '{fid}' "
                                                      f"(named by experiment {entry.get('name')})"})
                continue
            for name, what, draw in figure(results, fid):
                skipped = {"figure": fid, "file": name, "title": what, "section": section}
                try:
                    fig, title, caption = draw()
                except Skip as e:
                    manifest["skipped"].append({**skipped, "reason": str(e)})
                    continue
                except Exception as e:  # a malformed row must not cost the other figures
                    manifest["skipped"].append({**skipped, "reason": f"{type(e).__name__}: {e}"})
                    plt.close("all")
                    continue
                write_new(out_dir, name, lambda f, fig=fig: fig.savefig(f, format="png", dpi=DPI,
                                                                       bbox_inches="tight"))
                plt.close(fig)
                manifest["drawn"].append({"figure": fid, "file": name, "title": title, "caption": caption,
                                          "section": section})
    write_new(out_dir, "plots.json", lambda f: f.write(json.dumps(manifest, indent=2).encode("utf-8")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
