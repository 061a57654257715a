"""A local demo web of several sites, each on its own 127.0.0.x address.

    python examples/demo_site.py            # serves until interrupted

Each site answers /robots.txt in its own way; every other path is a small HTML page
that links to a few more pages of the same site.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = 8731

ROBOTS = "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\nAllow: /private/press-kit\n"
USAGE_ROBOTS = (
    "User-agent: *\n"
    "Content-Signal: search=yes\n"
    "Content-Usage: train-ai=n\n"
    "Content-Usage: /blog/ train-ai=y\n"
    "Disallow: /private/\n"
)
SITES = {
    # host: (label, status, robots.txt body, extra headers)
    "127.0.0.10": ("normal", 200, ROBOTS, {}),
    "127.0.0.11": ("404 page says Disallow: /", 404, "<html>Not found. User-agent: *\nDisallow: /\n</html>", {}),
    "127.0.0.12": ("403 forbidden", 403, "User-agent: *\nDisallow:\n", {}),
    "127.0.0.13": ("503 unavailable", 503, "<html>Maintenance</html>", {}),
    "127.0.0.14": ("redirect to the normal site", 301, "", {"Location": f"http://127.0.0.10:{PORT}/robots.txt"}),
    "127.0.0.15": ("Crawl-delay: 1", 200, "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n", {}),
    # AI usage preferences (docs/usage.rst): they matter only to a crawl that declares
    # a purpose, e.g. make demo DEMO_ARGS="-s ROBOTSTXT_USAGE=train-ai".
    "127.0.0.16": ("AI usage preferences", 200, USAGE_ROBOTS, {}),
}
# Response headers of some pages: /blog/2 says more than its robots.txt line.
PAGE_HEADERS = {("127.0.0.16", "/blog/2"): {"Content-Usage": "train-ai=n"}}
# Arrival time of every page request, per site, for the demo's "smallest gap" column.
ARRIVALS: dict[str, list[float]] = defaultdict(list)
PAGES = ["/", "/about", "/private/secret", "/private/press-kit", "/report.pdf", "/blog/1", "/blog/2"]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        host = self.server.server_address[0]
        label, status, robots, headers = SITES[host]
        if self.path == "/__arrivals__":
            self._send(200, json.dumps(ARRIVALS[host]).encode(), "application/json")
        elif self.path == "/robots.txt":
            self._send(status, robots.encode(), "text/plain", headers)
        else:
            ARRIVALS[host].append(time.monotonic())
            links = "".join(f'<a href="{p}">{p}</a> ' for p in PAGES)
            page = f"<html><body><h1>{label}{self.path}</h1>{links}</body></html>".encode()
            self._send(200, page, "text/html", PAGE_HEADERS.get((host, self.path)))

    def _send(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    servers = [ThreadingHTTPServer((host, PORT), Handler) for host in SITES]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"demo sites on port {PORT}: " + ", ".join(SITES), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
