"""What the benchmarks share: the corpus, the URLs asked about it, timing, tables."""

from __future__ import annotations

import gc
import random
import re
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from scrapy_robots.decoding import decode_robotstxt

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence

CORPUS = Path("/work/shared/corpus/robotstxt/test_data")
_RULE_PATH = re.compile(r"(?im)^[ \t]*(?:dis)?allow[ \t]*:[ \t]*([^#\s]+)")


def load_corpus(directory: Path = CORPUS) -> list[str]:
    """Every file of the corpus, decoded once (decoding is not what is measured)."""
    return [decode_robotstxt(path.read_bytes()) for path in sorted(directory.iterdir()) if path.is_file()]


def urls_for(text: str, rng: random.Random, count: int = 10) -> list[str]:
    """URLs that exercise a file's own rules, percent-encoded as a crawler sends
    them, plus two that usually match nothing."""
    paths = _RULE_PATH.findall(text)
    rng.shuffle(paths)
    urls = ["https://example.com/", "https://example.com/some/page.html?id=1"]
    for path in paths[:count]:
        path = path.replace("*", rng.choice(["", "x", "abc/"])).rstrip("$")
        if not path.startswith("/"):
            path = "/" + path
        path += rng.choice(["", "", "zz", "/page.html", "?q=1"])
        urls.append("https://example.com" + quote(path, safe="/?=&;%:@!$'()*+,-._~"))
    return urls


def median_seconds(run: Callable[[], object], repeats: int, setup: Callable[[], object] | None = None) -> float:
    """Median wall time of ``run`` over ``repeats`` runs, each after ``setup`` and a full GC."""
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(headers[i]), *(len(row[i]) for row in cells)) for i in range(len(headers))]
    print("  ".join(header.ljust(width) for header, width in zip(headers, widths)))
    print("  ".join("-" * width for width in widths))
    for row in cells:
        print(
            "  ".join(
                cell.ljust(width) if i == 0 else cell.rjust(width) for i, (cell, width) in enumerate(zip(row, widths))
            )
        )
    print()


def run_in_reactor(main: Callable[[], Coroutine[Any, Any, None]], timeout: float) -> bool:
    """Run ``main()`` in the (already installed) reactor, bounded by ``timeout``
    seconds; return whether it timed out. A graceful Crawler.stop() would still wait
    for every request queued in paced slots: stopping the reactor is what bounds the
    run, and the caller reports what was seen until then."""
    from twisted.internet import defer
    from twisted.internet import reactor as _reactor

    reactor: Any = _reactor  # Twisted types the global reactor as a module, not a reactor
    timed_out = False
    failures: list[Any] = []

    def give_up() -> None:
        nonlocal timed_out
        timed_out = True
        reactor.stop()

    def start() -> None:
        # Once the reactor runs: a main() that fails before its first wait stops it too
        # (called before reactor.run(), its reactor.stop() raised and the run never ended).
        finished: Any = defer.ensureDeferred(main())
        finished.addErrback(failures.append)
        finished.addBoth(lambda _: None if timed_out else (watchdog.cancel(), reactor.stop()))

    watchdog = reactor.callLater(timeout, give_up)
    reactor.callWhenRunning(start)
    reactor.run()
    if failures:
        raise RuntimeError(failures[0].getTraceback())
    return timed_out
