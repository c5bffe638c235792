"""Signed archives (issue #21): `collect --sign-key`, `verify --key`, and what `report` says.

The envelope is checked twice: by `nvcregen verify`, and by a DSSE check written here
from the spec (PAE over the payload, Ed25519 verified with `cryptography` directly), so
the format is what other DSSE verifiers read, not only what nvcregen reads back.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from oncallfactory import site_text, write_logs

from nvcregen.cli import main
from nvcregen.results.attestation import PAYLOAD_TYPE
from nvcregen.results.dsse import sign

SITE = "h20-3e-four"
ENVELOPE = "attestation.dsse.json"


def write_key(folder: Path, name: str) -> tuple[Path, Path]:
    """A fresh Ed25519 key pair as PEM files: (private, public)."""
    key = Ed25519PrivateKey.generate()
    private, public = folder / f"{name}.pem", folder / f"{name}.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def spki_sha256(public: Path) -> str:
    """The fingerprint as the docs say to compute it: sha256 of the DER SubjectPublicKeyInfo."""
    key = serialization.load_pem_public_key(public.read_bytes())
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def collect(tmp: Path, *extra: str) -> Result:
    site = tmp / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    if not (tmp / "saved").exists():
        write_logs(tmp / "saved", site_text())
    args = ["collect", "--site", str(site), "--from", str(tmp / "saved")]
    return CliRunner().invoke(main, [*args, "--out", str(tmp / "results"), *extra])


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(run folder, private key, public key) of a signed collection."""
    tmp = tmp_path_factory.mktemp("signed")
    private, public = write_key(tmp, "signer")
    result = collect(tmp, "--sign-key", str(private))
    assert result.exit_code == 0, result.output
    assert f"signed by key {spki_sha256(public)} (attestation.dsse.json" in result.output
    (run,) = (tmp / "results" / SITE).iterdir()
    return run, private, public


@pytest.fixture
def copy(signed: tuple[Path, Path, Path], tmp_path: Path) -> Path:
    """A copy of the signed run, in a folder of its site, to tamper with."""
    return Path(shutil.copytree(signed[0], tmp_path / SITE / signed[0].name))


def verify(run: Path, public: Path) -> Result:
    return CliRunner().invoke(main, ["verify", str(run), "--key", str(public)])


@pytest.mark.slow
def test_independent_dsse_check_of_the_envelope(signed: tuple[Path, Path, Path]) -> None:
    run, _, public = signed
    envelope = json.loads((run / ENVELOPE).read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    payload = base64.b64decode(envelope["payload"], validate=True)
    kind = envelope["payloadType"].encode()
    # PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
    pae = b" ".join([b"DSSEv1", str(len(kind)).encode(), kind, str(len(payload)).encode(), payload])
    (signature,) = envelope["signatures"]
    key = serialization.load_pem_public_key(public.read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    key.verify(base64.b64decode(signature["sig"]), pae)  # raises InvalidSignature if not
    assert signature["keyid"] == spki_sha256(public)
    statement = json.loads(payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://nvcregen.io/attestation/readiness/v1"
    files = sorted(
        p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file() and p.name != ENVELOPE
    )
    assert "SHA256SUMS" in files and any(f.startswith("logs/") for f in files)
    assert statement["subject"] == [
        {"name": f, "digest": {"sha256": hashlib.sha256((run / f).read_bytes()).hexdigest()}}
        for f in files
    ]
    predicate = statement["predicate"]
    assert predicate["site"]["name"] == SITE
    assert predicate["site"]["sha256"] == hashlib.sha256(site_text().encode()).hexdigest()
    assert len(predicate["plan"]["sha256"]) == 64
    assert predicate["runId"] == run.name
    assert predicate["verdict"] == "pass"
    assert [(n["node"], n["status"], n["verdict"]) for n in predicate["nodes"]] == [
        (n, "cleared", "pass") for n in ("node-a", "node-b", "node-c", "node-d")
    ]
    assert predicate["nvcregen"]["version"]
    assert predicate["collectedAt"].endswith("Z") and len(predicate["collectedAt"]) == 20


def test_an_intact_archive_verifies_with_its_key(signed: tuple[Path, Path, Path]) -> None:
    run, _, public = signed
    result = verify(run, public)
    assert result.exit_code == 0, result.output
    assert f"verified, every file as signed by key {spki_sha256(public)}" in result.output
    site_folder = verify(run.parent, public)  # a site folder: its newest run
    assert site_folder.exit_code == 0, site_folder.output


def test_an_intact_copy_verifies_where_it_belongs_even_given_as_dot(
    copy: Path, signed: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(copy)
    result = verify(Path(), signed[2])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("renamed", "this folder is run '20991231T000000Z-ffffffffffff' of site folder '{site}'"),
        ("other site", "this folder is run '{run}' of site folder 'other-site'"),
    ],
)
def test_a_signed_run_in_another_place_does_not_verify(
    copy: Path, signed: tuple[Path, Path, Path], where: str, said: str
) -> None:
    """Every file is as signed, but the folder answers for another run or site (NVC757)."""
    if where == "renamed":
        moved = copy.rename(copy.parent / "20991231T000000Z-ffffffffffff")
    else:
        (copy.parent.parent / "other-site").mkdir()
        moved = copy.rename(copy.parent.parent / "other-site" / copy.name)
    result = verify(moved, signed[2])
    assert result.exit_code == 1, result.output
    assert f"error[NVC757]: the Statement was signed for run '{copy.name}' of site '{SITE}'" in (
        result.stderr
    )
    assert said.format(site=SITE, run=copy.name) in result.stderr
    assert "hint: a signed run verifies only as <results>/<site>/<run-id>/" in result.stderr
    assert "changed since it was signed" not in result.stderr  # the files themselves are intact


def test_a_signed_run_copied_in_its_site_folder_is_listed_once(
    copy: Path, signed: tuple[Path, Path, Path]
) -> None:
    duplicate = shutil.copytree(copy, copy.parent / "00-copy")  # sorts first by name
    result = verify(copy.parent, signed[2])
    assert result.exit_code == 0, result.output
    assert f"{copy}: verified" in result.stdout  # the folder named for the run
    assert f"error[NVC756]: {duplicate} holds the run of {copy} (the same SHA256SUMS)" in (
        result.stderr
    )


def test_another_key_is_refused(signed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    run, _, _ = signed
    _, other = write_key(tmp_path, "other")
    result = verify(run, other)
    assert result.exit_code == 1
    assert f"no signature verifies under the key {spki_sha256(other)}" in result.stderr


def test_one_changed_byte_is_refused(copy: Path, signed: tuple[Path, Path, Path]) -> None:
    data = bytearray((copy / "bandwidth.csv").read_bytes())
    data[-2] ^= 1
    (copy / "bandwidth.csv").write_bytes(bytes(data))
    result = verify(copy, signed[2])
    assert result.exit_code == 1
    assert "bandwidth.csv changed since it was signed (its sha256 differs)" in result.stderr


def test_a_change_with_sha256sums_rewritten_is_still_refused(
    copy: Path, signed: tuple[Path, Path, Path]
) -> None:
    """Rewriting SHA256SUMS to match satisfies `sha256sum -c`, not the signature."""
    verdicts = copy / "verdicts.json"
    verdicts.write_text(verdicts.read_text().replace('"fail"', '"pass"') + " ")
    names = [line.split("  ", 1)[1] for line in (copy / "SHA256SUMS").read_text().splitlines()]
    sums = [f"{hashlib.sha256((copy / n).read_bytes()).hexdigest()}  {n}" for n in names]
    (copy / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    result = verify(copy, signed[2])
    assert result.exit_code == 1
    assert "verdicts.json changed since it was signed" in result.stderr
    assert "SHA256SUMS changed since it was signed" in result.stderr


def test_a_missing_file_is_refused(copy: Path, signed: tuple[Path, Path, Path]) -> None:
    (log,) = list((copy / "logs").rglob("*.log"))[:1]
    log.unlink()
    result = verify(copy, signed[2])
    assert result.exit_code == 1
    assert f"{log.relative_to(copy).as_posix()} was signed but is missing" in result.stderr


def test_an_added_file_is_refused(copy: Path, signed: tuple[Path, Path, Path]) -> None:
    (copy / "logs" / "extra.log").write_text("added\n")
    result = verify(copy, signed[2])
    assert result.exit_code == 1
    assert "logs/extra.log was added after signing" in result.stderr


def test_an_edited_envelope_is_refused(copy: Path, signed: tuple[Path, Path, Path]) -> None:
    envelope = json.loads((copy / ENVELOPE).read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["verdict"] = "fail"
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    (copy / ENVELOPE).write_text(json.dumps(envelope))
    result = verify(copy, signed[2])
    assert result.exit_code == 1
    assert "no signature verifies under the key" in result.stderr


def resign(run: Path, private: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Sign the run's Statement again with the signer's own key after `change` edits it."""
    envelope = json.loads((run / ENVELOPE).read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    change(statement)
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    (run / ENVELOPE).write_text(sign(PAYLOAD_TYPE, payload, key))


def test_subjects_that_omit_sha256sums_are_refused(
    copy: Path, signed: tuple[Path, Path, Path]
) -> None:
    """A validly signed Statement that leaves SHA256SUMS out signs too little: refused."""

    def omit_sums(statement: dict[str, Any]) -> None:
        statement["subject"] = [s for s in statement["subject"] if s["name"] != "SHA256SUMS"]

    resign(copy, signed[1], omit_sums)
    result = verify(copy, signed[2])
    assert result.exit_code == 1, result.output
    assert f"{ENVELOPE}: SHA256SUMS is not among the signed files" in result.stderr


def resign_measured(run: Path, private: Path, finished: str, collected: str) -> None:
    """The run as if its measurements finished at `finished` and it was signed (by the
    signer's own key) at `collected`: summary.json, SHA256SUMS and the Statement rewritten."""
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps(summary | {"finished_at": finished}))
    names = [line.split("  ", 1)[1] for line in (run / "SHA256SUMS").read_text().splitlines()]
    sums = [f"{hashlib.sha256((run / n).read_bytes()).hexdigest()}  {n}" for n in names]
    (run / "SHA256SUMS").write_text("\n".join(sums) + "\n")

    def restate(statement: dict[str, Any]) -> None:
        statement["subject"] = [
            {"name": n, "digest": {"sha256": hashlib.sha256((run / n).read_bytes()).hexdigest()}}
            for n in sorted([*names, "SHA256SUMS"])
        ]
        statement["predicate"]["collectedAt"] = collected

    resign(run, private, restate)


@pytest.mark.parametrize(
    ("finished", "refused"), [("2026-10-26T07:38:20Z", False), ("2026-10-26T07:38:21Z", True)]
)
def test_a_run_measured_after_its_signed_collection_is_refused(
    copy: Path, signed: tuple[Path, Path, Path], finished: str, refused: bool
) -> None:
    """The signed `collectedAt` bounds the measurement time (the files' times are newer)."""
    resign_measured(copy, signed[1], finished, "2026-10-26T07:33:20Z")
    result = verify(copy.parent, signed[2])
    assert result.exit_code == (1 if refused else 0), result.output
    said = (
        f"error[NVC755]: it says its measurements finished at {finished}, after it was"
        " collected (2026-10-26T07:33:20Z, signed)"
    )
    assert (said in result.stderr) is refused


def test_report_names_the_key_of_a_signed_archive(
    signed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run, _, public = signed
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    said = f"signed, the envelope says by key {spki_sha256(public)}; every file is as signed"
    assert said in result.output
    assert said in (tmp_path / "report" / "summary.md").read_text()
    assert said in (tmp_path / "report" / "index.html").read_text()


@pytest.mark.slow
def test_unsigned_archives_are_allowed_and_say_so(
    tmp_path: Path, signed: tuple[Path, Path, Path]
) -> None:
    result = collect(tmp_path)
    assert result.exit_code == 0, result.output
    assert "unsigned: `collect --sign-key KEY` signs an archive (Ed25519)" in result.output
    (run,) = (tmp_path / "results" / SITE).iterdir()
    assert not (run / ENVELOPE).exists()
    report = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "report")])
    assert "unsigned (no attestation.dsse.json" in report.output
    refused = verify(run, signed[2])
    assert refused.exit_code == 1
    assert "the archive is not signed: attestation.dsse.json is missing" in refused.stderr


def test_a_key_of_another_type_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    (tmp_path / "ec.pem").write_bytes(pem)
    result = collect(tmp_path, "--sign-key", str(tmp_path / "ec.pem"))
    assert result.exit_code == 2
    assert "is an ECDSA key, not Ed25519: archives are signed with Ed25519 keys only" in (
        result.stderr
    )
    assert not (tmp_path / "results").exists()
    body = b"".join(pem.splitlines()[1:-1]).decode()
    assert body[:16] not in result.output and "PRIVATE" not in result.output


def test_verify_refuses_a_private_key_for_key_and_says_why(
    signed: tuple[Path, Path, Path],
) -> None:
    run, private, _ = signed
    result = verify(run, private)
    assert result.exit_code == 2
    assert "holds a private key: give its public half" in result.stderr
    assert private.read_text().splitlines()[1][:16] not in result.output


def test_without_cryptography_signing_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signed: tuple[Path, Path, Path]
) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives", None)  # not installed
    result = collect(tmp_path, "--sign-key", str(signed[1]))
    assert result.exit_code == 2
    assert "need the `cryptography` package, an optional dependency: pip install" in (result.stderr)
    assert "'nvcregen[sign]'" in result.stderr
    assert not (tmp_path / "results").exists()
    refused = verify(signed[0], signed[2])
    assert refused.exit_code == 2
    assert "pip install 'nvcregen[sign]'" in refused.stderr


@pytest.mark.slow
def test_with_source_date_epoch_a_signed_archive_is_the_same_bytes_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signed: tuple[Path, Path, Path]
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1793000000")
    first = collect(tmp_path, "--sign-key", str(signed[1]))
    (tmp_path / "results").rename(tmp_path / "first")
    again = collect(tmp_path, "--sign-key", str(signed[1]))
    assert first.exit_code == again.exit_code == 0
    (run,) = (tmp_path / "results" / SITE).iterdir()
    envelope = (run / ENVELOPE).read_bytes()
    assert envelope == (tmp_path / "first" / SITE / run.name / ENVELOPE).read_bytes()
    payload = json.loads(base64.b64decode(json.loads(envelope)["payload"]))
    assert payload["predicate"]["collectedAt"] == "2026-10-26T07:33:20Z"


def _deep_payload_envelope(copy: Path) -> str:
    envelope = json.loads((copy / ENVELOPE).read_text())
    envelope["payload"] = base64.b64encode(b"[" * 100_000).decode()
    return json.dumps(envelope)


@pytest.mark.parametrize(
    ("shape", "said"),
    [
        ("deep", "the envelope: nested deeper than nvcregen reads (NVC606)"),
        ("deep payload", "the payload: nested deeper than nvcregen reads (NVC606)"),
        ("twice", "the envelope: a key is given twice in one JSON object (NVC607)"),
    ],
)
def test_a_hostile_envelope_is_a_finding_in_every_reader(
    copy: Path, signed: tuple[Path, Path, Path], tmp_path: Path, shape: str, said: str
) -> None:
    """The envelope is archive input (#20): nesting 100,000 deep was an internal error
    (exit 70) in `report`, `verify`, `export metrics` and `history`; a key given twice
    was read last-one-wins."""
    envelope = copy / ENVELOPE
    if shape == "deep":
        envelope.write_text("[" * 100_000)
    elif shape == "deep payload":
        envelope.write_text(_deep_payload_envelope(copy))
    else:
        envelope.write_text(envelope.read_text().replace("{", '{"payloadType": "x", ', 1))
    runner = CliRunner()
    report = runner.invoke(main, ["report", str(copy), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    assert f"signature unusable: {ENVELOPE} cannot be read: " in report.output
    assert said in report.output
    checked = verify(copy, signed[2])
    assert checked.exit_code == 1, checked.output
    if shape != "deep payload":  # the signature fails first there
        assert said in checked.stderr
    metrics = tmp_path / "metrics.txt"
    exported = runner.invoke(main, ["export", "metrics", str(copy), "--out", str(metrics)])
    assert exported.exit_code == 0, exported.output
    text = metrics.read_text()  # the numbers still export, and nothing claims a signature
    assert "nvcregen_nccl_busbw_gbs{" in text and text.endswith("# EOF\n")
    assert "signed by" not in exported.output
    history = runner.invoke(main, ["history", str(copy)])
    assert history.exit_code == 0, history.output
    assert copy.name in history.output  # the run is read, not skipped
    assert "signed by" not in history.output
