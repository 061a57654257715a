"""The compliance record: every policy file version a crawl saw, and which one decided
each request (issue #34; docs/compliance.rst).

- :mod:`.version`: a fetched robots.txt or tdmrep.json as a :class:`PolicyVersion` (its
  SHA-256, its decision class), and a decision as one JSON object;
- :mod:`.warc`, :mod:`.jsonl`: the two ways of keeping the versions (WARC by default);
- :mod:`.writer`: the buffer and the crawler's own files, written in batches;
- :mod:`.reader`: a record folder read back, asked which version applied when;
- :mod:`.crawl`: the Scrapy-facing part the robots.txt middleware calls, once per fetch
  and once per verdict, and the usage middleware once per page that denied a declared
  purpose, when ``ROBOTSTXT_RECORD`` is set.

Nothing here but :mod:`.crawl` imports Scrapy.
"""

from __future__ import annotations

#: ``request.meta`` / ``response.meta`` key of the robots.txt version that governed a request.
META_KEY = "robotstxt_version"

#: What a crawl did with a page whose own header, meta tag or directive denied a declared
#: purpose (a page row's ``did``): its items dropped (deny mode), or kept, tagged (tag mode).
ITEMS_DROPPED = "items dropped"
TAGGED = "tagged"

__all__ = ["ITEMS_DROPPED", "META_KEY", "TAGGED"]
