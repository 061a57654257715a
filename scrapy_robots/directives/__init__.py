"""What a page says of itself, for this crawler: ``X-Robots-Tag`` and ``Robots-Tag``
headers, ``<meta name="robots">`` and ``<meta name="BOTNAME">`` tags (issue #33).

- :mod:`.rules`: the directives (``noindex``, ``nofollow``, ``none``, ``noarchive``,
  ``nosnippet``, ``noimageindex``, ``noai``, ``noimageai``, ``unavailable_after``) read
  from one list, exact tokens, the most restrictive of several sources kept;
- :mod:`.headers`: the legacy ``X-Robots-Tag`` grammar (``googlebot: noindex, nofollow``)
  and the ``Robots-Tag`` structured-field list (draft-illyes-repext:
  ``*;nosnippet, ExampleBot;noindex``), scoped to this crawler's product token;
- :mod:`.head`: the meta tags, read from the document's head bytes without a DOM;
- :mod:`.links`: the URLs a page links to only with ``rel="nofollow"`` (from the
  spider's own lxml document);
- :mod:`.middleware`: ``DirectivesMiddleware``, the spider middleware that reads them for
  each response and acts on the spider's output.

The first three are pure functions (no Scrapy import), and the only ones this package
imports.
"""

from __future__ import annotations

from scrapy_robots.directives.head import meta_directives
from scrapy_robots.directives.headers import header_directives
from scrapy_robots.directives.rules import NONE, Directives, read_directives

__all__ = ["NONE", "Directives", "header_directives", "meta_directives", "read_directives"]
