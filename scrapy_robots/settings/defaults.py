"""Every ``ROBOTSTXT_*`` setting the package reads, with its default, in one table.

Scrapy keeps its defaults in ``scrapy/settings/default_settings.py``, scrapy-redis in
``defaults.py``; here, :data:`DEFAULTS`. The readers (``readers.py``) take a setting's
default from it, so a default is written once; docs/settings.rst states the same
defaults, and a test compares the two. A default that depends on other settings is a
:class:`Computed`: how the docs write it, and the function that computes it at start-up.

``ROBOTSTXT_OBEY``, ``ROBOTSTXT_USER_AGENT`` and ``ROBOTSTXT_PARSER`` are Scrapy's own
settings: the first two keep Scrapy's defaults; ``ROBOTSTXT_PARSER`` is our parser unless
the project or the spider sets it (Scrapy's default, Protego, is not read as a choice).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.settings import BaseSettings

DAY: Final = 24 * 3600.0
#: The parser used when the project leaves ROBOTSTXT_PARSER at Scrapy's default.
DEFAULT_PARSER: Final = "scrapy_robots.parsers.RFC9309Parser"
MEMORY_STORAGE: Final = "scrapy_robots.cache.MemoryRobotsStorage"
DISK_STORAGE: Final = "scrapy_robots.cache.SqliteRobotsStorage"
#: The storage that makes a fleet: robots.txt fetched once and each site paced across the crawlers.
FLEET_STORAGE: Final = "scrapy_robots.fleet.RedisRobotsStorage"

#: The parsers' short names (``scrapy robots --parser``; a ROBOTSTXT_PARSER that gives one is told
#: the import path), in the order ``--compare`` prints them.
SHORT_NAMES = {
    "rfc9309": "scrapy_robots.parsers.RFC9309Parser",
    "protego": "scrapy_robots.parsers.ProtegoParser",
    "python": "scrapy_robots.parsers.PythonParser",
    "rerp": "scrapy_robots.parsers.RerpParser",
    "reppy": "scrapy_robots.parsers.ReppyParser",
    "google": "scrapy_robots.parsers.GoogleParser",
}
#: The derived components a request may be signed over (signing/base.py derives each; a test
#: keeps the two the same: settings sit below signing/, and import nothing of it).
SIGNATURE_COMPONENTS: Final = ("@method", "@authority", "@path", "@query", "@target-uri", "@scheme")
#: The SQLite file's name under JOBDIR.
JOBDIR_FILE: Final = "robotstxt.sqlite3"
#: The fleet's Redis when neither ROBOTSTXT_REDIS_URL nor scrapy-redis' REDIS_URL is set.
LOCAL_REDIS: Final = "redis://127.0.0.1:6379"


class Computed:
    """A default that depends on other settings: ``docs`` is how docs/settings.rst writes
    it; ``compute(settings, *given)`` is its value, ``given`` the values it depends on
    that were read already (the fetch timeout of ROBOTSTXT_FLEET_LOCK_WAIT)."""

    __slots__ = ("compute", "docs")

    def __init__(self, docs: str, compute: Callable[..., Any]):
        self.docs = docs
        self.compute = compute

    def __repr__(self) -> str:
        return f"Computed({self.docs!r})"


def _cache_path(settings: BaseSettings) -> str | None:
    jobdir = settings.get("JOBDIR")
    return os.path.join(jobdir, JOBDIR_FILE) if jobdir else None


def _max_waiting(settings: BaseSettings) -> int:
    # A queue shared by a fleet (scrapy-redis, SCHEDULER_PERSIST): what a crawler parks
    # is taken out of it, and lost if the crawler dies; no more than it can download.
    if settings.getbool("SCHEDULER_PERSIST"):
        return max(settings.getint("CONCURRENT_REQUESTS"), 1)
    return 10_000


def _leases(settings: BaseSettings) -> bool:
    # scrapy-redis' scheduler: a queue shared by the fleet, where another crawler can take
    # back what a dead one held (the fleet's storage alone reads this setting).
    scheduler = settings.get("SCHEDULER")
    name = scheduler if isinstance(scheduler, str) else f"{getattr(scheduler, '__module__', '')}."
    return name.startswith("scrapy_redis.")


#: Setting -> default: a value, or a :class:`Computed`. In the order of docs/settings.rst.
DEFAULTS: Final[Mapping[str, Any]] = MappingProxyType(
    {
        # Scrapy's own.
        "ROBOTSTXT_OBEY": False,
        "ROBOTSTXT_USER_AGENT": None,
        "ROBOTSTXT_PARSER": DEFAULT_PARSER,
        # Fetching and the status policy.
        "ROBOTSTXT_STATUS_POLICY": "default",
        "ROBOTSTXT_MAXSIZE": 500 * 1024,
        "ROBOTSTXT_TIMEOUT": Computed(
            "``min(DOWNLOAD_TIMEOUT, 30)``", lambda settings: min(settings.getfloat("DOWNLOAD_TIMEOUT", 180), 30.0)
        ),
        # The cache.
        "ROBOTSTXT_CACHE_TTL": DAY,
        "ROBOTSTXT_CACHE_SIZE": 100_000,
        "ROBOTSTXT_CACHE_PARSED": 256,
        # A crawl with a JOBDIR (or a path given) keeps robots.txt with the job: resumed,
        # it fetches nothing again. Otherwise nothing is written to disk.
        "ROBOTSTXT_CACHE_STORAGE": Computed(
            "``MemoryRobotsStorage``, or ``SqliteRobotsStorage`` with a ``JOBDIR``",
            lambda settings, path: DISK_STORAGE if path else MEMORY_STORAGE,
        ),
        "ROBOTSTXT_CACHE_PATH": Computed("``<JOBDIR>/robotstxt.sqlite3``", _cache_path),
        # A refresh of a known file sends its validators: a 304 keeps it, unparsed.
        "ROBOTSTXT_REVALIDATE": True,
        # An unreachable robots.txt.
        "ROBOTSTXT_UNREACHABLE_RETRY_DELAY": 30.0,
        "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY": 3600.0,
        "ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 3,
        "ROBOTSTXT_UNREACHABLE_ALLOW_AFTER": 30 * DAY,
        "ROBOTSTXT_EXCLUDED_DOMAINS": (),
        "ROBOTSTXT_SERVE": True,
        # The page backoff (pace/backoff.py).
        "ROBOTSTXT_BACKOFF": True,
        "ROBOTSTXT_BACKOFF_HTTP_CODES": (429, 503),
        "ROBOTSTXT_BACKOFF_PAUSE": 5.0,
        "ROBOTSTXT_BACKOFF_MAX_PAUSE": 600.0,
        "ROBOTSTXT_BACKOFF_FACTOR": 2.0,
        "ROBOTSTXT_BACKOFF_RECOVERY": 20,
        # Waiting for robots.txt, and Crawl-delay.
        "ROBOTSTXT_MAX_WAITING": Computed(
            "``10000``; ``CONCURRENT_REQUESTS`` with ``SCHEDULER_PERSIST``", _max_waiting
        ),
        "ROBOTSTXT_CRAWL_DELAY": True,
        "ROBOTSTXT_MAX_CRAWL_DELAY": 60.0,
        "ROBOTSTXT_CRAWL_DELAY_EXCEEDED": "clamp",
        # The fleet (fleet/).
        "ROBOTSTXT_REDIS_URL": Computed(
            "``REDIS_URL``, else ``redis://127.0.0.1:6379``", lambda settings: settings.get("REDIS_URL") or LOCAL_REDIS
        ),
        "ROBOTSTXT_REDIS_KEY_PREFIX": Computed(
            '``"scrapy_robots:<BOT_NAME>"``',
            lambda settings: f"scrapy_robots:{settings.get('BOT_NAME') or 'scrapybot'}",
        ),
        # Redis Sentinel: "host:port" of each Sentinel; the primary they name is the fleet's
        # Redis (ROBOTSTXT_REDIS_URL then gives its db, user and password only).
        "ROBOTSTXT_REDIS_SENTINELS": (),
        "ROBOTSTXT_REDIS_SENTINEL_SERVICE": "mymaster",
        "ROBOTSTXT_REDIS_TIMEOUT": 0.5,
        "ROBOTSTXT_REDIS_CONNECTIONS": 50,
        # ROBOTSTXT_REDIS_URL names one node of a Redis Cluster (redis-py's cluster client).
        "ROBOTSTXT_REDIS_CLUSTER": False,
        # The holder renews its lock every third of the TTL while its fetch runs: a dead
        # crawler's lock expires within the TTL, a live one keeps it.
        "ROBOTSTXT_FLEET_LOCK_TTL": 10.0,
        # The hard bound on one holder: a fetch may follow redirects, each bounded by the
        # fetch timeout; past this, a live holder is taken over too.
        "ROBOTSTXT_FLEET_LOCK_WAIT": Computed(
            "``2 × ROBOTSTXT_TIMEOUT + 10``, at least ``ROBOTSTXT_FLEET_LOCK_TTL``",
            lambda settings, timeout, lock_ttl: max(2 * timeout + 10, lock_ttl),
        ),
        "ROBOTSTXT_FLEET_PACING": True,
        "ROBOTSTXT_FLEET_PACING_MARGIN": 0.05,
        "ROBOTSTXT_FLEET_OUTAGE": "spread",
        "ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY": 172800.0,
        # The requests waiting in a crawler, leased in Redis: given back to the shared
        # queue by another crawler when this one's heartbeat stops (fleet/leases.py).
        "ROBOTSTXT_FLEET_LEASES": Computed("``True`` with scrapy-redis' ``SCHEDULER``, else ``False``", _leases),
        "ROBOTSTXT_FLEET_LEASE_TTL": 15.0,
        # How our parser reads files (rfc9309/: Options has the same defaults, tested).
        "ROBOTSTXT_RFC9309_PRECEDENCE": "longest",
        "ROBOTSTXT_RFC9309_WILDCARDS": True,
        "ROBOTSTXT_RFC9309_EMPTY_RULES": "ignore",
        "ROBOTSTXT_RFC9309_AGENT_MATCHING": "token",
        "ROBOTSTXT_RFC9309_PRODUCT_TOKENS": "names",
        # Usage preferences and TDMRep (usage/, tdmrep/).
        "ROBOTSTXT_USAGE": None,
        "ROBOTSTXT_USAGE_MODE": "deny",
        "ROBOTSTXT_TDMREP": True,
        # The policy files besides robots.txt that state preferences (policyfiles/preference.py).
        "ROBOTSTXT_RSL": True,
        "ROBOTSTXT_RSL_TOKEN": None,
        "ROBOTSTXT_POLICY_FILES": (
            "scrapy_robots.tdmrep.crawl.TdmRepJson",
            "scrapy_robots.policyfiles.license.RslLicense",
        ),
        # The compliance record (record/).
        "ROBOTSTXT_RECORD": None,
        "ROBOTSTXT_RECORD_FORMAT": "warc",
        "ROBOTSTXT_RECORD_FLUSH_INTERVAL": 5.0,
        "ROBOTSTXT_RECORD_BATCH": 10_000,
        # A page's robots directives (directives/).
        "ROBOTSTXT_DIRECTIVES": True,
        "ROBOTSTXT_DIRECTIVES_NOFOLLOW": True,
        "ROBOTSTXT_DIRECTIVES_REL_NOFOLLOW": True,
        "ROBOTSTXT_DIRECTIVES_NOINDEX": "mark",
        "ROBOTSTXT_DIRECTIVES_NOINDEX_FIELD": "robots_noindex",
        # Web Bot Auth: every request signed (signing/, settings/signing.py); off unless
        # both the key and the agent's directory URL are set.
        "ROBOTSTXT_SIGNATURE_KEY": None,
        "ROBOTSTXT_SIGNATURE_AGENT": None,
        "ROBOTSTXT_SIGNATURE_EXPIRES": 300,
        "ROBOTSTXT_SIGNATURE_COMPONENTS": ("@authority", "@method", "@path"),
        "ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED": False,
        "ROBOTSTXT_SIGNATURE_NONCE": True,
    }
)


#: Set by ``scrapy robots``, not by projects: a one-shot run, which fetches each site
#: once (its own retries aside) and ends; the log promises no later attempt.
ONE_SHOT_SETTING: Final = "_ROBOTSTXT_ONE_SHOT"
#: The names the package sets itself, beside the table (the start-up check knows them).
PRIVATE: Final = frozenset({ONE_SHOT_SETTING})


def default(name: str, settings: BaseSettings, *given: Any) -> Any:
    """The default of ``name`` for these settings (a :class:`Computed` computed)."""
    value = DEFAULTS[name]
    return value.compute(settings, *given) if isinstance(value, Computed) else value
