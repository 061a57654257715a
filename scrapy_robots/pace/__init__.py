"""The pace: how long a site's requests wait, and the only code that touches Scrapy's slots.

``delay.py`` turns Crawl-delay and Request-rate into a delay; ``pacing.py`` chooses
the slot's own pace or the fleet's; ``backoff.py`` pauses a slot told to slow down
(429, 503 with Retry-After); ``slots.py`` applies all of it to Scrapy's downloader
slots; ``waiting.py`` parks requests outside the downloader while they wait.
"""
