"""A response's header field values by name, from Scrapy's ``Headers`` or a plain mapping:
what TDMRep (:mod:`scrapy_robots.tdmrep.page`) and RSL (:mod:`scrapy_robots.rsl.discovery`)
read from a response, without either depending on Scrapy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def header_values(headers: Any, name: str) -> list[str]:
    """Every value of the field ``name`` (lower case), in order.

    ``headers``: Scrapy's ``Headers`` (anything with ``getlist(name)``), or a mapping of
    field names (any case) to a value or a list of values, ``str`` or ``bytes``.
    """
    if hasattr(headers, "getlist"):
        values: Iterable[Any] = headers.getlist(name)
    elif isinstance(headers, Mapping):
        found = next((value for key, value in headers.items() if _text(key).lower() == name), None)
        if found is None:
            return []
        values = found if isinstance(found, (list, tuple)) else [found]
    else:
        raise TypeError(f"headers must be a mapping or have getlist(), not {type(headers).__name__}")
    return [_text(value) for value in values]


def _text(value: str | bytes) -> str:
    # Header values are ISO-8859-1 on the wire (RFC 9110 5.5); a URL in one is ASCII.
    return value.decode("latin-1") if isinstance(value, bytes) else value
