"""The control plane itself: the release pinned, the CRDs served, RBAC and TLS enforced."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubecontrolplane import NOBODY_TOKEN, ControlPlane, vendored_crds

from nvcregen.cluster.client import ClusterError, connect
from nvcregen.cluster.dryrun import serves

ROOT = Path(__file__).resolve().parents[2]


def pinned_release() -> str:
    text = (ROOT / "tools" / "controlplane" / "go.mod").read_text("utf-8")
    (line,) = [x for x in text.splitlines() if x.strip().startswith("k8s.io/kubernetes v")]
    return line.split()[1]


def test_the_server_reports_the_release_pinned_in_go_mod(control_plane: ControlPlane) -> None:
    code, body = control_plane.request("GET", "/version")
    assert code == 200
    assert body["gitVersion"] == pinned_release() == "v1.35.4"
    assert (body["major"], body["minor"]) == ("1", "35")


def test_every_vendored_crd_is_served(control_plane: ControlPlane) -> None:
    cluster = connect(None, control_plane.kubeconfig)
    crds = vendored_crds()
    assert len(crds) >= 25
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            if version.get("served"):
                api = f"{spec['group']}/{version['name']}"
                assert serves(cluster, api, spec["names"]["kind"]), api


def test_a_token_without_rights_is_forbidden(control_plane: ControlPlane) -> None:
    code, body = control_plane.request("GET", "/api/v1/namespaces", token=NOBODY_TOKEN)
    assert code == 403
    assert 'User "nobody" cannot list resource "namespaces"' in body["message"]
    assert control_plane.request("GET", "/api/v1/namespaces", token="wrong")[0] == 401


def test_the_client_checks_the_servers_certificate(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """A kubeconfig trusting another CA cannot talk to the server (TLS is real)."""
    import kubecontrolplane

    other = kubecontrolplane.make_credentials(tmp_path / "other")
    text = kubecontrolplane.kubeconfig_text(control_plane.url, other.ca, "t")
    (tmp_path / "kubeconfig").write_text(text, "utf-8")
    cluster = connect(None, tmp_path / "kubeconfig")
    with pytest.raises(ClusterError, match="CERTIFICATE_VERIFY_FAILED"):
        serves(cluster, "v1", "ConfigMap")


def test_the_fixture_and_build_sh_agree_on_the_cache_folder(
    control_plane: ControlPlane,
) -> None:
    """The binaries in use are the ones build.sh reuses for these pins, without building."""
    import subprocess

    import kubecontrolplane

    done = subprocess.run(
        [str(ROOT / "tools" / "controlplane" / "build.sh")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout == f"controlplane: reusing {control_plane.bin} (built for these pins)\n"
    assert control_plane.bin == kubecontrolplane.bin_dir()
    assert control_plane.bin.parent.name == kubecontrolplane.cache_key()
    assert len(kubecontrolplane.cache_key()) == 16
