"""The page-level backoff's rules (scrapy_robots.pace.backoff_rules), as tables: the pause a
throttling answer asks, the floor it raises, the steps back, the words of its log line.
Real crawls are in test_backoff.py."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from scrapy_robots.pace.backoff_rules import MIN_DELAY, SLOWED_DOWN, Backoff, slot_text, slowed_down
from scrapy_robots.settings.parts import BackoffConfig

WALL = 1_800_000_000.0  # time.time() of the answers
KEY = "shop.example"


def backoff(draw: float = 0.0, **settings) -> Backoff:
    return Backoff(BackoffConfig.from_settings(Settings(settings)), draw=lambda: draw)


@pytest.mark.parametrize(
    ("status", "retry_after", "expected"),
    [
        (429, None, True),
        (429, b"5", True),
        (503, b"5", True),
        (503, None, False),  # an ordinary server error: RetryMiddleware's
        (500, b"5", False),
        (200, b"5", False),
    ],
)
def test_what_throttles(status, retry_after, expected):
    assert backoff().throttles(status, retry_after) is expected


def test_the_statuses_are_a_setting():
    mine = backoff(ROBOTSTXT_BACKOFF_HTTP_CODES=[429, 502])
    assert mine.throttles(502, b"1") and not mine.throttles(503, b"1")
    assert not backoff(ROBOTSTXT_BACKOFF_HTTP_CODES=[]).throttles(429, None)


@pytest.mark.parametrize(
    ("value", "seconds", "asked"),
    [
        (b"5", 5, 5),
        (b"Thu, 15 Jan 2027 08:00:30 GMT", 30, 30),  # an HTTP date, 30 s after WALL
        (b"86400", 600, 86400),  # bounded by ROBOTSTXT_BACKOFF_MAX_PAUSE
        (b"0", 0, 0),
        (b"Thu, 01 Jan 2026 00:00:00 GMT", 0, 0),  # a date in the past: now
        (b"soon", 5, None),  # malformed: as without the header
        (b"-1", 5, None),
        (b"1.5", 5, None),
    ],
)
def test_the_pause_is_what_the_server_asked_within_the_bound(value, seconds, asked):
    wall = 1_800_000_000.0 if b"GMT" not in value else _wall_before(value, 30)
    pause = backoff().throttled(KEY, 0.0, value, sent=99.0, now=100.0, wall=wall)
    assert (pause.seconds, pause.asked) == (pytest.approx(seconds, abs=1e-6), asked)
    assert pause.until == pytest.approx(100.0 + seconds)


def _wall_before(value: bytes, seconds: float) -> float:
    from email.utils import parsedate_to_datetime

    when = parsedate_to_datetime(value.decode()).timestamp()
    return when - seconds if when > WALL else WALL


def test_without_the_header_the_pause_doubles_with_each_throttle_and_a_jitter_only_lengthens_it():
    steady = backoff(draw=0.0)
    pauses = []
    now = 100.0
    for _ in range(5):
        pause = steady.throttled(KEY, 0.0, None, sent=now, now=now + 0.1, wall=WALL)
        pauses.append(pause.seconds)
        now = pause.until + 1
    assert pauses == [5, 10, 20, 40, 80]
    jittered = backoff(draw=1.0).throttled(KEY, 0.0, None, sent=0, now=1, wall=WALL)
    assert jittered.seconds == 5 * 1.25
    capped = backoff(ROBOTSTXT_BACKOFF_MAX_PAUSE=30)
    for _ in range(4):
        last = capped.throttled(KEY, 0.0, None, sent=now, now=now + 0.1, wall=WALL)
        now = last.until + 1
    assert last.seconds == 30


def test_the_floor_doubles_once_per_event_and_comes_back_in_equal_steps():
    rules = backoff(ROBOTSTXT_BACKOFF_RECOVERY=4)
    # Eight requests sent together at t=10 are throttled together: one event.
    first = rules.throttled(KEY, 0.5, b"3", sent=10.0, now=10.2, wall=WALL)
    assert first.first and first.floor == MIN_DELAY * 2
    for _ in range(7):
        again = rules.throttled(KEY, 0.5, b"3", sent=10.0, now=10.3, wall=WALL)
        assert not again.first and again.floor == 2.0
    # An answer to a request sent before the throttle changes nothing.
    assert rules.answered(KEY, 0.5, sent=10.0) == 2.0
    # After the pause: (2.0 - 0.5) / 4 per answer, back to the configured pace.
    floors = [rules.answered(KEY, 0.5, sent=14.0 + i) for i in range(4)]
    assert floors == [pytest.approx(1.625), pytest.approx(1.25), pytest.approx(0.875), None]
    assert rules.floor(KEY) is None and len(rules) == 0


def test_a_second_event_doubles_the_floor_again_from_where_it_is():
    rules = backoff(ROBOTSTXT_BACKOFF_RECOVERY=4)
    rules.throttled(KEY, 3.0, None, sent=0.0, now=0.1, wall=WALL)  # Crawl-delay 3: floor 6
    assert rules.floor(KEY) == 6.0
    rules.answered(KEY, 3.0, sent=10.0)  # 6 - 0.75
    second = rules.throttled(KEY, 3.0, None, sent=11.0, now=11.1, wall=WALL)
    assert second.floor == pytest.approx(5.25 * 2)
    assert second.seconds == 5.0  # the answer between reset the consecutive count


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("ROBOTSTXT_BACKOFF_PAUSE", "-1", "ROBOTSTXT_BACKOFF_PAUSE must be a finite number >= 0"),
        ("ROBOTSTXT_BACKOFF_MAX_PAUSE", "forever", "ROBOTSTXT_BACKOFF_MAX_PAUSE must be a number"),
        ("ROBOTSTXT_BACKOFF_FACTOR", 0.5, "ROBOTSTXT_BACKOFF_FACTOR must be a finite number >= 1"),
        ("ROBOTSTXT_BACKOFF_RECOVERY", 2.5, "ROBOTSTXT_BACKOFF_RECOVERY must be a whole number"),
        ("ROBOTSTXT_BACKOFF_HTTP_CODES", ["429", "x"], "ROBOTSTXT_BACKOFF_HTTP_CODES must list HTTP statuses"),
        ("ROBOTSTXT_BACKOFF_HTTP_CODES", [4290], "ROBOTSTXT_BACKOFF_HTTP_CODES must list HTTP statuses"),
        ("ROBOTSTXT_BACKOFF", "yes", "ROBOTSTXT_BACKOFF"),
    ],
)
def test_a_bad_setting_is_a_clear_error(name, value, words):
    with pytest.raises(ValueError, match=words):
        BackoffConfig.from_settings(Settings({name: value}))


def _line(pause, retry_after: bytes | None = b"30") -> str:
    slot = slot_text(KEY, KEY, "is paused")
    return SLOWED_DOWN % slowed_down("https://shop.example:443", 429, pause, retry_after, slot)


@pytest.mark.parametrize(
    ("delay", "was", "then"),
    [
        (0.2, "0.2s", "2s"),  # from MIN_DELAY: 1 s x 2
        (2, "2s", "4s"),
        (2.5, "2.5s", "5s"),
        (30, "30s", "60s"),
        (120, "120s", "240s"),
    ],
)
def test_the_slow_down_line_says_the_delay_before_and_after(delay, was, then):
    # The delay the slot had when the site said slow down: its configured one (DOWNLOAD_DELAY,
    # Crawl-delay) ...
    configured = backoff().throttled(KEY, delay, b"30", sent=99.0, now=100.0, wall=WALL)
    assert f"then at a delay of {then} (was {was});" in _line(configured)
    # ... or a floor raised before (here: kept with the job), over a configured 0.1 s.
    rules = backoff()
    rules.adopt(KEY, 0.1, delay, 0.0, now=1.0)
    raised = rules.throttled(KEY, 0.1, b"30", sent=2.0, now=2.1, wall=WALL)
    assert f"(was {was});" in _line(raised), _line(raised)
    assert _line(raised).startswith(
        "https://shop.example:443 says slow down (HTTP 429): its requests paused 30.0s (Retry-After), then at a "
    )


def test_a_second_slow_down_says_the_raised_delay_it_doubles():
    # DOWNLOAD_DELAY 0.2; a first slow down raises the slot to 2 s; one answer later (a
    # step of 1.8 s / 9 back), a second doubles the 1.8 s: the line said "(was 0.2s)".
    rules = backoff(ROBOTSTXT_BACKOFF_RECOVERY=9)
    first = rules.throttled(KEY, 0.2, b"1", sent=0.0, now=0.1, wall=WALL)
    assert "then at a delay of 2s (was 0.2s);" in _line(first)
    rules.answered(KEY, 0.2, sent=2.0)
    second = rules.throttled(KEY, 0.2, b"1", sent=3.0, now=3.1, wall=WALL)
    assert "then at a delay of 3.6s (was 1.8s);" in _line(second), _line(second)
