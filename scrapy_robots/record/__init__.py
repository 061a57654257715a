"""The compliance record: every policy file version a crawl saw, and which one decided
each request (issue #34; docs/compliance.rst).

- :mod:`.version`: a fetched robots.txt or tdmrep.json as a :class:`PolicyVersion` (its
  SHA-256, its decision class), and a decision as one JSON object;
- :mod:`.warc`, :mod:`.jsonl`: the two ways of keeping the versions (WARC by default);
- :mod:`.writer`: the buffer and the crawler's own files, written in batches;
- :mod:`.reader`: a record folder read back, asked which version applied when.

Pure: nothing here imports Scrapy or another folder of the package. The part a crawl
tells (once per fetch, per verdict, per page) is :mod:`scrapy_robots.compliance.crawl`.
"""

from __future__ import annotations

#: ``request.meta`` / ``response.meta`` key of the robots.txt version that governed a request.
META_KEY = "robotstxt_version"

#: What a crawl did with a page whose own header, meta tag or directive denied a declared
#: purpose (a page row's ``did``): its items dropped (deny mode), or kept, tagged (tag mode).
ITEMS_DROPPED = "items dropped"
TAGGED = "tagged"

#: The kinds of page rows in a decisions file (a decision row has no kind): a page whose own
#: header, meta tag or directive denied a declared purpose (the usage middleware), and a page
#: whose robots directives the crawl acted on (the directives middleware).
PAGE = "page"
DIRECTIVES = "directives"
#: The row of a policy file's refresh answered ``304 Not Modified``: no new version (the one
#: that governed still does), but the file was checked. A reader that does not know the kind skips it.
REVALIDATED = "revalidated"
#: The requests a directives row names, at most: a page with more links has them counted.
NAMED_AT_MOST = 100

__all__ = ["DIRECTIVES", "ITEMS_DROPPED", "META_KEY", "NAMED_AT_MOST", "PAGE", "REVALIDATED", "TAGGED"]
