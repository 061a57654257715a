"""A refresh round: every known robots.txt fetched again, with and without its validators.

    .venv/bin/python bench/revalidation.py                       # 1,000 sites, 3 rounds (about 2 min)
    .venv/bin/python bench/revalidation.py --sites 5000 --repeats 1
    .venv/bin/python bench/revalidation.py --instructions        # under valgrind (about 15x slower)

Issue #50's measure: what a refresh of robots.txt costs the site and the crawl when the
crawl sends the stored ``ETag`` / ``Last-Modified`` back and the server answers 304, against
the same refresh downloaded in full (``ROBOTSTXT_REVALIDATE = False``, every version before).

The sites are bench/broad.py's (bench/_broad_site.py, one loopback forward proxy for every
host, the robots.txt corpus: 7 sites in 10 a corpus file, 2 a short file, 1 a 404), run
with ``--validators``: each 200 carries an ``ETag`` (weak for every other corpus file) and a
``Last-Modified``, and a matching conditional request gets a 304. Each crawl is bench/broad.py's
crawl subprocess (its CPU and peak RSS its own; ``--instructions``: counted by valgrind's
cachegrind, start-up included).

1. **fill**: one crawl of URL 1 of every site, with ``ROBOTSTXT_CACHE_PATH`` (the SQLite
   storage) and ``ROBOTSTXT_CACHE_TTL = 1``: every robots.txt fetched, stored with its
   validators, expired a second later. The file is copied aside.
2. **refresh**, each from a fresh copy of that file, over URL 2 of every site: every
   robots.txt is refreshed. ``full``: ``ROBOTSTXT_REVALIDATE = False``; ``revalidated``: the
   default. With ``--repeats N``, N pairs, alternating which goes first; the table shows
   medians.

Columns: robots.txt requests, those answered 304 (the proxy's count), the bytes of the
robots.txt answers (status line and headers included; the pages are the same in both),
``robotstxt/parsed``, the crawl's CPU seconds (user + system, start-up included) and ``x``
against ``full``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_table  # noqa: E402
from broad import PATHS, VALGRIND, Proxy, Run, crawl_settings, progress, run_crawl  # noqa: E402

MODES = {"full": {"ROBOTSTXT_REVALIDATE": False}, "revalidated": {"ROBOTSTXT_REVALIDATE": True}}


def refresh(
    mode: str, sites: int, args: argparse.Namespace, proxy: Proxy, workdir: Path, filled: Path, timeout: float
) -> Run:
    path = workdir / "robots.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copy(filled, path)
    settings = crawl_settings("ours", args.concurrency, {"ROBOTSTXT_CACHE_PATH": str(path), **MODES[mode]})
    run = run_crawl(mode, sites, PATHS[1:2], settings, proxy, workdir, timeout, args.instructions)
    progress(run)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=1000, help="sites (default 1,000)")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of refresh rounds (default 3)")
    parser.add_argument("--concurrency", type=int, default=64, help="CONCURRENT_REQUESTS (default 64)")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--keep", action="store_true", help="keep the crawls' logs (their directory is printed)")
    args = parser.parse_args()
    if args.instructions and shutil.which(VALGRIND[0]) is None:
        parser.error("--instructions needs valgrind (Debian: apt-get install valgrind)")
    if not 0 < args.sites <= 100_000 or args.repeats < 1:
        parser.error("1 to 100,000 sites, at least 1 repeat")
    compileall.compile_dir(str(ROOT / "scrapy_robots"), quiet=1)  # as bench/broad.py does, and why
    workdir = Path(tempfile.mkdtemp(prefix="bench-revalidation-"))
    timeout = (120 + args.sites / 25) * (30 if args.instructions else 1)
    proxy = Proxy(workdir, "--validators")
    runs: dict[str, list[Run]] = {mode: [] for mode in MODES}
    try:
        filled = workdir / "filled.sqlite3"
        path = workdir / "robots.sqlite3"
        settings = crawl_settings(
            "ours", args.concurrency, {"ROBOTSTXT_CACHE_PATH": str(path), "ROBOTSTXT_CACHE_TTL": 1}
        )
        fill = run_crawl("fill", args.sites, PATHS[:1], settings, proxy, workdir, timeout)
        progress(fill)
        if fill.failed or fill.fetches != args.sites:
            sys.exit(f"the fill round failed: {fill.problems}")
        shutil.copy(path, filled)  # the crawl closed its database: the file is whole
        time.sleep(1.5)  # every entry expired
        for repeat in range(args.repeats):
            order = list(MODES) if repeat % 2 == 0 else list(reversed(MODES))
            for mode in order:
                runs[mode].append(refresh(mode, args.sites, args, proxy, workdir, filled, timeout))
    finally:
        proxy.stop()
    report(args, fill, runs)
    failed = [f"{run.name}: {', '.join(run.problems)}" for mode in runs.values() for run in mode if run.failed]
    if args.keep or failed:
        print(f"The crawls' logs: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    if failed:
        sys.exit("FAILED: " + "; ".join(failed))


def median(runs: list[Run], value: Any) -> float:
    return statistics.median(value(run) for run in runs)


def report(args: argparse.Namespace, fill: Run, runs: dict[str, list[Run]]) -> None:
    print(
        f"\nA refresh round of {args.sites:,} sites' robots.txt (after a fill round that stored them), "
        f"medians of {args.repeats}:\n"
    )
    anchor_cpu = median(runs["full"], lambda run: run.cpu)
    anchor_bytes = median(runs["full"], lambda run: run.proxy["robots_bytes"])
    anchor_instructions = median(runs["full"], lambda run: run.instructions)
    headers = ["Round", "requests", "304s", "robots.txt bytes (x)", "parses", "CPU s (x)"]
    if args.instructions:
        headers.append("instructions (x)")
    rows = []
    for label, chosen in (("fill (first fetch)", [fill]), *((mode, runs[mode]) for mode in MODES)):
        nbytes = median(chosen, lambda run: run.proxy["robots_bytes"])
        cpu = median(chosen, lambda run: run.cpu)
        row = [
            label,
            f"{median(chosen, lambda run: run.fetches):,.0f}",
            f"{median(chosen, lambda run: run.proxy['not_modified']):,.0f}",
            f"{nbytes:,.0f} ({nbytes / anchor_bytes:.3f})",
            f"{median(chosen, lambda run: run.stats.get('robotstxt/parsed', 0)):,.0f}",
            f"{cpu:.2f} ({cpu / anchor_cpu:.2f})",
        ]
        if args.instructions:
            count = median(chosen, lambda run: run.instructions)
            # The fill round is not run under valgrind: nothing to compare.
            row.append(f"{count / 1e9:.2f} G ({count / anchor_instructions:.3f})" if count else "-")
        rows.append(row)
    print_table(headers, rows)
    for mode in MODES:
        cpus = ", ".join(f"{run.cpu:.2f}" for run in runs[mode])
        print(f"{mode}: CPU s per round {cpus}")
    print(json.dumps({mode: [run.stats.get("robotstxt/revalidated", 0) for run in runs[mode]] for mode in MODES}))


if __name__ == "__main__":
    main()
