"""The crawler's key: an Ed25519 private key read from a PEM or a JWK file, its public
JWK and RFC 7638 thumbprint (the signatures' ``keyid``), and the JWK Set a crawler
publishes at its key directory.

Nothing here is hand-made cryptography: the key, its bytes and the signatures are
``cryptography``'s; this module only reads files and writes JSON.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

#: RFC 7638 section 3.2: the members of each key type that its thumbprint hashes.
THUMBPRINT_MEMBERS: Final = {"OKP": ("crv", "kty", "x"), "RSA": ("e", "kty", "n"), "EC": ("crv", "kty", "x", "y")}
#: The media type of a key directory (draft-ietf-webbotauth-httpsig-protocol-01).
DIRECTORY_MEDIA_TYPE: Final = "application/http-message-signatures-directory+json"
#: Where a crawler's key directory lives on its own host.
DIRECTORY_PATH: Final = "/.well-known/http-message-signatures-directory"


class KeyFileError(ValueError):
    """A key file that cannot sign: missing, unreadable, encrypted, not a key, not Ed25519."""


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 section 2), as JWK members are written."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 JWK thumbprint (SHA-256, base64url) of a public or private JWK:
    its required members only, in lexicographic order, without whitespace."""
    members = THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None:
        raise ValueError(f"no thumbprint for a JWK of kty {jwk.get('kty')!r}")
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def public_jwk(public_key: Ed25519PublicKey) -> dict[str, str]:
    """An Ed25519 public key as an OKP JWK (RFC 8037)."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 private key with what signatures and the directory name it by."""

    private: Ed25519PrivateKey = field(repr=False)
    #: the public key as a JWK (``kty``, ``crv``, ``x``)
    jwk: dict[str, str]
    #: its RFC 7638 thumbprint: the ``keyid`` of every signature, the ``kid`` in the directory
    keyid: str
    #: the file it was read from, for messages
    source: str = ""

    @classmethod
    def of(cls, private: Ed25519PrivateKey, source: str = "") -> SigningKey:
        jwk = public_jwk(private.public_key())
        return cls(private, jwk, thumbprint(jwk), source)

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)

    def directory_entry(self) -> dict[str, str]:
        """The key as the directory lists it: the public JWK, ``kid`` its thumbprint."""
        return {**self.jwk, "kid": self.keyid}


def directory(*keys: SigningKey) -> dict[str, list[dict[str, str]]]:
    """The JWK Set a crawler publishes at its key directory (RFC 7517 section 5)."""
    return {"keys": [key.directory_entry() for key in keys]}


def load_key(path: str | os.PathLike[str]) -> SigningKey:
    """The Ed25519 private key in ``path``: a PEM file (PKCS#8 or OpenSSH, unencrypted)
    or a JWK (one key, or a JWK Set of one). :class:`KeyFileError` says what is wrong."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise KeyFileError(f"{name!r}: no such file") from None
    except OSError as exc:
        raise KeyFileError(f"{name!r} cannot be read ({exc.strerror or exc})") from None
    text = data.lstrip()
    if text.startswith(b"{"):
        private = _from_jwk(name, text)
    elif text.startswith(b"-----BEGIN"):
        private = _from_pem(name, data)
    else:
        raise KeyFileError(f"{name!r} is neither a PEM key nor a JWK")
    return SigningKey.of(private, name)


def _from_pem(name: str, data: bytes) -> Ed25519PrivateKey:
    loader = (
        serialization.load_ssh_private_key if b"OPENSSH PRIVATE KEY" in data else serialization.load_pem_private_key
    )
    try:
        key = loader(data, password=None)
    except TypeError:  # cryptography: "Password was not given but private key is encrypted"
        raise KeyFileError(f"{name!r} is encrypted: give an unencrypted key, readable by the crawl only") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        if b"PUBLIC KEY" in data:
            raise KeyFileError(f"{name!r} holds a public key: signing needs the private key") from None
        raise KeyFileError(f"{name!r} is not a readable private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{name!r} is {_kind(key)}, not Ed25519")
    return key


def _kind(key: object) -> str:
    kind = type(key).__name__.replace("_", "").removesuffix("PrivateKey").upper()
    article = "an" if kind[:1] in "AEIOR" else "a"
    return f"{article} {kind} key"


def _from_jwk(name: str, data: bytes) -> Ed25519PrivateKey:
    try:
        jwk = json.loads(data)
    except ValueError as exc:
        raise KeyFileError(f"{name!r} is not valid JSON ({exc})") from None
    if isinstance(jwk, dict) and isinstance(jwk.get("keys"), list):
        if len(jwk["keys"]) != 1:
            raise KeyFileError(f"{name!r} is a JWK Set of {len(jwk['keys'])} keys: give a file with one")
        jwk = jwk["keys"][0]
    if not isinstance(jwk, dict):
        raise KeyFileError(f"{name!r} is not a JWK (a JSON object)")
    if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        kind = jwk.get("crv") or jwk.get("kty")
        raise KeyFileError(f"{name!r} is a JWK of {kind!r}, not Ed25519 (kty OKP, crv Ed25519)")
    if not isinstance(jwk.get("d"), str):
        raise KeyFileError(f"{name!r} holds a public JWK (no 'd'): signing needs the private key")
    try:
        private = Ed25519PrivateKey.from_private_bytes(_b64url_decode(jwk["d"]))
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{name!r}: its 'd' is not an Ed25519 private key ({exc})") from None
    if "x" in jwk and public_jwk(private.public_key())["x"] != jwk["x"]:
        raise KeyFileError(f"{name!r}: its 'x' is not the public key of its 'd'")
    return private


def public_keys(path: str | os.PathLike[str]) -> dict[str, Ed25519PublicKey]:
    """The Ed25519 public keys in ``path``, by thumbprint: a key directory (a JWK Set), a
    public JWK, a public PEM, or a private key file (its public half)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise KeyFileError(f"{name!r} cannot be read ({exc.strerror or exc})") from None
    text = data.lstrip()
    if text.startswith(b"-----BEGIN") and b"PUBLIC KEY" in data:
        try:
            key = serialization.load_pem_public_key(data)
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise KeyFileError(f"{name!r} is not a readable public key ({exc})") from None
        if not isinstance(key, Ed25519PublicKey):
            raise KeyFileError(f"{name!r} is not an Ed25519 public key")
        return {thumbprint(public_jwk(key)): key}
    if not text.startswith(b"{"):
        return {(own := load_key(name)).keyid: own.private.public_key()}
    try:
        found = json.loads(data)
    except ValueError as exc:
        raise KeyFileError(f"{name!r} is not valid JSON ({exc})") from None
    entries = found.get("keys") if isinstance(found, dict) and "keys" in found else [found]
    keys = ed25519_keys(entries if isinstance(entries, list) else [], name)
    if not keys:
        raise KeyFileError(f"{name!r} holds no Ed25519 key (a JWK, a JWK Set, a PEM key)")
    return keys


def ed25519_keys(entries: list[Any], name: str = "") -> dict[str, Ed25519PublicKey]:
    """The Ed25519 public keys among the JWKs ``entries`` (a JWK Set's ``keys``), by
    thumbprint; other keys are skipped."""
    keys: dict[str, Ed25519PublicKey] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("kty") != "OKP" or entry.get("crv") != "Ed25519":
            continue
        if isinstance(entry.get("x"), str):
            try:
                key = Ed25519PublicKey.from_public_bytes(_b64url_decode(entry["x"]))
            except ValueError:
                continue
        elif isinstance(entry.get("d"), str):
            key = _from_jwk(name, json.dumps(entry).encode()).public_key()
        else:
            continue
        keys[thumbprint(public_jwk(key))] = key
    return keys


def verifier(keys: Mapping[str, Ed25519PublicKey]) -> Callable[[str, bytes, bytes], bool | None]:
    """Checks a signature by its key's thumbprint: True, False, or None for a key not in ``keys``."""

    def check(keyid: str, data: bytes, signature: bytes) -> bool | None:
        key = keys.get(keyid)
        if key is None:
            return None
        try:
            key.verify(signature, data)
        except InvalidSignature:
            return False
        return True

    return check


def make_key(path: str | os.PathLike[str]) -> SigningKey:
    """A new Ed25519 key written to ``path`` as PKCS#8 PEM, readable by its owner only;
    an existing file is never overwritten (``FileExistsError``)."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(os.fspath(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    return SigningKey.of(private, os.fspath(path))
