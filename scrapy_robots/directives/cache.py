"""``noarchive``: a page that says it is not stored in Scrapy's HTTP cache.

Scrapy keeps one archive of what it downloads, its HTTP cache (``HTTPCACHE_ENABLED``).
These policies are Scrapy's two, except that a response whose ``X-Robots-Tag`` /
``Robots-Tag`` header or robots meta tag says ``noarchive`` to this crawler is not
stored (``none`` is ``noindex, nofollow``, not ``noarchive``)::

    HTTPCACHE_POLICY = "scrapy_robots.directives.cache.NoArchivePolicy"          # Scrapy's DummyPolicy
    HTTPCACHE_POLICY = "scrapy_robots.directives.cache.NoArchiveRFC2616Policy"   # Scrapy's RFC2616Policy

The page is still downloaded and given to the spider; it is fetched again on the next run.
The crawler's product token is read as the directives middleware reads it (``settings/parts.py``);
Scrapy builds an HTTP cache policy from the settings alone, so the policy reads the two it needs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.extensions.httpcache import DummyPolicy, RFC2616Policy

from scrapy_robots.directives.middleware import page_directives
from scrapy_robots.settings.readers import configured_user_agent, default_user_agent
from scrapy_robots.useragent import product_token, request_agent

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


class _NoArchive:
    """Before Scrapy's policy in the method order: its answer, and a ``noarchive`` page not stored."""

    def __init__(self, settings: BaseSettings):
        super().__init__(settings)  # type: ignore[call-arg]  # Scrapy's policy
        self._user_agent = configured_user_agent(settings)
        self._default_user_agent = default_user_agent(settings)

    def should_cache_response(self, response: Response, request: Request) -> bool:
        return super().should_cache_response(response, request) and self._archived(response, request)  # type: ignore[misc]

    def _archived(self, response: Response, request: Request) -> bool:
        agent = request_agent(request, self._user_agent, self._default_user_agent)
        if page_directives(response, product_token(agent)).noarchive:
            logger.debug("Not stored in the HTTP cache: %(url)s says noarchive", {"url": response.url})
            return False
        return True


class NoArchivePolicy(_NoArchive, DummyPolicy):
    """Scrapy's ``DummyPolicy``, and a ``noarchive`` page is not stored."""


class NoArchiveRFC2616Policy(_NoArchive, RFC2616Policy):
    """Scrapy's ``RFC2616Policy``, and a ``noarchive`` page is not stored."""
