"""DSSE envelopes signed with Ed25519 keys (https://github.com/secure-systems-lab/dsse).

A DSSE signature is over PAE("DSSEv1", payloadType, payload): the bytes
`DSSEv1 <len(type)> <type> <len(payload)> <payload>`, lengths in ASCII decimal, one
space between fields. The envelope is the JSON object `{"payload": base64(payload),
"payloadType": type, "signatures": [{"keyid": ..., "sig": base64(signature)}]}`.

`keyid` is the key's fingerprint: the SHA-256, in lowercase hex, of the public key's DER
SubjectPublicKeyInfo (`openssl pkey -pubin -in KEY.pub -outform DER | sha256sum`). It is
a hint for the reader, never trusted: a signature counts only when the key the verifier
was given verifies it.

The cryptography is `cryptography`'s (an optional dependency, `nvcregen[sign]`); it is
imported only here, when a key is loaded, so nothing else of nvcregen needs it. Key
material is never put in a message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nvcregen.spec.bounded import RefusedInputError, load_json

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

MAX_KEY_FILE = 64 * 1024
MAX_ENVELOPE = 64 * 1024 * 1024
MISSING = (
    "signing and verifying archives need the `cryptography` package, an optional"
    " dependency: pip install 'nvcregen[sign]'"
)
GENERATE = "make one with `openssl genpkey -algorithm ed25519 -out KEY`"


class SigningKeyError(Exception):
    """A key file that cannot be used; the message never holds key material."""


class EnvelopeError(Exception):
    """An envelope that is not a DSSE envelope as nvcregen writes them."""


@dataclass(frozen=True)
class Envelope:
    """A parsed DSSE envelope: its payload, payload type and (keyid, signature) pairs."""

    payload: bytes
    payload_type: str
    signatures: tuple[tuple[str, bytes], ...]


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding of a payload and its type."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError as exc:
        raise SigningKeyError(MISSING) from exc
    return serialization


def _read_key_file(path: Path, what: str) -> bytes:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_KEY_FILE + 1)
    except OSError as exc:
        raise SigningKeyError(f"{what} {path} cannot be read: {exc.strerror or exc}") from exc
    if len(data) > MAX_KEY_FILE:
        raise SigningKeyError(f"{what} {path} is larger than {MAX_KEY_FILE} bytes: not a PEM key")
    return data


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM file (PKCS#8, unencrypted).

    Raises:
        SigningKeyError: When the file cannot be read, is not an unencrypted PEM private key, or
            holds a key of another type; or `cryptography` is not installed.

    """
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = _read_key_file(path, "--sign-key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError as exc:  # encrypted, and no password given
        raise SigningKeyError(
            f"--sign-key {path} is encrypted: give an unencrypted Ed25519 key"
            " (keep it where only the signer can read it)"
        ) from exc
    except (ValueError, binascii.Error) as exc:  # the library's text may quote the input
        raise SigningKeyError(
            f"--sign-key {path} is not a PEM private key: {GENERATE}{_public_hint(data)}"
        ) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(
            f"--sign-key {path} is {_kind(key)}, not Ed25519: archives are signed with"
            f" Ed25519 keys only; {GENERATE}"
        )
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """An Ed25519 public key from a PEM file (SubjectPublicKeyInfo).

    Raises:
        SigningKeyError: When the file cannot be read, is not a PEM public key (a private key
            is refused too: only its public half is needed), or is not Ed25519.

    """
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = _read_key_file(path, "--key")
    if b"PRIVATE KEY-----" in data:
        raise SigningKeyError(
            f"--key {path} holds a private key: give its public half"
            " (`openssl pkey -in KEY -pubout -out KEY.pub`)"
        )
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, binascii.Error) as exc:
        raise SigningKeyError(
            f"--key {path} is not a PEM public key (-----BEGIN PUBLIC KEY-----)"
        ) from exc
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(f"--key {path} is {_kind(key)}, not Ed25519")
    return key


def _public_hint(data: bytes) -> str:
    if b"PUBLIC KEY-----" in data:
        return " (this is a public key: signing needs the private one)"
    return ""


def _kind(key: object) -> str:
    """The key's type in words (never its value)."""
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, rsa, x448, x25519

    kinds = (
        ((rsa.RSAPrivateKey, rsa.RSAPublicKey), "an RSA key"),
        ((ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey), "an ECDSA key"),
        ((ed448.Ed448PrivateKey, ed448.Ed448PublicKey), "an Ed448 key"),
        ((dsa.DSAPrivateKey, dsa.DSAPublicKey), "a DSA key"),
        ((x25519.X25519PrivateKey, x25519.X25519PublicKey), "an X25519 (key agreement) key"),
        ((x448.X448PrivateKey, x448.X448PublicKey), "an X448 (key agreement) key"),
    )
    return next((words for types, words in kinds if isinstance(key, types)), "another kind of key")


def fingerprint(public: Ed25519PublicKey) -> str:
    """SHA-256 (hex) of the public key's DER SubjectPublicKeyInfo: the envelope's keyid."""
    serialization = _crypto()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def sign(payload_type: str, payload: bytes, key: Ed25519PrivateKey) -> str:
    """The JSON text of a DSSE envelope of `payload`, signed by `key`."""
    signature = key.sign(pae(payload_type, payload))
    envelope = {
        "payload": base64.b64encode(payload).decode("ascii"),
        "payloadType": payload_type,
        "signatures": [
            {
                "keyid": fingerprint(key.public_key()),
                "sig": base64.b64encode(signature).decode("ascii"),
            }
        ],
    }
    return json.dumps(envelope, indent=2, sort_keys=True) + "\n"


def parse_envelope(data: bytes) -> Envelope:
    """A DSSE envelope read from untrusted bytes.

    Raises:
        EnvelopeError: When it is too large, not JSON, lacks a field, or a base64 field
            does not decode.

    """
    if len(data) > MAX_ENVELOPE:
        raise EnvelopeError(f"larger than {MAX_ENVELOPE} bytes")
    found = untrusted_json(data, "the envelope")
    if not isinstance(found, dict):
        raise EnvelopeError("not a JSON object")
    payload, kind, signatures = (found.get(k) for k in ("payload", "payloadType", "signatures"))
    if not isinstance(payload, str) or not isinstance(kind, str):
        raise EnvelopeError("`payload` and `payloadType` must be strings")
    if not isinstance(signatures, list) or not signatures:
        raise EnvelopeError("`signatures` must be a non-empty list")
    pairs = []
    for item in signatures:
        sig = item.get("sig") if isinstance(item, dict) else None
        keyid = item.get("keyid", "") if isinstance(item, dict) else ""
        if not isinstance(sig, str) or not isinstance(keyid, str):
            raise EnvelopeError("every signature needs a string `sig` (and `keyid`)")
        pairs.append((keyid, _b64(sig, "sig")))
    return Envelope(_b64(payload, "payload"), kind, tuple(pairs))


def untrusted_json(data: bytes, what: str) -> Any:
    """JSON from the archive, as strict as its other files (`spec.bounded.load_json`).

    Raises:
        EnvelopeError: `what` (the envelope, the payload) and why: not UTF-8 or JSON, a
            number too long, nesting too deep, or a key given twice (NVC605-NVC607).

    """
    try:
        return load_json(data.decode("utf-8"))
    except RefusedInputError as exc:
        raise EnvelopeError(f"{what}: {exc.message} ({exc.code})") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise EnvelopeError(f"{what} is not JSON: {exc}") from exc


def _b64(text: str, field: str) -> bytes:
    """Standard or URL-safe base64, as DSSE allows, strictly."""
    try:
        if "-" in text or "_" in text:
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EnvelopeError(f"`{field}` is not base64") from exc


def verified_by(envelope: Envelope, public: Ed25519PublicKey) -> bool:
    """Whether any signature of the envelope verifies under `public` (keyids are hints)."""
    from cryptography.exceptions import InvalidSignature

    message = pae(envelope.payload_type, envelope.payload)
    for _, signature in envelope.signatures:
        try:
            public.verify(signature, message)
        except InvalidSignature:
            continue
        return True
    return False
