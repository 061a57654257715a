"""The Web Bot Auth settings (``ROBOTSTXT_SIGNATURE_*``), read and checked once. Off
(None) unless both the key and the agent's directory URL are set. The key file itself is
read by the signer (signing/middleware.py) as the crawl starts: a missing, unreadable or
non-Ed25519 key is that component's one ERROR line, never a failure at a request."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from scrapy_robots.settings.defaults import DAY, SIGNATURE_COMPONENTS, default
from scrapy_robots.settings.readers import number, read_bool

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: What the errors offer as the agent's value.
EXAMPLE_AGENT: Final = "https://crawler.example/.well-known/http-message-signatures-directory"
#: How an operator makes a key (the command of commands/signing.py).
MAKE_KEY: Final = "scrapy robots-key --make-key PATH"


@dataclass(frozen=True)
class SigningConfig:
    """How the crawl's requests are signed (signing/middleware.py)."""

    key_path: str  #: ROBOTSTXT_SIGNATURE_KEY: the private key's file (PEM or JWK)
    agent: str  #: ROBOTSTXT_SIGNATURE_AGENT: the key directory's URL, sent as Signature-Agent
    expires: int  #: ROBOTSTXT_SIGNATURE_EXPIRES: seconds a signature is valid after it is made
    components: tuple[str, ...]  #: ROBOTSTXT_SIGNATURE_COMPONENTS: the derived components covered
    #: ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED: sign a site's requests only once it asked
    #: (401, 403 or 429 with Accept-Signature), the asking request sent again, signed
    only_when_asked: bool = False
    #: ROBOTSTXT_SIGNATURE_NONCE: a random nonce in each signature; without one, requests whose
    #: signature bases are the same (one host, one second, the components covering no path)
    #: share one signature, made once
    nonce: bool = True

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SigningConfig | None:
        path = settings.get("ROBOTSTXT_SIGNATURE_KEY") or None
        agent = settings.get("ROBOTSTXT_SIGNATURE_AGENT") or None
        if path is None and agent is None:
            return None
        if agent is None:
            raise ValueError(
                "ROBOTSTXT_SIGNATURE_KEY is set but ROBOTSTXT_SIGNATURE_AGENT is not: a signed request names "
                f"where its key is published. Set it to your key directory's URL, such as {EXAMPLE_AGENT!r}"
            )
        if path is None:
            raise ValueError(
                "ROBOTSTXT_SIGNATURE_AGENT is set but ROBOTSTXT_SIGNATURE_KEY is not: set it to the path of "
                f"your Ed25519 private key (PEM or JWK); make one with `{MAKE_KEY}`"
            )
        expires = number(settings, "ROBOTSTXT_SIGNATURE_EXPIRES", int, minimum=1)
        if expires > DAY:  # the draft's limit (RECOMMENDED): a longer one is a replayable credential
            raise ValueError(f"ROBOTSTXT_SIGNATURE_EXPIRES must be at most 86400 (a day), not {expires!r}")
        return cls(
            key_path=str(path),
            agent=_agent(agent),
            expires=int(expires),
            components=_components(settings),
            only_when_asked=read_bool(settings, "ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED"),
            nonce=read_bool(settings, "ROBOTSTXT_SIGNATURE_NONCE"),
        )


def _agent(value: object) -> str:
    """An absolute https URL in printable ASCII: an RFC 9651 String, as Signature-Agent sends it."""
    text = value.strip() if isinstance(value, str) else ""
    parts = urlsplit(text)
    printable = text.isascii() and text.isprintable() and not any(c in text for c in ' "\\')
    if parts.scheme != "https" or not parts.hostname or not printable:
        raise ValueError(
            f"ROBOTSTXT_SIGNATURE_AGENT must be the https URL of your key directory, such as {EXAMPLE_AGENT!r}, "
            f"not {value!r}"
        )
    return text


def _components(settings: BaseSettings) -> tuple[str, ...]:
    raw = settings.get("ROBOTSTXT_SIGNATURE_COMPONENTS")
    if raw is None or raw == "":
        return tuple(default("ROBOTSTXT_SIGNATURE_COMPONENTS", settings))
    if isinstance(raw, str) and raw.strip().startswith("["):
        raw = json.loads(raw)
    names = [part.strip() for part in raw.split(",")] if isinstance(raw, str) else list(raw)
    unknown = [name for name in names if name not in SIGNATURE_COMPONENTS]
    if unknown or not names:
        raise ValueError(
            f"ROBOTSTXT_SIGNATURE_COMPONENTS: {unknown or raw!r} not among {', '.join(SIGNATURE_COMPONENTS)} "
            "(the Signature-Agent member is always covered)"
        )
    if "@authority" not in names and "@target-uri" not in names:
        raise ValueError("ROBOTSTXT_SIGNATURE_COMPONENTS must cover '@authority' or '@target-uri' (the draft asks one)")
    return tuple(dict.fromkeys(names))
