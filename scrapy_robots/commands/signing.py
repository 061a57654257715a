"""``scrapy robots-key``: the crawler's Web Bot Auth key, beside ``scrapy robots``.

``--make-key PATH`` makes an Ed25519 key pair (the private key, PEM, readable by its
owner only); with no option, the key directory to publish for the crawl's key (the JWK
Set, ``kid`` its thumbprint), and with ``--authority HOST`` the headers its server sends with
it (the directory's own signature, the draft's domain binding: signing/binding.py);
``--check FILE`` says whether a directory file lists the crawl's key, as a verifier would
find it. The crawl's key is the project's
``ROBOTSTXT_SIGNATURE_KEY`` unless ``--key`` names one.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from scrapy_robots.signing.binding import directory_headers, host_authority
from scrapy_robots.signing.keys import DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH, KeyFileError, directory, load_key, make_key
from scrapy_robots.signing.keys import thumbprint as jwk_thumbprint

if TYPE_CHECKING:
    import argparse

    from scrapy_robots.signing.keys import SigningKey

#: Exit statuses: the directory lists the key; it does not; an error (no key, a bad file).
EXIT_OK, EXIT_MISSING, EXIT_ERROR = 0, 1, 2
#: How long the directory's own signature holds by default (``--expires``): a week, for a
#: file served with fixed headers and signed again by a weekly job.
BINDING_EXPIRES = 7 * 86400


class Command(ScrapyCommand):
    requires_project = False
    default_settings = {"LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False}

    def syntax(self) -> str:
        return "[--make-key PATH | --check FILE | --authority HOST [--body FILE]] [--key PATH]"

    def short_desc(self) -> str:
        return "Make the crawler's Web Bot Auth key, print its directory, check a directory"

    def long_desc(self) -> str:
        return (
            "With --make-key PATH, make an Ed25519 key pair and write the private key to PATH (PEM, mode 600). "
            "With no option, print the key directory to publish at "
            f"https://<your host>{DIRECTORY_PATH} ({DIRECTORY_MEDIA_TYPE}) for the crawl's key. "
            "With --check FILE, say whether that directory lists the crawl's key (exit status 0 yes, 1 no, "
            "2 an error). With --authority HOST, print the headers the directory's server sends with it at HOST "
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
        group.add_argument("--check", metavar="FILE", help="check that a key directory file lists the key")
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
        if opts.make_key and (opts.key or opts.check):
            raise UsageError("--make-key makes a key: it takes neither --key nor --check", print_help=False)
        if opts.authority and (opts.make_key or opts.check):
            raise UsageError(
                "--authority signs the directory: it takes neither --make-key nor --check", print_help=False
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
        if opts.check:
            return _check(key, opts.check)
        if opts.authority:
            return _signed_directory(key, opts.authority, opts.body, opts.expires)
        _print_directory(key)
        return EXIT_OK


def _directory_body(key: SigningKey) -> str:
    return json.dumps(directory(key), indent=2) + "\n"


def _print_directory(key: SigningKey) -> None:
    print(_directory_body(key), end="")


def _signed_directory(key: SigningKey, authority: str, body_file: str | None, expires: int) -> int:
    """The headers the directory is served with at ``authority``, and the body they sign:
    byte for byte what the server must send (its Content-Digest covers those bytes)."""
    try:
        at = host_authority(authority)
    except ValueError as exc:
        return _error(f"--authority: {exc}")
    body = _directory_body(key)
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


def _check(key: SigningKey, path: str) -> int:
    """Whether the directory in ``path`` lists ``key``: its public key, and a ``kid`` (if
    any) equal to its thumbprint, as the draft asks at the well-known URL."""
    try:
        with open(path, encoding="utf-8") as f:
            found: Any = json.load(f)
    except (OSError, ValueError) as exc:
        return _error(f"{path!r} cannot be read as JSON ({exc})")
    keys = found.get("keys") if isinstance(found, dict) else None
    if not isinstance(keys, list):
        return _error(f"{path!r} is not a JWK Set (a JSON object with a 'keys' list)")
    for entry in keys:
        if not isinstance(entry, dict) or entry.get("kty") != "OKP" or entry.get("x") != key.jwk["x"]:
            continue
        if "d" in entry:
            return _error(f"{path!r} lists the key with its private part 'd': publish the public key only")
        kid = entry.get("kid")
        if kid is not None and kid != jwk_thumbprint(entry):
            print(f"{path}: lists the key, but its kid {kid!r} is not its thumbprint {key.keyid!r}")
            return EXIT_MISSING
        print(f"{path}: lists the key {key.keyid}")
        return EXIT_OK
    print(f"{path}: does not list the key {key.keyid} ({len(keys)} other key(s))")
    return EXIT_MISSING
