"""The options of ``scrapy robots`` (docs/command.rst says what each does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots.commands.query import BACKENDS

if TYPE_CHECKING:
    import argparse


def add_robots_options(parser: argparse.ArgumentParser) -> None:
    # Scrapy's help formatter title-cases each group's title ("robots.txt" would read "Robots.Txt").
    group = parser.add_argument_group(title="Robots Options")
    group.add_argument(
        "--file", metavar="PATH", help="check this local robots.txt ('-': standard input) instead of the sites'"
    )
    group.add_argument(
        "--urls",
        metavar="PATH",
        help="check the URLs in this file too, one a line, '-' for standard input (blank lines and # comments "
        "are skipped)",
    )
    group.add_argument(
        "--user-agent",
        metavar="AGENT",
        action="append",
        help="the agent to ask as; repeat it to ask as several (default: ROBOTSTXT_USER_AGENT, else USER_AGENT, "
        "as the crawl does)",
    )
    group.add_argument(
        "--parser",
        metavar="NAME",
        help=f"the parser: {', '.join(BACKENDS)} or an import path (default: ROBOTSTXT_PARSER)",
    )
    group.add_argument(
        "--spider", metavar="NAME", help="use this project spider's custom_settings (and its user_agent)"
    )
    group.add_argument("--compare", action="store_true", help="ask every installed parser and show where they disagree")
    group.add_argument("--lint", action="store_true", help="list the lines no parser rule uses, and why")
    group.add_argument(
        "--usage",
        metavar="PURPOSE",
        help="answer for this purpose too (train-ai, search, ...; comma-separated): robots.txt Content-Signal / "
        "Content-Usage lines decide, as with ROBOTSTXT_USAGE",
    )
    group.add_argument("--strict", action="store_true", help="--lint, and any finding makes the exit status 1 (for CI)")
    group.add_argument(
        "--summary",
        action="store_true",
        help="print each robots.txt's groups and rules instead of the answers (the default with --file and no URL)",
    )
    group.add_argument(
        "--page",
        action="store_true",
        help="fetch each URL robots.txt allows (through the same crawl: downloader, settings, User-Agent) and "
        "show the page's robots directives for this crawler (X-Robots-Tag, Robots-Tag, meta robots, "
        "rel=nofollow); a denied URL is not fetched. With --file too, the page comes from the network. The exit "
        "status stays robots.txt's",
    )
    group.add_argument(
        "--record",
        metavar="DIR",
        action="append",
        help="answer from this compliance record folder (ROBOTSTXT_RECORD; repeat it for a fleet's), without the "
        "network: the robots.txt version that applied at --at and whether it allows each URL; no URL: a summary "
        "per site",
    )
    group.add_argument(
        "--at",
        metavar="TIME",
        help="with --record: the time to answer for, seconds since the epoch or ISO 8601 (UTC unless given; "
        "default: now)",
    )
    group.add_argument(
        "--verify",
        action="store_true",
        help="with --record: check the record's signatures (signatures.jsonl: each line's signature, the chain, "
        "each file's SHA-256) and say which file was changed, added or removed, or that the manifest was edited; "
        "exit status 0 all holds, 1 not, 2 an error",
    )
    group.add_argument(
        "--key",
        metavar="FILE",
        help="with --verify: the key the record was signed with: the private key, its public JWK or PEM, or the "
        "key directory (default: ROBOTSTXT_SIGNATURE_KEY)",
    )
    group.add_argument("--brief", action="store_true", help="one line per URL: the verdict and what decided")
    group.add_argument("--json", action="store_true", help="print one JSON object per URL (JSON lines)")
    group.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the verdicts: auto (on a terminal, unless NO_COLOR is set), always, never",
    )


def check_combinations(opts: argparse.Namespace) -> str | None:
    """The error for options that cannot be given together, naming both; None when they can.
    One line, as the command's other errors (not Scrapy's usage block)."""
    if opts.brief and opts.compare:
        return (
            "--brief and --compare cannot be combined: --brief prints one line per URL, --compare a table of "
            "every parser's answers; give one of them"
        )
    for other in ("compare", "summary"):
        if opts.page and getattr(opts, other):
            return (
                f"--page and --{other} cannot be combined: --{other} prints no per-URL report for the page's "
                "directives; give one of them"
            )
    for given in ("verify", "key"):
        if getattr(opts, given) and not opts.record:
            return f"--{given} checks a compliance record's signatures: give --record DIR too"
    if opts.key and not opts.verify:
        return "--key names the key a record was signed with: give --verify too"
    if opts.at and not opts.record:
        return "--at answers from a compliance record: give --record DIR too"
    for other in ("file", "compare", "lint", "strict", "page", "usage", "spider", "brief"):
        if opts.record and getattr(opts, other):
            return (
                f"--record and --{other} cannot be combined: --record answers from the record alone (its "
                "versions, the URLs' verdicts, the recorded decisions); give one of them"
            )
    return None
