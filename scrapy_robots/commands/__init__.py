"""Scrapy commands shipped by scrapy-robots (registered through the ``scrapy.commands`` entry point)."""
