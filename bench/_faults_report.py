"""bench/fleet_faults.py's figures and tables: what the sites saw, cut into the windows
the harness's faults and recoveries drew. The format is documented in docs/benchmarks.rst
(a fleet under faults): keep the two together."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from _common import print_table

GOAL = 0.03  # at most 3 % of a window's gaps ...
SHORT = 0.95  # ... under 95 % of the delay
STATS = ("fetch", "lock_wait", "hit", "paced", "fallback", "redis_errors")


@dataclass
class Window:
    name: str
    start: float  # monotonic; -inf: the crawl's start
    end: float  # monotonic; inf: the crawl's end
    gaps: dict[str, list[float]] = field(default_factory=dict)  # per host

    def short(self, floor: float) -> dict[str, int]:
        return {host: sum(g < floor for g in gaps) for host, gaps in self.gaps.items()}

    def counts(self, floor: float) -> tuple[int, int]:
        return sum(self.short(floor).values()), sum(len(g) for g in self.gaps.values())

    def verdict(self, floor: float) -> str:
        short, total = self.counts(floor)
        return "n/a" if not total else "PASS" if short <= GOAL * total else "FAIL"


class Outcome:
    """One scenario's figures, from its Run (bench/fleet_faults.py)."""

    def __init__(self, run: Any, stall: float, wall: float):
        self.run = run
        self.scenario = run.scenario
        self.stall = stall
        self.wall = wall
        self.floor = SHORT * run.delay
        # Per host (Scrapy's downloader slot): every request but robots.txt, by arrival.
        times: dict[str, list[float]] = defaultdict(list)
        for site in run.sites:
            times[site.host] += [hit.at for hit in site.page_hits()]
        self.hosts = {host: sorted(ts) for host, ts in times.items()}
        edges = run.windows or [("whole", -math.inf, math.inf)]
        self.windows = [Window(name, start, end) for name, start, end in edges]
        for window in self.windows:
            for host, ts in self.hosts.items():
                window.gaps[host] = [b - a for a, b in zip(ts, ts[1:]) if window.start <= b < window.end]
        fetched = Counter(
            site.url + hit.path for site in run.sites for hit in site.page_hits() if hit.path.startswith("/p")
        )
        expected = {f"{site.url}/p{i}" for site in run.sites for i in range(run.pages)}
        self.expected = len(expected)
        self.fetched = len(set(fetched) & expected)
        self.duplicates = sum(fetched.values()) - len(fetched)
        self.never = len(expected - set(fetched))
        self.disallowed = sum(hit.path.startswith("/private") for site in run.sites for hit in site.hits)
        self.robots = [site.robots_hits() for site in run.sites]
        self.results = [c.result or {} for c in run.crawlers]
        self.failed = sum(len(r.get("failed", {})) for r in self.results)
        self.exits = [(c.label, c.note, (c.result or {}).get("exit")) for c in run.crawlers]
        logs = [line for r in self.results for line in r.get("log", "").splitlines() if "Redis at" in line]
        self.log_unreachable = sum("unreachable" in line for line in logs)
        self.log_other = len(logs) - self.log_unreachable
        self.too_many = sum(r.get("log", "").count("Too many connections") for r in self.results)
        self.stats = {k: sum(r.get("stats", {}).get(f"robotstxt/fleet/{k}", 0) for r in self.results) for k in STATS}
        every = [t for ts in self.hosts.values() for t in ts] + [h.at for s in run.sites for h in s.hits]
        self.crawl = max(every) - min(every) if every else math.nan

    @property
    def short(self) -> tuple[int, int]:
        counts = [w.counts(self.floor) for w in self.windows]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    @property
    def min_gap(self) -> float:
        return min((g for w in self.windows for gaps in w.gaps.values() for g in gaps), default=math.nan)

    @property
    def problems(self) -> list[str]:
        found = []
        if self.run.timed_out:
            found.append("TIMED OUT")
        if self.disallowed:
            found.append(f"{self.disallowed} disallowed fetched")
        if self.never:
            found.append(f"{self.never} never fetched")
        if self.duplicates:
            found.append(f"{self.duplicates} duplicates")
        if any(n != 1 for n in self.robots):
            found.append("robots.txt not once per site")
        bad = [label for label, note, code in self.exits if note != "killed" and code != 0]
        if bad:
            found.append(f"exit != 0: {', '.join(bad)}")
        if self.failed:
            found.append(f"{self.failed} requests failed")
        return found


def ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:.0f}"


def pct(short: int, total: int) -> str:
    return f"{100 * short / total:.1f}%" if total else "-"


def exit_text(label: str, note: str, code: Any) -> str:
    shown = "killed" if note == "killed" else note if note == "TIMED OUT" else str(code)
    return f"{label} {shown}" + (f" ({note})" if note.startswith("replaces") else "")


def report(o: Outcome) -> None:
    run = o.run
    print(f"{o.scenario.name}: {o.scenario.title}")
    queue = "scrapy-redis queue" if "SCHEDULER" not in run.settings else "in-memory scheduler, each crawler its share"
    shown = {k: v for k, v in run.settings.items() if k not in ("SCHEDULER", "DUPEFILTER_CLASS")}
    print(
        f"  {len(run.crawlers)} crawlers ({queue}), {len(run.sites)} sites x {run.pages} pages"
        + "".join(f", {k}={v}" for k, v in shown.items())
    )
    for at, what in run.events:
        print(f"  {at - run.t0:7.2f} s  {what}")

    def edge(t: float) -> str:
        return "start" if t == -math.inf else "end" if t == math.inf else f"{t - run.t0:.2f}"

    many = len(o.hosts) == 1 and len(run.sites) > 1
    heads = [f"{h} ({len(run.sites)} ports)" if many else h for h in o.hosts]
    rows = []
    for w in o.windows:
        short, total = w.counts(o.floor)
        least = min((g for gaps in w.gaps.values() for g in gaps), default=math.nan)
        per_host = w.short(o.floor)
        cells = [f"{per_host[h]}/{len(w.gaps[h])} {ms(min(w.gaps[h], default=math.nan))}" for h in o.hosts]
        verdict = w.verdict(o.floor)
        rows.append([w.name, edge(w.start), edge(w.end), total, short, pct(short, total), ms(least), verdict, *cells])
    print_table(["window", "from s", "to s", "gaps", "short", "short %", "min ms", "goal", *heads], rows)
    print(
        f"  pages: {o.fetched}/{o.expected} allowed pages fetched, {o.duplicates} duplicates, {o.never} never "
        f"fetched; disallowed fetched: {o.disallowed}; robots.txt downloads per site: {' '.join(map(str, o.robots))}"
    )
    print(f"  crawlers: {', '.join(exit_text(*e) for e in o.exits)}; requests failed: {o.failed}")
    print(
        f"  wall {o.wall:.1f} s (crawlers started to last exit), crawl {o.crawl:.1f} s (first to last request at "
        f"the sites); longest stall of the sites' reactor {ms(o.stall)} ms"
    )
    print(
        f"  crawlers' log lines on Redis: {o.log_unreachable} 'unreachable', {o.log_other} other; "
        f"'Too many connections': {o.too_many}; robotstxt/fleet/* stats summed (crawlers that exited): "
        f"{', '.join(f'{k} {v}' for k, v in o.stats.items())}"
    )
    print()


def summary(outcomes: list[Outcome]) -> bool:
    """Print the summary table; return whether a non-anchor scenario failed its goal or had a problem."""
    by_name = {o.scenario.name: o for o in outcomes}
    rows = []
    failed = False
    for o in outcomes:
        anchor = by_name.get(o.scenario.anchor or "")
        verdicts = [w.verdict(o.floor) for w in o.windows]
        judged = [v for v in verdicts if v != "n/a"]
        worst = max(o.windows, key=lambda w: w.counts(o.floor)[0] / max(w.counts(o.floor)[1], 1))
        short, total = o.short
        ratio = "-"
        if anchor is not None and anchor.short[1] and anchor.short[0] and total:
            ratio = f"{(short / total) / (anchor.short[0] / anchor.short[1]):.2f}"
        rows.append(
            [
                o.scenario.name,
                f"{judged.count('PASS')}/{len(judged)}",
                f"{worst.name} {pct(*worst.counts(o.floor))}",
                f"{short}/{total}",
                pct(short, total),
                ratio,
                ms(o.min_gap),
                f"{o.fetched}/{o.expected}",
                o.duplicates,
                o.never,
                o.disallowed,
                "/".join(map(str, sorted(set(o.robots)))),
                " ".join(str(code) if note != "killed" else "k" for _, note, code in o.exits),
                f"{o.wall:.1f}",
                f"{o.wall / anchor.wall:.2f}" if anchor is not None else "-",
                "; ".join(o.problems) or "-",
            ]
        )
        if o.scenario.anchor and ("FAIL" in verdicts or o.problems):
            failed = True
    print("Summary")
    print_table(
        [
            "scenario",
            "windows passed",
            "worst window",
            "short gaps",
            "short %",
            "vs anchor",
            "min gap ms",
            "pages",
            "dup",
            "never",
            "disallowed",
            "robots/site",
            "exits",
            "wall s",
            "wall/anchor",
            "problems",
        ],
        rows,
    )
    print(
        f"  short: a gap under {SHORT:.0%} of the delay between two requests to a host; goal: at most {GOAL:.0%} "
        "of each window's gaps. vs anchor: the share of short gaps over the anchor's (0: none, 1: as many as "
        "crawlers pacing alone). exits: k = killed by the harness."
    )
    return failed
