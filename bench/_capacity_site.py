"""bench/fleet_capacity.py's sites: bench/_broad_site.py's loopback forward proxy, answering
for every host, with other robots.txt files.

    .venv/bin/python bench/_capacity_site.py PORT_FILE corpus      # site i: corpus file i % 4,231, as it is
    .venv/bin/python bench/_capacity_site.py PORT_FILE plain       # every site: a short robots.txt
    .venv/bin/python bench/_capacity_site.py PORT_FILE delay 0.1   # the same, plus "Crawl-delay: 0.1"

Site ``i`` is ``s{i:05d}.example`` (bench/_broad_site.py's ``host``). In ``corpus`` mode its
robots.txt is file ``i % len(corpus)`` of the sorted corpus, Crawl-delay and Request-rate
lines kept (the crawl clamps them: ROBOTSTXT_MAX_CRAWL_DELAY), since a site's pace keys
are part of what it costs in Redis. Any path starting ``/p`` is a page; anything else (a
site's ``/.well-known/tdmrep.json``) is a 404, counted as ``other``. ``GET /__stats__``
answers the counts, as bench/_broad_site.py's does; the server stops when stdin closes.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from _broad_site import CORPUS, SYNTHETIC, Counts, _response, serve


class CapacityCounts(Counts):
    def __init__(self, mode: str, delay: float) -> None:
        bodies = [path.read_bytes() for path in sorted(CORPUS.iterdir()) if path.is_file()] if mode == "corpus" else []
        super().__init__(bodies)
        self.mode = mode
        text = SYNTHETIC + (f"Crawl-delay: {delay:g}\n".encode() if mode == "delay" else b"")
        self.synthetic = _response(b"200 OK", text, b"text/plain")

    def answer(self, target: bytes, head: bytes = b"") -> bytes:
        if not target.startswith(b"http://"):
            return self.control(target)
        slash = target.find(b"/", 7)
        name = target[7:slash] if slash >= 0 else target[7:]
        path = target[slash:] if slash >= 0 else b"/"
        if name.endswith(b".example") and name.startswith(b"s") and name[1:-8].isdigit():
            site = int(name[1:-8])
            if path == b"/robots.txt":
                self.robots[site] += 1
                return self.corpus[site % len(self.corpus)] if self.mode == "corpus" else self.synthetic
            if path.startswith(b"/p"):
                self.pages += 1
                return self.page
        self.stray += 1  # tdmrep.json, or a host that is no site: 404
        return self.not_found


if __name__ == "__main__":
    delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    asyncio.run(serve(Path(sys.argv[1]), CapacityCounts(sys.argv[2], delay)))
