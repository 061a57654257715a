"""``scrapy robots``' plain-text output: a report per URL, one line per URL (``--brief``),
the ``--compare`` table, lint findings and a robots.txt's summary; coloured on a terminal.

Every function reads the JSON-ready dicts the command builds (the ``--json`` fields),
so the two outputs cannot say different things.
"""

from __future__ import annotations

import os
from typing import Any, TextIO
from urllib.parse import urlsplit

from scrapy_robots.decoding import size_text
from scrapy_robots.grounds import PAGE_DROPPED
from scrapy_robots.lint import Finding
from scrapy_robots.usage import DENIED_REASON as USAGE_REASON
from scrapy_robots.usage import TDM_DENIED_REASON as TDM_REASON
from scrapy_robots.verdict import FORBIDDEN

#: A parser's answer for a directive its library cannot read.
UNSUPPORTED = "unsupported"
#: The middleware whose answers a report gives, when it is Scrapy's own.
STOCK = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"

_POLICY = {
    "parse": "parsed",
    "allow": "allow all",
    "deny": "deny all",
    # A one-shot command tries no site again: this is what a crawl would do.
    "unreachable": "unreachable: a crawl denies the site's URLs for now and tries again later (RFC 9309 2.3.1.4)",
    "excluded": "excluded domain (ROBOTSTXT_EXCLUDED_DOMAINS): robots.txt not fetched",
}

# ANSI SGR codes: green, red, yellow, bold, dim.
_COLOURS = {"allowed": "32", "denied": "31", "error": "33", "unreachable": "33", "bold": "1", "dim": "2"}


class Paint:
    """Colours words on a terminal, never in a pipe or a file: ``--color auto`` (the
    default) colours when standard output is a terminal, ``NO_COLOR`` is not set and
    ``TERM`` is not ``dumb``; ``always`` and ``never`` force it."""

    def __init__(self, when: str = "auto", stream: TextIO | None = None):
        if when == "auto":
            isatty = getattr(stream, "isatty", None)
            self.enabled = bool(
                isatty is not None and isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
            )
        else:
            self.enabled = when == "always"

    def __call__(self, text: str, colour: str) -> str:
        if not self.enabled or colour not in _COLOURS:
            return text
        return f"\x1b[{_COLOURS[colour]}m{text}\x1b[0m"


PLAIN = Paint("never")


def verdict_word(result: dict[str, Any]) -> str:
    """The one word every output gives a URL: ``allowed``, ``denied``, ``unreachable``
    (its robots.txt could not be fetched: an error, exit status 2, with a report) or
    ``error`` (no answer at all)."""
    if (result.get("robots_txt") or {}).get("policy") == "unreachable":
        return "unreachable"
    if result.get("error"):
        return "error"
    return "allowed" if result["allowed"] else "denied"


def _heading(result: dict[str, Any], several_agents: bool) -> str:
    return f"{result['url']} ({result['user_agent']})" if several_agents else result["url"]


def format_report(
    result: dict[str, Any], local_file: str | None = None, paint: Paint = PLAIN, several_agents: bool = False
) -> str:
    robots = result["robots_txt"]
    word = verdict_word(result)
    lines = [f"{_heading(result, several_agents)}: {paint(word, word)}"]

    def row(label: str, text: str) -> None:
        lines.append(f"  {label:<12} {text}")

    row("user agent", f"{result['user_agent']} (product token {result['product_token']})")
    if result.get("middleware") == STOCK:
        row("middleware", "Scrapy's own, as the project's crawl: any status parsed, Crawl-delay not read")
    if not result["allowed"]:
        row("reason", result["reason"])
    decision = result["decision"]
    if decision is not None:
        groups = ", ".join(f"line {g['line']} (User-agent: {g['user_agent']})" for g in decision["group"])
        rule = decision["rule"]
        if rule is not None:
            row("rule", f"line {rule['line']}: {rule['text']}")
            row("group", groups)
        else:
            row("rule", decision["explanation"])
    elif robots["policy"] == "parse":
        row("rule", f"{result['parser']} cannot say which line decided (--parser rfc9309 can)")
    for purpose, preference in (result.get("usage") or {}).items():
        row("usage" if purpose == next(iter(result["usage"])) else "", f"{purpose}: {_usage_text(preference)}")
    for key in result.get("policy_files") or ():  # the site's other policy files, each its line
        row(key, result[key]["text"])
    row("robots.txt", _source(robots, local_file))
    policy = _POLICY.get(robots["policy"], robots["policy"])
    if robots["policy"] == "parse":
        policy += f" with {result['parser']}"
    elif robots["policy"] in ("allow", "deny") and robots["status"] is not None:
        policy += f" on HTTP {robots['status']}"
    row("policy", policy)
    if robots.get("said"):
        row("fetch", robots["said"].partition(": ")[2])
    if robots.get("retry_after") is not None and robots.get("next_attempt"):
        row("retry after", _retry_after_text(robots["retry_after"], robots["next_attempt"]))
    row("crawl delay", _delay_text(result))
    sitemaps = result["sitemaps"]
    if sitemaps == UNSUPPORTED:
        row("sitemaps", f"{result['parser']} cannot read Sitemap lines")
    elif sitemaps:
        row("sitemaps", sitemaps[0])
        for url in sitemaps[1:]:
            row("", url)
    elif robots["policy"] == "parse":
        row("sitemaps", "none")
    return "\n".join(lines)


def _retry_after_text(asked: float, next_attempt: dict[str, Any]) -> str:
    """What the server's Retry-After makes of a crawl's next attempt at the site."""
    told = f"the server asks {_seconds(asked)}"
    after = _seconds(next_attempt["seconds"])
    if next_attempt["by"] == "schedule":
        return f"{told}: within the retry schedule, whose next attempt, in {after}, a crawl keeps"
    if next_attempt["by"] == "Retry-After":
        bound = "as asked, later than the retry schedule's"
    else:
        bound = f"the longest {next_attempt['by']} allows"
    return (
        f"{told}: a crawl's next attempt is in {after}, {bound}; the site's requests wait for it only if it "
        "comes before the schedule's last attempt"
    )


def _seconds(value: float) -> str:
    return f"{value:g}s" if value < 10 else f"{value:.0f}s"


def _usage_text(preference: dict[str, Any]) -> str:
    """A purpose's preference (``--usage``): the decision and the line that stated it."""
    decision = "denied" if preference["decision"] == "deny" else "allowed"
    if not preference["stated"]:
        return f"{decision}, not stated (unstated means allowed)"
    where = f"line {preference['line']}" if preference["line"] is not None else preference["source"]
    return f"{decision} by {where} ({preference['text']})"


def _source(robots: dict[str, Any], local_file: str | None) -> str:
    source = f"{local_file} (local file)" if local_file else robots["url"]
    if local_file is None:
        status = f"HTTP {robots['status']}" if robots["status"] is not None else robots["error"] or "not fetched"
        redirects = robots["redirects"]
        source += f": {status}, {redirects} redirect{'s' if redirects != 1 else ''}"
    if robots["policy"] != "excluded":
        source += f", {robots['size']:,} bytes"
        if robots["truncated"]:
            source += f" (cut at ROBOTSTXT_MAXSIZE = {size_text(robots['maxsize'])}: the rest is not read)"
    return source


def _delay_text(result: dict[str, Any]) -> str:
    found = []
    for label, value in (("Crawl-delay", result["crawl_delay"]), ("Request-rate", result["request_rate"])):
        if value == UNSUPPORTED:
            found.append(f"{label} not read by {result['parser']}")
        elif isinstance(value, dict):
            found.append(f"{label} {value['requests']}/{value['seconds']:g}s")
        elif value is not None:
            found.append(f"{label} {value:g}s")
    asked = ", ".join(found) if found else "none"
    delay = result["delay"]
    note = ""
    if delay is not None and delay["clamped"]:
        note = f", clamped to ROBOTSTXT_MAX_CRAWL_DELAY {result['max_crawl_delay']:g}s"
    elif delay is not None and delay["skip"]:
        note = f", above ROBOTSTXT_MAX_CRAWL_DELAY {result['max_crawl_delay']:g}s: the site is skipped"
    return f"{asked}{note}; slot delay {result['slot_delay']:g}s (your delay {result['user_delay']:g}s)"


def format_brief(result: dict[str, Any], paint: Paint = PLAIN, agent_width: int = 0, word_width: int = 7) -> str:
    """One line: the verdict (padded to ``word_width``), the agent (``agent_width`` > 0:
    several were asked), the URL, and what decided, in brackets."""
    word = verdict_word(result)
    cells = [paint(f"{word:<{word_width}}", word)]
    if agent_width:
        cells.append(f"{result.get('user_agent') or '':<{agent_width}}")
    cells.append(result["url"])
    why = _why(result)
    return "  ".join(cells) + (f"  ({why})" if why else "")


def _why(result: dict[str, Any]) -> str:
    if result.get("error"):
        return str(result["error"])
    for prefix in (USAGE_REASON, TDM_REASON, PAGE_DROPPED):
        if not result["allowed"] and str(result["reason"]).startswith(prefix):
            # Allowed by the rules, denied for a declared purpose (--usage): that line or rule
            # decided, or the page's own header, meta tag or directive (--page).
            return str(result["reason"])[len(prefix) :].strip(" :")
    robots = result["robots_txt"]
    policy = robots["policy"]
    if policy != "parse":
        text = _POLICY.get(policy, policy).split(":")[0]
        return f"{text} on HTTP {robots['status']}" if robots["status"] is not None and policy != "excluded" else text
    reason = str(result["reason"])
    if not result["allowed"] and reason.startswith(f"{FORBIDDEN}: "):
        # The verdict denied before any rule was read: a site skipped for its Crawl-delay.
        why = reason[len(FORBIDDEN) + 2 :]
        return f"site skipped: {why}" if (result["delay"] or {}).get("skip") else why
    decision = result["decision"]
    if decision is not None and decision["rule"] is not None:
        return f"line {decision['rule']['line']}: {decision['rule']['text']}"
    if decision is not None:
        # No group at all, or /robots.txt itself, says more than "no rule matches".
        explanation = str(decision["explanation"])
        if not (decision["group"] and explanation.startswith("no rule")):
            return explanation
        return f"no rule in the first {size_text(robots['maxsize'])} read" if robots["truncated"] else "no rule matches"
    if not result["allowed"] and result["reason"] != FORBIDDEN:
        return str(result["reason"])
    return ""


def format_compare(results: list[dict[str, Any]], paint: Paint = PLAIN, several_agents: bool = False) -> str:
    if not results:
        return ""
    names = list(results[0]["compare"])
    labels = [_heading(r, several_agents) for r in results]
    width = max(len("Crawl-delay"), *(len(label) for label in labels))
    # An unreachable robots.txt is every parser's answer: the word the other outputs give.
    cw = len("unreachable") if any(verdict_word(r) == "unreachable" for r in results) else 8
    header = f"{'URL':<{width}}  " + "  ".join(f"{n:<{cw}}" for n in names)
    lines = [paint(header, "bold"), "-" * len(header)]
    delays: dict[tuple[str, str], dict[str, Any]] = {}
    for label, result in zip(labels, results):
        cells = []
        verdicts = set()
        for name in names:
            answer = result["compare"][name]
            cell = "error" if answer["error"] else ("allowed" if answer["allowed"] else "denied")
            cell = "unreachable" if verdict_word(result) == "unreachable" else cell
            verdicts.add(cell)
            cells.append(paint(f"{cell:<{cw}}", cell))
        mark = "  <- differ" if len(verdicts) > 1 else ""
        lines.append(f"{label:<{width}}  " + "  ".join(cells) + mark)
        # One Crawl-delay row per robots.txt, and per agent (each may have its group).
        delays.setdefault((result["robots_txt"]["url"], result.get("user_agent", "")), result["compare"])
    several_sites = len({where for where, _ in delays}) > 1
    for (where, agent), answers in delays.items():
        about = [urlsplit(where).netloc] if several_sites else []
        about += [agent] if several_agents else []
        label = f"Crawl-delay ({', '.join(about)})" if about else "Crawl-delay"
        values = [_delay_cell(answers[n]) for n in names]
        if any(v not in ("-", "n/a", "error") for v in values):
            shown = {v for v in values if v != "n/a"}
            mark = "  <- differ" if len(shown) > 1 else ""
            width = max(width, len(label))
            lines.append(f"{label:<{width}}  " + "  ".join(f"{v:<{cw}}" for v in values) + mark)
    errors = {n: a["error"] for r in results for n, a in r["compare"].items() if a["error"]}
    lines.extend(f"{name}: {error}" for name, error in errors.items())
    # Listed once, outside the table: a missing library says nothing about the file.
    for name, reason in results[0].get("not_installed", {}).items():
        lines.append(f"{name}: not installed, left out ({reason})")
    return "\n".join(lines)


def _delay_cell(answer: dict[str, Any]) -> str:
    value = answer["crawl_delay"]
    if answer["error"]:
        return "error"
    if value is None:
        return "-"
    return "n/a" if value == UNSUPPORTED else f"{value:g}s"


def format_lint(where: str, findings: list[Any] | None, paint: Paint = PLAIN) -> str:
    if findings is None:
        return f"lint {where}: no robots.txt body was parsed (see the policy)"
    if not findings:
        return f"lint {where}: {paint('no problems found', 'allowed')}"
    count = f"{len(findings)} problem{'s' if len(findings) != 1 else ''}"
    lines = [f"lint {where}: {paint(count, 'denied')}"]
    for finding in findings:
        finding = finding if isinstance(finding, Finding) else Finding(**finding)
        lines.append(f"  {finding}  {paint(f'[{finding.code}]', 'dim')}")
    return "\n".join(lines)


def format_summary(where: str, summary: dict[str, Any] | None, paint: Paint = PLAIN) -> str:
    """The groups of a robots.txt as the RFC 9309 parser reads them, with their rules
    and records, and the file-wide lines (Sitemap, Host); the lines past
    ``ROBOTSTXT_MAXSIZE``, which the crawl does not read, marked so."""
    if summary is None:
        return f"{where}: no robots.txt body was parsed (see the policy)"
    groups = [g for g in summary["groups"] if g.get("read", True)]
    rules = sum(1 for g in summary["groups"] for r in g["rules"] if r.get("read", True))
    sitemaps = [s for s in summary["sitemaps"] if s.get("read", True)]
    lines = [
        paint(
            f"{where}: {_count(len(groups), 'group')}, {_count(rules, 'rule')}, {_count(len(sitemaps), 'sitemap')}",
            "bold",
        )
    ]

    def numbered(line: int) -> str:
        return paint(f"line {line:<4}", "dim")

    def shown(item: dict[str, Any], text: str, colour: str) -> str:
        if item.get("read", True):
            return paint(text, colour)
        return paint(f"{text}  (not read: past ROBOTSTXT_MAXSIZE)", "dim")

    for group in summary["groups"]:
        agents = ", ".join(a["user_agent"] or "(empty)" for a in group["user_agents"])
        lines.append(f"  {numbered(group['line'])} {shown(group, f'User-agent: {agents}', '')}")
        for rule in group["rules"]:
            text = f"{'Allow' if rule['allow'] else 'Disallow'}: {rule['pattern']}"
            lines.append(f"    {numbered(rule['line'])} {shown(rule, text, 'allowed' if rule['allow'] else 'denied')}")
        if not group["rules"]:
            lines.append("    (no rule: everything allowed)")
        for record in group["records"]:
            lines.append(f"    {numbered(record['line'])} {shown(record, record['text'], '')}")
    for item in summary.get("file_wide", ()):
        text = f"{item['text']}  (before any User-agent: read for every crawler)"
        lines.append(f"  {numbered(item['line'])} {shown(item, text, '')}")
    if summary["orphans"]:
        lines.append(f"  before any User-agent, for no crawler: lines {', '.join(map(str, summary['orphans']))}")
    for sitemap in summary["sitemaps"]:
        text = f"Sitemap: {sitemap['url']}"
        lines.append(f"  {numbered(sitemap['line'])} {shown(sitemap, text, '')}")
    if summary["host"]:
        lines.append(f"  Host: {summary['host']}")
    not_read = summary.get("not_read")
    if not_read:
        lines.append(_not_read_text(summary, not_read))
    return "\n".join(lines)


def _not_read_text(summary: dict[str, Any], not_read: dict[str, Any]) -> str:
    """The line that says which lines the crawl did not read, past ROBOTSTXT_MAXSIZE."""
    cap = f"past ROBOTSTXT_MAXSIZE ({size_text(not_read['maxsize'])})"
    if not_read["to_line"] is None:  # a download stopped at the cap: the rest is not known
        return f"  lines from {not_read['from_line']} on {cap}: not downloaded, not read by the crawl"
    unread = [r for g in summary["groups"] for r in g["rules"] if not r["read"]]
    counted = f" ({_count(len(unread), 'rule')})" if unread else ""
    return f"  lines {not_read['from_line']}-{not_read['to_line']} {cap}: not read by the crawl{counted}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
