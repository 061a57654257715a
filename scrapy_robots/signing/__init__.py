"""Web Bot Auth: every request signed with the crawler's Ed25519 key, so a site can tell
this crawler from one that copies its User-Agent (draft-ietf-webbotauth-httpsig-protocol,
a profile of RFC 9421 HTTP Message Signatures).

A library without Scrapy below the middleware: ``keys.py`` (a key file read, its JWK
thumbprint, the directory to publish), ``base.py`` (RFC 9421's signature base and the
header values), ``signer.py`` (a request's three headers); ``middleware.py`` signs the
crawl's requests. The cryptography is ``cryptography``'s, Scrapy's own dependency.
"""

from __future__ import annotations

from scrapy_robots.signing.keys import KeyFileError, SigningKey, directory, load_key, make_key, thumbprint
from scrapy_robots.signing.signer import RequestSigner

__all__ = ["KeyFileError", "RequestSigner", "SigningKey", "directory", "load_key", "make_key", "thumbprint"]
