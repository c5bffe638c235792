"""Fields naming images, repositories and hosts accept only their grammar (issue #20).

`nvcre.image.repository` accepted spaces, newlines and whole PEM blocks: every such field
now follows the OCI distribution reference grammar or RFC 1123, with a hint in words.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from sitefactory import load, schema_diagnostics, site_yaml
from timebounds import HANG

from nvcregen.spec import v1alpha1
from nvcregen.validate.schema import validate_schema

BASE = json.dumps(load(site_yaml()).data)
# Where each field lives in a site, as the path of keys.
FIELDS = {
    "repository": ("spec", "nvcre", "image", "repository"),
    "ref": ("spec", "nvcre", "chart", "ref"),
    "version": ("spec", "nvcre", "chart", "version"),
    "nccl": ("spec", "images", "nccl"),
    "mirror": ("spec", "images", "mirror"),
    "hostengine": ("spec", "dependencies", "dcgm", "hostengine"),
    "repoURL": ("spec", "gitops", "repoURL"),
}
GOOD = {
    "repository": [
        "ghcr.io/nvidia/cluster-readiness-engine/manager",
        "localhost:5000/a/b",
        "registry:5000/x",
        "[::1]:5000/x",
        "ubuntu",
        "a__b/c-d--e/f.g",
    ],
    "ref": ["oci://ghcr.io/nvidia/cluster-readiness-engine", "oci://registry:5000/charts/x"],
    "version": ["0.7.0", "1.2.3+build.1", "v2_rc"],
    "nccl": [
        "nvcr.io/nvidia/pytorch:26.01-py3@sha256:" + "4c" * 32,
        "registry.example.internal/mirror/gpu/nccl-sshd:26.01-py3",
        "nccl-tests",
    ],
    "mirror": ["registry.example.internal/mirror", "10.0.0.1:5000", "[fd00::1]:443/m"],
    "hostengine": ["nvidia-dcgm.gpu-operator.svc:5555", "10.1.2.3:5555", "[fd00::1]:5555"],
    "repoURL": [
        "https://git.example.com/gpu/readiness.git",
        "ssh://git@github.com/org/repo.git",
        "git@github.com:org/repo.git",
        "https://git.example.com:8443/a%20b/r.git",
    ],
}
PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
BAD = {
    "repository": [
        "ghcr.io/nvidia/manager with spaces",
        "ghcr.io/nvidia/manager\n",
        "ghcr.io/nvidia\n/manager",
        PEM,
        "Foo/bar",
        "ghcr.io/nvidia/manager:tag",
        "ghcr.io//x",
        "-x",
    ],
    "ref": ["https://ghcr.io/x", "oci://ghcr.io/x y", "oci://"],
    "version": ["0.7.0 ", "1/2", "x" * 129],
    "nccl": ["nvcr.io/nvidia/py torch:1", "nvcr.io/Nvidia/pytorch", "x@sha256:12", "x:"],
    "mirror": ["registry.example.internal/Mirror", "reg istry", "registry.example/m\n"],
    "hostengine": ["nvidia dcgm:5555", "host", "-host:1", "h:123456", "a" * 64 + ":1"],
    "repoURL": [
        "https://git.example.com/gpu readiness.git",
        "http://git.example.com/r.git",
        "https://git.example.com/r.git\nx",
        "file:///etc/passwd",
    ],
}


def site_with(field: str, value: str) -> str:
    data = json.loads(BASE)
    node = data
    *parents, last = FIELDS[field]
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return json.dumps(data)  # JSON is YAML, and keeps any character in a string


@pytest.mark.parametrize(("field", "value"), [(f, v) for f, vs in GOOD.items() for v in vs])
def test_names_in_their_grammar_pass(field: str, value: str) -> None:
    assert schema_diagnostics(site_with(field, value)) == []


@pytest.mark.parametrize(("field", "value"), [(f, v) for f, vs in BAD.items() for v in vs])
def test_anything_else_is_refused_with_the_grammar_in_words(field: str, value: str) -> None:
    diags = validate_schema(load(site_with(field, value)))
    assert [d.path for d in diags] == ["/" + "/".join(FIELDS[field])]
    [diag] = diags
    assert diag.code in {"NVC204", "NVC207"}
    if diag.code == "NVC204":
        assert "does not match the expected form" not in diag.message  # words, not a regex
        assert diag.hint.startswith("write ") and "for example: " in diag.hint


def test_a_block_scalar_newline_does_not_pass_a_name_pattern() -> None:
    """Python's `$` matches before a last line break: `name: |` used to pass."""
    data = json.loads(BASE)
    data["metadata"]["name"] += "\n"
    assert [d.path for d in schema_diagnostics(json.dumps(data))] == ["/metadata/name"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "pattern",
    [
        v1alpha1.IMAGE,
        v1alpha1.REPOSITORY,
        v1alpha1.OCI_REF,
        v1alpha1.MIRROR,
        v1alpha1.HOST_PORT,
        v1alpha1.GIT_URL,
    ],
)
def test_each_grammar_is_linear_on_a_hostile_megabyte(pattern: str) -> None:
    compiled = re.compile(pattern)
    for hostile in ("a" * 10**6 + "!", "a." * 500_000 + "!", "a-" * 500_000 + "!", "a__" * 300_000):
        started = time.perf_counter()
        compiled.search(hostile + " ")
        assert time.perf_counter() - started < HANG  # a hang guard
