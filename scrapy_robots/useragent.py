"""Reduce a User-Agent header to the product token that robots.txt groups name.

Pure Python, no Scrapy import: the rfc9309 library uses it too.
"""

from __future__ import annotations

import re
from typing import Any

# Product tokens that browsers and bots put in front of their real name; a token
# from this set is never the one a robots.txt group is written for.
_GENERIC_PRODUCTS = frozenset(
    {
        "mozilla",
        "applewebkit",
        "khtml",
        "gecko",
        "like",
        "chrome",
        "safari",
        "version",
        "mobile",
        "compatible",
        "windows",
        "linux",
        "macintosh",
        "x11",
        "u",
    }
)
# Letters beyond ASCII belong to the name (Google and Protego read "Bö" whole; cut at
# the "ö", it would match a "User-agent: Bär" group as "B"). So do digits, first ones
# too: "360Spider" is a crawler's name, not "Spider". A product has a letter: "5.0" is a
# version.
_PRODUCT = re.compile(r"(?=[\w.-]*[^\W\d_])\w[\w.-]*")
_BARE_TOKEN = re.compile(r"(?=[\w-]*[^\W\d_])\w[\w-]*")


#: The agent of a crawl that names none: it obeys the ``*`` group.
ANY_AGENT = "*"


def request_agent(request: Any, configured: str | None, default: str) -> str:
    """The agent ``request`` obeys robots.txt (and a page's directives) as:
    ``ROBOTSTXT_USER_AGENT`` (``configured``), else the request's own ``User-Agent`` header,
    else the crawl's (``default``, ``settings.readers.default_user_agent``), as Scrapy's middleware does.
    ``request``: a Scrapy request, or None (a response without one). A header comes as
    bytes and is read as text (Latin-1, as HTTP reads it): a request that passed Scrapy's
    UserAgentMiddleware (a retry, a request back from the scheduler) carries the crawl's
    own agent, and is still the crawl's agent, not another one."""
    if configured:
        return configured
    header = request.headers.get(b"User-Agent") if request is not None else None
    if not header:
        return default
    return header.decode("latin-1") if isinstance(header, bytes) else header


def product_token(user_agent: str | bytes | None) -> str:
    """Return the product token of ``user_agent``, e.g. ``FooBot`` for
    ``Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)``.

    A bare token is returned as it is; an empty or missing agent becomes ``*``.
    """
    if user_agent is None:
        return "*"
    if isinstance(user_agent, bytes):
        user_agent = user_agent.decode("latin-1")
    user_agent = user_agent.strip()
    if not user_agent:
        return "*"
    if _BARE_TOKEN.fullmatch(user_agent):
        return user_agent
    # "(compatible; FooBot/2.1; ...)" names the bot explicitly.
    head, sep, tail = user_agent.partition("compatible;")
    if sep:
        match = _PRODUCT.match(tail.lstrip())
        if match:
            return match.group()
    first = None
    for match in _PRODUCT.finditer(user_agent):
        token = match.group()
        if first is None:
            first = token
        end = match.end()
        # A product is "Name/version"; bare words in comments are not products.
        if end < len(user_agent) and user_agent[end] == "/" and token.lower() not in _GENERIC_PRODUCTS:
            return token
    return first or "*"
