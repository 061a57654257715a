"""A policy file that bears on the verdict: the one door through which a site's files other
than robots.txt speak for the crawl's declared purposes (``ROBOTSTXT_USAGE``).

A :class:`PreferenceFile` is a handler of the book (:class:`~scrapy_robots.policyfiles.book.PolicyFile`:
its path, status policy, reader, stats, log line, record name) that also says, pure, what its
file states of a URL: when it is needed (:meth:`~PreferenceFile.needed`, after robots.txt's
outcome), the usage preference it states for each declared purpose and the request meta it
sets (:meth:`~PreferenceFile.says`), the reason and stat of a denial it causes
(:meth:`~PreferenceFile.denial`), what ``scrapy robots`` and the compliance record say of it
(:meth:`~PreferenceFile.explain`, :meth:`~PreferenceFile.report`), and, for a file a page may
link to, the links (:meth:`~PreferenceFile.page_links`, :meth:`~PreferenceFile.locate`, read by
:mod:`scrapy_robots.policyfiles.page_links`). TDMRep's ``tdmrep.json``
(:mod:`scrapy_robots.tdmrep.crawl`) and RSL's license document
(:mod:`scrapy_robots.policyfiles.license`) are two; ``ROBOTSTXT_POLICY_FILES`` registers them, and any other.

The verdict (``verdict.py``), the grounds (``grounds.py``), the compliance record and the
command iterate :data:`Heard` (each enabled file with its entry at the site, or None when it
was not read) and never name a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

from scrapy_robots.policyfiles.book import PolicyFile
from scrapy_robots.policyfiles.stated import Heard, Stated
from scrapy_robots.status.policy import NETWORK, Action, StatusPolicy

__all__ = ["OPTIONAL_FILE_POLICY", "Heard", "PreferenceFile", "Stated"]

#: The status policy of a file a site need not have (TDMRep's, RSL's): 2xx its content;
#: any 4xx, and a 3xx not followed, "not implemented" (nothing stated); 5xx, 429, a network
#: error, unknown: retried on robots.txt's schedule, read meanwhile as the file's handler says.
OPTIONAL_FILE_POLICY: Final = StatusPolicy(
    {
        "1xx": Action.UNREACHABLE,
        "2xx": Action.PARSE,
        "3xx": Action.ALLOW,
        "4xx": Action.ALLOW,
        429: Action.UNREACHABLE,
        "5xx": Action.UNREACHABLE,
        NETWORK: Action.UNREACHABLE,
    }
)

if TYPE_CHECKING:
    from scrapy.http import Request, Response

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.usage import Preference


class PreferenceFile(PolicyFile):
    """A policy file whose content states usage preferences for the declared purposes.

    A subclass names it as a ``PolicyFile`` (policyfiles/book.py) does, plus ``key`` (its field in a decision
    row of the compliance record and in the command's report), ``meta_key`` (the request
    meta key that carries its answer), ``tags_key`` (that answer's field in a decision row;
    ``<key>_said`` by default), ``sources`` (the ``Preference.source`` values it states: a
    denial by one of them is its own) and ``denied_reason`` (the start of its IgnoreRequest
    message), and implements :meth:`says` and :meth:`explain`.
    """

    key: ClassVar[str]
    meta_key: ClassVar[str]
    tags_key: ClassVar[str] = ""
    sources: ClassVar[tuple[str, ...]]
    denied_reason: ClassVar[str]
    #: the robots.txt outcomes after which a site's requests need the file: not those that
    #: keep every request out (denied, unreachable, excluded)
    after: ClassVar[tuple[Action, ...]] = (Action.PARSE, Action.ALLOW)
    #: the ``Preference.source`` of what the file states for a page that points to it
    #: (:meth:`page_links`): one of ``grounds.PAGE_SOURCES``, the page's own answer
    page_source: ClassVar[str] = ""

    @property
    def tags_field(self) -> str:
        """Its answer's field in a decision row: ``tags_key``, else ``<key>_said``."""
        return self.tags_key or f"{self.key}_said"

    @classmethod
    def wanted(cls, config: RobotsConfig) -> bool:
        """Whether the crawl reads the file at all: it declares a purpose the file speaks for."""
        return config.usage is not None

    def needed(self, robots: RobotsEntry) -> bool:
        """Whether a request of the site whose robots.txt came to ``robots`` needs the file."""
        return robots.action in self.after

    def page_links(self, response: Response) -> tuple[str, ...]:
        """The URLs of the file that a downloaded page points to (RSL: a ``Link`` header field,
        the head's ``<link>``), in the order found; none by default (a file only a fixed path
        or robots.txt names). Read by :mod:`scrapy_robots.policyfiles.page_links`."""
        return ()

    def locate(self, site: str, url: str) -> None:
        """A page of ``site`` points to the file at ``url``, and nothing located the site's
        file before (:meth:`where` is still :attr:`path`): the site's requests from now on
        need it, fetched from there (:meth:`needed`, :meth:`where`)."""

    def purposes(self, config: RobotsConfig) -> tuple[str, ...]:
        """The declared purposes the file speaks for."""
        return config.usage.purposes if config.usage is not None else ()

    def says(self, entry: RobotsEntry | None, request: Request, config: RobotsConfig) -> dict[str, Preference]:
        """The preference the file (``entry``; None: not read for this request) states for
        each declared purpose it speaks for (none when it states nothing), its answer set in
        ``request.meta[meta_key]`` (popped when not read: none carried from another site's page)."""
        raise NotImplementedError

    def denial(self, entry: RobotsEntry, denied: Preference) -> tuple[str, str]:
        """The IgnoreRequest message and the stat of a request the file's ``denied`` keeps out."""
        why = "unreachable" if entry.action is Action.UNREACHABLE else "file"
        return f"{self.denied_reason}: {denied.reason}", f"{self.stats}/denied/{why}"

    def explain(self, entry: RobotsEntry | None, url: str, config: RobotsConfig) -> tuple[Stated, ...]:
        """What the file says of ``url``, one line per answer (``scrapy robots``' sources)."""
        raise NotImplementedError

    def report(self, entry: RobotsEntry | None, url: str, config: RobotsConfig, not_read: str) -> dict[str, Any]:
        """The command's report of the file for ``url``: the file's fetch, what it says, and
        ``text``, the line the plain output prints. ``not_read`` says why ``entry`` is None
        ("robots.txt": robots.txt keeps the site out; "file": ``--file`` gave none)."""
        purposes = list(self.purposes(config))
        names = ", ".join(purposes)
        if entry is None:
            text = (
                f"not read for {names}: --file answers from the local files given (no {self.name} beside it)"
                if not_read == "file"
                else f"not read (robots.txt keeps the site out) for {names}"
            )
            return {
                "purposes": purposes,
                "url": None,
                "status": None,
                "policy": None,
                "not_read": not_read,
                "text": text,
            }
        says = "; ".join(stated.says for stated in self.explain(entry, url, config))
        status = f"HTTP {entry.status}" if entry.status is not None else entry.error or "not fetched"
        return {
            "purposes": purposes,
            "url": entry.url,
            "status": entry.status,
            "policy": entry.action.value,
            "error": entry.error,
            "not_read": None,
            "text": f"{says} ({entry.url}: {status})",
        }
