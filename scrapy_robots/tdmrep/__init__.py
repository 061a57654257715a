"""TDMRep, the W3C TDM Reservation Protocol (Community Group final report, 2024): whether a
site reserves text-and-data-mining rights on a resource, and where its TDM policy is.
Pure: no Scrapy import. Issue #34; the crawl wiring is not here yet.

- ``file.py``: ``/.well-known/tdmrep.json``, :func:`parse_tdmrep` and
  :meth:`TdmRepFile.reservation`;
- ``page.py``: the ``tdm-reservation`` / ``tdm-policy`` header fields
  (:func:`header_reservation`) and meta tags (:func:`meta_reservation`);
- ``answer.py``: :class:`Answer`, and :func:`combine`, the report's processing priority.

What the report says, and where this package follows it:

"Declaring the reservation of TDM Rights", tdm-reservation: "1: TDM rights are reserved
... 0: TDM rights are not reserved ... Other values are considered protocol errors. In
such a case the TDM Agents MUST consider that `tdm-reservation` is unset." A value
other than 0 or 1 is unset (the JSON strings "0" and "1" are read as 0 and 1, and said:
the header and meta carry the same values as text). An unset value from a header or a
tag never resets one already set (it is a protocol error, read as "not stated").

tdm-policy: "a URL pointing to a TDM Policy ... The presence of `tdm-policy` when the
value of `tdm-reservation` is 0 is not considered a protocol error. TDM Agents SHOULD
NOT process `tdm-policy` in this case." :func:`combine` drops it then.

"TDM File on the Origin Server": "This file contains an array of JSON objects; each object
represents a rule and accepts three properties: location: a pattern matching the path of
a set of files hosted on the server ... In each rule, `location` and `tdm-reservation`
are mandatory, `tdm-policy` is optional. ... The matching SHOULD be case sensitive. The
most specific match found MUST be used. The most specific match is the first in
sequence. If no match is found, a TDM Agent MUST consider that `tdm-reservation` is
unset for the given URL. If a percent-encoded US-ASCII character is encountered in the
URI, it MUST be unencoded prior to comparison, unless it is a reserved character ..."
The first matching rule decides, even one whose reservation is unset; a rule without a
usable location matches nothing. "Failure to provide access to such a representation
implies that the origin server does not implement this protocol": a file that is not
an array of objects is unusable (:class:`TdmRepError`), and every URL reads unset.

"Use of regular expressions": "this specification is re-using the specification and
wording of the robots.txt draft-koster-rep-00 2.2.3 ... "$": Designates the end of the
match pattern. "*": Designates 0 or more instances of any character. If TDM Agents match
special characters verbatim in the URI, they MUST use "%" encoding" (``/path/foo-%24``
matches ``/path/foo-$``), and its note: "TDM Agents should follow the rules detailed by
Google in How Google interprets the robots.txt specification". So locations are matched
by :mod:`scrapy_robots.rfc9309`'s matcher and normalisation, as robots.txt rules are (path
and query, percent-encoding equivalence), first match instead of longest.
:func:`~scrapy_robots.tdmrep.location_pattern` says what a full URL or a relative
path as a location means; the report's examples are all paths from ``/``.

"Processing priority": "A TDM Agent MUST check the presence of a TDM file on the origin
server before it starts scraping ... The values of `tdm-reservation` and `tdm-policy`
found in this header supercede any value inferred from a TDM file on the origin server.
A TDM Agent MUST check the presence of TDM Metadata found in HTML content ... The values
... found here supercede previous values." :func:`combine`: file, header, meta, each
property on its own.
"""

from __future__ import annotations

from scrapy_robots.tdmrep.answer import FILE, HEADER, META, UNSET, Answer, combine
from scrapy_robots.tdmrep.file import (
    HTML_PAGE,
    MAX_BYTES,
    NOT_AN_ARRAY,
    NOT_JSON,
    NOT_UTF8,
    TOO_LARGE,
    TdmRepError,
    TdmRepFile,
    TdmRule,
    location_pattern,
    parse_tdmrep,
)
from scrapy_robots.tdmrep.page import POLICY, RESERVATION, header_reservation, meta_reservation

__all__ = [
    "FILE",
    "HEADER",
    "HTML_PAGE",
    "MAX_BYTES",
    "META",
    "NOT_AN_ARRAY",
    "NOT_JSON",
    "NOT_UTF8",
    "POLICY",
    "RESERVATION",
    "TOO_LARGE",
    "UNSET",
    "Answer",
    "TdmRepError",
    "TdmRepFile",
    "TdmRule",
    "combine",
    "header_reservation",
    "location_pattern",
    "meta_reservation",
    "parse_tdmrep",
]
