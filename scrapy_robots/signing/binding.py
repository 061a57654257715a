"""The key directory's own signature: the draft's "domain binding" (appendix "Validating
the Domain Binding", draft-ietf-webbotauth-httpsig-protocol-01). The server of
``/.well-known/http-message-signatures-directory`` signs its response with the key it
publishes, over ``"@authority";req`` (the host the directory was fetched from: the key set
cannot be served again under another) and ``content-digest`` (RFC 9530, the body's
SHA-256: the key set cannot be swapped under a captured signature), with
``tag="http-message-signatures-directory"``. Pure: the body's bytes in, the headers out.
"""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from scrapy_robots.signing.base import authority, signature_base, signature_params
from scrapy_robots.signing.keys import DIRECTORY_MEDIA_TYPE

if TYPE_CHECKING:
    from scrapy_robots.signing.keys import SigningKey

#: The ``tag`` of a directory response signature.
DIRECTORY_TAG: Final = "http-message-signatures-directory"
#: The draft's label for it (its vector's; Cloudflare's implementation writes ``binding0``...).
BINDING_LABEL: Final = "binding"
#: What it covers: the request's authority, and the response body's digest.
COVERED: Final = '("@authority";req "content-digest")'


def content_digest(body: bytes) -> str:
    """RFC 9530's ``Content-Digest`` of ``body``: its SHA-256 as a byte sequence member."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


def host_authority(value: str) -> str:
    """``--authority``: a host, with its port if not 443, as ``@authority`` writes it (the
    host lowercased, the default port dropped); ValueError for anything else."""
    text = value.strip()
    parts = urlsplit(f"https://{text}")
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ValueError(f"{value!r} is not a host[:port]") from None
    if not parts.hostname or parts.path or parts.query or parts.fragment or "@" in text:
        raise ValueError(f"{value!r} is not a host[:port] (give the host the directory is served from)")
    return authority(parts)


def directory_headers(
    key: SigningKey,
    body: bytes,
    at_authority: str,
    created: int,
    expires: int,
    label: str = BINDING_LABEL,
    alg: bool = False,
) -> dict[str, str]:
    """The headers a directory response carries for ``body`` served at ``at_authority``:
    ``Content-Type``, ``Content-Digest``, ``Signature-Input``, ``Signature``. Parameters
    in the draft's order (``created``, ``expires``, ``keyid``, ``tag``); with ``alg``,
    in Cloudflare's (``created``, ``keyid``, ``alg``, ``expires``, ``tag``)."""
    digest = content_digest(body)
    if alg:
        order: list[tuple[str, str | int]] = [
            ("created", created),
            ("keyid", key.keyid),
            ("alg", "ed25519"),
            ("expires", expires),
        ]
    else:
        order = [("created", created), ("expires", expires), ("keyid", key.keyid)]
    params = signature_params(COVERED, [*order, ("tag", DIRECTORY_TAG)])
    base = signature_base([('"@authority";req', at_authority), ('"content-digest"', digest)], params)
    signature = base64.b64encode(key.sign(base.encode("ascii"))).decode("ascii")
    return {
        "Content-Type": DIRECTORY_MEDIA_TYPE,
        "Content-Digest": digest,
        "Signature-Input": f"{label}={params}",
        "Signature": f"{label}=:{signature}:",
    }
