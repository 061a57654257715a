"""The ROBOTSTXT_* settings: read and checked once at start-up (``config.py``), with the
validators every reader shares (``readers.py``)."""
