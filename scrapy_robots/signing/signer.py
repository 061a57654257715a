"""A request's Web Bot Auth headers: ``Signature-Agent``, ``Signature-Input`` and
``Signature`` for its method and URL at a given time, signed with the crawler's key.

What does not change from one request to the next (the covered components, the agent's
member, the key's id) is written once, when the signer is made; a request costs a URL
split, a nonce and one Ed25519 signature. Without a nonce (``ROBOTSTXT_SIGNATURE_NONCE =
False``), a request whose signature base is one the signer signed within the same second
(same host, and path if covered) gets the same signature without signing again: Ed25519 is
deterministic (RFC 8032 5.1.6), so it is the signature a new signing would make.
"""

from __future__ import annotations

import base64
import os
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from scrapy_robots.signing.base import DERIVED, TAG, inner_list, sf_string, signature_base, signature_params

if TYPE_CHECKING:
    from scrapy_robots.signing.keys import SigningKey

#: The label of the crawl's signature, which is also its ``Signature-Agent`` member's name.
LABEL: Final = "sig1"
#: What a request is signed over, beside its ``Signature-Agent`` member: the profile's
#: example (draft-ietf-webbotauth-httpsig-protocol-01), bound to this host, method and path.
DEFAULT_COMPONENTS: Final = ("@authority", "@method", "@path")
#: The derived components a crawl may cover (one of ``@authority``, ``@target-uri`` must be).
COMPONENTS: Final = tuple(DERIVED)
#: The ``alg`` parameter of an Ed25519 signature (IANA HTTP Signature Algorithms).
ALG: Final = "ed25519"
#: Signatures remembered for one second, without a nonce: at most this many bases.
MEMO_SIZE: Final = 4096
#: The three headers, as the request carries them.
HEADERS: Final = ("Signature-Agent", "Signature-Input", "Signature")


def new_nonce() -> str:
    """32 random bytes, base64: a signature told apart from a replay of another."""
    return base64.b64encode(os.urandom(32)).decode("ascii")


class RequestSigner:
    """Signs requests for one key and one agent (the key directory's URL)."""

    def __init__(
        self,
        key: SigningKey,
        agent: str | None,
        components: tuple[str, ...] = DEFAULT_COMPONENTS,
        expires: int = 300,
        label: str = LABEL,
        member: str | None = None,
        alg: bool = True,
        nonce: bool = True,
    ):
        unknown = [name for name in components if name not in DERIVED]
        if unknown:
            raise ValueError(f"cannot sign {', '.join(unknown)}: known components are {', '.join(DERIVED)}")
        self.key = key
        self.components = components
        self.expires = expires
        self.label = label
        #: the Signature-Agent member: the label's own name unless a test vector says otherwise;
        #: None without an agent (the draft's first vectors, which cover ``@authority`` alone)
        self.member = None if agent is None else member or label
        self._inner = inner_list(components, self.member)
        self._derive = [(sf_string(name), DERIVED[name]) for name in components]
        self._agent: tuple[str, str] | None = None
        self.agent_header = ""
        if agent is not None:
            value = sf_string(agent)
            self.agent_header = f"{self.member}={value}"
            self._agent = (f'"signature-agent";key={sf_string(self.member or label)}', value)
        self._alg = alg
        self.nonce = nonce
        #: without a nonce: the second the memo is for, and base -> its signature in that second
        self._memo_second = -1
        self._memo: dict[bytes, bytes] = {}

    def params(self, created: int, expires: int, nonce: str | None) -> str:
        """``@signature-params`` for these times and nonce, in the vectors' order."""
        params: list[tuple[str, str | int]] = [("created", created), ("keyid", self.key.keyid)]
        if self._alg:
            params.append(("alg", ALG))
        params.append(("expires", expires))
        if nonce is not None:
            params.append(("nonce", nonce))
        params.append(("tag", TAG))
        return signature_params(self._inner, params)

    def base(self, method: str, url: str, params: str) -> str:
        """The signature base of a request (RFC 9421 section 2.5)."""
        parts = urlsplit(url)
        lines = [(name, derive(method, parts)) for name, derive in self._derive]
        if self._agent is not None:
            lines.append(self._agent)
        return signature_base(lines, params)

    def sign(self, method: str, url: str, created: int, expires: int, nonce: str | None) -> dict[str, str]:
        """The three headers of a request signed at ``created``, valid until ``expires``."""
        params = self.params(created, expires, nonce)
        base = self.base(method, url, params).encode("ascii")
        signature = self._signature(base, created) if nonce is None else self.key.sign(base)
        headers = {
            "Signature-Input": f"{self.label}={params}",
            "Signature": f"{self.label}=:{base64.b64encode(signature).decode('ascii')}:",
        }
        if self.agent_header:
            headers["Signature-Agent"] = self.agent_header
        return headers

    def _signature(self, base: bytes, created: int) -> bytes:
        """The signature of ``base`` (no nonce in it): made once per base in its second."""
        if created != self._memo_second:
            self._memo_second = created
            self._memo = {}
        signature = self._memo.get(base)
        if signature is None:
            signature = self.key.sign(base)
            if len(self._memo) < MEMO_SIZE:
                self._memo[base] = signature
        return signature

    def headers(self, method: str, url: str, now: float) -> dict[str, str]:
        """The three headers of a request sent now: a new nonce (unless the signer has
        none), valid ``expires`` seconds."""
        created = int(now)
        return self.sign(method, url, created, created + self.expires, new_nonce() if self.nonce else None)
