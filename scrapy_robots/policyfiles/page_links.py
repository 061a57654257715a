"""PageLinksMiddleware: a policy file a downloaded page points to, for a site whose
robots.txt names none (RSL 1.0 4.5 and 4.6: a ``Link: <...>; rel="license";
type="application/rsl+xml"`` header field, a ``<link rel="license"
type="application/rsl+xml" href="...">`` in the head).

robots.txt is read before any page of its site, so a ``License`` line there is obeyed
before the download (:mod:`scrapy_robots.policyfiles.license`). A page's link is seen only
once the page is downloaded: this downloader middleware reads it as the answer leaves the
downloader (after Scrapy's retries, decompression and redirects: order 540), for each
preference file whose handler reads page links (:meth:`PreferenceFile.page_links`). Then:

- the site's file is located there (:meth:`PreferenceFile.locate`; the first link found,
  robots.txt's line before any page's): fetched once through the file's book (storage,
  fleet, record, status policy, as when robots.txt names it), and every later request of
  the site is judged against it before download;
- the page's own answer is the file's, for each declared purpose, under the file's
  ``page_source`` (``"license link"``), in ``request.meta["_robotstxt_linked"]``: the usage
  reader (:class:`scrapy_robots.spidermw.UsageMiddleware`) folds it in with the page's
  other answers (the items of a page it denies are dropped in ``deny`` mode, tagged in
  ``tag`` mode, and the compliance record's page row names it). So does the answer of a
  page of a site located that way whose request was judged before it was (in flight then).

A file that cannot be read (the crawl closing, the waiting room full) is "not read" for
the page, and denies its declared purposes: never silently allowed.

Enabled by the add-on (``DOWNLOADER_MIDDLEWARES``); ``NotConfigured`` unless a preference
file that reads page links is on (``ROBOTSTXT_RSL`` with ``ROBOTSTXT_USAGE``). It finds the
crawl's books (the robots.txt middleware's) through :func:`register`, at the first answer.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary

from scrapy.exceptions import NotConfigured

from scrapy_robots.pace.waiting import CrawlClosing, RoomFull
from scrapy_robots.policyfiles.preference import PreferenceFile
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.errors import starting
from scrapy_robots.status.result import FETCH_META
from scrapy_robots.usage import DENY, Preference

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from scrapy.spiders import Spider

    from scrapy_robots.policyfiles.book import PolicyBook

logger = logging.getLogger(__name__)

#: Meta key of the page's answer from the files it links to: purpose -> ``Preference.as_meta()``.
META_KEY: Final = "_robotstxt_linked"

#: The crawl's books of preference files, by crawler (the robots.txt middleware registers them).
_BOOKS: WeakKeyDictionary[Any, tuple[PolicyBook, ...]] = WeakKeyDictionary()


def register(crawler: Crawler, books: tuple[PolicyBook, ...]) -> None:
    """The robots.txt middleware's books of preference files, for this middleware to read."""
    _BOOKS[crawler] = books


def reads_page_links(config: RobotsConfig) -> bool:
    """Whether a file the crawl reads may be named by a page (else this middleware is off)."""
    return config.rsl


class PageLinksMiddleware:
    def __init__(self, crawler: Crawler):
        config = RobotsConfig.of(crawler)
        if not config.obey or not reads_page_links(config):
            raise NotConfigured
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self._books: tuple[PolicyBook, ...] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        with starting("PageLinksMiddleware"):
            return cls(crawler)

    def books(self) -> tuple[PolicyBook, ...]:
        """The books whose file a page may name (none without our robots.txt middleware)."""
        if self._books is None:
            found = _BOOKS.get(self.crawler, ())
            self._books = tuple(book for book in found if type(book.file).page_links is not PreferenceFile.page_links)
        return self._books

    async def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        books = self.books()
        if not books or request.meta.get(FETCH_META):
            return response  # no file a page names, or a policy file's own fetch
        request.meta.pop(META_KEY, None)  # a spider that passes meta=response.meta on: the last page's
        said: dict[str, Any] = {}
        for book in books:
            file = book.file
            assert isinstance(file, PreferenceFile)
            site = book.site_of(request)
            links = file.page_links(response)
            if links:
                where = file.where(site)
                if where == file.path:  # the first page of the site that names the file
                    file.locate(site, links[0])
                    self._located(file, site, links[0], response)
                elif links[0] != where:  # one per site: robots.txt's line, or the first page's link
                    self.stats.inc_value(f"{file.stats}/page_link/elsewhere")
                    logger.debug(
                        "%(url)s links to %(file)s at %(link)s: not read, the site's is %(where)s",
                        {"url": response.url, "file": file.name, "link": links[0], "where": where},
                        extra={"spider": self.crawler.spider},
                    )
            if file.meta_key in request.meta or file.where(site) == file.path:
                continue  # judged by the file before download, or no page of the site named it
            said.update(await self._answer(book, file, site, request))
        if said:
            request.meta[META_KEY] = said
        return response

    def _located(self, file: PreferenceFile, site: str, url: str, response: Response) -> None:
        """Said and counted once per site: only the first page that names the file locates it."""
        key = f"{file.stats}/page_link/located"
        self.stats.inc_value(key)
        logger.info(
            "%(site)s: its page %(page)s links to its %(file)s at %(url)s (robots.txt names none): the site's "
            "later requests are judged by it, and this page's items by its answer",
            {"site": site, "page": response.url, "file": file.name, "url": url},
            extra={"spider": self.crawler.spider},
        )

    async def _answer(self, book: PolicyBook, file: PreferenceFile, site: str, request: Request) -> dict[str, Any]:
        """The file's answer for the page, each purpose's preference as the page's own."""
        try:
            entry = await book.entry(site, request)
        except (CrawlClosing, RoomFull) as exc:
            self.stats.inc_value(f"{file.stats}/page_link/not_read")
            why = f"{file.name} linked from the page not read ({exc or type(exc).__name__}): read as denying"
            return {
                purpose: Preference(purpose, DENY, True, None, why, file.page_source).as_meta()
                for purpose in file.purposes(self.config)
            }
        found = file.says(entry, request, self.config)
        return {
            purpose: replace(preference, source=file.page_source).as_meta() for purpose, preference in found.items()
        }
