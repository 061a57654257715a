"""Compare robots.txt parsers on the corpus: parse speed, allowed() speed, memory,
worst cases, and agreement with Google's parser.

    .venv/bin/python bench/parsers.py            # full run (a few minutes)
    .venv/bin/python bench/parsers.py --quick    # one repeat, smaller samples

Each backend is used through its library class directly (rfc9309.RobotsTxt,
protego.Protego, urllib.robotparser.RobotFileParser,
robotexclusionrulesparser.RobotExclusionRulesParser, reppy.robots.Robots), given
the same decoded text and asked the same URLs as agent ``FooBot``. On the corpus,
the backends are timed in turn on each chunk of it, round after round, so that
the load of a shared machine falls on all of them alike; ratios are to Protego.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import load_corpus, print_table, urls_for

AGENT = "FooBot"
# Each round times the backends chunk by chunk, alternating (see bench_corpus).
_CHUNKS = 20
Parse = Callable[[str], Any]
Check = Callable[[Any, str], bool]


def _ours() -> tuple[Parse, Check]:
    from scrapy_robots.rfc9309 import RobotsTxt

    return RobotsTxt.parse, lambda robots, url: robots.allowed(url, AGENT)


def _protego() -> tuple[Parse, Check]:
    from protego import Protego

    return Protego.parse, lambda robots, url: robots.can_fetch(url, AGENT)


def _python() -> tuple[Parse, Check]:
    from urllib.robotparser import RobotFileParser

    def parse(text: str) -> RobotFileParser:
        parser = RobotFileParser()
        parser.parse(text.splitlines())
        return parser

    return parse, lambda robots, url: robots.can_fetch(AGENT, url)


def _rerp() -> tuple[Parse, Check]:
    from robotexclusionrulesparser import RobotExclusionRulesParser

    def parse(text: str) -> RobotExclusionRulesParser:
        parser = RobotExclusionRulesParser()
        parser.parse(text)
        return parser

    return parse, lambda robots, url: robots.is_allowed(AGENT, url)


def _reppy() -> tuple[Parse, Check]:
    from reppy.robots import Robots

    return (lambda text: Robots.parse("http://example.com/robots.txt", text)), (
        lambda robots, url: robots.allowed(url, AGENT)
    )


BACKENDS: dict[str, Callable[[], tuple[Parse, Check]]] = {
    "rfc9309 (ours)": _ours,
    "protego": _protego,
    "urllib.robotparser": _python,
    "rerp": _rerp,
    "reppy": _reppy,
}
ANCHOR = "protego"


def available() -> dict[str, tuple[Parse, Check]]:
    backends = {}
    for name, load in BACKENDS.items():
        try:
            backends[name] = load()
        except ImportError as exc:
            print(f"skipping {name}: {exc}")
    return backends


# --- the corpus -------------------------------------------------------------------


def bench_corpus(
    backends: dict[str, tuple[Parse, Check]], texts: list[str], cases: list[list[str]], repeats: int
) -> dict[str, dict[str, float]]:
    megabytes = sum(len(text.encode()) for text in texts) / 1e6
    checks = sum(len(urls) for urls in cases)
    # The machine is shared: load comes and goes within a run. Each round walks the
    # corpus in chunks and, chunk by chunk, times every backend on the same files
    # (in alternating order), so a busy second weighs on all backends alike rather
    # than on whichever one happened to be running.
    chunks = [list(range(start, len(texts), _CHUNKS)) for start in range(_CHUNKS)]
    rounds: dict[str, dict[str, list[float]]] = {name: {"parse": [], "first": [], "steady": []} for name in backends}
    for _ in range(repeats):
        totals = {name: {"parse": 0.0, "first": 0.0, "steady": 0.0} for name in backends}
        for number, chunk in enumerate(chunks):
            order = list(backends) if number % 2 == 0 else list(backends)[::-1]
            for name in order:
                parse, check = backends[name]
                chunk_texts = [texts[index] for index in chunk]
                chunk_cases = [cases[index] for index in chunk]
                gc.collect()
                start = time.perf_counter()
                parsed = [parse(text) for text in chunk_texts]
                totals[name]["parse"] += time.perf_counter() - start
                # First pass over fresh objects: includes whatever a parser does lazily.
                start = time.perf_counter()
                for robots, urls in zip(parsed, chunk_cases):
                    for url in urls:
                        check(robots, url)
                totals[name]["first"] += time.perf_counter() - start
                # Steady state: the same objects asked again, as during a crawl of the site.
                start = time.perf_counter()
                for robots, urls in zip(parsed, chunk_cases):
                    for url in urls:
                        check(robots, url)
                totals[name]["steady"] += time.perf_counter() - start
                del parsed
        for name, total in totals.items():
            for key, seconds in total.items():
                rounds[name][key].append(seconds)
    results: dict[str, dict[str, float]] = {}
    for name, (parse, check) in backends.items():
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = [parse(text) for text in texts]
        for robots, urls in zip(kept, cases):
            check(robots, urls[0])
        memory = (tracemalloc.get_traced_memory()[0] - before) / len(texts)
        tracemalloc.stop()
        del kept
        results[name] = {
            "parse": megabytes / statistics.median(rounds[name]["parse"]),
            "first": checks / statistics.median(rounds[name]["first"]),
            "steady": checks / statistics.median(rounds[name]["steady"]),
            "memory": memory,
        }
        print(f"  measured {name}", file=sys.stderr)
    anchor = results.get(ANCHOR)
    rows = []
    for name, result in results.items():

        def ratio(key: str, result: dict[str, float] = result) -> str:
            return f"{result[key] / anchor[key]:.2f}x" if anchor else "-"

        rows.append(
            [
                name,
                f"{result['parse']:.1f}",
                ratio("parse"),
                f"{result['first'] / 1e3:.0f}k",
                ratio("first"),
                f"{result['steady'] / 1e3:.0f}k",
                ratio("steady"),
                f"{result['memory'] / 1024:.1f}",
                ratio("memory"),
            ]
        )
    print(
        f"Corpus: {len(texts)} files, {megabytes:.1f} MB, {checks} allowed() checks per pass; "
        f"medians of {repeats} rounds, backends interleaved in {_CHUNKS} chunks"
    )
    print_table(
        [
            "parser",
            "parse MB/s",
            "vs protego",
            "checks/s 1st",
            "vs protego",
            "checks/s",
            "vs protego",
            "KiB/file",
            "vs protego",
        ],
        rows,
    )
    return results


# --- one big file -------------------------------------------------------------------


def big_robotstxt(rules: int = 20_000) -> str:
    rng = random.Random(20_000)
    words = ["products", "category", "search", "user", "archive", "tag", "print", "amp", "feed", "page"]
    lines = ["User-agent: *"]
    for i in range(rules):
        path = "/" + "/".join(rng.choice(words) + str(rng.randrange(1000)) for _ in range(rng.randint(1, 3)))
        if i % 10 == 0:
            path += rng.choice(["*.pdf$", "*?sort=", "/*/print"])
        lines.append(f"{'Allow' if i % 7 == 0 else 'Disallow'}: {path}")
    body = "\n".join(lines) + "\n"
    return body + "# " + "padding " * max(0, (512 * 1024 - len(body)) // 8) + "\n"


def bench_big(backends: dict[str, tuple[Parse, Check]], quick: bool) -> None:
    text = big_robotstxt()
    rng = random.Random(1)
    urls = urls_for(text, rng, 300 if quick else 2000)
    rows = []
    for name, (parse, check) in backends.items():
        start = time.perf_counter()
        robots = parse(text)
        parse_ms = (time.perf_counter() - start) * 1e3
        check(robots, urls[0])  # the first question may compile lazily; timed apart below
        first_ms = 0.0
        robots = parse(text)
        start = time.perf_counter()
        check(robots, urls[0])
        first_ms = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        for url in urls:
            check(robots, url)
        per_check_ms = (time.perf_counter() - start) * 1e3 / len(urls)
        rows.append([name, f"{parse_ms:.1f}", f"{first_ms:.2f}", f"{per_check_ms:.4f}"])
    print(f"One file: {len(text) / 1024:.0f} KiB, 20,000 rules (10% with wildcards); {len(urls)} URLs")
    print_table(["parser", "parse ms", "1st check ms", "ms/check"], rows)


# --- the worst case for backtracking -------------------------------------------------

PATHOLOGICAL_BODY = "User-agent: *\nDisallow: /" + "*a" * 50 + "b\n"
PATHOLOGICAL_URL = "http://example.com/" + "a" * 8000


def pathological_one(name: str) -> float:
    parse, check = BACKENDS[name]()
    robots = parse(PATHOLOGICAL_BODY)
    start = time.perf_counter()
    check(robots, PATHOLOGICAL_URL)
    return time.perf_counter() - start


def bench_pathological(backends: dict[str, tuple[Parse, Check]], timeout: float) -> None:
    rows = []
    for name in backends:
        # rerp and reppy translate "*" to a backtracking regex: minutes here,
        # so they run in a child process that is killed at the timeout.
        try:
            result = subprocess.run(
                [sys.executable, __file__, "--pathological-one", name],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=True,
            )
            rows.append([name, f"{float(result.stdout) * 1e3:.3f}"])
        except subprocess.TimeoutExpired:
            rows.append([name, f"> {timeout * 1e3:.0f} (killed)"])
    print("One rule with 50 '*' against an 8,000-character URL")
    print_table(["parser", "ms"], rows)


# --- agreement with Google ----------------------------------------------------------


def bench_conformance(backends: dict[str, tuple[Parse, Check]], texts: list[str], per_file: int) -> None:
    try:
        from jwm.robotstxt.googlebot import RobotsMatcher
    except ImportError:
        print("skipping conformance: jwm.robotstxt (Google's parser) is not installed\n")
        return
    rng = random.Random(9309)
    cases = [(text, urls_for(text, rng, per_file)) for text in texts]
    google = [[bool(RobotsMatcher().OneAgentAllowedByRobots(text, AGENT, url)) for url in urls] for text, urls in cases]
    total = sum(len(urls) for _, urls in cases)
    rows = []
    for name, (parse, check) in backends.items():
        agree = files_agree = 0
        for (text, urls), expected in zip(cases, google):
            robots = parse(text)
            verdicts = [bool(check(robots, url)) for url in urls]
            same = sum(ours == theirs for ours, theirs in zip(verdicts, expected))
            agree += same
            files_agree += same == len(urls)
        rows.append([name, f"{100 * agree / total:.2f}%", f"{100 * files_agree / len(cases):.1f}%"])
    print(f"Agreement with Google's parser (google/robotstxt): {total} URLs over {len(cases)} files")
    print_table(["parser", "URLs agreeing", "files agreeing on every URL"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, smaller samples (under a minute)")
    parser.add_argument("--pathological-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pathological_one:
        print(pathological_one(args.pathological_one))
        return
    repeats = 1 if args.quick else 5
    backends = available()
    texts = load_corpus()
    rng = random.Random(42)
    cases = [urls_for(text, rng) for text in texts]
    bench_corpus(backends, texts, cases, repeats)
    bench_big(backends, args.quick)
    bench_pathological(backends, timeout=5.0 if args.quick else 30.0)
    bench_conformance(backends, texts, per_file=3 if args.quick else 10)


if __name__ == "__main__":
    main()
