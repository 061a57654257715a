"""What the fleet's failover crawls share (#49): a robots.txt held in flight until a fault,
the windows around each fault, and the figures a closing note reports: robots.txt downloads
per site, gaps under the delay per window (counted at the site, across crawlers), seconds
each crawler was off Redis."""

from __future__ import annotations

import re

from servers import SiteServer, body
from test_fleet_pace import SHORT, TOLERATED, gaps_between, short, starts
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.web.server import NOT_DONE_YET


def held(release: Deferred, text: str):
    """robots.txt answered once ``release`` fires: its fetch is in flight at the failover."""
    answer = body(text)

    def handle(request):
        def send(_):
            if not request.finished and request.channel is not None:
                request.write(answer(request))
                request.finish()

        release.addCallback(send) if not release.called else reactor.callLater(0, send, None)
        return NOT_DONE_YET

    return handle


def outages_of(log: str) -> list[float]:
    """The seconds of each outage a crawler's link logged ("is reachable again (unreachable for N s)")."""
    return [float(s) for s in re.findall(r"is reachable again \(unreachable for ([\d.]+) s\)", log)]


def windows_around(faults: list[tuple[float, float]], settle: float = 2.0) -> dict[str, tuple[float, float]]:
    """``before``, then ``failover N`` (the fault until ``settle`` s after its recovery) and
    ``after N`` (from there to the next fault, or the end), for (fault, recovery) pairs."""
    windows = {"before": (0.0, faults[0][0])}
    for n, (fault, recovered) in enumerate(faults):
        windows[f"failover {n + 1}"] = (fault, recovered + settle)
        windows[f"after {n + 1}"] = (recovered + settle, faults[n + 1][0] if n + 1 < len(faults) else float("inf"))
    return windows


def failover_figures(
    paced: list[SiteServer],
    fresh: list[SiteServer],
    faults: list[tuple[float, float]],
    results: list[dict],
    delay: float,
) -> dict:
    """The figures of a failover crawl, printed by the test and kept for the closing note."""
    figures: dict = {
        "robots.txt downloads, paced sites": [site.robots_hits() for site in paced],
        "robots.txt downloads, sites in flight at the first fault": [site.robots_hits() for site in fresh],
        "recovered after (s)": [round(recovered - fault, 2) for fault, recovered in faults],
        "each crawler's outages (s)": [outages_of(r["log"]) for r in results],
        "gaps (short / all)": {},
    }
    for name, (begin, end) in windows_around(faults).items():
        gaps = [gaps_between(starts(site), begin, end) for site in paced]
        figures["gaps (short / all)"][name] = [f"{len(short(g, delay))}/{len(g)} {short(g, delay)}" for g in gaps]
    figures["gaps at the sites in flight (short / all)"] = [
        f"{len(short(g, delay))}/{len(g)} {short(g, delay)}" for g in (gaps_between(starts(site)) for site in fresh)
    ]
    return figures


def assert_paced_through(
    paced: list[SiteServer], fresh: list[SiteServer], faults: list[tuple[float, float]], delay: float, figures: dict
) -> None:
    """In every window, at most TOLERATED of each paced site's gaps under SHORT x its delay;
    at the sites in flight at the first fault, none (a handful of gaps each)."""
    for name, (begin, end) in windows_around(faults).items():
        for site in paced:
            gaps = gaps_between(starts(site), begin, end)
            assert gaps, (name, figures)
            under = short(gaps, delay)
            assert len(under) <= TOLERATED * len(gaps), (f"{name}: {under} < {SHORT} x {delay}", figures)
    for site in fresh:
        assert not short(gaps_between(starts(site)), delay), (site.url, figures)
