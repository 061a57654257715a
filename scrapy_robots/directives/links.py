"""``rel="nofollow"``: the URLs a page links to only with it, read by Scrapy's own
``LinkExtractor`` (its ``Link.nofollow``), from the document the spider's selectors share.

A page that links a URL once with ``rel="nofollow"`` and once without does not ask for
that URL not to be followed: only URLs that every link of the page marks ``nofollow``
are in the answer. URLs are compared canonicalized (w3lib's ``canonicalize_url``,
without the fragment), the way Scrapy's duplicate filter sees two requests as one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor
from w3lib.url import canonicalize_url

if TYPE_CHECKING:
    from scrapy.http import Response

#: Every ``<a href>`` and ``<area href>``, whatever its extension, duplicates kept.
_EXTRACTOR: Final = LinkExtractor(tags=("a", "area"), attrs=("href",), deny_extensions=[], unique=False)
_NOFOLLOW: Final = re.compile(rb"nofollow", re.I)


def key(url: str) -> str:
    """How two URLs are told to be one: canonical, without fragment."""
    return canonicalize_url(url, keep_fragments=False)


def nofollow_only(response: Response) -> frozenset[str]:
    """The :func:`key` of every URL ``response`` links to only with ``rel="nofollow"``.

    Empty, at the cost of one byte search, for a page that never says ``nofollow``, and
    for anything but HTML.
    """
    if not isinstance(response, HtmlResponse) or _NOFOLLOW.search(response.body) is None:
        return frozenset()
    nofollow: set[str] = set()
    followed: set[str] = set()
    for link in _EXTRACTOR.extract_links(response):
        (nofollow if link.nofollow else followed).add(key(link.url))
    return frozenset(nofollow - followed)
