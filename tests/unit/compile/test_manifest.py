"""Tests of nvcregen.core.manifest: content hashes and hashed DNS-label names."""

from __future__ import annotations

import re

import pytest

from nvcregen.core.manifest import Manifest, content_hash, hashed_name

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DIGEST = "0123abcd"


def test_content_hash_ignores_key_order_at_every_level() -> None:
    a = {"spec": {"x": 1, "y": [{"b": 2, "a": 1}]}, "kind": "K"}
    b = {"kind": "K", "spec": {"y": [{"a": 1, "b": 2}], "x": 1}}
    assert content_hash(a) == content_hash(b)
    assert re.fullmatch(r"[0-9a-f]{8}", content_hash(a))
    assert len(content_hash(a, length=12)) == 12
    assert content_hash(a, length=12).startswith(content_hash(a))


@pytest.mark.parametrize(
    "other",
    [
        {"spec": {"x": 2, "y": [{"b": 2, "a": 1}]}, "kind": "K"},  # a value
        {"spec": {"x": 1, "y": [{"b": 2, "a": 1}, {}]}, "kind": "K"},  # a list item
        {"spec": {"x": "1", "y": [{"b": 2, "a": 1}]}, "kind": "K"},  # a type
    ],
)
def test_content_hash_changes_with_content(other: object) -> None:
    base = {"spec": {"x": 1, "y": [{"b": 2, "a": 1}]}, "kind": "K"}
    assert content_hash(other) != content_hash(base)


def test_content_hash_keeps_list_order() -> None:
    assert content_hash(["a", "b"]) != content_hash(["b", "a"])


def test_hashed_name_short_enough_is_joined_as_is() -> None:
    assert hashed_name(["lab", "node"], DIGEST, 40) == "lab-node-0123abcd"
    assert hashed_name(["lab", "", "node"], DIGEST, 40) == "lab-node-0123abcd"


def test_hashed_name_cuts_at_a_dash_and_keeps_the_hash() -> None:
    name = hashed_name(["h20-3e-lab", "single-node", "nccl-all-reduce-tcp"], DIGEST, 40)
    assert name == "h20-3e-lab-single-node-nccl-0123abcd"
    assert len(name) <= 40


def test_hashed_name_cuts_a_dashless_prefix_mid_word() -> None:
    name = hashed_name(["a" * 50], DIGEST, 20)
    assert name == "a" * 11 + "-" + DIGEST
    assert len(name) == 20


def test_hashed_name_never_leaves_a_dash_before_the_hash() -> None:
    # the cut falls right after a '-' (and inside a '--')
    for parts in (["abcdefghij", "klmnopqrstu"], ["abcdefghij--klmnopqrstu"], ["a-" * 30]):
        for max_length in range(12, 40):
            name = hashed_name(list(parts), DIGEST, max_length)
            assert name.endswith("-" + DIGEST), name
            assert not name.endswith("--" + DIGEST), name
            assert len(name) <= max_length, name
            assert DNS_LABEL.fullmatch(name), name


@pytest.mark.parametrize("max_length", [20, 40, 52, 63])
def test_hashed_name_is_always_a_short_dns_label(max_length: int) -> None:
    words = ["h20-3e-lab", "a" * 32, "two-node-collectives", "nccl-all-reduce-tcp", "x-y-z"]
    for i in range(len(words)):
        for j in range(len(words)):
            name = hashed_name([words[i], words[j], "dcgm-l1"], DIGEST, max_length)
            assert len(name) <= max_length, name
            assert DNS_LABEL.fullmatch(name), name
            assert name.endswith("-" + DIGEST), name
            assert not name.endswith("--" + DIGEST), name
            assert words[i][: min(5, max_length - 9)] in name  # a readable start survives


def test_manifest_kind_and_name() -> None:
    m = Manifest({"kind": "WorkloadRun", "metadata": {"name": "x-1"}}, "readiness", "/spec")
    assert (m.kind, m.name, m.catalog, m.notes) == ("WorkloadRun", "x-1", (), ())
