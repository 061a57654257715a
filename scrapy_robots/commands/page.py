"""``scrapy robots --page``: the page itself, fetched through the command's crawl (Scrapy's
downloader, its middlewares, the same settings and User-Agent) when robots.txt allows it,
and the robots directives it carries for this crawler (issue #33): which apply and where
from, those for other crawlers, those ignored as malformed, ``unavailable_after``, and
the URLs it links only with ``rel="nofollow"``. Read by the crawl's own
:func:`~scrapy_robots.directives.middleware.page_directives`, for the token its
:class:`~scrapy_robots.directives.middleware.DirectivesMiddleware` reads them as.

The report rows and the ``--brief`` suffix are here too: they read the same dicts
``--json`` prints.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scrapy import Request

from scrapy_robots.commands.robots_text import PLAIN, STOCK, Paint, size_text, verdict_word
from scrapy_robots.directives.head import other_crawlers_in_head
from scrapy_robots.directives.headers import LEGACY, STRUCTURED, other_crawlers_in_headers
from scrapy_robots.directives.links import nofollow_only
from scrapy_robots.directives.middleware import DirectivesMiddleware, page_directives
from scrapy_robots.directives.rules import FLAGS
from scrapy_robots.grounds import PageReading
from scrapy_robots.spidermw import UsageMiddleware

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

#: Why a path given with ``--file`` has no page: it names no site.
NO_SITE = "a path given with --file names no site: give the page's absolute URL"


def not_fetched(why: str) -> dict[str, Any]:
    """The ``page`` of a URL whose page the command did not fetch, and why."""
    return {"fetched": False, "skipped": why, "error": None}


async def fetch_page(crawler: Crawler, url: str, agent: str | None, answer: dict[str, Any]) -> PageReading | None:
    """Adds ``page`` and ``directives`` to ``answer`` (a URL's report): the page fetched
    only when robots.txt allows it, as the crawl would. Returns the page as the crawl's
    spider middlewares read it (:meth:`~scrapy_robots.grounds.Grounds.on_page` makes the
    answer of it); None when no page was read."""
    answer["directives"] = None
    if answer.get("error") and "robots_txt" not in answer:
        answer["page"] = not_fetched("no answer from robots.txt")
        return None
    if not answer["allowed"]:
        answer["page"] = not_fetched(f"robots.txt: {verdict_word(answer)}, the crawl does not fetch it")
        return None
    assert crawler.engine is not None
    request = Request(url, dont_filter=True, headers={"User-Agent": agent} if agent else None)
    try:
        response = await crawler.engine.download_async(request)
    except Exception as exc:  # a network error, a timeout, a redirect robots.txt denies
        answer["page"] = {"fetched": False, "skipped": None, "error": f"{type(exc).__name__}: {exc}"}
        return None
    redirects = response.meta.get("redirect_urls") or []
    content_type = response.headers.get(b"Content-Type")
    answer["page"] = {
        "fetched": True,
        "skipped": None,
        "error": None,
        "url": response.url,
        "status": response.status,
        "content_type": content_type.decode("latin-1") if content_type else None,
        "size": len(response.body),
        "redirects": len(redirects),
    }
    answer["directives"] = read_page(crawler, response, answer)
    reading = read_usage(crawler, response)
    dropped = reading.drop if reading is not None else None
    answer["items_dropped"] = {"purpose": dropped[0], "by": dropped[1]} if dropped is not None else None
    return reading


def read_usage(crawler: Crawler, response: Response) -> PageReading | None:
    """What ``response`` says for the declared purposes, and whether a crawl would drop its
    items: read by the crawl's own spider middlewares, in their order (the directives, whose
    ``noai`` the usage reader hears, then the usage reader); None without a declared purpose."""
    assert crawler.engine is not None
    middlewares = crawler.engine.scraper.spidermw.middlewares
    usage = next((mw for mw in middlewares if isinstance(mw, UsageMiddleware)), None)
    if usage is None:
        return None
    for middleware in middlewares:
        if isinstance(middleware, (DirectivesMiddleware, UsageMiddleware)):
            middleware.process_spider_input(response)
    return usage.reading(response)


def read_page(crawler: Crawler, response: Response, answer: dict[str, Any]) -> dict[str, Any]:
    """The ``directives`` object: ``response.meta["robotstxt_directives"]``'s shape (each
    directive that applies, with its sources), ``unavailable_after`` with ``past``, and
    ``token``, ``obeyed``, ``other_crawlers``, ``malformed``, ``rel_nofollow``."""
    middleware = _directives_middleware(crawler)
    token = middleware.config.token(response) if middleware is not None else answer["product_token"]
    malformed: list[str] = []
    found = page_directives(response, token, malformed)
    now = time.time()
    directives = found.at(now).as_meta()
    if found.unavailable_after is not None:
        directives["unavailable_after"]["past"] = now >= found.unavailable_after
    headers = response.headers
    others = other_crawlers_in_headers(
        [v.decode("latin-1") for v in headers.getlist(LEGACY)],
        [v.decode("latin-1") for v in headers.getlist(STRUCTURED)],
        token,
    )
    if b"html" in (headers.get(b"Content-Type") or b"").lower():
        others += other_crawlers_in_head(response.body, token)
    directives.update(
        {
            "token": token,
            # Whether the project's crawl acts on them: the spider middleware enabled, and
            # not a crawl with Scrapy's own robots.txt middleware (no add-on, no directives).
            "obeyed": middleware is not None and answer.get("middleware") != STOCK,
            "other_crawlers": [{"crawler": c, "directive": d, "source": s} for c, d, s in others],
            "malformed": malformed,
            "rel_nofollow": len(nofollow_only(response)),
        }
    )
    return directives


def _directives_middleware(crawler: Crawler) -> DirectivesMiddleware | None:
    assert crawler.engine is not None
    middlewares = crawler.engine.scraper.spidermw.middlewares
    return next((mw for mw in middlewares if isinstance(mw, DirectivesMiddleware)), None)


def format_page(result: dict[str, Any], paint: Paint = PLAIN) -> str:
    """The report's lines for ``--page`` (empty without it), as its other rows."""
    return "".join(f"\n  {label:<12} {text}" for label, text in page_rows(result, paint))


def page_rows(result: dict[str, Any], paint: Paint = PLAIN) -> list[tuple[str, str]]:
    """The report's rows for ``--page``: ``(label, text)``."""
    page = result.get("page")
    if page is None:
        return []
    if page["skipped"]:
        return [("page", f"not fetched: {page['skipped']}")]
    if not page["fetched"]:
        return [("page", paint(f"could not fetch the page: {page['error']}", "error"))]
    rows = [("page", f"fetched the page: {_fetched(page, result['url'])}")]
    directives = result["directives"]
    applied = [(name, directives[name]) for name in FLAGS if name in directives]
    if applied:
        text = ", ".join(f"{paint(name, 'denied')} ({', '.join(sources)})" for name, sources in applied)
    else:
        text = f"none for {directives['token']}"
    if not directives["obeyed"]:
        text += "; " + _not_obeyed(result)
    rows.append(("directives", text))
    until = directives.get("unavailable_after")
    if until is not None:
        when = until["date"].replace("T", " ").replace("+00:00", " UTC")
        state = "past: noindex applies" if until["past"] else "not yet past"
        rows.append(("unavailable", f"after {when} ({', '.join(until['sources'])}): {state}"))
    others = _by_crawler(directives["other_crawlers"])
    for i, (crawler, text) in enumerate(others):
        rows.append(("other bots" if i == 0 else "", paint(f"{crawler}: {text}", "dim")))
    for i, reason in enumerate(directives["malformed"]):
        rows.append(("malformed" if i == 0 else "", f"ignored: {reason}"))
    count = directives["rel_nofollow"]
    if count:
        urls = f"{count} URL{'s' if count != 1 else ''}"
        rows.append(("rel=nofollow", f'{urls} linked only with rel="nofollow"'))
    dropped = result.get("items_dropped")
    if dropped:
        rows.append(("items", paint(f"dropped by a crawl: {dropped['by']} denies {dropped['purpose']}", "denied")))
    return rows


def _fetched(page: dict[str, Any], url: str) -> str:
    content_type = (page["content_type"] or "no Content-Type").split(";")[0].strip()
    size = page["size"]
    text = f"HTTP {page['status']}, {content_type}, {f'{round(size / 1024)} KiB' if size >= 1024 else size_text(size)}"
    if page["redirects"]:
        text += f" ({page['redirects']} redirect{'s' if page['redirects'] != 1 else ''}, to {page['url']})"
    return text


def _not_obeyed(result: dict[str, Any]) -> str:
    if result.get("middleware") == STOCK:
        return "the project's crawl (Scrapy's own RobotsTxtMiddleware) does not read them"
    return "the crawl does not act on them: DirectivesMiddleware is not enabled (ROBOTSTXT_DIRECTIVES = False?)"


def _by_crawler(others: list[dict[str, str]]) -> list[tuple[str, str]]:
    """``googlebot: noindex, nofollow (X-Robots-Tag)``: one line per crawler and source."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for other in others:
        grouped.setdefault((other["crawler"], other["source"]), []).append(other["directive"])
    return [(crawler, f"{', '.join(items)} ({source})") for (crawler, source), items in grouped.items()]


def brief_suffix(result: dict[str, Any]) -> str:
    """``--brief --page``: ``[page 200: noindex, nofollow]``, ``[page not fetched]``..."""
    page = result.get("page")
    if page is None:
        return ""
    if page["skipped"]:
        return "  [page not fetched]"
    if not page["fetched"]:
        return f"  [page: {page['error']}]"
    directives = result["directives"]
    names = [name for name in FLAGS if name in directives]
    said = ", ".join(names) if names else "no directives"
    if directives["rel_nofollow"]:
        said += f"; {directives['rel_nofollow']} rel=nofollow"
    return f"  [page {page['status']}: {said}]"
