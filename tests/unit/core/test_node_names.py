"""Node names read back (issue #31): RFC 1123 subdomains of at most 253 characters."""

from __future__ import annotations

import pytest

from nvcregen.core.kube import node_name_problem
from nvcregen.results.planned import Plan, plan_of_data


@pytest.mark.parametrize(
    "name", ["a", "node-a", "gpu-0001.rack-3.example", "0", "a" * 63 + "." + "b" * 189]
)
def test_node_names(name: str) -> None:
    assert len(name) <= 253
    assert node_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "'' is not a node name (an RFC 1123 subdomain)"),
        ("node-a/status", "'node-a/status' is not a node name"),
        ("../../api/v1/namespaces/kube-system", "is not a node name"),
        ("..", "'..' is not a node name"),
        ("node-a\n", "'node-a\\n' is not a node name"),
        ("Node-A", "is not a node name"),
        ("node%2Fa", "is not a node name"),
        ("-a", "is not a node name"),
        ("a-", "is not a node name"),
        ("a..b", "is not a node name"),
        ("a" * 63 + "." + "b" * 190, "is not a node name: longer than 253 characters"),
        (None, "NoneType 'None' is not a node name"),
        (7, "int '7' is not a node name"),
    ],
)
def test_not_node_names(name: object, problem: str) -> None:
    found = node_name_problem(name)
    assert found is not None and problem in found


def test_a_bad_name_is_shown_cut_to_80_characters() -> None:
    found = node_name_problem("A" * 300)
    assert found == f"{'A' * 80!r}... is not a node name: longer than 253 characters"
    found = node_name_problem("A" * 200)
    assert found == f"{'A' * 80!r}... is not a node name (an RFC 1123 subdomain)"


def test_the_plan_of_a_site_file_read_back() -> None:
    data = {
        "spec": {
            "nodePools": [
                {"name": "h20", "nodes": ["node-a", "node-b", "Not_A_Node", 7]},
                {"name": "pick\n", "selector": {"pool": "x"}},
                "not a pool",
            ]
        }
    }
    plan = plan_of_data(data)
    assert plan == Plan(frozenset({"node-a", "node-b"}), ("pick\\n",))
    assert plan.refusal("node-a") is None
    assert plan.refusal("Not_A_Node") == "'Not_A_Node' is not a node name (an RFC 1123 subdomain)"
    assert plan.refusal("node-c") == (
        "node-c is not a node the site's pools name (pool pick\\n selects its nodes by label:"
        " no name of it is planned)"
    )
    assert plan.refusal("node-c", by_list=False) is None
    assert plan_of_data({"spec": "x"}) == Plan(frozenset())
    assert Plan(frozenset()).refusal("node-c") == "node-c is not a node the site's pools name"
