"""``scrapy robots --record DIR``: the answers from a compliance record, without the network.

For each URL: the version of its site's robots.txt that applied at ``--at`` (the last
download before it), whether that version allows the URL (and which line decides: read
from the recorded body by our RFC 9309 parser, with the project's ROBOTSTXT_RFC9309_*
options), and the decisions the crawl recorded for the URL. With no URL: a summary per
site (versions, denials by reason, reservations). Exit status as for the other answers:
0 all allowed, 1 some denied, 2 an error (no record, no version known at that time).
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy_robots.commands.inputs import check_url
from scrapy_robots.commands.output import EXIT_ALLOWED, EXIT_DENIED, EXIT_ERROR
from scrapy_robots.record.reader import Record
from scrapy_robots.record.version import TDMREP_JSON
from scrapy_robots.settings.config import rfc9309_options
from scrapy_robots.settings.readers import default_user_agent

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings

    from scrapy_robots.record.reader import Version


def parse_time(value: str | None) -> float:
    """``--at``: seconds since the epoch, or an ISO 8601 date and time (UTC unless it says)."""
    if not value:
        return time.time()
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        hint = "give seconds since the epoch or an ISO 8601 time (2025-06-01T12:00Z)"
        raise ValueError(f"--at {value!r}: {hint}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def utc(timestamp: float | None) -> str:
    if timestamp is None:
        return "?"
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def site_of(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{parts.hostname}:{port}"


def answer(record: Record, url: str, at: float, agent: str | None, settings: BaseSettings) -> dict[str, Any]:
    """``agent``: --user-agent; None: the agent the crawl obeyed as at the site (its last
    decision there before ``at``), else the project's (ROBOTSTXT_USER_AGENT, USER_AGENT)."""
    site = site_of(url)
    if agent is None:
        agent = record.agent_at(site, at) or default_user_agent(settings)
    version = record.version_at(site, at)
    result: dict[str, Any] = {"url": url, "at": utc(at), "site": site, "agent": agent}
    if version is None:
        result["error"] = f"the record holds no robots.txt of {site} fetched before {utc(at)}"
        return result
    governs = version.governs or version.sha256
    result["robots_txt"] = {
        "sha256": governs,
        "fetched_at": utc(version.fetched_at),
        "url": version.url,
        "status": version.status,
        "action": version.action,
        "size": version.size,
        "expires_at": utc(version.expires_at),
        "record": version.source,
    }
    outcome = version.error or f"HTTP {version.status}"
    if governs != version.sha256:
        result["robots_txt"]["note"] = f"unreachable at that download ({outcome}): the copy before it was kept"
    elif version.action == "unreachable":
        # No file came, and none was kept from before: there is no version to name.
        result["robots_txt"].update(sha256=None, size=None, note=f"unreachable ({outcome}): no version was fetched")
    result["allowed"], result["decided_by"] = _allowed(record, version, governs, url, agent, settings)
    if result["allowed"]:
        # What the crawl declared beside robots.txt's rules (its purposes, TDMRep's file):
        # judged by the crawl's own verdict on the versions recorded then.
        denied = _denied_for_usage(record, version, governs, url, at, agent, settings)
        if denied is not None:
            result["allowed"], result["decided_by"] = False, denied
    # The decisions made up to ``at``: a later one was not made yet at that time.
    result["recorded"] = [
        {"t": utc(row["t"]), "allowed": row["allowed"], "robots": row["robots"], "by": row["by"]}
        for row in record.decisions_for(url)
        if row["t"] <= at
    ]
    return result


def _allowed(
    record: Record, version: Version, governs: str, url: str, agent: str, settings: BaseSettings
) -> tuple[bool, str]:
    action = version.action
    outcome = f"HTTP {version.status}" if version.status is not None else version.error
    if action in ("allow", "deny", "unreachable", "excluded") and governs == version.sha256:
        return action == "allow", f"status policy: {outcome} -> {action}"
    body = record.body_of(governs)
    if body is None:
        return False, f"the record lacks the body of version {governs[:12]}"
    from scrapy_robots.parsers.rfc9309 import RFC9309Parser

    explanation = RFC9309Parser(body, agent, options=rfc9309_options(settings)).explain(url)
    return explanation.allowed, explanation.reason


def _denied_for_usage(
    record: Record, version: Version, governs: str, url: str, at: float, agent: str, settings: BaseSettings
) -> str | None:
    """Why the crawl's verdict denies ``url`` for a purpose it declared (robots.txt's usage
    lines, the site's tdmrep.json then), or None. The purposes are the crawl's, as its
    decisions recorded them (else the project's ROBOTSTXT_USAGE)."""
    from scrapy import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.parsers.rfc9309 import RFC9309Parser
    from scrapy_robots.policyfiles.policy import Action
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.tdmrep import parse_tdmrep
    from scrapy_robots.usage import site_preferences
    from scrapy_robots.verdict import verdict

    rows = [row for row in record.decisions_for(url) if row["t"] <= at]
    purposes = sorted({purpose for row in rows for purpose in row.get("usage") or ()})
    if purposes:
        settings = settings.copy()
        settings.set("ROBOTSTXT_USAGE", purposes, priority="cmdline")
        settings.set("ROBOTSTXT_USAGE_MODE", "deny", priority="cmdline")
    config = RobotsConfig.from_settings(settings)
    if config.usage is None:
        return None
    body = record.body_of(governs)
    site = site_of(url)
    entry = RobotsEntry(site=site, action=Action.ALLOW, fetched_at=version.fetched_at, expires_at=float("inf"))
    if body is not None and (version.action == "parse" or governs != version.sha256):
        entry.action = Action.PARSE
        entry.usage = site_preferences(body)
        entry.parser = RFC9309Parser(body, agent, options=rfc9309_options(settings))
    tdm = None
    if config.tdmrep:
        found = record.version_at(site, at, TDMREP_JSON)
        if found is not None:
            tdm = RobotsEntry(
                site=site,
                action=Action(found.action),
                fetched_at=found.fetched_at,
                expires_at=float("inf"),
                status=found.status,
                error=found.error,
                failures=found.fields.get("failures", 0) or 0,
            )
            if tdm.action is Action.PARSE:
                tdm.rules = parse_tdmrep(record.body_of(found.governs or found.sha256) or b"", config.maxsize)
    answer = verdict(entry, Request(url, headers={"User-Agent": agent}), config, tdm)
    return None if answer.allowed else answer.reason


def run(opts: argparse.Namespace, urls: list[str], settings: BaseSettings) -> int:
    try:
        at = parse_time(opts.at)
        record = Record(opts.record)
    except ValueError as exc:
        print(f"scrapy robots: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if not record.files:
        print(f"scrapy robots: error: no record files in {', '.join(opts.record)}", file=sys.stderr)
        return EXIT_ERROR
    if not urls:
        _summary(record, opts.json)
        return EXIT_ALLOWED
    agent = opts.user_agent[0] if opts.user_agent else None
    results = []
    for url in urls:
        absolute, error = check_url(url, local_file=False)  # the live mode's messages
        results.append({"url": url, "error": error} if error else answer(record, absolute or url, at, agent, settings))
    for result in results:
        print(json.dumps(result) if opts.json else _text(result))
    if any("error" in result for result in results):
        return EXIT_ERROR
    return EXIT_ALLOWED if all(result["allowed"] for result in results) else EXIT_DENIED


def _text(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"{result['url']}: error: {result['error']}"
    robots = result["robots_txt"]
    verdict = "allowed" if result["allowed"] else "denied"
    lines = [f"{result['url']}: {verdict} at {result['at']} (as {result['agent']})"]
    if robots["sha256"] is None:
        lines.append(
            f"  robots.txt: no version: asked {robots['fetched_at']} from {robots['url']}, {robots['note']} "
            f"(record {robots['record']})"
        )
    else:
        lines.append(
            f"  robots.txt: sha256 {robots['sha256']}, fetched {robots['fetched_at']} from {robots['url']} "
            f"(HTTP {robots['status']} -> {robots['action']}, {robots['size']} bytes; record {robots['record']})"
        )
    if "note" in robots and robots["sha256"] is not None:
        lines.append(f"  note: {robots['note']}")
    lines.append(f"  decided by: {result['decided_by']}")
    for row in result["recorded"]:
        lines.append(
            f"  recorded: {row['t']} {'allowed' if row['allowed'] else 'denied'} by {(row['robots'] or '?')[:12]}: "
            f"{row['by']}"
        )
    return "\n".join(lines)


def _summary(record: Record, as_json: bool) -> None:
    for site in record.summary():
        data = {
            "site": site.site,
            "versions": sorted(site.versions),
            "fetches": site.fetches,
            "outcomes": dict(site.actions),
            "allowed": site.allowed,
            "denied": dict(site.denied),
            "tdmrep": sorted(site.tdmrep),
            "reservations": dict(site.reservations),
        }
        if as_json:
            print(json.dumps(data))
            continue
        denied = ", ".join(f"{n} {reason}" for reason, n in sorted(site.denied.items())) or "none"
        reserved = ", ".join(f"{n} {what}" for what, n in sorted(site.reservations.items())) or "none"
        outcomes = ", ".join(f"{n} {action}" for action, n in sorted(site.actions.items())) or "none"
        print(
            f"{site.site}: {len(site.versions)} robots.txt version(s) in {site.fetches} fetch(es) ({outcomes}); "
            f"{site.allowed} allowed, denied: {denied}; reservations: {reserved}"
            + (f"; tdmrep.json: {', '.join(sorted(site.tdmrep))}" if site.tdmrep else "")
        )
