"""The decision after a robots.txt download, and the verdict on a request: pure
functions, tested as tables (the crawls in test_status_policy.py run the same rules
end to end)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request, Response
from scrapy.settings import Settings

from scrapy_robots.cache import RobotsEntry
from scrapy_robots.cache.entry import entry_from_record, record_of
from scrapy_robots.parsers import RFC9309Parser
from scrapy_robots.parsers.delay import SiteDelay
from scrapy_robots.policyfiles.decision import (
    REDIRECT_LOOP,
    REFUSED,
    TOO_LARGE,
    decide,
    describe,
    failure_kind,
    worth_waiting,
)
from scrapy_robots.settings.config import ONE_SHOT_SETTING, RobotsConfig
from scrapy_robots.status.policy import Action
from scrapy_robots.status.result import FetchResult
from scrapy_robots.verdict import ALLOWED, PARSER_FAILED, verdict

SITE = "https://shop.example:443"
URL = "https://shop.example/robots.txt"
NOW = 1_000_000.0
DAY = 86_400.0
RULES = b"User-agent: *\nDisallow: /private\n"


def config(**settings: object) -> RobotsConfig:
    return RobotsConfig.from_settings(Settings(settings))


def answered(status: int, body: bytes = RULES, headers: dict[str, str] | None = None) -> FetchResult:
    response = Response(URL, status=status, body=body, headers=headers)
    return FetchResult(requested_url=URL, url=URL, response=response, body=body, site=SITE)


def failed(exc: BaseException) -> FetchResult:
    return FetchResult(requested_url=URL, url=URL, error=exc, site=SITE)


def unreachable(failures: int, since: float = NOW - 60) -> RobotsEntry:
    return RobotsEntry(
        site=SITE,
        action=Action.UNREACHABLE,
        fetched_at=NOW - 1,
        expires_at=NOW - 1,
        status=503,
        failures=failures,
        unreachable_since=since,
    )


def parsed(body: bytes = RULES) -> RobotsEntry:
    return RobotsEntry(
        site=SITE,
        action=Action.PARSE,
        fetched_at=NOW - DAY,
        expires_at=NOW - 1,
        status=200,
        parser=RFC9309Parser(body),
        body=body,
    )


@pytest.mark.parametrize(
    ("result", "action", "lifetime"),
    [
        (answered(200), Action.PARSE, DAY),
        (answered(200, headers={"Cache-Control": "max-age=600"}), Action.PARSE, 600),
        (answered(200, headers={"Cache-Control": "max-age=5"}), Action.PARSE, 60),  # at least a minute
        (answered(404), Action.ALLOW, DAY),
        (answered(410), Action.ALLOW, DAY),
        (answered(401), Action.DENY, DAY),
        (answered(403), Action.DENY, DAY),
        (answered(429), Action.UNREACHABLE, 30),
        (answered(503), Action.UNREACHABLE, 30),
        (answered(302), Action.ALLOW, DAY),  # a redirect not followed: "unavailable"
        (answered(700), Action.UNREACHABLE, 30),  # outside every class: no usable answer
        (failed(ConnectionRefusedError("refused")), Action.UNREACHABLE, 30),
        (failed(IgnoreRequest("max redirections reached")), Action.ALLOW, DAY),  # the 3xx row
        (failed(IgnoreRequest("Forbidden by a proxy middleware")), Action.ALLOW, DAY),
        (failed(IgnoreRequest("Ignored response: cannot decompress, above 5120000 bytes")), Action.UNREACHABLE, 30),
    ],
)
def test_first_outcome_of_a_site(result, action, lifetime):
    entry = decide(result, None, NOW, config()).entry
    assert (entry.action, entry.expires_at - NOW) == (action, lifetime)
    assert entry.site == SITE
    assert entry.body == (RULES if action is Action.PARSE else None)
    assert entry.failures == (1 if action is Action.UNREACHABLE else 0)


def test_the_parsed_body_loses_its_bom_and_keeps_bad_bytes_as_escapes():
    latin1 = b"\xef\xbb\xbfUser-agent: *\nDisallow: /caf\xe9\n"
    entry = decide(answered(200, latin1), None, NOW, config()).entry
    assert entry.body == b"User-agent: *\nDisallow: /caf%E9\n"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ConnectionRefusedError(), "network"),
        (TimeoutError(), "network"),
        (IgnoreRequest("max redirections reached"), REDIRECT_LOOP),
        (IgnoreRequest("Cannot decompress the response"), TOO_LARGE),
        (IgnoreRequest("Offsite request"), REFUSED),
    ],
)
def test_failure_kinds(exc, kind):
    assert failure_kind(exc) == kind
    assert decide(failed(exc), None, NOW, config()).kind == kind


def test_a_redirect_loop_follows_the_3xx_row():
    loop = failed(IgnoreRequest("max redirections reached"))
    assert decide(loop, None, NOW, config(ROBOTSTXT_STATUS_POLICY={"3xx": "deny"})).entry.action is Action.DENY


def test_the_presets_and_overrides():
    assert decide(answered(403), None, NOW, config(ROBOTSTXT_STATUS_POLICY="rfc9309")).entry.action is Action.ALLOW
    assert decide(answered(503), None, NOW, config(ROBOTSTXT_STATUS_POLICY={503: "allow"})).entry.action is Action.ALLOW
    scrapy = config(ROBOTSTXT_STATUS_POLICY="scrapy")
    assert decide(answered(404), None, NOW, scrapy).entry.action is Action.PARSE
    assert decide(failed(ConnectionRefusedError()), None, NOW, scrapy).entry.action is Action.ALLOW


@pytest.mark.parametrize(("failures", "backoff"), [(1, 60), (2, 120), (3, 240), (7, 3600), (20, 3600)])
def test_unreachable_backoff_doubles_up_to_the_maximum(failures, backoff):
    entry = decide(answered(503), unreachable(failures), NOW, config()).entry
    assert entry.failures == failures + 1
    assert entry.expires_at - NOW == backoff
    assert entry.unreachable_since == NOW - 60  # the outage's start is carried on


def test_worth_waiting_while_within_the_retries():
    settings = config(ROBOTSTXT_UNREACHABLE_RETRY_TIMES=2)
    assert [worth_waiting(decide(answered(503), unreachable(n), NOW, settings).entry, settings) for n in range(4)] == [
        True,
        True,
        False,
        False,
    ]


def test_a_stale_copy_is_kept_while_unreachable():
    previous = parsed()
    decision = decide(answered(503), previous, NOW, config())
    entry = decision.entry
    assert decision.stale
    assert (entry.action, entry.parser, entry.body, entry.failures) == (Action.PARSE, previous.parser, RULES, 1)
    assert entry.expires_at - NOW == 30  # tried again soon; the rules meanwhile are the last good ones


def test_after_30_days_unreachable_the_site_is_allowed():
    decision = decide(answered(503), unreachable(40, since=NOW - 31 * DAY), NOW, config())
    assert decision.entry.action is Action.ALLOW
    assert not decision.stale
    assert decision.entry.expires_at - NOW == DAY
    level, message = describe(decision, answered(503), 0, config())
    assert "ROBOTSTXT_UNREACHABLE_ALLOW_AFTER" in message and "previous copy" not in message


@pytest.mark.parametrize(
    ("result", "previous", "waiting", "level", "words"),
    [
        (answered(200), None, 0, logging.INFO, "HTTP 200 -> parse, 33 bytes, parser RFC9309Parser"),
        (answered(404), None, 0, logging.INFO, "HTTP 404 -> allow"),
        (answered(503), None, 3, logging.WARNING, "attempt 1 of 4: 3 request(s) wait, next attempt in 30s"),
        (answered(503), unreachable(1), 3, logging.INFO, "attempt 2 of 4"),
        (answered(503), unreachable(4), 2, logging.WARNING, "attempt 5: 2 waiting request(s) ignored"),
        (answered(503), unreachable(4), 0, logging.INFO, "attempt 5: 0 waiting request(s) ignored"),
        (answered(503), parsed(), 0, logging.INFO, "(previous copy kept), attempt 1, next in 30s"),
        (failed(ConnectionRefusedError("no")), None, 0, logging.WARNING, "ConnectionRefusedError: no -> unreachable"),
        (failed(IgnoreRequest("Offsite")), None, 0, logging.INFO, "(a downloader middleware refused"),
    ],
)
def test_one_log_line_per_outcome(result, previous, waiting, level, words):
    decision = decide(result, previous, NOW, config())
    if decision.entry.action is Action.PARSE and decision.entry.parser is None:
        decision.entry.parser = RFC9309Parser(decision.entry.body or b"")
    got_level, message = describe(decision, result, waiting, config())
    assert message.startswith(f"robots.txt for {SITE}: ")
    assert words in message
    assert got_level == level


def test_a_redirect_is_named_in_the_line():
    result = answered(404)
    result.url = "https://www.shop.example/robots.txt"
    assert describe(decide(result, None, NOW, config()), result, 0, config())[1].endswith(
        "(redirected to https://www.shop.example/robots.txt)"
    )


# -- the verdict ---------------------------------------------------------------------


def entry_of(action: Action, **fields: Any) -> RobotsEntry:
    return RobotsEntry(site=SITE, action=action, fetched_at=NOW, expires_at=NOW + DAY, **fields)


@pytest.mark.parametrize(
    ("entry", "url", "allowed", "stat"),
    [
        (entry_of(Action.ALLOW), "/private", True, ""),
        (entry_of(Action.DENY, status=403), "/", False, "robotstxt/denied/deny_all"),
        (entry_of(Action.UNREACHABLE, status=503, failures=2), "/", False, "robotstxt/denied/unreachable"),
        (entry_of(Action.EXCLUDED), "/", False, "robotstxt/denied/excluded"),
        (entry_of(Action.PARSE, parser=RFC9309Parser(RULES)), "/public", True, ""),
        (entry_of(Action.PARSE, parser=RFC9309Parser(RULES)), "/private/x", False, "robotstxt/forbidden"),
        # RFC 9309 2.2.2: /robots.txt itself is always allowed, whatever the rules.
        (entry_of(Action.PARSE, parser=RFC9309Parser(b"User-agent: *\nDisallow: /\n")), "/robots.txt", True, ""),
        (
            entry_of(Action.PARSE, parser=RFC9309Parser(RULES), delay=SiteDelay(120, None, skip=True)),
            "/public",
            False,
            "robotstxt/denied/crawl_delay",
        ),
    ],
)
def test_verdict_table(entry, url, allowed, stat):
    answer = verdict(entry, Request(f"https://shop.example{url}"), config())
    assert (answer.allowed, answer.stat) == (allowed, stat)
    if not allowed:
        assert answer.reason.startswith("Forbidden by robots.txt")


def test_the_reason_names_the_status_and_attempts():
    answer = verdict(entry_of(Action.UNREACHABLE, status=503, failures=2), Request("https://shop.example/"), config())
    assert answer.reason == "Forbidden by robots.txt: robots.txt unreachable (HTTP 503) after 2 attempt(s)"


class _Broken(RFC9309Parser):
    def allowed(self, url, user_agent=None):
        raise RuntimeError("boom")


def test_a_parser_that_raises_allows_and_is_counted(caplog):
    entry = entry_of(Action.PARSE, parser=_Broken(RULES))
    with caplog.at_level(logging.ERROR):
        answer = verdict(entry, Request("https://shop.example/private"), config())
    assert answer is PARSER_FAILED and answer.allowed and answer.stat == "robotstxt/parser_error"
    assert "failed on https://shop.example/private; the request is allowed" in caplog.text


def test_the_agent_obeyed_is_robotstxt_user_agent_then_the_request_s():
    rules = RFC9309Parser(b"User-agent: FooBot\nDisallow: /\n")
    entry = entry_of(Action.PARSE, parser=rules)
    foo = Request("https://shop.example/x", headers={"User-Agent": "FooBot/1.0"})
    assert not verdict(entry, foo, config()).allowed
    assert verdict(entry, foo, config(ROBOTSTXT_USER_AGENT="BarBot")).allowed
    assert verdict(entry, Request("https://shop.example/x"), config(USER_AGENT="BarBot/2")) is ALLOWED


# -- Retry-After on an unreachable robots.txt (issue #22) -----------------------------


def busy(status: int = 503, retry_after: str | None = None) -> FetchResult:
    return answered(status, b"busy", {"Retry-After": retry_after} if retry_after is not None else None)


@pytest.mark.parametrize(
    ("result", "previous", "backoff", "asked", "waits"),
    [
        (busy(503, "120"), None, 120, 120, True),  # past the next 30 s, within the schedule's 210 s: waited for
        (busy(503, "300"), None, 300, 300, False),  # past the schedule's last attempt (30 + 60 + 120 s): not
        (busy(429, "Mon, 12 Jan 1970 14:46:40 GMT"), None, 3600, 3600, False),  # NOW + 1 h, an HTTP date
        (busy(503, "10"), None, 30, 10, True),  # sooner than the schedule: the schedule's
        (busy(503, "Thu, 01 Jan 1970 00:00:00 GMT"), None, 30, 0, True),  # in the past: now
        (busy(503, "86400"), None, 3600, 86400, False),  # bounded by ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY
        (busy(503, "100"), unreachable(2), 120, 100, True),  # attempt 3: the schedule's 120 s
        (busy(503, "9000"), unreachable(8), 3600, 9000, False),  # the schedule at the bound: not lengthened
        (busy(503, "soon"), None, 30, None, True),  # malformed: ignored
        (busy(500, "120"), None, 30, None, True),  # only 429 and 503 ask to wait
        (busy(503), None, 30, None, True),
    ],
)
def test_retry_after_sets_the_next_attempt_not_before_the_schedule(result, previous, backoff, asked, waits):
    settings = config()
    entry = decide(result, previous, NOW, settings).entry
    assert entry.expires_at - NOW == backoff
    assert entry.retry_after == asked
    assert worth_waiting(entry, settings) is (waits and entry.failures <= settings.retry_times)


def test_a_malformed_retry_after_is_said_in_the_line():
    decision = decide(busy(503, "in a while"), None, NOW, config())
    assert decision.bad_retry_after == "in a while"
    level, message = describe(decision, busy(503, "in a while"), 2, config())
    assert "2 request(s) wait, next attempt in 30s (ROBOTSTXT_UNREACHABLE_RETRY_DELAY" in message, message
    assert message.endswith("; Retry-After 'in a while' ignored (neither seconds nor an HTTP date)"), message
    assert level == logging.WARNING


@pytest.mark.parametrize(
    ("settings", "previous", "retry_after", "waiting", "level", "words"),
    [
        (
            {},
            None,
            "300",
            3,
            logging.WARNING,
            "HTTP 503 -> unreachable, attempt 1 of 4: next attempt in 300s (Retry-After), past the schedule's last "
            "attempt (in 3m30s: ROBOTSTXT_UNREACHABLE_RETRY_DELAY, ROBOTSTXT_UNREACHABLE_RETRY_TIMES): 3 waiting "
            "request(s) ignored rather than held; the site is tried again then if a request needs it",
        ),
        (  # within the schedule's time: the requests wait for the server's
            {},
            None,
            "120",
            3,
            logging.WARNING,
            "HTTP 503 -> unreachable, attempt 1 of 4: 3 request(s) wait, next attempt in 120s (Retry-After); they "
            "hold the crawl open until about",
        ),
        (  # the previous attempt (a record without its schedule's end) came on time: 60 + 120 s remain
            {},
            unreachable(1),
            "86400",
            0,
            logging.INFO,
            "attempt 2 of 4: next attempt in 3600s (Retry-After asks 86400s, bounded by "
            "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY), past the schedule's last attempt (in 3m:",
        ),
        (  # past the retries: the requests were ignored anyway; the line says when the next attempt is
            {},
            unreachable(4),
            "600",
            2,
            logging.WARNING,
            "attempt 5: 2 waiting request(s) ignored; the site is tried again in 600s (Retry-After) if a request needs",
        ),
        (  # scrapy robots: a one-shot run says what a crawl would do
            {"ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 0, ONE_SHOT_SETTING: True},
            None,
            "120",
            1,
            logging.WARNING,
            "attempt 1: 1 waiting request(s) ignored; this one-shot run does not try the site again; a crawl would "
            "in 120s (Retry-After)",
        ),
        (
            {},
            parsed(),
            "120",
            0,
            logging.INFO,
            "HTTP 503 -> parse (previous copy kept), attempt 1, next in 120s (Retry-After)",
        ),
    ],
)
def test_the_line_says_the_delay_came_from_the_server(settings, previous, retry_after, waiting, level, words):
    result = busy(503, retry_after)
    decision = decide(result, previous, NOW, config(**settings))
    got_level, message = describe(decision, result, waiting, config(**settings))
    assert words in message, message
    assert got_level == level


def test_the_reason_names_the_retry_after_while_the_requests_would_have_waited():
    settings = config()
    request = Request("https://shop.example/")
    first = decide(busy(503, "300"), None, NOW, settings).entry
    answer = verdict(first, request, settings)
    assert answer.stat == "robotstxt/denied/retry_after"
    assert answer.reason == (
        "Forbidden by robots.txt: robots.txt unreachable (HTTP 503) after 1 attempt(s), and its Retry-After (300s) "
        "puts the next attempt past the retry schedule's last"
    )
    # Within the schedule's time (30 + 60 + 120 s from the first failure), they wait for it.
    assert worth_waiting(decide(busy(503, "120"), None, NOW, settings).entry, settings)
    # Counted from the first failure: at attempt 3 (90 s in), 121 s is past the last attempt.
    third = decide(busy(503, "121"), unreachable(2, since=NOW - 90), NOW, settings).entry
    assert verdict(third, request, settings).stat == "robotstxt/denied/retry_after"
    assert worth_waiting(decide(busy(503, "120"), unreachable(2, since=NOW - 90), NOW, settings).entry, settings)
    # Past the retries, the requests are ignored for that: the reason is the usual one.
    fifth = decide(busy(503, "120"), unreachable(4), NOW, settings).entry
    assert verdict(fifth, request, settings).stat == "robotstxt/denied/unreachable"


def test_after_30_days_a_retry_after_is_no_longer_kept():
    entry = decide(busy(503, "120"), unreachable(40, since=NOW - 31 * DAY), NOW, config()).entry
    assert (entry.action, entry.retry_after, entry.expires_at - NOW) == (Action.ALLOW, None, DAY)


def _attempts(answers: list[Response | FetchResult], late: float, settings: RobotsConfig) -> list[RobotsEntry]:
    """An unreachable site's entries, attempt after attempt, each coming ``late`` seconds
    after it was due (a download that times out, a crawl that needed the site later)."""
    entries, now, previous = [], NOW, None
    for result in answers:
        previous = decide(result, previous, now, settings).entry
        entries.append(previous)
        now = previous.expires_at + late
    return entries


@pytest.mark.parametrize("late", [0, 0.25, 30])
def test_the_schedules_end_moves_with_the_attempts_downloads_only(late):
    # No Retry-After: however late each attempt comes, the requests wait for every retry.
    settings = config()
    entries = _attempts([busy(503)] * 4, late, settings)
    assert [worth_waiting(entry, settings) for entry in entries] == [True, True, True, False]
    # The end the first line promised (30 + 60 + 120 s) moves by the attempts' lateness alone.
    assert [entry.schedule_end - NOW for entry in entries[:3]] == [210, 210 + late, 210 + 2 * late]


def test_a_retry_after_on_the_first_attempt_does_not_move_the_schedules_end():
    # 150 s asked (within the 210 s): the second attempt at 150 s, the third 60 s later
    # (210 s: still on time), the fourth would come 120 s after that (330 s): not waited for.
    settings = config()
    entries = _attempts([busy(503, "150"), busy(503), busy(503)], 0, settings)
    assert [entry.schedule_end - NOW for entry in entries] == [210, 210, 210]
    assert [worth_waiting(entry, settings) for entry in entries] == [True, True, False]
    answer = verdict(entries[2], Request("https://shop.example/"), settings)
    assert (answer.allowed, answer.stat) == (False, "robotstxt/denied/retry_after")
    assert answer.reason.endswith(
        "after 3 attempt(s), and a Retry-After on an earlier attempt put the next attempt past the retry "
        "schedule's last"
    )
    # The record keeps the end: a resumed crawl or another crawler of a fleet holds the same bound.
    assert entry_from_record(record_of(entries[1]), None).schedule_end == entries[1].schedule_end
