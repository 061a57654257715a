"""A policy file's download as data, below the machinery that makes and reads it.

The result of a download and the site it is for (``result.py``: ``FetchResult``, the site
key, the meta key that marks the package's own requests), what its status means
(``policy.py``: ``Action`` and the status policy's table), and a 429 or 503's
``Retry-After`` read (``retry_after.py``). The cache, the pace and the settings import
them; nothing here imports another folder of the package.
"""
