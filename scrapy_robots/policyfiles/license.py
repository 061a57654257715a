"""RSL in a crawl: the license document a site's robots.txt points to (``License:``), a
policy file of the book as ``tdmrep.json`` is (:class:`RslLicense`, a
:class:`~scrapy_robots.policyfiles.preference.PreferenceFile`), read by the pure
:mod:`scrapy_robots.rsl`.

The book gives it what it gives TDMRep's file: the fetcher (Scrapy's downloader, the size
cap, redirects, the policy files' slot), the single flight and waiting room, the storage
(keyed ``<site>/.well-known/rsl``, whatever the document's URL), the record (``license.xml``)
and TDMRep's status policy: a 2xx is parsed (:func:`~scrapy_robots.rsl.parse_rsl`); a 4xx,
or a 3xx not followed, licenses nothing and restricts nothing (every URL unstated); a 5xx,
a 429 or a network error is retried as robots.txt is, and meanwhile every declared purpose
reads "not licensed" (never silently allowed).

Each declared purpose (``ROBOTSTXT_USAGE``) is answered by
:func:`~scrapy_robots.rsl.purpose_answer`: ``licensed`` allows it, ``not-licensed`` denies
it, ``license-required`` denies it unless the crawl holds a license token
(``ROBOTSTXT_RSL_TOKEN``, or the request's ``robotstxt_rsl_token`` meta key), which the
request then carries (``Authorization: License <token>``); ``unstated`` says nothing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from scrapy.http import HtmlResponse

from scrapy_robots.policyfiles.preference import OPTIONAL_FILE_POLICY, PreferenceFile, Stated
from scrapy_robots.rsl import (
    LICENSE_REQUIRED,
    LICENSED,
    NOT_LICENSED,
    TOO_LARGE,
    RslDocument,
    RslError,
    header_licenses,
    page_licenses,
    parse_rsl,
    purpose_answer,
)
from scrapy_robots.status.policy import Action
from scrapy_robots.usage import ALLOW, DENY, Preference

if TYPE_CHECKING:
    from scrapy.http import Request, Response

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.policyfiles.decision import Decision
    from scrapy_robots.rsl import RslAnswer
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.status.result import FetchResult

logger = logging.getLogger(__name__)

#: The robots.txt outcomes after which a page's link locates the site's document: a file
#: parsed (no License line for this agent), or none (every URL allowed).
PAGE_LINK_AFTER: Final = (Action.PARSE, Action.ALLOW)

#: Meta key of the document's answer for the request, purpose -> its verdict, reason, content.
META_KEY: Final = "robotstxt_rsl"
#: Meta key of a request's own license token (overrides ROBOTSTXT_RSL_TOKEN).
TOKEN_META_KEY: Final = "robotstxt_rsl_token"
#: The :attr:`Preference.source` of what RSL states.
SOURCE: Final = "license.xml"
#: The start of an IgnoreRequest message for a request RSL keeps out.
DENIED_REASON: Final = "Forbidden by RSL license"
#: The :attr:`Preference.source` of what RSL states for a page that links to the document.
LINKED: Final = "license link"


class RslLicense(PreferenceFile):
    """The site's RSL document, where its robots.txt's ``License`` line points (the first
    that applies to the crawl's agent); its rules are the parsed :class:`~scrapy_robots.rsl.RslDocument`."""

    name = SOURCE
    path = "/.well-known/rsl"  # the storage key's suffix: the document's URL is the site's own
    stats = "robotstxt/rsl"
    record = SOURCE
    key = "rsl"
    meta_key = META_KEY
    sources = (SOURCE,)
    denied_reason = DENIED_REASON
    after = (Action.PARSE,)  # a License line is in a parsed robots.txt

    policy = OPTIONAL_FILE_POLICY
    page_source = LINKED

    def __init__(self, crawler: Any, config: RobotsConfig):
        super().__init__(crawler, config)
        #: site -> the document's URL, from its robots.txt (only sites that name one)
        self.located: dict[str, str] = {}
        #: site -> the document's URL, from a page's link (sites whose robots.txt names none):
        #: what this crawler saw; another crawler of a fleet locates it from its own pages
        self.linked: dict[str, str] = {}

    @classmethod
    def wanted(cls, config: RobotsConfig) -> bool:
        return config.rsl

    def needed(self, robots: RobotsEntry) -> bool:
        if robots.action is Action.PARSE and robots.licenses:
            url = robots.licenses[0]
            if self.located.get(robots.site) != url:
                self.located[robots.site] = url
            return True
        # A page of the site linked to its document (page_links.py): the site's robots.txt
        # parsed without a License line for this agent, or missing (404: everything allowed).
        linked = self.linked
        return bool(linked) and robots.site in linked and robots.action in PAGE_LINK_AFTER

    def where(self, site: str) -> str:
        return self.located.get(site) or self.linked.get(site) or self.path

    def page_links(self, response: Response) -> tuple[str, ...]:
        found = header_licenses(response.headers, response.url) if b"Link" in response.headers else ()
        if isinstance(response, HtmlResponse) and _names_rsl(response.body):
            found += page_licenses(response.body, response.url)
        return tuple(dict.fromkeys(link.url for link in found))

    def locate(self, site: str, url: str) -> None:
        self.linked.setdefault(site, url)

    def read(self, entry: RobotsEntry) -> RslDocument:
        if entry.truncated:  # XML cut short is no XML
            maxsize = self.config.maxsize
            return RslDocument(error=RslError(TOO_LARGE, f"over the {maxsize:,} bytes read (ROBOTSTXT_MAXSIZE)"))
        return parse_rsl(entry.body or b"")

    def log(self, decision: Decision, result: FetchResult) -> None:
        """The book's line; a document that cannot be used (not XML, not RSL, a DOCTYPE) is a
        WARNING and counted (``robotstxt/rsl/malformed``): every URL then reads unstated."""
        super().log(decision, result)
        entry = decision.entry
        document = entry.rules
        if entry.action is Action.PARSE and isinstance(document, RslDocument) and document.error is not None:
            self.crawler.stats.inc_value(f"{self.stats}/malformed")
            logger.warning(
                "%(file)s for %(site)s (%(url)s) is unusable: %(error)s; it states nothing for any URL",
                {
                    "file": self.name,
                    "site": entry.site.removesuffix(self.path),
                    "url": result.url,
                    "error": document.error,
                },
                extra={"spider": self.crawler.spider},
            )

    def _answers(self, entry: RobotsEntry, url: str, config: RobotsConfig) -> dict[str, RslAnswer | str]:
        """Each declared purpose's answer; a string when the document could not be read."""
        if entry.action is Action.UNREACHABLE:
            cause = entry.error or f"HTTP {entry.status}"
            why = f"{SOURCE} unreachable ({cause}) after {entry.failures} attempt(s), read as not licensed"
            return dict.fromkeys(self.purposes(config), why)
        if entry.action is not Action.PARSE or entry.rules is None:
            return {}
        return {purpose: purpose_answer(entry.rules, url, purpose) for purpose in self.purposes(config)}

    def says(self, entry: RobotsEntry | None, request: Request, config: RobotsConfig) -> dict[str, Preference]:
        meta = request.meta
        if entry is None:
            meta.pop(META_KEY, None)
            return {}
        token = meta.get(TOKEN_META_KEY) or config.rsl_token
        said: dict[str, Preference] = {}
        carried: dict[str, dict[str, Any]] = {}
        licensed_by_token = False
        for purpose, answer in self._answers(entry, request.url, config).items():
            if isinstance(answer, str):  # unreachable
                said[purpose] = Preference(purpose, DENY, True, None, answer, SOURCE)
                carried[purpose] = {"verdict": NOT_LICENSED, "reason": answer, "content": None, "server": None}
                continue
            carried[purpose] = {
                "verdict": answer.verdict,
                "reason": answer.reason,
                "content": answer.content,
                "server": answer.server,
            }
            if not answer.stated:
                continue
            allowed = answer.verdict == LICENSED or (answer.verdict == LICENSE_REQUIRED and bool(token))
            licensed_by_token |= answer.verdict == LICENSE_REQUIRED and bool(token)
            text = f"RSL {answer.verdict} for {answer.token}: {answer.reason}"
            said[purpose] = Preference(purpose, ALLOW if allowed else DENY, True, None, text, SOURCE)
        meta[META_KEY] = carried
        if licensed_by_token:
            # The license server's token, as RSL's "License" authentication scheme sends it.
            request.headers["Authorization"] = f"License {token}"
        return said

    def denial(self, entry: RobotsEntry, denied: Preference) -> tuple[str, str]:
        if entry.action is Action.UNREACHABLE:
            why = "unreachable"
        elif (denied.text or "").startswith(f"RSL {LICENSE_REQUIRED}"):
            why = "license_required"
        else:
            why = "not_licensed"
        return f"{DENIED_REASON}: {denied.reason}", f"{self.stats}/denied/{why}"

    def explain(self, entry: RobotsEntry | None, url: str, config: RobotsConfig) -> tuple[Stated, ...]:
        purposes = self.purposes(config)
        if entry is None:
            return (Stated(purposes, "not read"),)
        answers = self._answers(entry, url, config)
        if not answers:
            return (Stated(purposes, f"no RSL document ({entry.error or f'HTTP {entry.status}'}): nothing stated"),)
        found = []
        for purpose, answer in answers.items():
            if isinstance(answer, str):
                found.append(Stated((purpose,), answer, False))
                continue
            allowed = (
                None
                if not answer.stated
                else answer.verdict == LICENSED or (answer.verdict == LICENSE_REQUIRED and bool(config.rsl_token))
            )
            found.append(Stated((purpose,), f"{answer.verdict} for {purpose}: {answer.reason}", allowed))
        return tuple(found)

    def report(self, entry: RobotsEntry | None, url: str, config: RobotsConfig, not_read: str) -> dict[str, Any]:
        report = super().report(entry, url, config, not_read)
        if entry is None and not_read == "robots.txt":
            report["text"] = (
                f"not read for {', '.join(self.purposes(config))}: robots.txt names no RSL license "
                "(no License line for this agent), or keeps the site out"
            )
        elif entry is not None:
            answers = self._answers(entry, url, config)
            report["answers"] = {
                purpose: {"verdict": NOT_LICENSED, "reason": answer}
                if isinstance(answer, str)
                else {
                    "verdict": answer.verdict,
                    "reason": answer.reason,
                    "content": answer.content,
                    "server": answer.server,
                }
                for purpose, answer in answers.items()
            }
        return report


def _names_rsl(body: bytes) -> bool:
    """Whether the head of a page names RSL's media type: only such a page is searched for a
    ``<link>`` (most have none). The head alone is lowered (a case-blind regex over a 100 KB
    page took 0.3 ms; this, a few microseconds)."""
    end = body.find(b"</head")
    head = body if end < 0 else body[:end]
    return b"rsl+xml" in head.lower()
