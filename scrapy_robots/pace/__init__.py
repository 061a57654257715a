"""The pace: how long a site's requests wait, and the only code that touches Scrapy's slots.

``pacing.py`` is what a
request waits for, the slot's own pace or the fleet's, a slot's pause included; ``lines.py``
keeps the requests whose slot's turn has not come, one line per slot, and hands each to
Scrapy when it may start (``turns.py`` says when that is, and holds a paused slot's queue);
``backoff.py``, an extension, hears a site say slow down (429, 503 with Retry-After) and
``backoff_rules.py`` says what that asks of its slot; ``slots.py`` applies all of it to
Scrapy's downloader slots; ``waiting.py`` parks requests outside the downloader while they wait.
"""
