"""A key directory checked against the crawl's key, as a verifier reads it: a file, or the
live URL (one GET, no redirect followed: verifiers follow none), its status and
``Content-Type``, which of its keys is the crawl's, and the directory's own signature (the
draft's domain binding, made by ``binding.py``) verified for the URL's authority.

Pure of Scrapy (``scrapy robots-key --check`` prints what it finds). The signature is
checked with ``cryptography`` directly: the RFC 9421 library the tests use is a test
dependency, and a directory binding needs two components, not a general verifier.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature

from scrapy_robots.signing.base import authority, signature_base
from scrapy_robots.signing.binding import DIRECTORY_TAG, content_digest
from scrapy_robots.signing.keys import DIRECTORY_MEDIA_TYPE, KeyFileError, ed25519_keys, thumbprint
from scrapy_robots.utils.sfv import parse_sf_dictionary

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from scrapy_robots.signing.keys import SigningKey

#: The most of a directory read: an Ed25519 entry is about 150 bytes, so hundreds of keys.
MAX_DIRECTORY_BYTES: Final = 64 * 1024
#: How long the GET may take, connecting and reading.
FETCH_TIMEOUT: Final = 10.0
#: What a binding covers (the draft's): derived here for the URL fetched and the body read.
BINDING_COMPONENTS: Final = ('"@authority";req', '"content-digest"')
#: How far in the future a signature's ``created`` may be (the signer's clock ahead of ours).
CLOCK_SKEW: Final = 60

# RFC 9651, the subset Signature-Input is written in: a dictionary whose members are inner
# lists of strings, each with parameters, then the member's parameters. The member's value
# is kept as written: it is the signature base's "@signature-params" line.
_KEY = r"[a-z*][a-z0-9_.*-]*"
_STRING = r'"(?:[^"\\]|\\.)*"'
_PARAM = rf"(?:;{_KEY}(?:=(?:{_STRING}|[^;,\s()\"]+))?)"
_ITEM = re.compile(rf"{_STRING}{_PARAM}*")
_MEMBER = re.compile(rf"\s*({_KEY})=(\((?:\s*{_ITEM.pattern})*\s*\){_PARAM}*)\s*(?:,|$)")
_PARAMS = re.compile(rf";({_KEY})(?:=({_STRING}|[^;]+))?")


class DirectoryError(ValueError):
    """A directory that cannot be checked at all: unreachable, not 200, too big, not a JWK Set."""


@dataclass(frozen=True)
class Served:
    """The directory as its URL answered it."""

    url: str
    status: int
    #: the response headers, names lowercased, repeated fields joined with ", "
    headers: dict[str, str]
    body: bytes

    @property
    def media_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A verifier follows no redirect: a 3xx is the answer, not a step.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def fetch(url: str, timeout: float = FETCH_TIMEOUT, cap: int = MAX_DIRECTORY_BYTES) -> Served:
    """One GET of ``url``: a 200 with its headers and body, else :class:`DirectoryError`
    with one line saying why (unreachable, another status, a body over ``cap``)."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, headers={"Accept": f"{DIRECTORY_MEDIA_TYPE}, application/json"})
    try:
        with opener.open(request, timeout=timeout) as response:
            status, message = response.status, response.headers
            body = response.read(cap + 1)
    except urllib.error.HTTPError as exc:
        where = exc.headers.get("Location") if exc.headers else None
        to = f" to {where}: a verifier follows no redirect, serve the directory at this URL" if where else ""
        raise DirectoryError(f"{url}: answered {exc.code} {exc.reason}{to}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:  # refused, timed out, cut short
        reason = getattr(exc, "reason", exc)
        raise DirectoryError(f"{url}: unreachable ({reason})") from None
    if status != 200:
        raise DirectoryError(f"{url}: answered {status}, not 200")
    if len(body) > cap:
        raise DirectoryError(f"{url}: the body is over {cap} bytes: not a key directory")
    # read(n) returns what came before the connection closed: a short body is no error to it.
    declared = message.get("Content-Length", "")
    if declared.isdigit() and len(body) < int(declared):
        raise DirectoryError(f"{url}: unreachable (the body was cut short: {len(body)} of {declared} bytes)")
    headers: dict[str, str] = {}
    for name, value in message.items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return Served(url, status, headers, body)


def entries(body: bytes, where: str) -> list[Any]:
    """The ``keys`` of the JWK Set in ``body``; :class:`DirectoryError` when it is not one."""
    try:
        found: Any = json.loads(body)
    except ValueError as exc:
        raise DirectoryError(f"{where} cannot be read as JSON ({exc})") from None
    keys = found.get("keys") if isinstance(found, dict) else None
    if not isinstance(keys, list):
        raise DirectoryError(f"{where} is not a JWK Set (a JSON object with a 'keys' list)")
    return keys


@dataclass(frozen=True)
class Listing:
    """Where the crawl's key is in a directory: ``position`` (1-based) or None."""

    position: int | None
    count: int
    #: why a verifier would not take it though listed (its ``kid`` not its thumbprint)
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.position is not None and not self.problem


def listing(keys: list[Any], key: SigningKey, where: str) -> Listing:
    """Which of ``keys`` is ``key``: its public key, and a ``kid`` (if any) equal to its
    thumbprint, as the draft asks of the directory. A private part is an error."""
    for position, entry in enumerate(keys, 1):
        if not isinstance(entry, dict) or entry.get("kty") != "OKP" or entry.get("x") != key.jwk["x"]:
            continue
        if "d" in entry:
            raise DirectoryError(f"{where} lists the key with its private part 'd': publish the public key only")
        kid = entry.get("kid")
        if kid is not None and kid != thumbprint(entry):
            return Listing(position, len(keys), f"its kid {kid!r} is not its thumbprint {key.keyid!r}")
        return Listing(position, len(keys))
    return Listing(None, len(keys))


def directory_keys(keys: list[Any], where: str) -> dict[str, Ed25519PublicKey]:
    """The directory's Ed25519 keys by thumbprint: what its own signature's ``keyid`` names."""
    try:
        return ed25519_keys(keys, where)
    except KeyFileError as exc:
        raise DirectoryError(str(exc)) from None


@dataclass(frozen=True)
class Binding:
    """One signature of the directory response (``tag="http-message-signatures-directory"``)."""

    label: str
    keyid: str
    #: "" when it verifies; else why not
    why: str
    expires: int | None = None

    @property
    def ok(self) -> bool:
        return not self.why


def bindings(served: Served, keys: dict[str, Ed25519PublicKey], now: float | None = None) -> list[Binding]:
    """Each directory signature the response carries, checked as a verifier would for the
    authority ``served.url`` was fetched from: empty when it carries none."""
    now = time.time() if now is None else now
    inputs = _signature_inputs(served.headers.get("signature-input", ""))
    signatures = parse_sf_dictionary(served.headers.get("signature", "")) or {}
    found = []
    for label, (components, params, raw) in inputs.items():
        if params.get("tag") != DIRECTORY_TAG:
            continue
        keyid = str(params.get("keyid", ""))
        why = _binding_fault(served, keys, components, params, raw, signatures.get(label), now)
        expires = params.get("expires")
        found.append(Binding(label, keyid, why, expires if isinstance(expires, int) else None))
    return found


def _binding_fault(
    served: Served,
    keys: dict[str, Ed25519PublicKey],
    components: list[str],
    params: dict[str, Any],
    raw: str,
    signature: object,
    now: float,
) -> str:
    if sorted(components) != sorted(BINDING_COMPONENTS):
        return f"it covers {' '.join(components) or 'nothing'}, not the draft's {' and '.join(BINDING_COMPONENTS)}"
    digest = served.headers.get("content-digest")
    if digest is None:
        return "the response has no Content-Digest"
    members = parse_sf_dictionary(digest) or {}
    if "sha-256" not in members:
        return f"its Content-Digest has no sha-256 ({digest})"
    if f"sha-256=:{members['sha-256'].decode('ascii')}:" != content_digest(served.body):
        return "its Content-Digest does not match the body (a body changed after signing, or headers of another body)"
    keyid = params.get("keyid")
    public = keys.get(keyid) if isinstance(keyid, str) else None
    if public is None:
        return f"its keyid {keyid!r} is not a key of the directory"
    if params.get("alg", "ed25519") != "ed25519":
        return f"its alg is {params['alg']!r}, not ed25519"
    expires, created = params.get("expires"), params.get("created")
    if isinstance(expires, int) and expires < now:
        return f"it expired at {_when(expires)}: sign it again (scrapy robots-key --authority HOST)"
    if isinstance(created, int) and created > now + CLOCK_SKEW:
        return f"it is created at {_when(created)}, in the future"
    if not isinstance(signature, bytes):
        return "the Signature header has no member of its label"
    at = authority(urlsplit(served.url))
    base = signature_base([('"@authority";req', at), ('"content-digest"', digest.strip())], raw)
    try:
        public.verify(base64.b64decode(signature), base.encode("ascii"))
    except (InvalidSignature, ValueError):
        return f"the signature does not verify for {at} (signed for another host, or another body)"
    return ""


def _signature_inputs(text: str) -> dict[str, tuple[list[str], dict[str, Any], str]]:
    """Signature-Input's members: label -> (covered components as written, parameters,
    the value as written); empty when the field is malformed, as RFC 9651 asks."""
    members: dict[str, tuple[list[str], dict[str, Any], str]] = {}
    i, text = 0, text.strip()
    while i < len(text):
        found = _MEMBER.match(text, i)
        if found is None:
            return {}
        label, raw = found.groups()
        inner, _, params = raw[1:].rpartition(")")
        components = [item.group() for item in _ITEM.finditer(inner)]
        members[label] = (components, {name: _value(value) for name, value in _PARAMS.findall(params)}, raw)
        i = found.end()
    return members


def _value(text: str) -> str | int | bool:
    if not text:
        return True
    if text.startswith('"'):
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return int(text) if re.fullmatch(r"-?[0-9]{1,15}", text) else text


def _when(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
