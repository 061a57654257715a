"""May this request be downloaded, given what is known of its site's policy files?

:func:`verdict` decides, as a plain function of the site's entry, the request and the
crawl's configuration: the middleware calls it on every request (its hot path), and
nothing else decides; :func:`scrapy_robots.grounds.grounds` gives the same verdict with
everything it rests on, for ``scrapy robots`` and the compliance record. It changes
nothing but the request's ``robotstxt_usage`` meta key (with ``ROBOTSTXT_USAGE`` set), and
raises nothing but :class:`OtherAgent`, when a request asks as an agent whose rules the
entry does not hold yet.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.cache.entry import Action
from scrapy_robots.policyfiles.retry_after import delayed_by_server, given_up_for_retry_after
from scrapy_robots.usage import DENIED_REASON as USAGE_DENIED
from scrapy_robots.usage import META_KEY as USAGE_META_KEY
from scrapy_robots.usage import check_request, stricter
from scrapy_robots.useragent import request_agent

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.policyfiles.stated import Heard
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.usage import Preference

logger = logging.getLogger(__name__)

#: The start of every IgnoreRequest message for a request robots.txt keeps out.
FORBIDDEN = "Forbidden by robots.txt"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str | None = None  #: the IgnoreRequest message, or what went wrong
    stat: str = ""  #: the stats key counting this outcome; "" for a plain allow
    usage: Preference | None = None  #: the usage preference that denied (ROBOTSTXT_USAGE)


class OtherAgent(Exception):
    """The entry holds what the crawl's agent obeys, and ``request`` asks as another (its
    own User-Agent header): :meth:`SiteBook.learn_agent` builds that agent's rules, once."""

    def __init__(self, agent: str | bytes):
        super().__init__(agent)
        self.agent = agent


ALLOWED = Verdict(True)
#: The parser raised: the request is allowed, and the failure counted.
PARSER_FAILED = Verdict(True, "the parser failed", "robotstxt/parser_error")
EXCLUDED = Verdict(False, f"{FORBIDDEN}: excluded domain (ROBOTSTXT_EXCLUDED_DOMAINS)", "robotstxt/denied/excluded")
DISALLOWED = Verdict(False, FORBIDDEN, "robotstxt/forbidden")


def verdict(entry: RobotsEntry, request: Request, config: RobotsConfig, heard: Heard = ()) -> Verdict:
    """May ``request`` be downloaded, given its site's ``entry`` (and ``heard``: the site's
    other policy files that state preferences, each with its entry, when a declared purpose
    needs them: policyfiles/preference.py)? Raises OtherAgent only."""
    action = entry.action
    if action is Action.ALLOW:  # no robots.txt: no preference of its own, but the other files'
        if not heard:
            return ALLOWED
        return _usage(
            entry, request, config, request_agent(request, config.user_agent, config.default_user_agent), heard
        )
    if action is not Action.PARSE:
        return _by_policy(entry, config)
    if entry.delay is not None and entry.delay.skip:
        return Verdict(
            False,
            f"{FORBIDDEN}: Crawl-delay {entry.delay.asked:g}s exceeds ROBOTSTXT_MAX_CRAWL_DELAY "
            f"({config.max_crawl_delay:g}s)",
            "robotstxt/denied/crawl_delay",
        )
    if urlparse_cached(request).path == "/robots.txt":
        return ALLOWED  # RFC 9309 2.2.2: /robots.txt itself is always allowed
    agent = request_agent(request, config.user_agent, config.default_user_agent)  # user_agent(), one call less
    rules = entry.rules
    if rules is not None and agent is not config.default_user_agent and agent != config.default_user_agent:
        rules = entry.others.get(agent) if entry.others else None
        if rules is None:
            raise OtherAgent(agent)
    try:
        if rules is not None:
            allowed = rules.allowed(request.url)
        else:
            assert entry.parser is not None
            allowed = entry.parser.allowed(request.url, agent)
    except Exception:
        logger.exception(
            "%(parser)s failed on %(url)s; the request is allowed", {"parser": config.parser_name, "url": request.url}
        )
        return PARSER_FAILED
    if not allowed:
        return DISALLOWED
    if config.usage is not None:
        return _usage(entry, request, config, agent, heard)
    return ALLOWED


def _usage(entry: RobotsEntry, request: Request, config: RobotsConfig, agent: str | bytes, heard: Heard) -> Verdict:
    """The declared purposes (ROBOTSTXT_USAGE): robots.txt's preferences, and each other file's."""
    assert config.usage is not None
    meta = request.meta
    stated: dict[str, Preference] | None = None
    for file, found in heard:
        said = file.says(found, request, config)
        if not said:
            continue
        if stated is None:
            stated = said
        else:  # a purpose two files speak for: the stricter
            stated = {**said, **{p: stricter(pref, said[p]) if p in said else pref for p, pref in stated.items()}}
    if entry.usage is None and not stated:
        # No preference here: none carried from another site's page (meta=response.meta).
        meta.pop(USAGE_META_KEY, None)
        return ALLOWED
    agent = agent.decode("latin-1") if isinstance(agent, bytes) else agent
    denied = check_request(config.usage, entry.usage, request.url, agent, meta, stated)
    if denied is None:
        return ALLOWED
    for file, found in heard:
        if found is not None and denied.source in file.sources:
            reason, stat = file.denial(found, denied)
            return Verdict(False, reason, stat, denied)
    return Verdict(False, f"{USAGE_DENIED}: {denied.reason}", f"robotstxt/usage/denied/{denied.purpose}", denied)


def _by_policy(entry: RobotsEntry, config: RobotsConfig) -> Verdict:
    """The verdict for every URL of a site whose robots.txt was not parsed."""
    if entry.action is Action.EXCLUDED:
        return EXCLUDED
    if entry.action is Action.DENY:
        return Verdict(
            False, f"{FORBIDDEN}: deny all (robots.txt answered HTTP {entry.status})", "robotstxt/denied/deny_all"
        )
    unreachable = f"{FORBIDDEN}: robots.txt unreachable ({entry.error or f'HTTP {entry.status}'})"
    if given_up_for_retry_after(entry, config):
        # The requests would have waited for the next attempt, but the server puts it later.
        if delayed_by_server(entry, config):
            cause = f"its Retry-After ({entry.retry_after:.0f}s) puts"
        else:  # the attempts after a lengthened one come later
            cause = "a Retry-After on an earlier attempt put"
        return Verdict(
            False,
            f"{unreachable} after {entry.failures} attempt(s), and {cause} the next attempt past the retry "
            "schedule's last",
            "robotstxt/denied/retry_after",
        )
    return Verdict(False, f"{unreachable} after {entry.failures} attempt(s)", "robotstxt/denied/unreachable")


def user_agent(request: Request, config: RobotsConfig) -> str:
    """The agent ``request`` obeys robots.txt as (:func:`~scrapy_robots.useragent.request_agent`)."""
    return request_agent(request, config.user_agent, config.default_user_agent)
