"""A robots.txt download becomes what the crawl knows of the site: pure functions.

:func:`decide` turns a fetch result (a response or the exception that ended it), the
site's previous entry and the time into the new entry: the status policy
(:class:`~scrapy_robots.status.policy.StatusPolicy`), the failure kinds it cannot see, the
unreachable backoff (lengthened by a server's Retry-After: :mod:`scrapy_robots.policyfiles.retry_after`),
RFC 9309's 30-day rule and the stale copy kept meanwhile.
:func:`describe` words the one log line per decision, :func:`fetch_stats` names the stats
it counts. None of them parses, logs nor counts: the caller (:mod:`scrapy_robots.policyfiles.book`)
does, and the parsing is :mod:`scrapy_robots.policyfiles.reader`'s.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from scrapy_robots.cache.entry import RobotsEntry, lifetime_from_headers, validators_from
from scrapy_robots.decoding import normalize_robotstxt, starts_as_html
from scrapy_robots.policyfiles.retry_after import (
    EARLIER,
    delay_source,
    delayed_by_server,
    given_up_for_retry_after,
    next_delay,
    next_schedule_end,
    schedule_ends,
)
from scrapy_robots.status.policy import Action
from scrapy_robots.status.result import DECOMPRESSED_FACTOR
from scrapy_robots.status.retry_after import read_retry_after

if TYPE_CHECKING:
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.status.result import FetchResult

#: The answer to a conditional request whose stored copy is current (RFC 9110 15.4.5).
NOT_MODIFIED = 304

#: How a robots.txt download failed (:func:`failure_kind`).
NETWORK, REDIRECT_LOOP, REFUSED, TOO_LARGE = "network", "redirect_loop", "refused", "too_large"


def failure_kind(exc: BaseException | None) -> str:
    """What an exception from the robots.txt download means. ``IgnoreRequest`` is
    raised by downloader middlewares for very different reasons: Scrapy's redirect
    middleware giving up, its decompression bound (a gzip bomb), or a refusal."""
    if not isinstance(exc, IgnoreRequest):
        return NETWORK
    message = str(exc)
    if "max redirections" in message:
        return REDIRECT_LOOP
    if "decompress" in message.lower() or "Decompression" in type(exc.__cause__).__name__:
        return TOO_LARGE
    return REFUSED


@dataclass
class Decision:
    entry: RobotsEntry
    kind: str | None = None  #: :func:`failure_kind` of a failed download; None for a response
    stale: bool = False  #: unreachable, and the previous rules kept in use (RFC 9309 2.4)
    html: bool = False  #: the body parsed is an HTML page (a server answering every URL with one)
    bad_retry_after: str | None = None  #: a malformed Retry-After, ignored (the schedule applies)
    #: a 304 to the refresh's validators: the previous copy kept, its rules with it, its time renewed
    revalidated: bool = False

    @property
    def kept(self) -> bool:
        """The previous copy's rules are kept (a stale copy, a revalidated one): nothing to read."""
        return self.stale or self.revalidated


def decide(result: FetchResult, previous: RobotsEntry | None, now: float, config: RobotsConfig) -> Decision:
    """The site's new entry after ``result``. A body to parse comes back as action
    ``parse`` with ``body`` set and no parser yet; a stale copy keeps the previous one's."""
    policy = config.status_policy
    response = result.response
    kind = None
    if response is None:
        kind = failure_kind(result.error)
        if kind == REDIRECT_LOOP:
            # Scrapy's RedirectMiddleware gave up (REDIRECT_MAX_TIMES): RFC 9309
            # 2.3.1.2 treats an endless redirect like the 3xx it is.
            action = policy.action_for_redirect_loop()
        elif kind == REFUSED:
            # Another downloader middleware refused the robots.txt request: that is
            # no network failure. As Scrapy's middleware does, the site is allowed.
            action = Action.ALLOW
        else:  # NETWORK, TOO_LARGE (a gzip bomb): no usable answer
            action = policy.action_for_failure()
        status, error = None, _error_text(result.error)
        if kind == TOO_LARGE:
            # Scrapy's text names DOWNLOAD_MAXSIZE; the bound is ROBOTSTXT_MAXSIZE's (policyfiles/fetch.py).
            error = (
                f"the body inflates past {config.maxsize * DECOMPRESSED_FACTOR} bytes ({DECOMPRESSED_FACTOR} x "
                f"ROBOTSTXT_MAXSIZE = {config.maxsize}) when decompressed: a gzip bomb, not read further"
            )
    elif response.status == NOT_MODIFIED:
        if result.conditional and previous is not None:
            return _revalidated(result, previous, now, config)
        # A 304 to a request that sent no validators (a server's or a cache's mistake) says
        # nothing of the file: no usable answer, as a failure is. Never the 3xx row, which
        # is RFC 9309's for a redirect not followed.
        action, status = policy.action_for_failure(), response.status
        error = "HTTP 304 (Not Modified) to a request that sent no validators"
    else:
        action, status, error = policy.action_for_status(response.status), response.status, None
    entry = RobotsEntry(
        site=result.site,
        action=action,
        status=status,
        url=result.url,
        error=error,
        fetched_at=now,
        expires_at=now + config.cache_ttl,
        size=len(result.body),
        truncated=result.truncated,
        redirects=result.redirects,
        # Kept to answer the spider's own robots.txt request (policyfiles/serving.py).
        content_type=None if response is None else (response.headers.get(b"Content-Type") or b"").decode("latin-1"),
    )
    if action is Action.UNREACHABLE:
        return _unreachable(entry, previous, now, config, kind, *read_retry_after(response, now))
    if response is not None:
        entry.expires_at = now + lifetime_from_headers(response.headers, config.cache_ttl, now)
        if action is Action.PARSE:
            # Kept for the refresh to send back (conditional_headers).
            entry.etag, entry.last_modified = validators_from(response.headers)
            entry.body = normalize_robotstxt(result.body, response.headers.get(b"Content-Type"))
            return Decision(entry, kind, html=starts_as_html(entry.body))
    return Decision(entry, kind)


def _revalidated(result: FetchResult, previous: RobotsEntry, now: float, config: RobotsConfig) -> Decision:
    """A 304: the previous copy is current (RFC 9111 4.3.4). It keeps its body, its rules,
    its version and its status; its lifetime starts again, as the 304's ``Cache-Control`` or
    ``Expires`` say (else ``ROBOTSTXT_CACHE_TTL``), and the validators the 304 carries
    replace the stored ones. An unreachable streak it ends is over."""
    response = result.response
    assert response is not None
    etag, last_modified = validators_from(response.headers)
    entry = replace(
        previous,
        fetched_at=now,
        expires_at=now + lifetime_from_headers(response.headers, config.cache_ttl, now),
        url=result.url,
        redirects=result.redirects,
        error=None,
        failures=0,
        unreachable_since=None,
        retry_after=None,
        schedule_end=None,
        etag=etag or previous.etag,
        last_modified=last_modified or previous.last_modified,
    )
    return Decision(entry, revalidated=True)


def _unreachable(
    entry: RobotsEntry,
    previous: RobotsEntry | None,
    now: float,
    config: RobotsConfig,
    kind: str | None,
    retry_after: float | None,
    bad_retry_after: str | None,
) -> Decision:
    stale = previous is not None and previous.action is not Action.UNREACHABLE
    failures = (previous.failures if previous is not None else 0) + 1
    since = previous.unreachable_since if previous is not None and previous.unreachable_since else now
    entry.failures, entry.unreachable_since, entry.retry_after = failures, since, retry_after
    entry.schedule_end = next_schedule_end(previous, now, config)
    # Not before the server's Retry-After, nor before the schedule's next attempt.
    entry.expires_at = now + next_delay(failures, config, retry_after)
    if now - since >= config.allow_after:
        # RFC 9309 2.3.1.4: after 30 days unreachable, crawl as if there were no robots.txt.
        entry.action, entry.retry_after, entry.schedule_end = Action.ALLOW, None, None
        entry.expires_at = now + config.cache_ttl
        return Decision(entry, kind)
    if stale:
        # RFC 9309 2.4: a cached copy may outlive 24 hours while robots.txt is unreachable.
        assert previous is not None
        entry.action, entry.parser, entry.status = previous.action, previous.parser, previous.status
        entry.body, entry.delay, entry.usage = previous.body, previous.delay, previous.usage
        entry.body_dropped = previous.body_dropped
        entry.rules, entry.others, entry.agents = previous.rules, previous.others, previous.agents
        entry.content_type = previous.content_type
        entry.etag, entry.last_modified = previous.etag, previous.last_modified
        entry.version, entry.version_fetched_at = previous.version, previous.version_fetched_at
    return Decision(entry, kind, stale=stale, bad_retry_after=bad_retry_after)


def describe_restored(
    entry: RobotsEntry, now: float, config: RobotsConfig, shared: str | None = None, during: bool = False
) -> str:
    """The INFO line of a site whose entry came from the storage, not from this crawl's
    download: fetched before it began, or by another crawler of a fleet (``shared``: "the
    fleet"; ``during``: during this crawl). What the downloading crawl's line said, and
    the schedule it keeps."""
    outcome = f"HTTP {entry.status}" if entry.status is not None else entry.error
    details = ""
    if entry.action is Action.UNREACHABLE:
        left = max(0.0, entry.expires_at - now)
        source = ", Retry-After" if delayed_by_server(entry, config) else ""
        details = f", attempt {entry.failures}, next attempt in {_duration(left)} (stored schedule{source})"
    elif entry.action is Action.PARSE:
        details = f", {entry.size} bytes, parser {config.parser_name}"
        details += _delay_text(entry)
    age = _duration(max(0.0, now - entry.fetched_at))
    if shared is None:
        origin = f"restored from storage (fetched {age} ago)"
    else:
        origin = f"from {shared} (fetched{' by another crawler' if during else ''} {age} ago)"
    return f"robots.txt for {entry.site} {origin}: {outcome} -> {entry.action.value}{details}"


def _delay_text(entry: RobotsEntry) -> str:
    """The site's line on its delay: the one applied (and the one asked, when clamped), or
    none, for a site skipped (a WARNING line follows, naming ROBOTSTXT_MAX_CRAWL_DELAY)."""
    delay = entry.delay
    if delay is None:
        return ""
    if delay.applied is None:
        return f", crawl-delay {delay.asked:g}s above the maximum: site skipped"
    asked = f" (asked {delay.asked:g}s)" if delay.applied != delay.asked else ""
    return f", crawl-delay {delay.applied:g}s{asked}"


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s".replace(".0s", "s")
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s" if seconds else f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _clock(at: float, entry: RobotsEntry) -> str:
    """A time of the crawl's, as the clock and the time from the line's outcome."""
    return f"{time.strftime('%H:%M:%S', time.localtime(at))} ({_duration(max(0.0, at - entry.fetched_at))})"


def _error_text(exc: BaseException | None) -> str:
    name = type(exc).__name__
    return f"{name}: {exc}" if str(exc) else name


def worth_waiting(entry: RobotsEntry, config: RobotsConfig) -> bool:
    """An unreachable site's requests wait while its attempts are within
    ROBOTSTXT_UNREACHABLE_RETRY_TIMES retries, for an attempt within the schedule's time
    (a server's Retry-After may set it later, not past the schedule's last attempt);
    after that they are ignored at once (until the next attempt, which the next request
    to need the site makes)."""
    return (
        entry.action is Action.UNREACHABLE
        and entry.failures <= config.retry_times
        and not given_up_for_retry_after(entry, config)
    )


def describe(decision: Decision, result: FetchResult, waiting: int, config: RobotsConfig) -> tuple[int, str]:
    """The level and the text of the one line logged per robots.txt outcome: INFO for
    a policy decision, WARNING for what keeps a site's requests out for want of an
    answer (a network error, a gzip bomb, an unreachable site: its first attempt, and
    when its waiting requests give up)."""
    entry = decision.entry
    response = result.response
    outcome = f"HTTP {response.status}" if response is not None else entry.error
    level = logging.INFO
    details = ""
    if entry.failures and entry.action is not Action.UNREACHABLE:
        backoff = entry.expires_at - entry.fetched_at
        if decision.stale:
            source = delay_source(entry, config)  # " (Retry-After)" when the server set the delay
            details = f" (previous copy kept), attempt {entry.failures}, next in {backoff:.0f}s{source}"
        else:
            details = (
                f" after {entry.failures} attempt(s) since the site became unreachable "
                "(ROBOTSTXT_UNREACHABLE_ALLOW_AFTER)"
            )
    elif entry.failures:
        level, details = _attempts(entry, waiting, config)
    elif decision.revalidated:
        details = f" (not modified: the copy kept, {entry.size} bytes, not parsed again){_delay_text(entry)}"
    elif entry.action is Action.PARSE:
        details = f", {entry.size} bytes, parser {config.parser_name}"
        if entry.truncated:
            level = logging.WARNING  # a rule may be lost
            details += f"; cut at ROBOTSTXT_MAXSIZE ({config.maxsize} bytes): rules past it are not read"
        if decision.html:
            level = logging.WARNING
            details += "; an HTML page, not a robots.txt: parsers read no rule from it"
        details += _delay_text(entry)
    elif decision.kind == REFUSED:
        details = " (a downloader middleware refused the robots.txt request)"
    elif response is None:
        level = logging.WARNING  # a failure the policy turned into allow or deny
    if decision.bad_retry_after is not None:
        details += f"; Retry-After {decision.bad_retry_after!r} ignored (neither seconds nor an HTTP date)"
    redirected = f" (redirected to {result.url})" if result.url != result.requested_url else ""
    return level, f"robots.txt for {entry.site}: {outcome} -> {entry.action.value}{details}{redirected}"


_SCHEDULE = " (ROBOTSTXT_UNREACHABLE_RETRY_DELAY, ROBOTSTXT_UNREACHABLE_RETRY_TIMES)"


def _attempts(entry: RobotsEntry, waiting: int, config: RobotsConfig) -> tuple[int, str]:
    """What an unreachable site's line says of its attempts and of the waiting requests."""
    backoff = entry.expires_at - entry.fetched_at
    source = delay_source(entry, config)  # " (Retry-After)" when the server set the delay
    if worth_waiting(entry, config):
        # The waiting requests keep a finished crawl open until the last attempt: a time
        # that only the attempts' own downloads move (not a Retry-After). The schedule's
        # time holds for a site that answers at once; one that hangs spends up to
        # ROBOTSTXT_TIMEOUT on each attempt left, the last one's included: the bound.
        ends = schedule_ends(entry, config)
        left = config.retry_times + 1 - entry.failures
        latest = ends + left * config.timeout
        return logging.WARNING if entry.failures == 1 else logging.INFO, (
            f", attempt {entry.failures} of {config.retry_times + 1}: {waiting} request(s) wait, "
            f"next attempt in {backoff:.0f}s{source or _SCHEDULE}; "
            f"they hold the crawl open until about {_clock(ends, entry)}, at the latest {_clock(latest, entry)} "
            f"if each of the {left} attempt(s) left takes its ROBOTSTXT_TIMEOUT ({config.timeout:g}s)"
        )
    # scrapy robots: a one-shot run, nothing will ask again
    one_shot = "this one-shot run does not try the site again" if config.one_shot else ""
    if given_up_for_retry_after(entry, config):
        # The server asks for longer than the schedule would hold the requests: not held.
        ends = _duration(max(0.0, schedule_ends(entry, config) - entry.fetched_at))
        return logging.WARNING if waiting or entry.failures == 1 else logging.INFO, (
            f", attempt {entry.failures} of {config.retry_times + 1}: next attempt in {backoff:.0f}s"
            f"{source or EARLIER}, past the schedule's last attempt (in {ends}: ROBOTSTXT_UNREACHABLE_RETRY_DELAY, "
            f"ROBOTSTXT_UNREACHABLE_RETRY_TIMES): {waiting} waiting request(s) ignored rather than held; "
            f"{one_shot or 'the site is tried again then if a request needs it'}"
        )
    later = one_shot or f"the site is tried again in {backoff:.0f}s{source} if a request needs it"
    if one_shot and source:
        later += f"; a crawl would in {backoff:.0f}s{source}"
    return logging.WARNING if waiting else logging.INFO, (
        f", attempt {entry.failures}: {waiting} waiting request(s) ignored; {later}"
    )


def fetch_stats(decision: Decision, result: FetchResult, config: RobotsConfig) -> list[str]:
    """The stats a robots.txt download counts, besides its policy (the caller counts them)."""
    stats = []
    if result.response is None:
        stats.append(f"robotstxt/exception_count/{type(result.error)}")
        if decision.kind == REFUSED:
            stats.append("robotstxt/fetch_refused")
    else:
        stats.append("robotstxt/response_count")
        stats.append(f"robotstxt/response_status_count/{result.response.status}")
    if decision.stale:
        stats.append("robotstxt/cache/stale_used")
    elif decision.entry.action is Action.PARSE and result.truncated:
        stats.append("robotstxt/truncated")
    if decision.html:
        stats.append("robotstxt/html_page")
    if delayed_by_server(decision.entry, config):
        stats.append("robotstxt/unreachable/retry_after")
    if decision.bad_retry_after is not None:
        stats.append("robotstxt/unreachable/retry_after_malformed")
    return stats
