"""``rel="nofollow"``: the URLs a page links to only with it.

The links are the document's ``<a href>`` and ``<area href>`` elements (one XPath), read from the
lxml document the spider's selectors share (``response.selector``: built once per
response, by whichever asks first), and ``rel`` is read by Scrapy's own
``rel_has_nofollow``, the test behind ``LinkExtractor``'s ``Link.nofollow``. Scrapy's
``LinkExtractor`` itself is not called: it walks every element of the document in Python
and builds a ``Link`` for each, 2 to 4 ms a page where this walk takes a fraction of
it (``bench/directives.py``).

A page that links a URL once with ``rel="nofollow"`` and once without does not ask for
that URL not to be followed: only URLs that every link of the page marks ``nofollow``
are in the answer. Links are compared as absolute URLs without fragment; a request's URL
is compared in the form Scrapy gives it (``safe_url_string``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin

from scrapy.http import HtmlResponse
from scrapy.utils.misc import rel_has_nofollow
from scrapy.utils.response import get_base_url
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

#: The document's links, found by lxml in C (not a walk of every element in Python).
_LINKS = "//a[@href] | //area[@href]"

if TYPE_CHECKING:
    from scrapy.http import Response


def key(url: str) -> str:
    """How a link and a request's URL are told to be one: Scrapy's form of the URL,
    without fragment."""
    return safe_url_string(url).partition("#")[0]


def nofollow_only(response: Response) -> frozenset[str]:
    """The :func:`key` of every URL ``response`` links to only with ``rel="nofollow"``.

    Empty, at the cost of one byte search, for a page that never says ``nofollow``, and
    for anything but HTML.
    """
    if not isinstance(response, HtmlResponse) or response.body.lower().find(b"nofollow") < 0:
        return frozenset()
    nofollow: set[str] = set()
    followed: set[str] = set()
    for element in response.selector.root.xpath(_LINKS):
        href = strip_html5_whitespace(element.get("href")).partition("#")[0]
        (nofollow if rel_has_nofollow(element.get("rel")) else followed).add(href)
    candidates = nofollow - followed  # the same text both ways: followed
    if not candidates:
        return frozenset()
    base = get_base_url(response)
    urls = {urljoin(base, href): href for href in candidates}
    # A followed link written otherwise ("./a", "http://site/a" for "/a") ends as the URL
    # does: only those are joined.
    tails = {_tail(url) for url in urls}
    for href in followed:
        if _tail(href) in tails:
            urls.pop(urljoin(base, href), None)
    return frozenset(key(url) for url in urls)


def _tail(url: str) -> str:
    return url.rpartition("/")[2]
