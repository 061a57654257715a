"""``SigningMiddleware``: every request the crawl sends signed for the host it goes to
(Web Bot Auth), as the add-on lists it when ``ROBOTSTXT_SIGNATURE_KEY`` is set.

It sits late in the downloader's chain (settings/components.py), so it signs what is
sent: a redirect and a retry go through the chain again and are signed anew, for their
own authority and time; robots.txt and the other policy files, fetched through the same
downloader, are signed too. Headers of an earlier signature are replaced, never added to.

With ``ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED``, a request is signed only at a site that
asked: a 401, 403 or 429 that carries ``Accept-Signature`` (RFC 9421 section 5.1) sends
that request again, once, signed, and every later request to that authority is signed.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.errors import SettingError, starting
from scrapy_robots.settings.signing import MAKE_KEY
from scrapy_robots.signing.base import authority
from scrapy_robots.signing.keys import KeyFileError, SigningKey, load_key
from scrapy_robots.signing.signer import HEADERS, RequestSigner

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots.settings.signing import SigningConfig

logger = logging.getLogger(__name__)

#: The answers with which a site may ask for a signature (the draft: 403 SHOULD, 429 for replays).
ASKING_STATUSES: Final = frozenset({401, 403, 429})
#: Request meta: this request is sent again because its site asked for a signature.
ASKED_META: Final = "signature_asked"


class SigningMiddleware:
    """Signs each request with the crawl's key (``RequestSigner``) as it leaves."""

    def __init__(self, crawler: Crawler, config: SigningConfig, key: SigningKey):
        self.stats = crawler.stats
        self.signer = RequestSigner(key, config.agent, config.components, config.expires, nonce=config.nonce)
        self.only_when_asked = config.only_when_asked
        #: the authorities that asked for a signature (ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED)
        self.asked: set[str] = set()
        # Counted here and written when the spider closes: a stats call per request would
        # cost a share of the signature itself.
        self.signed = 0
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)
        logger.info(
            "scrapy-robots signs %(which)s (Web Bot Auth) with the key %(keyid)s, published at %(agent)s",
            {
                "which": "the requests of the sites that ask" if self.only_when_asked else "every request",
                "keyid": key.keyid,
                "agent": config.agent,
            },
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = RobotsConfig.of(crawler).signing
        if config is None:
            # Silent, as every part of the package whose feature is off: Scrapy logs a
            # NotConfigured with a message as a WARNING, in every crawl and command.
            raise NotConfigured
        with starting("SigningMiddleware"):
            try:
                key = load_key(config.key_path)
            except KeyFileError as exc:
                raise SettingError(
                    f"ROBOTSTXT_SIGNATURE_KEY: {exc}. Give an Ed25519 private key (PEM or JWK); make one with "
                    f"`{MAKE_KEY}`"
                ) from None
            # Only a crawl that signs where asked hears the answers: a process_response in
            # every crawl cost each answer Scrapy's dispatch of it (a share of the signature).
            kind: type[SigningMiddleware] = cls
            if config.only_when_asked and not issubclass(cls, AskedSigningMiddleware):
                # A project's subclass keeps its own methods, with the answers heard.
                mixed = (AskedSigningMiddleware, cls)
                kind = AskedSigningMiddleware if cls is SigningMiddleware else type(cls.__name__, mixed, {})
            return kind(crawler, config, key)  # type: ignore[return-value]

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        headers = request.headers
        if self.only_when_asked and not request.meta.get(ASKED_META):
            if authority(urlparse_cached(request)) not in self.asked:
                # A redirect from a site that asked carries that site's signature: not for this one.
                if b"Signature" in headers:
                    for name in HEADERS:
                        headers.pop(name, None)
                return
        for name, value in self.signer.headers(request.method, request.url, time.time()).items():
            headers[name] = value
        self.signed += 1

    def _spider_closed(self) -> None:
        if self.signed:
            self.stats.inc_value("robotstxt/signature/signed", self.signed)


class AskedSigningMiddleware(SigningMiddleware):
    """``SigningMiddleware`` with ``ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED``: it hears the
    answers, and a site that asks is signed from then on (``from_crawler`` makes it)."""

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if (
            response.status not in ASKING_STATUSES
            or b"Accept-Signature" not in response.headers
            or request.meta.get(ASKED_META)  # sent again once already: its answer stands
            or b"Signature-Input" in request.headers  # signed already
        ):
            return response
        site = authority(urlparse_cached(request))
        if site not in self.asked:
            self.asked.add(site)
            logger.info(
                "%(site)s asks for a signature (%(status)d with Accept-Signature): its requests are signed from now on",
                {"site": site, "status": response.status},
            )
        self.stats.inc_value("robotstxt/signature/asked")
        return request.replace(dont_filter=True, meta={**request.meta, ASKED_META: True})
