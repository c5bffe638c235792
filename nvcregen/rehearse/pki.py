"""Certificates and keys for a control plane on loopback, and for the controllers' webhooks.

Made fresh for each run with `cryptography` (EC P-256, valid for a day): a CA and a
serving certificate for 127.0.0.1 and localhost (kube-apiserver, kwok's kubelet server),
a service-account key pair, a token file; and per webhook a CA and a serving certificate
for `<service>.<namespace>.svc`, the name the API server verifies when it calls one.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_CA_USAGE = x509.KeyUsage(False, False, False, False, False, True, True, False, False)
_LOOPBACK = (x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")))


def pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    """A private key as unencrypted PKCS#8 PEM."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _builder(
    subject: str, issuer: str, public: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


def _ca(name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        _builder(name, name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_CA_USAGE, critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate, key


def _serving(
    subject: str,
    names: list[x509.GeneralName],
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    issuer = ca[0].subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    certificate = (
        _builder(subject, str(issuer), key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca[1], hashes.SHA256())
    )
    return certificate, key


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class Credentials:
    """The files kube-apiserver is started with, and the CA clients trust."""

    ca: Path
    cert: Path
    key: Path
    sa_key: Path
    sa_pub: Path
    tokens: Path


def make_credentials(folder: Path, tokens: Mapping[str, tuple[str, str]]) -> Credentials:
    """A CA, a loopback serving certificate, a service-account key pair, a token file.

    `tokens`: token -> (user, its groups comma-separated, or "").
    """
    folder.mkdir(parents=True, exist_ok=True)
    ca = _ca("nvcregen-rehearse-ca")
    cert, key = _serving("kube-apiserver", list(_LOOPBACK), ca)
    sa = ec.generate_private_key(ec.SECP256R1())
    files = Credentials(
        folder / "ca.crt",
        folder / "apiserver.crt",
        folder / "apiserver.key",
        folder / "sa.key",
        folder / "sa.pub",
        folder / "tokens.csv",
    )
    files.ca.write_bytes(_pem(ca[0]))
    files.cert.write_bytes(_pem(cert))
    files.key.write_bytes(pem_key(key))
    files.sa_key.write_bytes(pem_key(sa))
    files.sa_pub.write_bytes(
        sa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    lines = []
    for token, (user, groups) in tokens.items():
        lines.append(
            f'{token},{user},{user}-uid,"{groups}"' if groups else f"{token},{user},{user}-uid"
        )
    files.tokens.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return files


def webhook_certificate(folder: Path, service: str, namespace: str) -> bytes:
    """A CA and a serving certificate for `<service>.<namespace>.svc`; the CA's PEM.

    `tls.crt` and `tls.key` are written into `folder` as a kubelet mounts a certificate
    Secret; the CA is what cert-manager's CA injector writes into a `caBundle`.
    """
    ca = _ca(f"{service}-ca")
    names: list[x509.GeneralName] = [x509.DNSName(f"{service}.{namespace}.svc"), *_LOOPBACK]
    cert, key = _serving(f"{service}.{namespace}.svc", names, ca)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tls.crt").write_bytes(_pem(cert))
    (folder / "tls.key").write_bytes(pem_key(key))
    return _pem(ca[0])
