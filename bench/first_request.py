"""How many of the package's modules a request passes through, and how many times control
comes back to the middleware for it: the shape of the data path, counted in a real crawl.

    .venv/bin/python bench/first_request.py            # the package as installed (or on PYTHONPATH)

One site on 127.0.0.1 whose robots.txt allows everything, two pages: the first meets the
robots.txt fetch, the second a ready entry. A trace function (sys.settrace) notes every frame
of the package entered or resumed while each page goes through the downloader middlewares
(a marker middleware at priority 1 says which page passes), and counts the frames of
``middleware.py`` among them (a coroutine resumed after an await is entered again).
Exact for a given tree, whatever the machine's load.
"""

from __future__ import annotations

import http.server
import os
import sys
import threading
from collections import Counter
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess

import scrapy_robots

PACKAGE = os.path.dirname(scrapy_robots.__file__) + os.sep
MIDDLEWARE = PACKAGE + "middleware.py"
phase: dict[str, str | None] = {"name": None}
modules: dict[str, set[str]] = {"first": set(), "later": set()}
returns: Counter[str] = Counter()


class Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        robots = self.path == "/robots.txt"
        body = b"User-agent: *\nAllow: /\n" if robots else b"<html>ok</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "text/plain" if robots else "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class Marker:
    """The outermost downloader middleware: which page is passing (robots.txt's own
    download goes on while the first page waits, and counts for it)."""

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if not request.url.endswith("/robots.txt"):
            phase["name"] = "first" if request.url.endswith("/a") else "later"

    def process_response(self, request: Request, response: Any, spider: Spider | None = None) -> Any:
        if not request.url.endswith("/robots.txt"):
            phase["name"] = None
        return response


class TwoPages(Spider):
    name = "two-pages"
    port = 0

    async def start(self):
        yield Request(f"http://127.0.0.1:{self.port}/a", callback=self.next_page)

    def next_page(self, response: Any):
        yield Request(f"http://127.0.0.1:{self.port}/b", callback=lambda response: None)


def trace(frame: Any, event: str, arg: Any) -> None:
    if event != "call" or phase["name"] is None:
        return
    filename = frame.f_code.co_filename
    if filename.startswith(PACKAGE):
        modules[phase["name"]].add(filename[len(PACKAGE) :])
        if filename == MIDDLEWARE and frame.f_code.co_name not in ("__init__", "from_crawler", "_pacing"):
            returns[phase["name"]] += 1


def main() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    TwoPages.port = server.server_port
    process = CrawlerProcess(
        {
            "ROBOTSTXT_OBEY": True,
            "ADDONS": {"scrapy_robots.Addon": 0},
            "DOWNLOADER_MIDDLEWARES": {f"{__name__}.Marker": 1},
            "LOG_LEVEL": "ERROR",
            "TELNETCONSOLE_ENABLED": False,
        }
    )
    process.crawl(TwoPages)
    sys.settrace(trace)
    threading.settrace(trace)
    process.start()
    sys.settrace(None)
    server.shutdown()
    print("request                     modules  middleware.py frames entered or resumed")
    for name, label in (("first", "first to its site"), ("later", "later, entry ready")):
        print(f"{label:26}  {len(modules[name]):7}  {returns[name]}")
    for name in ("first", "later"):
        print(f"\n{name}: " + " ".join(sorted(modules[name])))


if __name__ == "__main__":
    main()
