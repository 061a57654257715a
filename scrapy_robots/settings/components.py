"""The package's Scrapy components, in one table: the add-on (``addon.py``) enables each,
and the start-up check (``startup.py``) names each that a crawl enabled by hand needs and
lacks. A component is named by its import path, never imported here: this module sits
low in the house, under the components themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from scrapy_robots.settings.config import RobotsConfig

#: Scrapy's own robots.txt middleware, which ours replaces.
STOCK: Final = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
OURS: Final = "scrapy_robots.middleware.RobotsTxtMiddleware"
USAGE: Final = "scrapy_robots.spidermw.UsageMiddleware"
DIRECTIVES: Final = "scrapy_robots.directives.middleware.DirectivesMiddleware"
#: The "slow down" extension (pace/backoff.py).
BACKOFF: Final = "scrapy_robots.pace.backoff.PageBackoff"
#: The Web Bot Auth signer (signing/middleware.py), late in the downloader's chain: after
#: Scrapy's own (the HTTP cache is 900, the proxy 750), so that what it signs is what is
#: sent, and a redirect or a retry, which goes through the chain again, is signed anew.
SIGNING: Final = "scrapy_robots.signing.middleware.SigningMiddleware"
#: A policy file a page links to (policyfiles/page_links.py: RSL's ``Link`` header and
#: ``<link>``), read as the answer leaves the downloader: after Scrapy's retries (550),
#: decompression (590) and redirects (600), which see the answer first.
PAGE_LINKS: Final = "scrapy_robots.policyfiles.page_links.PageLinksMiddleware"
#: The one line that enables every component.
ADDON_LINE: Final = 'ADDONS = {"scrapy_robots.Addon": 0}'


@dataclass(frozen=True)
class Part:
    """A component beside the robots.txt middleware: where Scrapy lists it, at what
    order, and the feature it serves (on or off in the crawl's configuration)."""

    path: str
    setting: str  #: SPIDER_MIDDLEWARES, DOWNLOADER_MIDDLEWARES or EXTENSIONS
    order: int
    feature: str  #: the setting that turns its feature on or off
    off: str  #: how that setting turns it off, for the warning
    needed: Callable[[RobotsConfig], bool]  #: whether the crawl's configuration has the feature on
    lost: str  #: what a crawl without it does not do

    def line(self) -> str:
        return f'"{self.path}": {self.order}'


#: Beside the robots.txt middleware (which the add-on swaps for Scrapy's, at its order).
#: The directives' reader runs before the usage reader, which reads its ``noai``.
PARTS: Final[tuple[Part, ...]] = (
    Part(
        DIRECTIVES,
        "SPIDER_MIDDLEWARES",
        90,
        "ROBOTSTXT_DIRECTIVES",
        "ROBOTSTXT_DIRECTIVES = False",
        lambda config: config.directives.enabled,
        "a page's X-Robots-Tag, robots <meta> tags and rel=nofollow links are not obeyed (its nofollow links "
        "are followed, its noindex items are not marked)",
    ),
    Part(
        USAGE,
        "SPIDER_MIDDLEWARES",
        100,
        "ROBOTSTXT_USAGE",
        "ROBOTSTXT_USAGE unset",
        lambda config: config.usage is not None,
        "a page's Content-Usage header and its noai directives do not reach its items (the items of a page "
        "that reserves a declared purpose are kept)",
    ),
    Part(
        BACKOFF,
        "EXTENSIONS",
        0,
        "ROBOTSTXT_BACKOFF",
        "ROBOTSTXT_BACKOFF = False",
        lambda config: config.backoff.enabled,
        "a site that says slow down (429, 503 with Retry-After) is not paused in this crawl",
    ),
    Part(
        PAGE_LINKS,
        "DOWNLOADER_MIDDLEWARES",
        540,
        "ROBOTSTXT_RSL",
        "ROBOTSTXT_RSL = False",
        lambda config: config.rsl,
        'an RSL license a page links to (a Link header, a <link rel="license"> in its head) is not read: the '
        "page's items are kept, and the site's later requests are not judged by it",
    ),
    Part(
        SIGNING,
        "DOWNLOADER_MIDDLEWARES",
        950,
        "ROBOTSTXT_SIGNATURE_KEY",
        "ROBOTSTXT_SIGNATURE_KEY unset",
        lambda config: config.signing is not None,
        "its requests are not signed (Web Bot Auth): a site cannot tell this crawler from one that copies its "
        "User-Agent",
    ),
)
