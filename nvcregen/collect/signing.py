"""`collect --sign-key KEY`: the key loaded before anything is read, the archive signed.

The key is loaded first, so a wrong key stops the collection before any cluster or
folder is read and nothing is written. The archive is signed in memory, with the rest
of its files, and written in the same atomic rename (`results/archive.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nvcregen.collect.model import CollectError, LoadedSite
from nvcregen.results.archive import Archive, Written
from nvcregen.results.attestation import collection_time, plan_digest, predicate, signed
from nvcregen.results.dsse import SigningKeyError, fingerprint, load_private_key
from nvcregen.results.verdicts import Verdicts

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def signing_key(path: Path | None) -> Ed25519PrivateKey | None:
    """The private key `--sign-key` names, or None when the archive is not to be signed.

    Raises:
        CollectError: When the key cannot be used (the message holds no key material).

    """
    if path is None:
        return None
    try:
        return load_private_key(path)
    except SigningKeyError as exc:
        raise CollectError(f"nothing collected: {exc}") from exc


def sign_archive(
    archive: Archive, key: Ed25519PrivateKey | None, loaded: LoadedSite, verdicts: Verdicts
) -> Archive:
    """The archive with its signed Statement, when a key was given."""
    if key is None:
        return archive
    about = predicate(
        loaded.file, plan_digest(loaded.plan.units), archive.run_id, verdicts, collection_time()
    )
    return signed(archive, key, about)


def signature_note(key: Ed25519PrivateKey | None, written: Written) -> str:
    """What the collection says about signing: by which key, or why not."""
    if key is None:
        return "unsigned: `collect --sign-key KEY` signs an archive (Ed25519)"
    keyid = fingerprint(key.public_key())
    if written.state == "exists":
        return (
            f"the run folder existed and was kept as it was: not signed now by {keyid}"
            " (collect into another --out to sign it)"
        )
    return f"signed by key {keyid} (attestation.dsse.json; check with `nvcregen verify`)"
