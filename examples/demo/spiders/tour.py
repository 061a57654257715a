"""Visit every demo site and report, per site, what was fetched, denied and why."""

from __future__ import annotations

import json
from collections import defaultdict
from urllib.parse import urlsplit
from urllib.request import urlopen

from demo_site import PAGES, PORT, SITES
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest


class TourSpider(Spider):
    name = "tour"
    custom_settings = {
        # Per-spider overrides: retry the unreachable (503) site soon, once, so the
        # demo ends in seconds instead of waiting minutes as a real crawl would.
        "ROBOTSTXT_UNREACHABLE_RETRY_DELAY": 2,
        "ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 1,
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes: dict[str, list[tuple[str, str]]] = defaultdict(list)

    async def start(self):
        for host in SITES:
            for path in PAGES:
                yield Request(f"http://{host}:{PORT}{path}", callback=self.parse, errback=self.denied)

    def parse(self, response):
        outcome = "fetched"
        header = (response.meta.get("robotstxt_usage") or {}).get("train-ai")
        if header and header.get("source") == "header" and header["decision"] == "deny":
            outcome += f", its items dropped (header {header['text']})"
        self.outcomes[urlsplit(response.url).hostname].append((urlsplit(response.url).path, outcome))
        yield {"url": response.url}

    def denied(self, failure):
        reason = str(failure.value) if failure.check(IgnoreRequest) else f"error: {failure.value!r}"
        url = failure.request.url
        self.outcomes[urlsplit(url).hostname].append((urlsplit(url).path, reason))

    def _print_pacing(self, host: str) -> None:
        from scrapy_robots import RobotsTxtMiddleware

        [robots] = [
            m for m in self.crawler.engine.downloader.middleware.middlewares if isinstance(m, RobotsTxtMiddleware)
        ]
        entry = robots.cache.get(f"http://{host}:{PORT}")
        if entry is None or entry.delay is None or entry.delay.applied is None:  # no delay, or a site skipped
            return
        with urlopen(f"http://{host}:{PORT}/__arrivals__", timeout=5) as answer:
            arrivals = sorted(json.load(answer))
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        smallest = f"{min(gaps):.3f}s" if gaps else "n/a"
        print(
            f"    crawl-delay asked {entry.delay.asked:g}s, applied {entry.delay.applied:g}s, "
            f"smallest gap measured at the server {smallest} over {len(arrivals)} pages"
        )

    def closed(self, reason):
        print("\n=== scrapy-robots demo: what happened on each site ===")
        for host, (label, *_rest) in SITES.items():
            rows = self.outcomes.get(host, [])
            fetched = sum(1 for _, r in rows if r.startswith("fetched"))
            print(f"\n{host}  ({label}): {fetched} fetched, {len(rows) - fetched} denied")
            for path, outcome in sorted(rows):
                print(f"    {path:22} {outcome}")
            self._print_pacing(host)
        stats = self.crawler.stats.get_stats()
        print("\nrobotstxt stats:")
        for key in sorted(k for k in stats if k.startswith("robotstxt/")):
            print(f"    {key} = {stats[key]}")
        total = sum(len(r) for r in self.outcomes.values())
        print(f"\n{total} of {len(SITES) * len(PAGES)} requests accounted for.")
