"""bench/directives.py's pages and sites: HTML pages of 30-200 KB whose heads hold robots
meta tags and whose bodies hold ``rel="nofollow"`` links, built the same way for the
in-process timings and for the crawl's local sites.

    .venv/bin/python bench/_directives_site.py PORT_FILE SITES PAGES   # serve until stdin closes

Site ``s`` is ``http://127.0.0.{s + 2}:PORT/`` (one address per site, so that Scrapy gives
each its own downloader slot); its pages are ``/p{n}.html`` for ``n`` in ``0..PAGES-1``.
Page ``n`` links to pages ``n+1`` .. ``n+8`` (every page is reached from page 0, whatever
the directives drop: the page before a ``nofollow`` page also links past it), and, on even
pages, with ``rel="nofollow"`` to three pages of its site (reached by other links anyway)
and to two external sites. One page in 10 says ``noindex`` in a meta tag, one in 10
``nofollow``, one in 10 carries an ``X-Robots-Tag`` for another crawler and a
``Robots-Tag`` for every crawler. So a crawl with the directives on fetches the same
pages as one without: what differs is the work the middleware does, and the requests it
drops before the duplicate filter. ``GET /__stats__`` on any site answers the pages
served since ``GET /__reset__``, as JSON.

The server is plain asyncio in its own process; its CPU is not the crawl's.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

_WORDS = (
    b"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et "
    b"dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip "
)
#: Body filler: nested blocks, inline markup and anchors without href, as a blog post has.
_BLOCK = (
    b'<div class="post"><h3 class="title">Post title</h3><p class="text">' + _WORDS + b"<b>bold</b> <i>it</i> "
    b'<a name="x">anchor</a></p><ul class="tags"><li>one</li><li>two</li></ul><span class="meta">'
    b"2026-01-01</span></div>\n"
)
#: Head filler: what a CMS puts there (styles, scripts, link and og meta tags).
_HEAD_BLOCK = (
    b'<link rel="stylesheet" href="/static/site.css?v=1"><meta property="og:title" content="A page">'
    b"<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}</script>\n"
)


def _fill(block: bytes, size: int) -> bytes:
    return block * max(0, round(size / len(block)))


def html_page(
    head_size: int = 4_000,
    body_size: int = 60_000,
    meta: Sequence[tuple[str, str]] = (),
    links: Sequence[str] = (),
    nofollow_links: Sequence[str] = (),
    meta_last: bool = False,
) -> bytes:
    """A page of about ``head_size + body_size`` bytes: ``meta`` as ``(name, content)``
    robots meta tags at the head's start (its end with ``meta_last``), ``links`` and
    ``nofollow_links`` (with ``rel="nofollow"``) spread in the body."""
    tags = b"".join(b'<meta name="%s" content="%s">\n' % (n.encode(), c.encode()) for n, c in meta)
    head = b'<meta charset="utf-8"><title>A page</title>\n'
    head += _fill(_HEAD_BLOCK, head_size - len(head) - len(tags))
    head = head + tags if meta_last else tags + head
    anchors = [b'<a href="%s">a link</a>\n' % url.encode() for url in links]
    anchors += [b'<a rel="nofollow" href="%s">a sponsored link</a>\n' % url.encode() for url in nofollow_links]
    # Whole blocks, the anchors spread between them: no tag cut in half.
    blocks = max(1, body_size // len(_BLOCK))
    every = max(1, blocks // max(1, len(anchors)))
    parts = []
    for i in range(blocks):
        parts.append(_BLOCK)
        if i % every == every - 1 and i // every < len(anchors):
            parts.append(anchors[i // every])
    parts += anchors[blocks // every :]
    body = b"".join(parts)
    return b"<!doctype html>\n<html><head>\n" + head + b"</head>\n<body>\n" + body + b"</body></html>\n"


def site_page(n: int, pages: int) -> tuple[dict[bytes, bytes], bytes]:
    """The headers and body of page ``n`` of a site of ``pages`` pages (see the module)."""
    links = [f"/p{(n + k) % pages}.html" for k in range(1, 9)] + ["/p0.html", "/private/login"]
    nofollow: list[str] = []
    if n % 2 == 0:
        nofollow = [f"/p{(n + k) % pages}.html" for k in (30, 31, 32)]
        nofollow += [f"http://ads.example/click?id={n}", f"http://tracker.example/{n}"]
    meta: list[tuple[str, str]] = []
    if n % 10 == 3:
        meta = [("robots", "noindex")]
    elif n % 10 == 5:
        meta = [("robots", "nofollow")]
    headers = {b"Content-Type": b"text/html; charset=utf-8"}
    if n % 10 == 7:
        headers[b"X-Robots-Tag"] = b"otherbot: noindex, nofollow"
        headers[b"Robots-Tag"] = b"*;nosnippet, OtherBot;noindex"
    head_size = 40_000 if n % 50 == 11 else 2_000 + (n * 37 % 8) * 1_000
    body_size = 30_000 + (n * 7919 % 71) * 1_000
    return headers, html_page(head_size, body_size, meta, links, nofollow)


ROBOTS_TXT = b"User-agent: *\nDisallow: /private\n"


def _response(status: bytes, headers: dict[bytes, bytes], body: bytes) -> bytes:
    lines = b"".join(b"%s: %s\r\n" % item for item in headers.items())
    return b"HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n" % (status, lines, len(body)) + body


class Sites(asyncio.Protocol):
    def __init__(self, pages: int, counts: dict[str, int]) -> None:
        self.pages = pages
        self.counts = counts
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        buffer = self.buffer + data
        while (end := buffer.find(b"\r\n\r\n")) >= 0:
            head, buffer = buffer[:end], buffer[end + 4 :]
            parts = head.split(b"\r\n", 1)[0].split(b" ")
            self.transport.write(self.answer(parts[1].decode("latin-1") if len(parts) == 3 else ""))
        self.buffer = buffer

    def answer(self, path: str) -> bytes:
        plain = {b"Content-Type": b"text/plain"}
        if path == "/robots.txt":
            self.counts["robots"] += 1
            return _response(b"200 OK", plain, ROBOTS_TXT)
        if path.startswith("/p") and path.endswith(".html") and path[2:-5].isdigit():
            n = int(path[2:-5])
            if n < self.pages:
                self.counts["pages"] += 1
                return _response(b"200 OK", *site_page(n, self.pages))
        if path == "/__reset__":
            self.counts.update(pages=0, robots=0, other=0)
        if path in ("/__reset__", "/__stats__"):
            return _response(b"200 OK", {b"Content-Type": b"application/json"}, json.dumps(self.counts).encode())
        self.counts["other"] += 1
        return _response(b"404 Not Found", plain, b"Not Found\n")


async def serve(port_file: Path, sites: int, pages: int) -> None:
    counts = {"pages": 0, "robots": 0, "other": 0}
    loop = asyncio.get_running_loop()
    first = await loop.create_server(lambda: Sites(pages, counts), "127.0.0.2", 0, backlog=1024)
    port = first.sockets[0].getsockname()[1]
    servers = [first] + [
        await loop.create_server(lambda: Sites(pages, counts), f"127.0.0.{site + 2}", port, backlog=1024)
        for site in range(1, sites)
    ]
    stop = asyncio.Event()
    # The parent closes our stdin when it is done (or dies): stop then.
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    port_file.write_text(str(port))
    await stop.wait()
    for server in servers:
        server.close()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
