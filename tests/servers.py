"""Real HTTP sites on loopback addresses, served by Twisted in the test's reactor.

Each site listens on its own 127.0.0.x address (so Scrapy gives it its own
downloader slot) and records every request it receives, with its arrival time.
"""

from __future__ import annotations

import gzip
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from twisted.internet import reactor
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request, Site

Handler = Callable[[Request], Any]


def body(text: bytes | str, status: int = 200, headers: dict[str, str] | None = None) -> Handler:
    data = text.encode() if isinstance(text, str) else text

    def handle(request: Request) -> bytes:
        request.setResponseCode(status)
        request.setHeader(b"Content-Type", b"text/plain")
        for name, value in (headers or {}).items():
            request.setHeader(name.encode(), value.encode())
        return data

    return handle


def answer_later(handler: Handler, seconds: float) -> Handler:
    """``handler``'s answer, sent ``seconds`` after the request came (decided when it came)."""

    def handle(request: Request) -> Any:
        answer = handler(request)

        def send() -> None:
            if not request.finished and request.channel is not None:
                request.write(answer)
                request.finish()

        reactor.callLater(seconds, send)
        return NOT_DONE_YET

    return handle


def redirect(location: str, status: int = 301) -> Handler:
    def handle(request: Request) -> bytes:
        request.setResponseCode(status)
        request.setHeader(b"Location", location.encode())
        return b""

    return handle


def hang() -> Handler:
    """Accept the request, never answer."""

    def handle(request: Request) -> Any:
        return NOT_DONE_YET

    return handle


def reset() -> Handler:
    """Close the connection without an answer."""

    def handle(request: Request) -> Any:
        request.channel.transport.abortConnection()
        return NOT_DONE_YET

    return handle


def drip(data: bytes, interval: float) -> Handler:
    """Send the body one byte every ``interval`` seconds."""

    def handle(request: Request) -> Any:
        request.setHeader(b"Content-Type", b"text/plain")

        def send(i: int) -> None:
            if request.finished or request.channel is None:
                return
            if i >= len(data):
                request.finish()
                return
            request.write(data[i : i + 1])
            reactor.callLater(interval, send, i + 1)

        send(0)
        return NOT_DONE_YET

    return handle


def body_later(handler: Handler, seconds: float, when: Callable[[Request], bool]) -> Handler:
    """``handler``'s answer, its status and headers at once and its body ``seconds`` later
    when ``when(request)`` says so (a client hears the headers, then waits for the body):
    what a loaded machine does to an answer between its two reads."""

    def handle(request: Request) -> Any:
        result = handler(request)
        if not isinstance(result, bytes) or not when(request):
            return result

        def finish() -> None:
            if not request.finished and request.channel is not None:
                request.write(result[1:])
                request.finish()

        request.write(result[:1])  # the status line and headers go with the first byte
        reactor.callLater(seconds, finish)
        return NOT_DONE_YET

    return handle


def gzip_bomb(decompressed_size: int) -> Handler:
    payload = gzip.compress(b"\n" * decompressed_size, compresslevel=9)

    def handle(request: Request) -> bytes:
        request.setHeader(b"Content-Type", b"text/plain")
        request.setHeader(b"Content-Encoding", b"gzip")
        return payload

    return handle


def page(request: Request) -> bytes:
    request.setHeader(b"Content-Type", b"text/html")
    return b"<html><body>" + request.path + b"</body></html>"


@dataclass
class Hit:
    at: float
    path: str


@dataclass
class SiteServer:
    """One site: robots.txt from ``robots``, any other path an HTML page."""

    host: str
    robots: Handler
    routes: dict[str, Handler] = field(default_factory=dict)
    #: every other path (an HTML page by default)
    pages: Handler | None = None
    hits: list[Hit] = field(default_factory=list)
    port: int = 0
    _listener: Any = None
    _pending: list[Request] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def paths(self) -> list[str]:
        return [hit.path for hit in self.hits]

    def robots_hits(self) -> int:
        return sum(1 for hit in self.hits if hit.path == "/robots.txt")

    def page_hits(self) -> list[Hit]:
        return [hit for hit in self.hits if hit.path != "/robots.txt"]

    def render(self, request: Request) -> Any:
        path = request.path.decode()
        self.hits.append(Hit(time.monotonic(), path))
        handler = self.robots if path == "/robots.txt" else self.routes.get(path, self.pages or page)
        result = handler(request)
        if result is NOT_DONE_YET:
            self._pending.append(request)
        return result

    def start(self) -> SiteServer:
        resource = _Dispatch(self)
        self._listener = reactor.listenTCP(0, Site(resource), interface=self.host)
        self.port = self._listener.getHost().port
        return self

    def stop(self) -> Any:
        for request in self._pending:
            if not request.finished and request.channel is not None:
                request.channel.transport.abortConnection()
        return self._listener.stopListening()


class _Dispatch(Resource):
    isLeaf = True

    def __init__(self, site: SiteServer):
        super().__init__()
        self.site = site

    def render(self, request: Request) -> Any:
        return self.site.render(request)


def chunked(text: bytes | str, pieces: int = 3, encoding: str | None = None) -> Handler:
    """Send the body in ``pieces`` writes without a Content-Length: HTTP/1.1 chunked."""
    data = text.encode() if isinstance(text, str) else text
    if encoding == "gzip":
        data = gzip.compress(data)
    size = max(1, -(-len(data) // pieces))

    def handle(request: Request) -> Any:
        request.setHeader(b"Content-Type", b"text/plain")
        if encoding:
            request.setHeader(b"Content-Encoding", encoding.encode())
        for start in range(0, len(data), size):
            request.write(data[start : start + size])
        request.finish()
        return NOT_DONE_YET

    return handle


def raw(response: bytes) -> Handler:
    """Write ``response`` (status line, headers, body) as is, then close the connection:
    a close-delimited answer, or an HTTP/1.0 one."""

    def handle(request: Request) -> Any:
        request.channel.transport.write(response)
        request.channel.transport.loseConnection()
        return NOT_DONE_YET

    return handle


def sequence(*handlers: Handler) -> Handler:
    """The n-th request gets the n-th handler; the last one answers from then on."""
    calls = [0]

    def handle(request: Request) -> Any:
        handler = handlers[min(calls[0], len(handlers) - 1)]
        calls[0] += 1
        return handler(request)

    return handle


class RateLimited:
    """Pages of a site that says "slow down": more than ``limit`` requests within
    ``window`` seconds, or any request while a pause it asked is running, gets ``status``
    with ``Retry-After`` (``retry_after(now)``: its value, None for no header) and starts
    (or keeps) a pause of ``pause`` seconds. Records every request with whether it came
    inside a pause the site had asked for (``inside``)."""

    def __init__(
        self,
        limit: int,
        pause: float,
        status: int = 429,
        retry_after: Callable[[float], str | None] | None = None,
        window: float = 1.0,
        grace: float = 0.2,
        pauses: int | None = None,
    ):
        self.limit, self.pause, self.status, self.window = limit, pause, status, window
        #: requests this soon after the pause began were sent before its answer could arrive
        self.grace = grace
        self.began = 0.0
        self.pauses = pauses  #: pauses the site asks at most (None: no end)
        self.paused = 0
        # By default the pause's whole seconds left, at least 1.
        self.retry_after = retry_after or (lambda now: str(max(1, math.ceil(self.paused_until - now))))
        self.recent: list[float] = []
        self.paused_until = 0.0
        self.inside: list[float] = []  #: arrival times of requests inside an asked pause
        self.throttled = 0
        self.served: list[str] = []
        self.told: set[str] = set()  #: paths answered "slow down"

    def __call__(self, request: Request) -> Any:
        now = time.monotonic()
        path = request.path.decode()
        if now < self.paused_until:
            # Inside the pause: a retry of a page already told to slow down, or any
            # request sent after the answer could have arrived.
            if path in self.told or now > self.began + self.grace:
                self.inside.append(now)
            return self._throttle(request, now, extend=False)
        self.recent = [at for at in self.recent if at > now - self.window] + [now]
        if len(self.recent) > self.limit and (self.pauses is None or self.paused < self.pauses):
            self.paused += 1
            return self._throttle(request, now, extend=True)
        self.served.append(path)
        return page(request)

    def _throttle(self, request: Request, now: float, extend: bool) -> bytes:
        self.throttled += 1
        self.told.add(request.path.decode())
        if extend:
            self.began, self.paused_until = now, now + self.pause
        request.setResponseCode(self.status)
        value = self.retry_after(now)
        if value is not None:
            request.setHeader(b"Retry-After", value.encode())
        return b"slow down"


class Validated:
    """A file served with validators (``ETag``, ``Last-Modified``) that honours a
    conditional request as RFC 9110 13.1 says: ``If-None-Match`` compared weakly (``W/``
    ignored), else ``If-Modified-Since`` against ``Last-Modified``; a match gets a bodiless
    304. Counts the full bodies and the 304s, and keeps what each request sent
    (``asked``: its If-None-Match and If-Modified-Since, None when absent). ``honour=False``:
    a server that ignores the validators, a 200 every time. ``change(...)`` serves a new version."""

    def __init__(
        self,
        text: str,
        etag: str | None = '"v1"',
        last_modified: str | None = "Wed, 21 Oct 2015 07:28:00 GMT",
        honour: bool = True,
        content_type: str = "text/plain",
    ):
        self.honour = honour
        self.content_type = content_type
        self.full = 0
        self.not_modified = 0
        self.asked: list[tuple[str | None, str | None]] = []
        self.change(text, etag, last_modified)

    def change(self, text: str, etag: str | None = None, last_modified: str | None = None) -> None:
        self.data, self.etag, self.last_modified = text.encode(), etag, last_modified

    def __call__(self, request: Request) -> bytes:
        if_none_match = _text(request.getHeader(b"If-None-Match"))
        if_modified_since = _text(request.getHeader(b"If-Modified-Since"))
        self.asked.append((if_none_match, if_modified_since))
        for name, value in ((b"ETag", self.etag), (b"Last-Modified", self.last_modified)):
            if value is not None:
                request.setHeader(name, value.encode())
        if self.honour and self._current(if_none_match, if_modified_since):
            self.not_modified += 1
            request.setResponseCode(304)
            return b""
        self.full += 1
        request.setHeader(b"Content-Type", self.content_type.encode())
        return self.data

    def _current(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        if if_none_match is not None:  # If-Modified-Since is then ignored (RFC 9110 13.1.3)
            if self.etag is None:
                return False
            tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
            return "*" in tags or self.etag.removeprefix("W/") in tags
        if if_modified_since is None or self.last_modified is None:
            return False
        try:
            return parsedate_to_datetime(self.last_modified) <= parsedate_to_datetime(if_modified_since)
        except (TypeError, ValueError):
            return False  # an invalid date is ignored


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


@dataclass
class Checked:
    """One request as a signature-checking site saw it."""

    path: str
    authority: str
    ok: bool
    why: str = ""  #: the verifier's reason, when refused
    created: int | None = None
    nonce: str | None = None
    agent: str | None = None
    keyid: str | None = None  #: the key it was signed with, when it verified


class SignatureChecked:
    """A site that lets in only requests signed for it (Web Bot Auth), checked by
    http-message-signatures, an RFC 9421 verifier the package did not write: the key
    looked up by its ``keyid`` among ``keys`` (keyid -> Ed25519 public key, what the
    agent's directory would give), ``@authority`` and the ``signature-agent`` member
    covered, the signature at most ``max_age`` seconds old and not expired. Anything
    else gets a 403 (with ``Accept-Signature`` when ``ask``); what passes, ``handler``'s
    answer. Records each request (``checked``: a list of its own, or one several share)."""

    def __init__(
        self,
        handler: Handler,
        keys: dict[str, Any],
        max_age: float = 60,
        ask: bool = False,
        checked: list[Checked] | None = None,
    ):
        from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms

        class Resolver(HTTPSignatureKeyResolver):
            def resolve_public_key(self, key_id: str) -> Any:
                return keys.get(key_id)

        self.verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=Resolver())
        self.handler = handler
        self.max_age = max_age
        self.ask = ask
        self.checked: list[Checked] = [] if checked is None else checked

    def __call__(self, request: Request) -> Any:
        import datetime
        from types import SimpleNamespace

        from http_message_signatures.exceptions import InvalidSignature
        from http_message_signatures.structures import CaseInsensitiveDict

        host = request.getHeader(b"Host").decode()
        headers = CaseInsensitiveDict(
            {
                name.decode(): b", ".join(values).decode("latin-1")
                for name, values in request.requestHeaders.getAllRawHeaders()
            }
        )
        message = SimpleNamespace(
            method=request.method.decode(), url=f"http://{host}{request.uri.decode()}", headers=headers
        )
        seen = Checked(request.path.decode(), host, False, agent=headers.get("Signature-Agent"))
        self.checked.append(seen)
        try:
            [result] = self.verifier.verify(
                message,
                max_age=datetime.timedelta(seconds=self.max_age),
                expect_tag="web-bot-auth",
                require_components=("@authority",),
            )
        except (InvalidSignature, ValueError) as exc:
            seen.why = str(exc)
            request.setResponseCode(403)
            if self.ask:
                request.setHeader(b"Accept-Signature", b'sig1=("@authority");tag="web-bot-auth"')
            return b"sign your requests"
        if not any(c.startswith('"signature-agent"') for c in result.covered_components):
            seen.why = "the Signature-Agent member is not covered"
            request.setResponseCode(403)
            return b"sign your agent"
        seen.ok, seen.created, seen.nonce = True, result.parameters["created"], result.parameters.get("nonce")
        seen.keyid = result.parameters.get("keyid")
        return self.handler(request)
