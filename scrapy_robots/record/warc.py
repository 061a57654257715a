"""The policy file versions as WARC: a ``request``, a ``response`` (or, for a body already
in the file, a ``revisit`` with the identical-payload-digest profile, as Heritrix writes
duplicates) and a ``metadata`` record with the crawl's reading of it (JSON), per download.

Each record is its own gzip member, so a file cut short by a crash reads up to its last
whole record. ``warcio`` (the ``record`` extra) is imported only here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from datetime import UTC, datetime
from io import BytesIO
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import urlsplit

from scrapy_robots.record.version import PolicyVersion, encode_line

if TYPE_CHECKING:
    from collections.abc import Iterator

SUFFIX = ".warc.gz"
#: The metadata record's content type: the crawl's reading of the download (PolicyVersion.fields).
METADATA_TYPE = "application/vnd.scrapy-robots.policy-version+json"


def check_warcio() -> None:
    """Raise ValueError naming the fix when warcio is missing."""
    try:
        import warcio  # noqa: F401
    except ImportError:
        raise ValueError(
            "ROBOTSTXT_RECORD_FORMAT = 'warc' needs warcio: pip install 'scrapy-robots[record]' "
            "(or set ROBOTSTXT_RECORD_FORMAT = 'jsonl')"
        ) from None


def _date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _digest(sha256_hex: str) -> str:
    return "sha256:" + base64.b32encode(bytes.fromhex(sha256_hex)).decode()


class WarcVersions:
    """Appends versions to one WARC file; bodies are written once per file."""

    def __init__(self, stream: BinaryIO, software: str):
        from warcio.warcwriter import WARCWriter

        # warcio writes each record into the buffer; each is compressed here, as a gzip
        # member of its own (what warcio's gzip=True does, at level 9 with a 256 KiB
        # compressor per record: most of a version's cost for records of a few hundred bytes).
        self.stream = stream
        self.buffer = BytesIO()
        self.writer = WARCWriter(self.buffer, gzip=False, warc_version="1.1")
        self.written: dict[str, tuple[str, str]] = {}  # sha256 -> (URL, WARC-Date) of its response
        info = self.writer.create_warcinfo_record(
            "", {"software": software, "format": "WARC File Format 1.1", "description": "scrapy-robots record"}
        )
        self._write(info)

    def _write(self, record: Any) -> None:
        buffer = self.buffer
        buffer.seek(0)
        buffer.truncate()
        self.writer.write_record(record)
        self.stream.write(gzip_member(buffer.getvalue()))

    def write(self, version: PolicyVersion) -> None:
        from warcio.statusandheaders import StatusAndHeaders

        writer, url, date = self.writer, version.url, _date(version.fetched_at)
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        request_headers = [("Host", parts.netloc), *_text(version.request_headers)]
        request = writer.create_warc_record(
            url,
            "request",
            http_headers=StatusAndHeaders(f"GET {target} HTTP/1.1", request_headers, is_http_request=True),
            warc_headers_dict={"WARC-Date": date},
        )
        self._write(request)
        concurrent = request.rec_headers.get_header("WARC-Record-ID")
        if version.status is not None:
            headers = _text(version.headers)
            headers.append(("Content-Length", str(len(version.body))))
            http = StatusAndHeaders(str(version.status), headers, protocol="HTTP/1.1")
            earlier = self.written.get(version.sha256)
            if earlier is not None:
                response = writer.create_revisit_record(
                    url,
                    _digest(version.sha256),
                    earlier[0],
                    earlier[1],
                    http_headers=http,
                    warc_headers_dict={"WARC-Date": date},
                )
            else:
                response = writer.create_warc_record(
                    url,
                    "response",
                    payload=BytesIO(version.body),
                    length=len(version.body),
                    http_headers=http,
                    warc_headers_dict={"WARC-Date": date, "WARC-Payload-Digest": _digest(version.sha256)},
                )
                self.written[version.sha256] = (url, date)
            self._write(response)
            concurrent = response.rec_headers.get_header("WARC-Record-ID")
        data = encode_line(version.fields()).encode()
        metadata = writer.create_warc_record(
            url,
            "metadata",
            payload=BytesIO(data),
            length=len(data),
            warc_content_type=METADATA_TYPE,
            warc_headers_dict={"WARC-Date": date, "WARC-Concurrent-To": concurrent},
        )
        self._write(metadata)


def gzip_member(data: bytes) -> bytes:
    """``data`` as one gzip member, with a window no larger than it needs."""
    bits = max(9, min(15, (len(data) - 1).bit_length()))
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + bits, max(1, min(8, bits - 7)))
    return compressor.compress(data) + compressor.flush()


def _text(pairs: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in pairs]


def read_warc(stream: BinaryIO) -> Iterator[tuple[dict[str, Any], bytes | None]]:
    """Each version in a WARC file written by :class:`WarcVersions`: its fields, and its
    body when the file holds it (None for a network error). A file cut short by a crash
    ends at its last whole record."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    bodies: dict[str, bytes] = {}
    try:
        for record in ArchiveIterator(stream):
            kind = record.rec_type
            if kind == "response":
                body = record.content_stream().read()
                bodies[hashlib.sha256(body).hexdigest()] = body
            elif kind == "metadata" and record.rec_headers.get_header("Content-Type") == METADATA_TYPE:
                fields = json.loads(record.content_stream().read())
                yield fields, bodies.get(fields["sha256"]) if fields.get("status") is not None else None
    except (ArchiveLoadFailed, EOFError, OSError, ValueError):
        return  # a crash cut the last record: what came before it stands
