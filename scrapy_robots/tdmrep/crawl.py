"""TDMRep in a crawl: the site's ``/.well-known/tdmrep.json``, a policy file of the book
as robots.txt is (:class:`TdmRepJson`, a handler of :class:`~scrapy_robots.policyfiles.book.PolicyBook`).

The book gives it what it gives robots.txt: the same fetcher (Scrapy's downloader, the
size cap, redirects, the robots.txt slot), the same single flight and waiting room, the
same storage (memory, SQLite under ``JOBDIR``, Redis for a fleet), where the file is a
second record of the site, keyed ``<site>/.well-known/tdmrep.json``, with its own lifetime
(``ROBOTSTXT_CACHE_TTL``), and the same decision
(:func:`~scrapy_robots.policyfiles.decision.decide`) under TDMRep's status policy:

- 2xx: the file is parsed (:func:`~scrapy_robots.tdmrep.parse_tdmrep`); an unusable one
  (not JSON, not an array, over its size cap) reads unset, and is counted and said;
- any 4xx, and a 3xx not followed: "the origin server does not implement this protocol",
  every URL unset;
- 5xx, 429, a network error: unknown. The requests of a crawl declaring a purpose TDM
  covers wait for the retries of robots.txt's schedule (``ROBOTSTXT_UNREACHABLE_RETRY_*``),
  then read as reserved until the file answers (a stale copy, if one is known, is used
  meanwhile; after ``ROBOTSTXT_UNREACHABLE_ALLOW_AFTER``, unset).

What a fetched file says of a URL is :mod:`scrapy_robots.tdmrep.reading`'s, pure, for
the crawl, the command and the record alike.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots.decoding import starts_as_html
from scrapy_robots.policyfiles.book import NOT_MODIFIED_TEXT
from scrapy_robots.policyfiles.preference import OPTIONAL_FILE_POLICY, PreferenceFile, Stated
from scrapy_robots.record.version import TDMREP_JSON
from scrapy_robots.status.policy import Action
from scrapy_robots.tdmrep.file import HTML_PAGE, TOO_LARGE, TdmRepError, TdmRepFile, parse_tdmrep
from scrapy_robots.tdmrep.reading import META_KEY, answer_as_meta, file_answer, preferences
from scrapy_robots.usage import TDM_DENIED_REASON, TDM_SOURCES

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.policyfiles.decision import Decision
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.status.result import FetchResult
    from scrapy_robots.usage import Preference

logger = logging.getLogger(__name__)

WELL_KNOWN: Final = "/.well-known/tdmrep.json"

#: TDMRep's reading of a status: the file, or "not implemented" (unset), or unknown.
STATUS_POLICY: Final = OPTIONAL_FILE_POLICY

#: The robots.txt outcomes after which a site's requests need its ``tdmrep.json``: not
#: those that keep every request out (denied, unreachable, excluded).
NEEDED_AFTER: Final = (Action.PARSE, Action.ALLOW)


class TdmRepJson(PreferenceFile):
    """``/.well-known/tdmrep.json``: its rules are the parsed :class:`~scrapy_robots.tdmrep.TdmRepFile`;
    a reservation denies the declared purposes TDM covers (``ROBOTSTXT_TDMREP``)."""

    name = "tdmrep.json"
    path = WELL_KNOWN
    stats = "robotstxt/tdmrep"
    record = TDMREP_JSON
    policy = STATUS_POLICY
    key = "tdmrep"
    meta_key = META_KEY
    tags_key = "tdm"
    sources = TDM_SOURCES
    denied_reason = TDM_DENIED_REASON
    after = NEEDED_AFTER

    @classmethod
    def wanted(cls, config: RobotsConfig) -> bool:
        return bool(config.tdmrep)

    def purposes(self, config: RobotsConfig) -> tuple[str, ...]:
        return config.tdmrep

    def says(self, entry: RobotsEntry | None, request: Request, config: RobotsConfig) -> dict[str, Preference]:
        meta = request.meta
        if entry is None:
            meta.pop(META_KEY, None)
            return {}
        answer = file_answer(entry, request.url)
        meta[META_KEY] = answer_as_meta(answer)
        return preferences(answer, config.tdmrep)

    def explain(self, entry: RobotsEntry | None, url: str, config: RobotsConfig) -> tuple[Stated, ...]:
        if entry is None:
            return (Stated(config.tdmrep, "not read"),)
        answer = file_answer(entry, url)
        return (Stated(config.tdmrep, answer.explain(), None if answer.reserved is None else not answer.reserved),)

    def report(self, entry: RobotsEntry | None, url: str, config: RobotsConfig, not_read: str) -> dict[str, Any]:
        """TDMRep's answer as the command has always given it (``answer``: the file's, as
        carried in ``robotstxt_tdmrep``)."""
        purposes = ", ".join(config.tdmrep)
        if entry is None:
            report = super().report(entry, url, config, not_read)
            if not_read == "file":
                report["text"] = (
                    f"not read for {purposes}: --file answers for robots.txt alone (a crawl reads the site's "
                    "tdmrep.json too; put one at .well-known/tdmrep.json beside the file to read it)"
                )
            return {**report, "answer": None}
        answer = answer_as_meta(file_answer(entry, url))
        verdict = {True: "reserved", False: "not reserved", None: "unset"}[answer["reserved"]]
        text = f"{verdict} for {purposes}: {answer['reason']}"
        if answer["policy"]:
            text += f"; tdm-policy {answer['policy']}"
        status = f"HTTP {entry.status}" if entry.status is not None else entry.error or "not fetched"
        return {
            "not_read": None,
            "purposes": list(config.tdmrep),
            "url": entry.url,
            "status": entry.status,
            "policy": entry.action.value,
            "error": entry.error,
            "answer": answer,
            "text": f"{text} ({entry.url}: {status})",
        }

    def read(self, entry: RobotsEntry) -> TdmRepFile:
        body = entry.body or b""
        # JSON cut short is no JSON: said as what it is; a long HTML page is a page first.
        if entry.truncated and not starts_as_html(body):
            maxsize = self.config.maxsize
            return TdmRepFile(error=TdmRepError(TOO_LARGE, f"over the {maxsize:,} bytes read (ROBOTSTXT_MAXSIZE)"))
        # The bytes as sent: JSON must be UTF-8, which the parser checks itself.
        return parse_tdmrep(body, self.config.maxsize)

    def log(self, decision: Decision, result: FetchResult) -> None:
        entry = decision.entry
        response = result.response
        outcome = f"HTTP {response.status}" if response is not None else entry.error
        level, details = logging.INFO, ""
        if entry.action is Action.UNREACHABLE:
            level = logging.WARNING if entry.failures == 1 else logging.INFO
            details = (
                f", attempt {entry.failures} of {self.config.retry_times + 1}, next in "
                f"{entry.expires_at - entry.fetched_at:.0f}s: TDM rights read as reserved until it answers"
            )
        elif decision.stale:
            details = f" (previous copy kept), attempt {entry.failures}"
        elif decision.revalidated:
            details = NOT_MODIFIED_TEXT
        elif entry.action is Action.PARSE:
            parsed = entry.rules
            details = f", {len(parsed.rules)} rule(s)"
            if parsed.error is not None and parsed.error.kind == HTML_PAGE:
                # A site answering every path with a page: no TDMRep there, nothing to fix.
                self.crawler.stats.inc_value("robotstxt/tdmrep/html_page")
                details = f"; {parsed.error.message}, every URL reads unset"
            elif parsed.error is not None:
                self.crawler.stats.inc_value("robotstxt/tdmrep/malformed")
                level, details = logging.WARNING, f", unusable ({parsed.error}): every URL reads unset"
        else:
            details = ": the site does not implement TDMRep, every URL reads unset"
        redirected = f" (redirected to {result.url})" if result.url != result.requested_url else ""
        logger.log(
            level,
            "tdmrep.json for %(site)s: %(outcome)s -> %(action)s%(details)s%(redirected)s",
            {
                "site": entry.site.removesuffix(WELL_KNOWN),
                "outcome": outcome,
                "action": entry.action.value,
                "details": details,
                "redirected": redirected,
            },
            extra={"spider": self.crawler.spider},
        )
