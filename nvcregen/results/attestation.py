"""Signed archives: an in-toto Statement of every archive file, in a DSSE envelope.

`collect --sign-key KEY` writes `attestation.dsse.json` beside SHA256SUMS: a DSSE
envelope (`dsse.py`, payloadType `application/vnd.in-toto+json`) whose payload is an
in-toto Statement v1 (https://in-toto.io/Statement/v1):

- `subject`: every other file of the run folder, SHA256SUMS included, by its path
  inside the run and its sha256, sorted by path;
- `predicateType`: `https://nvcregen.io/attestation/readiness/v1` (nvcregen's own, below);
- `predicate`: the site (name, file, sha256), the plan's digest, the run id, the
  overall verdict and every node's, nvcregen's version and the collection time.

The envelope itself is the one file of a run SHA256SUMS does not list (it signs it).
`verify_signature` accepts a folder only when its files are exactly the subjects, byte
for byte, and a signature verifies under the key the verifier was given.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nvcregen import __version__
from nvcregen.core import codes
from nvcregen.plan.model import TestUnit
from nvcregen.results.archive import (
    ENVELOPE,
    SUMS,
    Archive,
    compare_digests,
    run_files,
    sums_listing,
)
from nvcregen.results.archivefiles import SiteFile
from nvcregen.results.archiveread import MAX_SUMS, ArchiveFileTooLargeError, read_capped
from nvcregen.results.dsse import (
    MAX_ENVELOPE,
    Envelope,
    EnvelopeError,
    fingerprint,
    parse_envelope,
    sign,
    untrusted_json,
    verified_by,
)
from nvcregen.results.verdicts import Verdicts

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://nvcregen.io/attestation/readiness/v1"
MISPLACED = codes.NVC757.code  # a signed run in a folder of another run id or site


@dataclass(frozen=True)
class Signature:
    """What an archive's envelope claims, before (or after) any key checked it."""

    keyid: str
    predicate: Mapping[str, Any]
    problems: tuple[str, ...] = ()  # where the files differ from the signed subjects


def plan_digest(units: Sequence[TestUnit]) -> str:
    """sha256 of the plan: each planned test's stage, test, pool, nodes and limits.

    The canonical JSON (sorted keys, no spaces) of one object per test unit, in plan
    order: stage, test, pool, its named nodes (or node count), GPUs per node, mode,
    network, nodes per job, timeout and image, and the NVCRE threshold expressions.
    """
    plan = [
        {
            "stage": u.stage.name,
            "test": u.test.name,
            "pool": u.pool.spec.name,
            "nodes": list(u.pool.spec.nodes or ()),
            "nodeCount": u.pool.node_count,
            "gpusPerNode": u.pool.gpus_per_node,
            "model": u.pool.spec.model,
            "mode": u.mode,
            "network": u.network,
            "nodesPerJob": u.nodes_per_job,
            "timeoutMs": u.timeout_ms,
            "image": u.image,
            "thresholds": [t.expression for t in u.thresholds],
        }
        for u in units
    ]
    text = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def collection_time() -> str:
    """Now, UTC, to the second; `SOURCE_DATE_EPOCH` (seconds) fixes it for reproducible runs."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = datetime.fromtimestamp(int(fixed), UTC) if fixed.isdigit() else datetime.now(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def predicate(
    site: SiteFile, plan: str, run_id: str, verdicts: Verdicts, collected_at: str
) -> dict[str, Any]:
    """The readiness predicate: what was judged, against which plan, with what outcome."""
    return {
        "site": {"name": site.name, "file": site.path, "sha256": site.sha256},
        "plan": {"sha256": plan},
        "runId": run_id,
        "verdict": str(verdicts.word),
        "nodes": [
            {"node": n.node, "status": n.status, "verdict": str(n.word)} for n in verdicts.nodes
        ],
        "nvcregen": {"version": __version__},
        "collectedAt": collected_at,
    }


def statement(files: Mapping[str, bytes], about: Mapping[str, Any]) -> bytes:
    """The in-toto Statement v1 of some files, as the envelope's payload (JSON bytes)."""
    subjects = [
        {"name": path, "digest": {"sha256": hashlib.sha256(data).hexdigest()}}
        for path, data in sorted(files.items())
    ]
    body = {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": dict(about),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signed(archive: Archive, key: Ed25519PrivateKey, about: Mapping[str, Any]) -> Archive:
    """The archive with its envelope: a Statement of every file, signed by `key`."""
    if ENVELOPE in archive.files:
        raise ValueError(f"the archive already holds {ENVELOPE}")
    payload = statement(archive.files, about)
    envelope = sign(PAYLOAD_TYPE, payload, key)
    return Archive(archive.run_id, {**archive.files, ENVELOPE: envelope.encode("utf-8")})


def read_signature(folder: Path) -> Signature | str | None:
    """The envelope's keyid and predicate, unverified; None when unsigned; a problem text.

    For `report`: the keyid names the key the signer claims; only `nvcregen verify
    --key` tells whether that key really signed.
    """
    found = _read_statement(folder)
    if found is None or isinstance(found, str):
        return found
    keyid, body = found
    return Signature(keyid, body["predicate"], tuple(_subject_problems(folder, body)))


def _read_statement(folder: Path) -> tuple[str, dict[str, Any]] | str | None:
    """The envelope's first keyid and its Statement, unverified; None unsigned; a problem."""
    file = folder / ENVELOPE
    if not file.is_file() or file.is_symlink():
        return None if not file.exists() and not file.is_symlink() else f"{ENVELOPE} is not a file"
    envelope = _envelope(file)
    if isinstance(envelope, str):
        return envelope
    try:
        body = _statement(envelope.payload, envelope.payload_type)
    except EnvelopeError as exc:
        return f"{ENVELOPE} cannot be read: {exc}"
    return envelope.signatures[0][0], body


def _envelope(file: Path) -> Envelope | str:
    """The envelope read (at most `MAX_ENVELOPE` bytes: NVC759 over it), or why not."""
    try:
        return parse_envelope(read_capped(file, MAX_ENVELOPE))
    except ArchiveFileTooLargeError as exc:
        return str(exc)
    except (OSError, EnvelopeError) as exc:
        return f"{ENVELOPE} cannot be read: {exc}"


def signature_text(folder: Path) -> str:
    """Whether a run is signed, by which key it says, and whether its files match.

    The key is the envelope's claim: `nvcregen verify --key PUB` checks the signature.
    """
    found = read_signature(folder)
    if found is None:
        return f"unsigned (no {ENVELOPE}; `collect --sign-key KEY` signs an archive)"
    if isinstance(found, str):
        return f"signature unusable: {found}"
    if found.problems:
        return (
            f"signed, the envelope says by key {found.keyid or '(no keyid)'}, but the files"
            f" are not those signed: {'; '.join(found.problems)}"
        )
    return (
        f"signed, the envelope says by key {found.keyid or '(no keyid)'}; every file is as"
        " signed (`nvcregen verify RUN --key PUB` checks the signature itself)"
    )


def signed_collection_time(folder: Path) -> str | None:
    """The `collectedAt` of a signed run's predicate, None without a usable one.

    The signature is not verified (that needs the public key: `nvcregen verify --key`),
    so the claim is used only when the Statement's subjects are the run's files: exactly
    the paths and sha256s SHA256SUMS lists, and SHA256SUMS itself with its own sha256
    (which `report` then checks against the files). An envelope written beside another
    run's files, or with no subject, claims nothing (issue #31: a `collectedAt` in 2099
    would otherwise let a run measured "in 2099" pass for the newest).
    """
    found = _read_statement(folder)
    if found is None or isinstance(found, str) or not _subjects_are_sums(folder, found[1]):
        return None
    when = found[1]["predicate"].get("collectedAt")
    return when if isinstance(when, str) else None


def _subjects_are_sums(folder: Path, body: Mapping[str, Any]) -> bool:
    """Whether the Statement's subjects are SHA256SUMS's listing and SHA256SUMS itself."""
    try:
        data = read_capped(folder / SUMS, MAX_SUMS)
    except (OSError, ArchiveFileTooLargeError):
        return False
    listed = sums_listing(data)
    if listed is None:
        return False
    subjects: dict[str, object] = {}
    for item in body["subject"]:
        digest = item.get("digest") if isinstance(item, dict) else None
        name = item.get("name") if isinstance(item, dict) else None
        if (
            not isinstance(name, str)  # a hostile list or object is no name (review)
            or not isinstance(digest, dict)
            or not isinstance(digest.get("sha256"), str)
            or name in subjects
        ):
            return False
        subjects[name] = digest.get("sha256")
    return subjects == listed | {SUMS: hashlib.sha256(data).hexdigest()}


def verify_signature(folder: Path, public: Ed25519PublicKey) -> list[str]:
    """Every reason the folder is not exactly what `public` signed; empty when it is.

    The envelope must parse, carry an in-toto Statement of nvcregen's predicate type,
    and verify under `public`; then the run folder's regular files (but the envelope)
    must be exactly the Statement's subjects, each with its sha256. Anything that is
    not a regular file is a problem too.
    """
    file = folder / ENVELOPE
    if file.is_symlink() or not file.is_file():
        return [f"the archive is not signed: {ENVELOPE} is missing"]
    envelope = _envelope(file)
    if isinstance(envelope, str):
        return [envelope]
    if envelope.payload_type != PAYLOAD_TYPE:
        return [f"{ENVELOPE}: payloadType is {envelope.payload_type!r}, not {PAYLOAD_TYPE}"]
    if not verified_by(envelope, public):
        keyids = ", ".join(k or "(none)" for k, _ in envelope.signatures)
        return [
            f"{ENVELOPE}: no signature verifies under the key {fingerprint(public)}"
            f" (the envelope names {keyids})"
        ]
    try:
        body = _statement(envelope.payload, envelope.payload_type)
    except EnvelopeError as exc:
        return [f"{ENVELOPE}: {exc}"]
    return _subject_problems(folder, body) + identity_problems(folder, body["predicate"])


def identity_problems(folder: Path, about: Mapping[str, Any]) -> list[str]:
    """Whether the signed run id and site are the run folder's name and its parent's (NVC757).

    A signed run is the run of one site: copied under another name, or into another
    site's folder, its files are intact but it would answer for a run it is not.
    """
    place = folder.absolute()  # `.` has a name once made absolute; no link is followed
    site = about.get("site")
    signed_site = site.get("name") if isinstance(site, Mapping) else None
    signed_run = about.get("runId")
    if signed_run == place.name and signed_site == place.parent.name:
        return []
    return [
        f"error[{MISPLACED}]: the Statement was signed for run {signed_run!r} of site"
        f" {signed_site!r}, but this folder is run {place.name!r} of site folder"
        f" {place.parent.name!r} (hint: a signed run verifies only as"
        " <results>/<site>/<run-id>/, where collect wrote it; verify the original, or put"
        " this copy back under that name)"
    ]


def _statement(payload: bytes, payload_type: str) -> dict[str, Any]:
    if payload_type != PAYLOAD_TYPE:
        raise EnvelopeError(f"payloadType is {payload_type!r}, not {PAYLOAD_TYPE}")
    body = untrusted_json(payload, "the payload")
    if not isinstance(body, dict) or body.get("_type") != STATEMENT_TYPE:
        raise EnvelopeError(f"the payload is not an in-toto Statement ({STATEMENT_TYPE})")
    if body.get("predicateType") != PREDICATE_TYPE:
        raise EnvelopeError(f"the predicateType is not {PREDICATE_TYPE}")
    if not isinstance(body.get("subject"), list) or not isinstance(body.get("predicate"), dict):
        raise EnvelopeError("the Statement needs a `subject` list and a `predicate` object")
    return body


def _subject_problems(folder: Path, body: Mapping[str, Any]) -> list[str]:
    signed_files: dict[str, str] = {}
    problems = []
    for item in body["subject"]:
        name = item.get("name") if isinstance(item, dict) else None
        digest = item.get("digest") if isinstance(item, dict) else None
        sha = digest.get("sha256") if isinstance(digest, dict) else None
        if not isinstance(name, str) or not isinstance(sha, str):
            problems.append(f"{ENVELOPE}: a subject without a name and a sha256")
        else:
            signed_files[name] = sha
    found = run_files(folder)
    for path, kind in sorted(found.items()):
        if kind != "file":
            problems.append(f"{path} is a {kind}, not a regular file")
    missing, changed, added, large = compare_digests(folder, signed_files, found, {ENVELOPE})
    problems += large
    problems += [f"{path} was signed but is missing" for path in missing]
    problems += [f"{path} changed since it was signed (its sha256 differs)" for path in changed]
    problems += [f"{path} was added after signing" for path in added]
    if SUMS not in signed_files:
        problems.append(f"{ENVELOPE}: {SUMS} is not among the signed files")
    return problems
