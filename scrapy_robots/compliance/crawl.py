"""The compliance record in a crawl: the middleware's two calls, the buffer, the timer.

:func:`compliance_record` builds a :class:`ComplianceRecord` when ``ROBOTSTXT_RECORD``
names a folder, None otherwise (then nothing here runs: one ``is None`` per call site).
:meth:`~ComplianceRecord.fetched` is called once per policy file download (policyfiles/book.py,
for every file), :meth:`~ComplianceRecord.decided` once per verdict (middleware.py).
Both only append to a list; the list is written (writer.py) every
``ROBOTSTXT_RECORD_FLUSH_INTERVAL`` seconds, as soon as it holds ``ROBOTSTXT_RECORD_BATCH``
decisions (on the next turn of the reactor, not in the request's frame), and when the
spider closes.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.utils.reactor import CallLaterOnce
from twisted.internet.task import LoopingCall

from scrapy_robots.record import DIRECTIVES, META_KEY, REVALIDATED
from scrapy_robots.record.version import ROBOTS_TXT, PolicyVersion, response_headers, sha256_of
from scrapy_robots.record.writer import RecordWriter
from scrapy_robots.settings.errors import SettingError
from scrapy_robots.status.policy import Action
from scrapy_robots.usage import META_KEY as USAGE_META_KEY
from scrapy_robots.useragent import product_token, request_agent

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.grounds import PageReading
    from scrapy_robots.policyfiles.decision import Decision
    from scrapy_robots.policyfiles.stated import Heard
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.settings.parts import RecordConfig
    from scrapy_robots.signing.keys import SigningKey
    from scrapy_robots.status.result import FetchResult
    from scrapy_robots.verdict import Verdict

logger = logging.getLogger(__name__)

#: Each crawler's record (:func:`compliance_record`).
_OF: WeakKeyDictionary[Crawler, ComplianceRecord] = WeakKeyDictionary()


def compliance_record(crawler: Crawler, config: RobotsConfig) -> ComplianceRecord | None:
    """The crawler's one record: the robots.txt middleware (its decisions) and the usage
    middleware (the pages' own answers) write into the same files."""
    if config.record is None:
        return None
    record = _OF.get(crawler)
    if record is None:
        record = _OF[crawler] = ComplianceRecord(crawler, config, config.record)
    return record


class ComplianceRecord:
    def __init__(self, crawler: Crawler, config: RobotsConfig, record: RecordConfig):
        from scrapy_robots import __version__

        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.record = record
        try:
            self.writer = RecordWriter(
                record.folder,
                record.format,
                software=f"scrapy-robots/{__version__}",
                # What each decision was judged for: the same for every row, written once in the file's header.
                purposes=config.usage.purposes if config.usage is not None else (),
                mode=config.usage.mode if config.usage is not None else None,
            )
        except OSError as exc:
            raise SettingError(f"ROBOTSTXT_RECORD = {record.folder!r}: the folder cannot be made: {exc}") from None
        #: the crawl's Web Bot Auth key (ROBOTSTXT_SIGNATURE_KEY): each file closed is signed with it
        self.key = None if config.signing is None else _signing_key(config.signing.key_path)
        # The one answer's row (grounds.py): imported here, a crawl without a record never loads it.
        from scrapy_robots.grounds import decision_row, page_row

        self._decision_row = decision_row
        self._page_row = page_row
        self.versions: list[PolicyVersion] = []
        self.decisions: list[tuple[Any, ...]] = []
        self.pages: list[dict[str, Any]] = []  #: page rows, made when told (few: pages that denied)
        self.checks: list[dict[str, Any]] = []  #: revalidation rows: a refresh answered 304
        self._soon = CallLaterOnce(self.flush)
        self._tokens: dict[Any, str] = {}
        self._said_unversioned = False  #: the WARNING of a decision without a version, once a crawl
        self._timer = LoopingCall(self.flush)
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)
        logger.info(
            "Compliance record: %(folder)s/%(name)s.* (%(format)s)",
            {"folder": record.folder, "name": self.writer.name, "format": record.format},
        )

    def fetched(self, file: str, site: str, result: FetchResult, decision: Decision) -> None:
        """A download of ``site``'s ``file`` became ``decision.entry``: the entry learns the
        version that governs it (the body's hash, or a stale copy's), the record the version."""
        entry = decision.entry
        if decision.revalidated:
            self._revalidated(file, site, result, entry)
            return
        body = result.body
        sha = sha256_of(body)
        if not decision.stale:
            entry.version, entry.version_fetched_at = sha, entry.fetched_at
        response = result.response
        request = response.request if response is not None else None
        self.versions.append(
            PolicyVersion(
                file=file,
                site=site,
                url=result.url,
                requested_url=result.requested_url,
                fetched_at=entry.fetched_at,
                expires_at=entry.expires_at,
                status=None if response is None else response.status,
                action=entry.action.value,
                size=len(body),
                sha256=sha,
                governs=entry.version,
                truncated=result.truncated,
                error=entry.error,
                failures=entry.failures,
                retry_after=entry.retry_after,
                parser=self.config.parser_name if file == ROBOTS_TXT else "",
                body=body,
                headers=response_headers(None if response is None else response.headers),
                request_headers=response_headers(None if request is None else request.headers),
            )
        )
        # Named after the file: robots.txt -> robots, tdmrep.json -> tdmrep, any other by its stem.
        self.stats.inc_value(f"robotstxt/record/versions/{file.rsplit('/', 1)[-1].split('.', 1)[0]}")

    def _revalidated(self, file: str, site: str, result: FetchResult, entry: RobotsEntry) -> None:
        """A 304: no version (the body did not come again), the one that governs still does,
        its version kept in the entry; a row in the decisions file says the file was checked."""
        self.checks.append(
            {
                "kind": REVALIDATED,
                "t": entry.fetched_at,
                "file": file,
                "site": site,
                "url": result.url,
                "requested_url": result.requested_url,
                "status": 304,
                "governs": entry.version,
                "version_fetched_at": entry.version_fetched_at,
                "expires_at": entry.expires_at,
                "etag": entry.etag,
                "last_modified": entry.last_modified,
            }
        )
        self.stats.inc_value(f"robotstxt/record/revalidations/{file.rsplit('/', 1)[-1].split('.', 1)[0]}")

    def decided(self, entry: RobotsEntry, request: Request, answer: Verdict, heard: Heard) -> None:
        """A verdict given: kept for the next batch; an allowed request carries its version."""
        meta = request.meta
        if entry.version is not None:
            meta[META_KEY] = {"sha256": entry.version, "fetched_at": entry.version_fetched_at, "url": entry.url}
        elif entry.action is not Action.EXCLUDED:  # an excluded domain's robots.txt is never fetched
            self._unversioned(entry)
        agent = request_agent(request, self.config.user_agent, self.config.default_user_agent)
        # The answers as decided: the spider middleware writes the page's own into the same
        # meta dicts when the response comes, before or after this batch is written.
        usage = meta.get(USAGE_META_KEY)
        # Each other policy file's answer, under its own field (policyfiles/preference.py).
        files = None
        for file, _ in heard:
            said = meta.get(file.meta_key)
            if said:
                files = files or {}
                files[file.tags_field] = dict(said)
        self.decisions.append(
            (time.time(), request.url, entry, answer, agent, heard, dict(usage) if usage else None, files)
        )
        if len(self.decisions) >= self.record.batch:
            self._soon.schedule()  # once, whatever the requests decided before it runs

    def _unversioned(self, entry: RobotsEntry) -> None:
        """A decision on a copy whose version no crawler recorded: taken from the storage, where
        a crawler that does not record put it (or an earlier scrapy-robots). Counted; said once."""
        self.stats.inc_value("robotstxt/record/unversioned")
        if not self._said_unversioned:
            self._said_unversioned = True
            logger.warning(
                "Compliance record: the robots.txt of %(site)s came from the storage without its version "
                "(stored by a crawler without ROBOTSTXT_RECORD, or by an earlier scrapy-robots): the decisions "
                "on it name no version until its refresh, which asks for the whole file. In a fleet, set "
                "ROBOTSTXT_RECORD on every crawler. Such decisions are counted in robotstxt/record/unversioned.",
                {"site": entry.site},
                extra={"spider": self.crawler.spider},
            )

    def page(self, site: str, url: str, reading: PageReading, items: int) -> None:
        """A page that denied a declared purpose, read by the crawl (spidermw.py, once its
        items went through): kept for the next batch, beside the request's decision."""
        self.pages.append(self._page_row(time.time(), url, site, reading, items))

    def directives(
        self, site: str, url: str, said: dict[str, Any], did: dict[str, int], not_followed: list[str]
    ) -> None:
        """A page whose robots directives the crawl acted on (directives/middleware.py, once
        its output went through): what the page said (``said``: each directive and its
        sources), what the crawl did (``did``: counts by what), the requests it did not follow
        (the first :data:`~scrapy_robots.record.NAMED_AT_MOST`)."""
        self.pages.append(
            {
                "kind": DIRECTIVES,
                "t": time.time(),
                "url": url,
                "site": site,
                "directives": said,
                "did": did,
                "not_followed": not_followed,
            }
        )

    def flush(self) -> None:
        versions, self.versions = self.versions, []
        decisions, self.decisions = self.decisions, []
        pages, self.pages = self.pages, []
        checks, self.checks = self.checks, []
        if not versions and not decisions and not pages and not checks:
            return
        try:
            self.writer.write(versions, [*checks, *map(self._row, decisions), *pages])
        except OSError as exc:
            self.stats.inc_value("robotstxt/record/errors")
            logger.error(
                "Compliance record: %(n)d version(s) and %(d)d decision(s) not written to %(folder)s: %(error)s",
                {
                    "n": len(versions),
                    "d": len(decisions) + len(pages) + len(checks),
                    "folder": self.record.folder,
                    "error": exc,
                },
            )
            return
        self.stats.inc_value("robotstxt/record/decisions", len(decisions))
        if pages:
            self.stats.inc_value("robotstxt/record/pages", len(pages))
        self.stats.inc_value("robotstxt/record/batches")

    def _row(self, decision: tuple[Any, ...]) -> dict[str, Any]:
        at, url, entry, answer, agent, heard, usage, files = decision
        token = self._tokens.get(agent)
        if token is None:
            token = self._tokens[agent] = product_token(agent)
        # The one answer's row (grounds.py), of the inputs as they were at the decision.
        return self._decision_row(at, url, token, entry, answer, heard, usage, files)

    def _opened(self) -> None:
        self._timer.start(self.record.flush_interval, now=False)

    def _closed(self) -> None:
        if self._timer.running:
            self._timer.stop()
        self._soon.cancel()
        self.flush()
        closed = self.writer.close()
        if self.key is not None and closed:
            self._sign(self.key, closed)

    def _sign(self, key: SigningKey, names: list[str]) -> None:
        """The files just closed, their digests chained and signed into the manifest."""
        from scrapy_robots.record.manifest import MANIFEST, sign_files

        try:
            sign_files(self.record.folder, names, key)
        except OSError as exc:
            self.stats.inc_value("robotstxt/record/errors")
            logger.error(
                "Compliance record: %(names)s not signed into %(folder)s/%(manifest)s: %(error)s",
                {"names": ", ".join(names), "folder": self.record.folder, "manifest": MANIFEST, "error": exc},
            )
            return
        self.stats.inc_value("robotstxt/record/signed", len(names))
        logger.info(
            "Compliance record: %(n)d file(s) signed into %(folder)s/%(manifest)s with the key %(keyid)s",
            {"n": len(names), "folder": self.record.folder, "manifest": MANIFEST, "keyid": key.keyid},
        )


def _signing_key(path: str) -> SigningKey:
    """The key the record is signed with: the one the requests are (signing/middleware.py
    reads it too, and says the same of a bad one); a bad key stops the crawl at start-up."""
    from scrapy_robots.signing.keys import KeyFileError, load_key

    try:
        return load_key(path)
    except KeyFileError as exc:
        raise SettingError(f"ROBOTSTXT_SIGNATURE_KEY (to sign ROBOTSTXT_RECORD): {exc}") from None
