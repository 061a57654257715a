"""bench/broad.py's sites: one loopback HTTP forward proxy that answers for every host itself.

    .venv/bin/python bench/_broad_site.py PORT_FILE                # serve until stdin closes
    .venv/bin/python bench/_broad_site.py PORT_FILE --validators   # robots.txt with ETag, Last-Modified

A crawler sends it absolute-form requests (``GET http://s00042.example/page1 HTTP/1.1``,
what an HTTP client sends to a forward proxy): no DNS, no real network, any number of
sites behind one port. Site ``i`` is ``s{i:05d}.example``; what its robots.txt is depends
on ``i`` alone (:func:`robots_kind`), so the benchmark knows it without asking.

With ``--validators`` (bench/revalidation.py), a robots.txt answered 200 carries an
``ETag`` (its body's, weak for one site in two) and a ``Last-Modified``, and a request whose
``If-None-Match`` matches (or, without one, whose ``If-Modified-Since`` is that date) gets a
bodiless 304. The bytes of robots.txt answers are counted either way.

Control requests come in origin form, straight to the port (no proxy):
``GET /__stats__`` answers the counts as JSON, ``GET /__reset__`` zeroes them.

The server is plain asyncio (a Protocol and a hand-rolled request parser: GET only,
no bodies, keep-alive unless ``Connection: close``), in its own process: it does a
few dict lookups per request, so the crawler, not the server, is what is measured.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
import threading
from collections import Counter
from pathlib import Path

CORPUS = Path("/work/shared/corpus/robotstxt/test_data")
# Four URLs per site. /private/page3 is disallowed by every "synthetic" robots.txt (and
# by whatever a corpus file says about it).
PATHS = ("/page1", "/page2", "/private/page3", "/page4")
SYNTHETIC = b"User-agent: *\nDisallow: /private\nDisallow: /cgi-bin/\nDisallow: /search\n\nSitemap: /sitemap.xml\n"
PAGE = (
    b"<!doctype html><html><head><title>page</title></head><body>"
    + b"<p>Lorem ipsum dolor sit amet.</p>" * 4
    + b"</body></html>\n"
)

# Crawl-delay and Request-rate lines come out of the corpus bodies: a delay would make
# the crawl's wall time the sum of the sites' delays, not the cost of robots.txt. The
# spellings are those scrapy_robots.rfc9309's tokenizer accepts (Protego's are a subset).
_PACING_KEY = re.compile(rb"(?i)^(?:\xef\xbb\xbf)?[ \t]*(?:crawl[-_ ]?delay|request[-_ ]?rate)[ \t]*:")
_LINE_BREAK = re.compile(rb"(\r\n|\n|\r)")


def host(site: int) -> str:
    return f"s{site:05d}.example"


def robots_kind(site: int) -> str:
    """'404' (1 site in 10), 'synthetic' (SYNTHETIC, 2 in 10) or 'corpus' (7 in 10: file
    ``site % len(corpus)`` of the sorted corpus, pacing lines stripped)."""
    slot = site % 10
    return "404" if slot == 0 else "synthetic" if slot in (3, 7) else "corpus"


def strip_pacing(body: bytes) -> bytes:
    parts = [*_LINE_BREAK.split(body), b""]  # line, break, line, break, ..., last line, ""
    return b"".join(line + end for line, end in zip(parts[::2], parts[1::2]) if not _PACING_KEY.match(line))


def load_bodies(directory: Path = CORPUS) -> list[bytes]:
    return [strip_pacing(path.read_bytes()) for path in sorted(directory.iterdir()) if path.is_file()]


def _response(status: bytes, body: bytes, content_type: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status,
        content_type,
        len(body),
        extra,
        body,
    )


LAST_MODIFIED = b"Wed, 21 Oct 2015 07:28:00 GMT"


def _validated(body: bytes, weak: bool) -> tuple[bytes, bytes, bytes]:
    """A robots.txt 200 with validators, its ETag, and the 304 that answers a match."""
    etag = b'%s"%s"' % (b"W/" if weak else b"", hashlib.sha256(body).hexdigest()[:16].encode())
    headers = b"ETag: %s\r\nLast-Modified: %s\r\n" % (etag, LAST_MODIFIED)
    not_modified = b"HTTP/1.1 304 Not Modified\r\n%s\r\n" % headers
    return _response(b"200 OK", body, b"text/plain", headers), etag.removeprefix(b"W/"), not_modified


class Counts:
    """What the proxy saw since the last reset, and the answers it gives."""

    def __init__(self, bodies: list[bytes], validators: bool = False) -> None:
        self.validators = validators
        if validators:
            # (200, ETag as compared, 304) per body: weak tags for every other corpus file.
            self.corpus_validated = [_validated(body, weak=i % 2 == 1) for i, body in enumerate(bodies)]
            self.synthetic_validated = _validated(SYNTHETIC, weak=False)
        self.corpus = [_response(b"200 OK", body, b"text/plain") for body in bodies]
        self.synthetic = _response(b"200 OK", SYNTHETIC, b"text/plain")
        self.not_found = _response(b"404 Not Found", b"Not Found\n", b"text/plain")
        self.page = _response(b"200 OK", PAGE, b"text/html; charset=utf-8")
        self.reset()

    def reset(self) -> None:
        self.robots: Counter[int] = Counter()  # site -> robots.txt requests
        self.robots_bytes = 0  # bytes of robots.txt answers, headers included
        self.not_modified = 0  # robots.txt requests answered 304
        self.conditional = 0  # robots.txt requests that sent a validator
        self.pages = 0
        self.stray = 0  # requests for a host or path that is not one of the sites'
        self.connections = 0

    def stats(self) -> dict[str, object]:
        return {
            "robots": sum(self.robots.values()),
            "robots_sites": len(self.robots),
            # How many sites had their robots.txt fetched once, twice, ...
            "robots_per_site": {str(k): v for k, v in sorted(Counter(self.robots.values()).items())},
            "robots_bytes": self.robots_bytes,
            "not_modified": self.not_modified,
            "conditional": self.conditional,
            "pages": self.pages,
            "stray": self.stray,
            "connections": self.connections,
        }

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
                answer = self.robots_txt(site, head)
                self.robots_bytes += len(answer)
                return answer
            if path.decode("latin-1") in PATHS:
                self.pages += 1
                return self.page
        self.stray += 1
        return self.not_found

    def robots_txt(self, site: int, head: bytes) -> bytes:
        kind = robots_kind(site)
        if kind == "404":
            return self.not_found
        if not self.validators:
            return self.synthetic if kind == "synthetic" else self.corpus[site % len(self.corpus)]
        full, etag, not_modified = (
            self.synthetic_validated if kind == "synthetic" else self.corpus_validated[site % len(self.corpus)]
        )
        lowered = head.lower()
        if_none_match = _header(lowered, head, b"if-none-match")
        if_modified_since = _header(lowered, head, b"if-modified-since")
        if if_none_match is not None or if_modified_since is not None:
            self.conditional += 1
        if if_none_match is not None:  # compared weakly; If-Modified-Since then ignored (RFC 9110 13.1)
            current = etag in {tag.strip().removeprefix(b"W/") for tag in if_none_match.split(b",")}
        else:
            current = if_modified_since == LAST_MODIFIED
        if current:
            self.not_modified += 1
            return not_modified
        return full

    def control(self, target: bytes) -> bytes:
        if target == b"/__reset__":
            self.reset()
        elif target != b"/__stats__":
            return self.not_found
        return _response(b"200 OK", json.dumps(self.stats()).encode(), b"application/json")


def _header(lowered: bytes, head: bytes, name: bytes) -> bytes | None:
    """A request header's value (``name`` lowercase), or None."""
    start = lowered.find(b"\r\n" + name + b":")
    if start < 0:
        return None
    start += len(name) + 3
    end = head.find(b"\r\n", start)
    return head[start : end if end >= 0 else len(head)].strip()


class ProxyProtocol(asyncio.Protocol):
    def __init__(self, counts: Counts) -> None:
        self.counts = counts
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.counts.connections += 1

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        buffer = self.buffer + data if self.buffer else data
        start = 0
        while (end := buffer.find(b"\r\n\r\n", start)) >= 0:
            head = buffer[start:end]
            start = end + 4
            line_end = head.find(b"\r\n")
            parts = (head if line_end < 0 else head[:line_end]).split(b" ")
            if len(parts) != 3:
                self.transport.write(_response(b"400 Bad Request", b"", b"text/plain"))
                self.transport.close()
                return
            self.transport.write(self.counts.answer(parts[1], head))
            if parts[2] == b"HTTP/1.0" or b"connection: close" in head.lower():
                self.transport.close()
                return
        self.buffer = buffer[start:]


async def serve(port_file: Path, counts: Counts | None = None, validators: bool = False) -> None:
    """Answer as ``counts`` says (by default the broad crawl's sites) until stdin closes;
    the port goes to ``port_file``."""
    counts = counts if counts is not None else Counts(load_bodies(), validators)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: ProxyProtocol(counts), "127.0.0.1", 0, backlog=1024)
    stop = asyncio.Event()
    # The parent closes our stdin when it is done (or dies): stop then.
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    port_file.write_text(str(server.sockets[0].getsockname()[1]))
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]), validators="--validators" in sys.argv[2:]))
