"""The compliance record in a crawl (``ROBOTSTXT_RECORD``, docs/compliance.rst): the part the
middlewares tell of each policy file download, each verdict and each page that denied a
declared purpose (``crawl.py``: ``ComplianceRecord``). It writes what the answer decided
(``scrapy_robots.grounds``), so it sits above the answer; the pure writers and readers it
writes with are in ``scrapy_robots.record``, low enough for the settings to name them.
"""
