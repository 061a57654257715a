"""``scrapy robots-key``: the crawler's Web Bot Auth key, beside ``scrapy robots``.

``--make-key PATH`` makes an Ed25519 key pair (the private key, PEM, readable by its
owner only); with no option, the key directory to publish for the crawl's key (the JWK
Set, ``kid`` its thumbprint), and with ``--authority HOST`` the headers its server sends with
it (the directory's own signature, the draft's domain binding: signing/binding.py);
``--with FILE`` lists more keys in it (a fleet's, each crawler's public key);
``--check FILE|URL`` says whether a directory lists the crawl's key, as a verifier would
find it (a URL fetched live: its status, Content-Type and own signature too:
signing/check.py). The crawl's key is the project's ``ROBOTSTXT_SIGNATURE_KEY`` unless
``--key`` names one.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from scrapy_robots.signing.binding import DIRECTORY_TAG, directory_headers, host_authority
from scrapy_robots.signing.check import (
    DirectoryError,
    Listing,
    bindings,
    directory_keys,
    entries,
    fetch,
    listing,
)
from scrapy_robots.signing.keys import (
    DIRECTORY_MEDIA_TYPE,
    DIRECTORY_PATH,
    KeyFileError,
    load_key,
    make_key,
    public_jwk,
    public_keys,
    thumbprint,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from scrapy_robots.signing.keys import SigningKey

#: Exit statuses: the directory lists the key; it does not; an error (no key, a bad file).
EXIT_OK, EXIT_MISSING, EXIT_ERROR = 0, 1, 2
#: How long the directory's own signature holds by default (``--expires``): a week, for a
#: file served with fixed headers and signed again by a weekly job.
BINDING_EXPIRES = 7 * 86400
#: ``--check`` given no FILE or URL: check the crawl's own ``ROBOTSTXT_SIGNATURE_AGENT``.
AGENT = ""


class Command(ScrapyCommand):
    requires_project = False
    default_settings = {"LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False}

    def syntax(self) -> str:
        return "[--make-key PATH | --check [FILE|URL] | [--with FILE]... [--authority HOST [--body FILE]]] [--key PATH]"

    def short_desc(self) -> str:
        return "Make the crawler's Web Bot Auth key, print its directory, check a directory"

    def long_desc(self) -> str:
        return (
            "With --make-key PATH, make an Ed25519 key pair and write the private key to PATH (PEM, mode 600). "
            "With no option, print the key directory to publish at "
            f"https://<your host>{DIRECTORY_PATH} ({DIRECTORY_MEDIA_TYPE}) for the crawl's key. "
            "With --with FILE (repeatable), list another key in it too: a fleet's crawler's public key (a JWK, a "
            "JWK Set, a PEM file), each with its thumbprint as kid. "
            "With --check FILE or --check URL, say whether that directory lists the crawl's key and which of its "
            "keys it is; a URL (http or https) is fetched once, no redirect followed, and its status, Content-Type "
            "and own signature (verified for the URL's host) are said too; --check alone fetches "
            "ROBOTSTXT_SIGNATURE_AGENT. Exit status 0 listed, 1 not listed or a signature that fails, 2 an error. "
            "With --authority HOST, print the headers the directory's server sends with it at HOST "
            "(Content-Type, Content-Digest and its own signature, the draft's domain binding), then the body they "
            "sign; --body FILE writes that body to FILE instead. The crawl's key is ROBOTSTXT_SIGNATURE_KEY unless "
            "--key names one. Docs: docs/signing.rst."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        group = parser.add_argument_group(title="Key Options")
        group.add_argument(
            "--make-key", metavar="PATH", help="make an Ed25519 key pair, the private key written to PATH"
        )
        group.add_argument("--key", metavar="PATH", help="the private key (default: ROBOTSTXT_SIGNATURE_KEY)")
        group.add_argument(
            "--check",
            metavar="FILE|URL",
            nargs="?",
            const=AGENT,
            help="check that a key directory lists the key: a file, or a URL fetched live (its status, Content-Type "
            "and own signature checked too); alone, the URL of ROBOTSTXT_SIGNATURE_AGENT",
        )
        group.add_argument(
            "--with",
            dest="also",
            metavar="FILE",
            action="append",
            default=[],
            help="list this file's public key(s) in the directory too (a fleet's other crawlers); repeatable",
        )
        group.add_argument(
            "--authority",
            metavar="HOST",
            help="print the headers to serve the directory with at HOST (its own signature, over HOST and the body's "
            "Content-Digest), then the body",
        )
        group.add_argument("--body", metavar="FILE", help="with --authority: write the signed body to FILE")
        group.add_argument(
            "--expires",
            metavar="SECONDS",
            type=int,
            default=BINDING_EXPIRES,
            help=f"with --authority: how long the signature holds (default: {BINDING_EXPIRES}, a week)",
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}", print_help=False)
        checking = opts.check is not None
        if opts.make_key and (opts.key or checking):
            raise UsageError("--make-key makes a key: it takes neither --key nor --check", print_help=False)
        if opts.authority and (opts.make_key or checking):
            raise UsageError(
                "--authority signs the directory: it takes neither --make-key nor --check", print_help=False
            )
        if opts.also and (opts.make_key or checking):
            raise UsageError(
                "--with lists more keys in the directory printed: it takes neither --make-key nor --check",
                print_help=False,
            )
        if opts.body and not opts.authority:
            raise UsageError("--body writes the directory signed for --authority HOST: give it too", print_help=False)
        if opts.expires < 1:
            raise UsageError(f"--expires must be a number of seconds above 0, not {opts.expires}", print_help=False)
        self.exitcode = self._run(opts)

    def _run(self, opts: argparse.Namespace) -> int:
        if opts.make_key:
            try:
                key = make_key(opts.make_key)
            except OSError as exc:
                return _error(
                    f"cannot write {opts.make_key!r}: {exc.strerror or exc} (an existing file is never replaced)"
                )
            print(
                f"wrote the private key to {opts.make_key} (keep it secret); its keyid is {key.keyid}", file=sys.stderr
            )
            print(f"publish this at https://<your host>{DIRECTORY_PATH} as {DIRECTORY_MEDIA_TYPE}:", file=sys.stderr)
            _print_directory(key)
            return EXIT_OK
        assert self.settings is not None
        path = opts.key or self.settings.get("ROBOTSTXT_SIGNATURE_KEY")
        if not path:
            return _error("no key: give --key PATH, set ROBOTSTXT_SIGNATURE_KEY, or make one with --make-key PATH")
        try:
            key = load_key(path)
        except KeyFileError as exc:
            return _error(str(exc))
        if opts.check is not None:
            where = opts.check or self.settings.get("ROBOTSTXT_SIGNATURE_AGENT")
            if not where:
                return _error("--check: give a FILE or a URL, or set ROBOTSTXT_SIGNATURE_AGENT (the one it fetches)")
            return _check_url(key, where) if _is_url(where) else _check(key, where)
        try:
            others = [public for name in opts.also for public in public_keys(name).values()]
        except KeyFileError as exc:
            return _error(f"--with: {exc}")
        if opts.authority:
            return _signed_directory(key, others, opts.authority, opts.body, opts.expires)
        _print_directory(key, others)
        return EXIT_OK


def _directory_body(key: SigningKey, others: Sequence[Ed25519PublicKey] = ()) -> str:
    """The JWK Set of ``key`` then ``others``, each once, ``kid`` its thumbprint: one
    directory for a fleet whose crawlers sign each with its own key."""
    listed = [key.directory_entry()]
    for public in others:
        jwk = public_jwk(public)
        entry = {**jwk, "kid": thumbprint(jwk)}
        if entry not in listed:
            listed.append(entry)
    return json.dumps({"keys": listed}, indent=2) + "\n"


def _print_directory(key: SigningKey, others: Sequence[Ed25519PublicKey] = ()) -> None:
    print(_directory_body(key, others), end="")


def _signed_directory(
    key: SigningKey, others: list[Ed25519PublicKey], authority: str, body_file: str | None, expires: int
) -> int:
    """The headers the directory is served with at ``authority``, and the body they sign:
    byte for byte what the server must send (its Content-Digest covers those bytes)."""
    try:
        at = host_authority(authority)
    except ValueError as exc:
        return _error(f"--authority: {exc}")
    body = _directory_body(key, others)
    created = int(time.time())
    headers = directory_headers(key, body.encode("utf-8"), at, created, created + expires)
    if body_file:
        try:
            with open(body_file, "w", encoding="utf-8", newline="") as f:
                f.write(body)
        except OSError as exc:
            return _error(f"cannot write {body_file!r}: {exc.strerror or exc}")
    for name, value in headers.items():
        print(f"{name}: {value}")
    if not body_file:
        print()
        print(body, end="")
    return EXIT_OK


def _error(message: str) -> int:
    print(f"scrapy robots-key: {message}", file=sys.stderr)
    return EXIT_ERROR


def _is_url(where: str) -> bool:
    return where.lower().startswith(("http://", "https://"))


def _said(where: str, found: Listing, key: SigningKey) -> int:
    """The line on the crawl's key in a directory, and its exit status."""
    if found.position is None:
        print(f"{where}: does not list the key {key.keyid} ({found.count} other key(s))")
        return EXIT_MISSING
    if found.problem:
        print(f"{where}: lists the key, but {found.problem}")
        return EXIT_MISSING
    which = f" (key {found.position} of {found.count})" if found.count > 1 else ""
    print(f"{where}: lists the key {key.keyid}{which}")
    return EXIT_OK


def _check(key: SigningKey, path: str) -> int:
    """Whether the directory file ``path`` lists ``key``."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        found = listing(entries(data, repr(path)), key, repr(path))
    except OSError as exc:
        return _error(f"{path!r} cannot be read ({exc.strerror or exc})")
    except DirectoryError as exc:
        return _error(str(exc))
    return _said(path, found, key)


def _check_url(key: SigningKey, url: str) -> int:
    """The directory at ``url`` as a verifier fetches it: its answer, whether it lists
    ``key``, and whether its own signature verifies for the URL's host."""
    try:
        served = fetch(url)
        keys = entries(served.body, url)
        found = listing(keys, key, url)
        signed = bindings(served, directory_keys(keys, url))
    except DirectoryError as exc:
        return _error(str(exc))
    media = served.media_type or "none"
    print(f"{url}: {served.status}, Content-Type {media}, {len(served.body)} bytes")
    status = _said(url, found, key)
    if media != DIRECTORY_MEDIA_TYPE:
        print(f"{url}: warning: the Content-Type is {media}, not {DIRECTORY_MEDIA_TYPE}: a verifier may refuse it")
    if url.lower().startswith("http://"):
        print(f"{url}: warning: not https: verifiers fetch the directory over https")
    if not signed:
        print(
            f"{url}: warning: not signed by its server (no Signature-Input tagged {DIRECTORY_TAG}): the draft "
            "recommends it; `scrapy robots-key --authority HOST` prints the headers"
        )
    for binding in signed:
        whose = "the crawl's key" if binding.keyid == key.keyid else "another key of the directory"
        if binding.ok:
            until = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(binding.expires)) if binding.expires else "never"
            print(
                f"{url}: signed ({binding.label}, {whose}): verifies for this host, its Content-Digest matches "
                f"the body; expires {until}"
            )
        else:
            print(f"{url}: signed ({binding.label}, keyid {binding.keyid}), but {binding.why}")
            status = max(status, EXIT_MISSING)
    return status
