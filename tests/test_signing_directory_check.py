"""``scrapy robots-key --check URL``: a live key directory checked against the crawl's key,
as a verifier fetches it. The real command, run as a process while a real site on
127.0.0.x (tests/servers.py) serves the directory: signed by its server (the headers
``--authority`` makes), unsigned, without the key, with another Content-Type, with a body
changed under its signature, expired, signed for another host; a 404, a redirect, a body
that is not JSON or too big, a closed port. Then a key rotated between two checks."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
import pytest_twisted
from redis_server import free_port
from servers import Handler, raw, redirect, reset
from twisted.internet.utils import getProcessOutputAndValue

from scrapy_robots.signing import make_key
from scrapy_robots.signing.binding import directory_headers
from scrapy_robots.signing.keys import DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH, SigningKey, directory


async def robots_key(cwd: Path, *args: str) -> tuple[int, str, str]:
    """The command as a process, without blocking the reactor that serves the site."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    out, err, code = await getProcessOutputAndValue(
        sys.executable, ["-m", "scrapy", "robots-key", *args], env=environ, path=str(cwd)
    )
    return code, out.decode(), err.decode()


class Directory:
    """What the site serves at the directory's path; changed between two checks."""

    def __init__(self) -> None:
        self.status = 200
        self.body = b""
        self.headers: dict[str, str] = {}

    def serve(self, body: bytes, headers: dict[str, str] | None = None, status: int = 200) -> None:
        self.body, self.headers, self.status = body, {"Content-Type": DIRECTORY_MEDIA_TYPE, **(headers or {})}, status

    def handler(self) -> Handler:
        def handle(request) -> bytes:
            request.setResponseCode(self.status)
            for name, value in self.headers.items():
                request.setHeader(name.encode(), value.encode())
            return self.body

        return handle


def body_of(*keys: SigningKey) -> bytes:
    return (json.dumps(directory(*keys), indent=2) + "\n").encode()


def signed(body: bytes, by: SigningKey, at: str, created: float | None = None, expires: int = 3600) -> dict[str, str]:
    """The headers the directory's server sends: its own signature for ``at`` (what
    ``scrapy robots-key --authority`` prints; its vector and http-message-signatures'
    verdict are test_signing_binding.py's)."""
    start = int(time.time() if created is None else created)
    return directory_headers(by, body, at, start, start + expires)


@pytest.fixture
def keys(tmp_path) -> tuple[SigningKey, SigningKey]:
    return make_key(tmp_path / "crawler.pem"), make_key(tmp_path / "next.pem")


@pytest.fixture
def site(serve):
    served = Directory()
    site = serve(lambda request: b"", {DIRECTORY_PATH: served.handler()})
    site.directory = served
    site.authority = f"{site.host}:{site.port}"
    site.directory_url = site.url + DIRECTORY_PATH
    return site


def _tampered(body: bytes) -> bytes:
    # Still JSON, still the key: one space more, which only the digest sees.
    return body.replace(b'"keys": [', b'"keys":  [', 1)


# Each case: what the site serves (given the key, the next key, the site), the exit
# status, what is said, and what must not be said.
CASES = {
    "signed": (
        lambda k, n, s: (body_of(k), signed(body_of(k), k, s.authority)),
        0,
        ["lists the key {keyid}", "signed (binding, the crawl's key): verifies for this host"],
        ["warning: the Content-Type", "warning: not signed"],
    ),
    "unsigned": (
        lambda k, n, s: (body_of(k), {}),
        0,
        ["lists the key {keyid}", "warning: not signed by its server"],
        ["signed (", "warning: the Content-Type"],
    ),
    "signed by another key of the directory": (
        lambda k, n, s: (body_of(k, n), signed(body_of(k, n), n, s.authority)),
        0,
        ["lists the key {keyid} (key 1 of 2)", "signed (binding, another key of the directory): verifies"],
        ["warning: not signed"],
    ),
    "without the key": (
        lambda k, n, s: (body_of(n), signed(body_of(n), n, s.authority)),
        1,
        ["does not list the key {keyid} (1 other key(s))"],
        ["lists the key {keyid}"],
    ),
    "another Content-Type": (
        lambda k, n, s: (body_of(k), {**signed(body_of(k), k, s.authority), "Content-Type": "application/json"}),
        0,
        ["lists the key {keyid}", f"warning: the Content-Type is application/json, not {DIRECTORY_MEDIA_TYPE}"],
        [],
    ),
    "the body changed under its digest": (
        lambda k, n, s: (_tampered(body_of(k)), signed(body_of(k), k, s.authority)),
        1,
        ["lists the key {keyid}", "but its Content-Digest does not match the body"],
        ["verifies"],
    ),
    "the body and its digest changed under the signature": (
        lambda k, n, s: (
            _tampered(body_of(k)),
            {
                **signed(body_of(k), k, s.authority),
                "Content-Digest": signed(_tampered(body_of(k)), k, s.authority)["Content-Digest"],
            },
        ),
        1,
        ["but the signature does not verify for {authority}"],
        ["verifies for this host"],
    ),
    "signed for another host": (
        lambda k, n, s: (body_of(k), signed(body_of(k), k, f"{s.host}:{s.port + 1}")),
        1,
        ["but the signature does not verify for {authority}"],
        [],
    ),
    "expired": (
        lambda k, n, s: (body_of(k), signed(body_of(k), k, s.authority, created=time.time() - 7200)),
        1,
        ["but it expired at"],
        ["verifies"],
    ),
    "signed by a key not in the directory": (
        lambda k, n, s: (body_of(k), signed(body_of(k), n, s.authority)),
        1,
        ["but its keyid '{next_keyid}' is not a key of the directory"],
        [],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest_twisted.ensureDeferred
async def test_a_live_directory_is_checked_as_a_verifier_would(site, keys, tmp_path, case):
    make, status, said, unsaid = CASES[case]
    key, next_key = keys
    body, headers = make(key, next_key, site)
    site.directory.serve(body, headers)
    code, out, err = await robots_key(tmp_path, "--key", "crawler.pem", "--check", site.directory_url)
    values = {"keyid": key.keyid, "next_keyid": next_key.keyid, "authority": site.authority}
    assert code == status, (out, err)
    assert f"{site.directory_url}: 200, Content-Type " in out
    for text in said:
        assert text.format(**values) in out, (text, out)
    for text in unsaid:
        assert text.format(**values) not in out, (text, out)
    assert "warning: not https" in out  # the site is http://127.0.0.x
    assert err == ""
    assert site.paths() == [DIRECTORY_PATH]  # one GET


ERRORS = {
    "404": (lambda d: d.serve(b"not here", {"Content-Type": "text/plain"}, status=404), "answered 404 Not Found"),
    "503": (lambda d: d.serve(b"down", {"Content-Type": "text/plain"}, status=503), "answered 503"),
    "not JSON": (lambda d: d.serve(b"<html>keys</html>", {"Content-Type": "text/html"}), "cannot be read as JSON"),
    "not a JWK Set": (lambda d: d.serve(b'[{"kty": "OKP"}]'), "is not a JWK Set"),
    "over the cap": (lambda d: d.serve(b'{"keys": [], "pad": "' + b"x" * 70_000 + b'"}'), "the body is over 65536"),
}


@pytest.mark.parametrize("case", list(ERRORS))
@pytest_twisted.ensureDeferred
async def test_what_cannot_be_checked_is_one_line(site, keys, tmp_path, case):
    arrange, said = ERRORS[case]
    arrange(site.directory)
    code, out, err = await robots_key(tmp_path, "--key", "crawler.pem", "--check", site.directory_url)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"scrapy robots-key: {site.directory_url}"), err
    assert said in err, err


@pytest_twisted.ensureDeferred
async def test_a_redirect_is_not_followed(serve, keys, tmp_path):
    key, _ = keys
    target = serve(lambda request: b"", {DIRECTORY_PATH: lambda request: body_of(key)})
    start = serve(lambda request: b"", {DIRECTORY_PATH: redirect(target.url + DIRECTORY_PATH, 301)})
    code, out, err = await robots_key(tmp_path, "--key", "crawler.pem", "--check", start.url + DIRECTORY_PATH)
    assert (code, out) == (2, "")
    assert f"answered 301 Moved Permanently to {target.url}{DIRECTORY_PATH}: a verifier follows no redirect" in err
    assert target.paths() == []


CUT_SHORT = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"keys": ['


@pytest.mark.parametrize("how", ["closed port", "connection closed without an answer", "body cut short"])
@pytest_twisted.ensureDeferred
async def test_an_unreachable_directory_is_one_line(serve, keys, tmp_path, how):
    if how == "closed port":
        url = f"http://127.0.0.1:{free_port()}{DIRECTORY_PATH}"
    else:
        handler = reset() if how == "connection closed without an answer" else raw(CUT_SHORT)
        url = serve(lambda request: b"", {DIRECTORY_PATH: handler}).url + DIRECTORY_PATH
    code, out, err = await robots_key(tmp_path, "--key", "crawler.pem", "--check", url)
    assert (code, out) == (2, "")
    assert err.startswith(f"scrapy robots-key: {url}: unreachable (") and err.count("\n") == 1, err


@pytest_twisted.ensureDeferred
async def test_a_key_rotated_between_two_checks(site, keys, tmp_path):
    old, new = keys
    # The crawl's key listed and signed for; then the new key alone (the old one retired
    # too early), signed by it; then both during the rollover; then the new one alone.
    steps = [
        ((old,), old, {"crawler.pem": (0, "lists the key {old}"), "next.pem": (1, "does not list the key {new}")}),
        ((new,), new, {"crawler.pem": (1, "does not list the key {old}"), "next.pem": (0, "lists the key {new}")}),
        ((old, new), new, {"crawler.pem": (0, "(key 1 of 2)"), "next.pem": (0, "(key 2 of 2)")}),
        ((new,), new, {"crawler.pem": (1, "does not list the key {old}"), "next.pem": (0, "lists the key {new}")}),
    ]
    for listed, by, expected in steps:
        body = body_of(*listed)
        site.directory.serve(body, signed(body, by, site.authority))
        for pem, (status, said) in expected.items():
            code, out, err = await robots_key(tmp_path, "--key", pem, "--check", site.directory_url)
            assert code == status, (listed, pem, out, err)
            assert said.format(old=old.keyid, new=new.keyid) in out, (listed, pem, out)
            assert ": verifies for this host" in out, out
    assert site.paths() == [DIRECTORY_PATH] * 8


@pytest_twisted.ensureDeferred
async def test_check_alone_fetches_the_crawls_agent(site, keys, tmp_path):
    key, _ = keys
    body = body_of(key)
    site.directory.serve(body, signed(body, key, site.authority))
    settings = ["-s", "ROBOTSTXT_SIGNATURE_KEY=crawler.pem", "-s", f"ROBOTSTXT_SIGNATURE_AGENT={site.directory_url}"]
    code, out, err = await robots_key(tmp_path, *settings, "--check")
    assert code == 0, (out, err)
    assert f"{site.directory_url}: lists the key {key.keyid}" in out
    # Without an agent, --check alone says what to give.
    code, out, err = await robots_key(tmp_path, "--key", "crawler.pem", "--check")
    assert (code, out) == (2, "")
    assert "--check: give a FILE or a URL, or set ROBOTSTXT_SIGNATURE_AGENT" in err


@pytest.mark.parametrize("variant", ["draft", "cloudflare"])
def test_the_check_verifies_the_published_vectors(variant):
    # The draft's and Cloudflare's signed directory responses (made by neither this
    # package's signer nor its check), verified by signing/check.py at their host and
    # time; at another host, or with one byte of the body changed, they fail.
    from test_signing_binding import (
        B14_THUMBPRINT,
        CLOUDFLARE_INPUT,
        CLOUDFLARE_SIGNATURE,
        DRAFT_INPUT,
        DRAFT_SIGNATURE,
        VECTOR_AUTHORITY,
        VECTOR_BODY,
        VECTOR_DIGEST,
    )

    from scrapy_robots.signing.check import Served, bindings, directory_keys, entries

    signature_input, signature = (
        (DRAFT_INPUT, DRAFT_SIGNATURE) if variant == "draft" else (CLOUDFLARE_INPUT, CLOUDFLARE_SIGNATURE)
    )
    headers = {"content-digest": VECTOR_DIGEST, "signature-input": signature_input, "signature": signature}
    keys = directory_keys(entries(VECTOR_BODY, "vector"), "vector")
    assert list(keys) == [B14_THUMBPRINT]
    at = f"https://{VECTOR_AUTHORITY}{DIRECTORY_PATH}"
    [binding] = bindings(Served(at, 200, headers, VECTOR_BODY), keys, now=1735689600 + 10)
    assert binding.ok and binding.keyid == B14_THUMBPRINT and binding.expires == 4889289600
    elsewhere = f"https://{VECTOR_AUTHORITY}:8443{DIRECTORY_PATH}"
    [moved] = bindings(Served(elsewhere, 200, headers, VECTOR_BODY), keys, now=1735689600 + 10)
    assert (
        moved.why
        == f"the signature does not verify for {VECTOR_AUTHORITY}:8443 (signed for another host, or another body)"
    )
    changed = VECTOR_BODY.replace(b'"use":"sig"', b'"use":"enc"')
    [tampered] = bindings(Served(at, 200, headers, changed), keys, now=1735689600 + 10)
    assert tampered.why.startswith("its Content-Digest does not match the body")
