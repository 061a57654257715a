"""RSL 1.0 (Really Simple Licensing): which uses of a site's content its license permits,
prohibits, or sells. Pure: no Scrapy import (issue #50). The crawl obeys it through
``scrapy_robots.policyfiles.license`` (robots.txt's ``License`` line) and
``scrapy_robots.policyfiles.page_links`` (a page's ``Link`` header or ``<link>``).

- ``document.py``: an RSL document (``license.xml``) parsed defensively into a frozen
  model, :func:`parse_rsl` (XML by expat, ``DOCTYPE`` refused; 500 KiB at most);
- ``answer.py``: what a document says of a URL for a usage token (:func:`evaluate`) or a
  declared purpose (:func:`purpose_answer`, the table ``PURPOSE_TOKENS``);
- ``discovery.py``: where a site points to its document, ``License:`` lines of robots.txt
  (:func:`robotstxt_licenses`), the ``Link`` header (:func:`header_licenses`), the page's
  ``<link>`` element (:func:`page_licenses`).

``docs/rsl.rst`` says what is read, how, and what is not.
"""

from __future__ import annotations

from scrapy_robots.rsl.answer import (
    LICENSE_REQUIRED,
    LICENSED,
    NOT_LICENSED,
    PURPOSE_TOKENS,
    UNSTATED,
    RslAnswer,
    covers,
    evaluate,
    purpose_answer,
)
from scrapy_robots.rsl.discovery import (
    LINK_HEADER,
    PAGE,
    ROBOTSTXT,
    LicenseLink,
    header_licenses,
    page_licenses,
    robotstxt_licenses,
)
from scrapy_robots.rsl.document import (
    DOCTYPE,
    EMPTY,
    HTML_PAGE,
    MAX_BYTES,
    MEDIA_TYPE,
    NAMESPACE,
    NOT_RSL,
    NOT_XML,
    TOO_LARGE,
    USAGE_PARENTS,
    Content,
    License,
    Payment,
    RslDocument,
    RslError,
    parse_rsl,
)

__all__ = [
    "DOCTYPE",
    "EMPTY",
    "HTML_PAGE",
    "LICENSED",
    "LICENSE_REQUIRED",
    "LINK_HEADER",
    "MAX_BYTES",
    "MEDIA_TYPE",
    "NAMESPACE",
    "NOT_LICENSED",
    "NOT_RSL",
    "NOT_XML",
    "PAGE",
    "PURPOSE_TOKENS",
    "ROBOTSTXT",
    "TOO_LARGE",
    "UNSTATED",
    "USAGE_PARENTS",
    "Content",
    "License",
    "LicenseLink",
    "Payment",
    "RslAnswer",
    "RslDocument",
    "RslError",
    "covers",
    "evaluate",
    "header_licenses",
    "page_licenses",
    "parse_rsl",
    "purpose_answer",
    "robotstxt_licenses",
]
