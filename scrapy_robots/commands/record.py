"""``scrapy robots --record DIR``: the answers from a compliance record, without the network.

For each URL: the version of its site's robots.txt that applied at ``--at`` (the last
download before it), whether that version allows the URL (and which line decides: read
from the recorded body by our RFC 9309 parser, with the project's ROBOTSTXT_RFC9309_*
options), what the page itself said when the crawl read it (its header, meta tag or
directive that denied a declared purpose: the crawl's answer, ``Grounds.on_page``), and the
decisions the crawl recorded for the URL. With no URL: a summary per
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

from scrapy_robots.cache.entry import Action, RobotsEntry
from scrapy_robots.commands.inputs import check_url
from scrapy_robots.commands.output import EXIT_ALLOWED, EXIT_DENIED, EXIT_ERROR
from scrapy_robots.commands.query import answer_fields
from scrapy_robots.grounds import grounds, page_reading
from scrapy_robots.record import ITEMS_DROPPED
from scrapy_robots.record.reader import Record
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.readers import default_user_agent

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings

    from scrapy_robots.policyfiles.stated import Heard
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
    from scrapy import Request

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
    revalidated = record.revalidated_at(site, version.fetched_at, at)
    if revalidated is not None:
        # A refresh answered 304 since: the same version, checked then.
        result["robots_txt"]["revalidated_at"] = utc(revalidated)
    outcome = version.error or f"HTTP {version.status}"
    if governs != version.sha256:
        result["robots_txt"]["note"] = f"unreachable at that download ({outcome}): the copy before it was kept"
    elif version.action == "unreachable":
        # No file came, and none was kept from before: there is no version to name.
        result["robots_txt"].update(sha256=None, size=None, note=f"unreachable ({outcome}): no version was fetched")
    config = _config(record, url, at, agent, settings)
    entry = _entry(record, version, governs, config)
    if entry is None:
        result["allowed"], result["decided_by"] = False, f"the record lacks the body of version {governs[:12]}"
    else:
        # The crawl's own answer, on the versions recorded then, for the purposes it declared.
        heard = _heard(record, entry, at, config)
        found = grounds(entry, Request(url, headers={"User-Agent": agent}), config, heard, at)
        pages = [row for row in record.pages_for(url) if row["t"] <= at]
        if pages:
            # The page as the crawl read it (its last reading by then): the same answer it obeyed.
            found = found.on_page(page_reading(pages[-1]))
        result["decided_by"] = found.decided_by
        result.update(answer_fields(found))
        result["tagged"] = [source.says for source in found.tagged] if config.usage is not None else []
    # The decisions made up to ``at``, and the pages read by then: a later one was not yet.
    recorded = [
        {"t": row["t"], "allowed": row["allowed"], "robots": row["robots"], "by": row["by"]}
        for row in record.decisions_for(url)
        if row["t"] <= at
    ]
    for row in record.pages_for(url):
        if row["t"] <= at:
            denied = row["denied"]
            said = f"{denied['text']} denies {denied['purpose']}"
            recorded.append({"t": row["t"], "page": said, "did": row["did"], "items": row["items"]})
    # The page's robots directives the crawl acted on; a page that said nofollow of its link here.
    for row in record.directives_for(url):
        if row["t"] <= at:
            recorded.append({"t": row["t"], "directives": _said(row["directives"]), "did": row["did"]})
    for row in record.not_followed(url):
        if row["t"] <= at:
            recorded.append({"t": row["t"], "not followed from": row["url"], "said": _said(row["directives"])})
    result["recorded"] = [{**row, "t": utc(row["t"])} for row in sorted(recorded, key=lambda row: row["t"])]
    return result


def _config(record: Record, url: str, at: float, agent: str, settings: BaseSettings) -> RobotsConfig:
    """The project's configuration, asking as ``agent``, for the purposes the crawl declared
    and in its mode (as its decisions of ``url`` recorded them; else the project's
    ROBOTSTXT_USAGE; deny for a record written before the mode was)."""
    rows = [row for row in record.decisions_for(url) if row["t"] <= at]
    purposes = sorted({purpose for row in rows for purpose in row.get("purposes") or row.get("usage") or ()})
    settings = settings.copy()
    settings.set("ROBOTSTXT_USER_AGENT", agent, priority="cmdline")
    if purposes:
        settings.set("ROBOTSTXT_USAGE", purposes, priority="cmdline")
        settings.set("ROBOTSTXT_USAGE_MODE", rows[-1].get("mode") or "deny", priority="cmdline")
    return RobotsConfig.from_settings(settings)


def _entry(record: Record, version: Version, governs: str, config: RobotsConfig) -> RobotsEntry | None:
    """The site's robots.txt as the crawl held it after ``version``'s download: its status
    policy's outcome, or the body that governed (a copy kept while unreachable) read by our
    RFC 9309 parser with the project's ROBOTSTXT_RFC9309_* options; None without that body."""
    from scrapy_robots.parsers.rfc9309 import RFC9309Parser
    from scrapy_robots.usage import site_preferences

    entry = _recorded_entry(version, governs)
    if version.action != "parse" and governs == version.sha256:
        return entry
    body = record.body_of(governs)
    if body is None:
        return None
    entry.action = Action.PARSE
    entry.parser = RFC9309Parser(body, config.default_user_agent, options=config.rfc9309)
    entry.usage = site_preferences(body) if config.usage is not None else None
    if config.rsl:  # where the site's RSL license is (its License line), as the crawl read it
        from scrapy_robots.rsl.discovery import license_urls

        entry.licenses = license_urls(body, config.default_user_agent, version.url)
    return entry


def _heard(record: Record, robots: RobotsEntry, at: float, config: RobotsConfig) -> Heard:
    """The site's other policy files that state preferences, as recorded at ``at`` (each
    read by its own handler; None when the crawl did not need it, or never fetched it)."""
    heard = []
    for cls in config.policy_files:
        if not cls.wanted(config):
            continue
        file = cls(None, config)  # reads only: no crawler
        found = record.version_at(robots.site, at, file.record) if file.needed(robots) else None
        if found is None:
            heard.append((file, None))
            continue
        governs = found.governs or found.sha256
        entry = _recorded_entry(found, governs)
        if entry.action is Action.PARSE:
            entry.body = record.body_of(governs) or b""
            entry.rules = file.read(entry)
            entry.body = None
        heard.append((file, entry))
    return tuple(heard)


def _recorded_entry(version: Version, governs: str) -> RobotsEntry:
    fields = version.fields
    return RobotsEntry(
        site=version.site,
        action=Action(version.action),
        fetched_at=version.fetched_at,
        expires_at=version.expires_at,
        status=version.status,
        url=version.url,
        size=version.size,
        truncated=bool(fields.get("truncated")),
        error=version.error,
        failures=fields.get("failures") or 0,  # absent from records written before 0.10
        retry_after=fields.get("retry_after"),
        version=governs,
        version_fetched_at=version.fetched_at,
    )


def run(opts: argparse.Namespace, urls: list[str], settings: BaseSettings) -> int:
    if opts.verify:
        if urls or opts.at:
            print(
                "scrapy robots: error: --verify checks the whole record: it takes no URL and no --at", file=sys.stderr
            )
            return EXIT_ERROR
        return verify(opts.record, opts.key or settings.get("ROBOTSTXT_SIGNATURE_KEY"), opts.json)
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
    lines.extend(f"  tagged: {says}" for says in result.get("tagged") or ())
    for row in result["recorded"]:
        if "directives" in row:
            lines.append(f"  recorded: {row['t']} page directives: {row['directives']}: {_counts(row['did'])}")
            continue
        if "not followed from" in row:
            lines.append(f"  recorded: {row['t']} not followed from {row['not followed from']}: it says {row['said']}")
            continue
        if "page" in row:
            items = f" ({row['items']})" if row["did"] == ITEMS_DROPPED else ""
            lines.append(f"  recorded: {row['t']} page: {row['page']}: {row['did']}{items}")
            continue
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
            "revalidated": site.revalidated,
            "outcomes": dict(site.actions),
            "allowed": site.allowed,
            "denied": dict(site.denied),
            "tdmrep": sorted(site.tdmrep),
            "reservations": dict(site.reservations),
            "directives": dict(site.directives),
        }
        if as_json:
            print(json.dumps(data))
            continue
        denied = ", ".join(f"{n} {reason}" for reason, n in sorted(site.denied.items())) or "none"
        reserved = ", ".join(f"{n} {what}" for what, n in sorted(site.reservations.items())) or "none"
        outcomes = ", ".join(f"{n} {action}" for action, n in sorted(site.actions.items())) or "none"
        print(
            f"{site.site}: {len(site.versions)} robots.txt version(s) in {site.fetches} fetch(es) ({outcomes})"
            + (f", {site.revalidated} not modified" if site.revalidated else "")
            + "; "
            f"{site.allowed} allowed, denied: {denied}; reservations: {reserved}"
            + (f"; tdmrep.json: {', '.join(sorted(site.tdmrep))}" if site.tdmrep else "")
            + (f"; page directives: {_counts(site.directives)}" if site.directives else "")
        )


def _counts(did: dict[str, int]) -> str:
    """``{"items dropped (noindex)": 2}`` as ``2 items dropped (noindex)``."""
    return ", ".join(f"{n} {what}" for what, n in sorted(did.items()))


def _said(directives: dict[str, Any]) -> str:
    """A directives row's ``directives`` (each and its sources) as ``noindex (X-Robots-Tag)``."""
    return ", ".join(
        f"{name} ({', '.join(value['sources'] if isinstance(value, dict) else value)})"
        for name, value in directives.items()
    )


def verify(folders: list[str], key_file: str | None, as_json: bool) -> int:
    """``--verify``: each folder's manifest checked against the key; 0 when all holds, 1 when
    a file was changed, added or removed or the manifest edited, 2 when it cannot be checked."""
    from pathlib import Path

    from scrapy_robots.record.manifest import verify as verify_folder
    from scrapy_robots.signing.keys import KeyFileError, public_keys, verifier

    if not key_file:
        print(
            "scrapy robots: error: --verify needs the key the record was signed with: give --key FILE (the key, "
            "its public JWK, or the key directory) or set ROBOTSTXT_SIGNATURE_KEY",
            file=sys.stderr,
        )
        return EXIT_ERROR
    try:
        check = verifier(public_keys(key_file))
    except KeyFileError as exc:
        print(f"scrapy robots: error: --key: {exc}", file=sys.stderr)
        return EXIT_ERROR
    status = EXIT_ALLOWED
    for folder in folders:
        if not Path(folder).is_dir():
            print(f"scrapy robots: error: {folder}: no such record folder", file=sys.stderr)
            return EXIT_ERROR
        found = verify_folder(folder, check)
        if found.problems:
            status = EXIT_DENIED
        if as_json:
            print(
                json.dumps(
                    {
                        "record": folder,
                        "verified": not found.problems,
                        "files": sorted(found.files),
                        "keyids": sorted(found.keyids),
                        "problems": [{"file": p.name, "what": p.what, "detail": p.detail} for p in found.problems],
                    }
                )
            )
            continue
        for problem in found.problems:
            print(f"{folder}: {problem}")
        if not found.problems:
            keys = ", ".join(sorted(found.keyids))
            print(f"{folder}: verified: {len(found.files)} file(s) as signed, the chain whole (key {keys})")
    return status
