"""A site's policy files and their lifecycle.

robots.txt (and, with TDMRep, ``/.well-known/tdmrep.json``) goes through the same stages,
walked once for any file by the book (``book.py``: hot tier -> storage -> one fetch per
site, each file a handler of it: robots.txt's in ``robotstxt.py``, TDMRep's in
``scrapy_robots.tdmrep.crawl``): the fetch through Scrapy's engine (``fetch.py``), the
status policy (``scrapy_robots.status``) and what a new answer does to the copy kept
(``decision.py``, ``retry_after.py``), robots.txt's parser (``reader.py``), and the
spider's own robots.txt request answered from the fetch (``serving.py``).
"""
