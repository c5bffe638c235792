"""An RDMA pair's two logs judged together: each HCA from the client to its server (pure).

A pair run (`kind.py`) prints two logs: its server pod's (JobSet's worker,
`<trainjob>-node-0-0-xxxxx`) and its client's (the launcher, named after the TrainJob or
`<trainjob>-launcher-0-0-xxxxx`). Which is which is the pod's name, as the API gave it;
each log's begin line must then be its role's (`@@nvcregen-rdma-server begin node=...`,
`-client`), name a node of the pair (and its pod's node, read from a cluster) and a pod
of the run's TrainJob on its side (the rounds of a pair run on the same two nodes), and
the two must name the two nodes: another run's log, or one side's log passed off as the
other's, is foreign (NVC730). A client's log without its server's, or the reverse, is
no evidence (NVC774): what one side printed cannot be told from what happened on the
other, so the pair is not judged and neither node is cleared or failed by it.

Each HCA's client section is judged as a loopback rail is (`kinds/rdma/logs.judge_rail`:
floor NVC832, line rate NVC830, a failed or missing rail), and the server's section of
the same HCA must be there and have exited 0. Every error names the client's node, the
server's and the HCA (`node-a -> node-b mlx5_3: ...`): the pair's round fails as an NCCL
group does, so a node failing with more than one partner is the suspect
(`results/nodes.py`, `retest`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from nvcregen.core import units
from nvcregen.fabric.railnames import pair_cabled
from nvcregen.ingest.beginline import BeginLine, begin_line
from nvcregen.kinds.rdma.logs import judge_rail, sections_of
from nvcregen.kinds.rdma.params import RdmaParams
from nvcregen.kinds.rdmapair import codes
from nvcregen.kinds.rdmapair.kind import KIND as RDMAPAIR
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import Side
from nvcregen.results.nodebind import FOREIGN, UNBOUND, bind_node_log

SERVER_MARK = "@@nvcregen-rdma-server"  # the server's and the client's begin lines
CLIENT_MARK = "@@nvcregen-rdma-client"
ONE_SIDED = codes.NVC774.code
SERVER_POD = "-node-"  # what follows a TrainJob's name in its server pod's name
Role = Literal["server", "client"]
KIND = "rdmapair"


def role_of(name: str, run: str) -> Role:
    """Which side a log is, by its name: the server pod's, else the client's."""
    return "server" if name.startswith(run + SERVER_POD) else "client"


def read_pair(
    client: Side | None, server: Side | None, base: Mapping[str, Any], unit: TestUnit
) -> dict[str, Any]:
    """A LogRecord's fields for one round of one pair: `ok` only when every rail passed."""
    if client is None or server is None:
        have, lacks = ("client", "server") if server is None else ("server", "client")
        side = client or server
        assert side is not None  # a pair is read when one of its logs is there
        why = (
            f"{ONE_SIDED}: {side.path}: the {have}'s log of {base['run']} without its "
            f"{lacks}'s: what one side printed is no evidence without the other's"
        )
        return {**base, "kind": KIND, "status": "no-data", "errors": (why,)}
    nodes = tuple(base.get("nodes") or ())
    bound: dict[Role, str] = {}
    both: tuple[tuple[Role, Side, str], ...] = (
        ("client", client, CLIENT_MARK),
        ("server", server, SERVER_MARK),
    )
    for role, side, mark in both:
        found = bind_node_log(side.text, {**base, "path": side.path, "pod_node": side.pod_node},
                              names_itself=True, mark=mark)  # fmt: skip
        if isinstance(found, str):
            return {**base, "kind": KIND, "status": FOREIGN, "errors": (found,)}
        if (other := _other_pod(side, mark, role, str(base.get("run") or ""))) is not None:
            return {**base, "kind": KIND, "status": FOREIGN, "errors": (other,)}
        bound[role] = found[0]
    if bound["client"] == bound["server"] or (nodes and set(bound.values()) != set(nodes)):
        why = (
            f"{UNBOUND}: {server.path}: the client ran on {bound['client']} and the server on "
            f"{bound['server']}, but the pair is {', '.join(nodes) or 'two nodes'}: not this "
            "pair's evidence"
        )
        return {**base, "kind": KIND, "status": FOREIGN, "errors": (why,)}
    hosts = (bound["client"], bound["server"])
    return {**base, "kind": KIND, **_rails(client, server, hosts, unit), "hosts": hosts}


def _other_pod(side: Side, mark: str, role: Role, run: str) -> str | None:
    """Why a bound log's pod is not its run's `role` pod, or None when it is.

    The rounds of one pair run on the same two nodes: the pod (`<trainjob>-node-...` for
    the server, any other pod of the TrainJob for the client) ties a log to its round.
    """
    begin = begin_line(side.text, mark)
    if not run or not isinstance(begin, BeginLine):
        return None
    if begin.pod.startswith(run + "-") and (role_of(begin.pod, run) == role):
        return None
    return (
        f"{UNBOUND}: {side.path}:{begin.line}: the log is from pod {begin.pod}, not the {role}"
        f" pod of {run}: another run's evidence"
    )


def _rails(client: Side, server: Side, hosts: tuple[str, str], unit: TestUnit) -> dict[str, Any]:
    rdma: RdmaParams = RDMAPAIR.block(unit.test)
    nics = unit.pool.spec.nics
    if nics is None:
        return {"status": "no-data", "errors": ("no RDMA NICs",)}
    size = units.parse_size(rdma.message_size)
    line_rate = units.parse_bandwidth(nics.speed).gbytes_per_s * 8  # Gb/s
    bounds = (rdma.floor * line_rate, line_rate, rdma.floor)
    clients, problems = sections_of(client.text)
    servers, more = sections_of(server.text)
    errors = [f"{client.path}: {p}" for p in problems] + [f"{server.path}: {p}" for p in more]
    where = f"{hosts[0]} -> {hosts[1]}"
    for hca in nics.hcas:
        mine = clients.get(hca)
        port = pair_cabled(unit.pool.inventory, hosts, hca)  # both ends' switch ports, if known
        if mine is None:
            errors.append(
                f"{where} {hca}{port}: no rail measured (the client's log has no section)"
            )
            continue
        errors += judge_rail(where, hca, "\n".join(mine[0]), mine[1], size, bounds, port=port)
        errors += _server_rail(where, hca + port, servers.get(hca), finished=mine[1] is not None)
    truncated = any(
        hca in found and found[hca][1] is None for found in (clients, servers) for hca in nics.hcas
    )
    return {"status": "failed" if errors else ("truncated" if truncated else "ok"),
            "errors": tuple(errors)}  # fmt: skip


def _server_rail(
    where: str, hca: str, found: tuple[list[str], int | None] | None, *, finished: bool
) -> list[str]:
    """The server's side of one rail: there, and exited 0 once its client finished."""
    if found is None:
        return [f"{where} {hca}: the server's log has no section of it"] if finished else []
    lines, rc = found
    if rc:
        said = next((line for line in lines[1:] if line.strip()), "")
        return [f"{where} {hca}: the server failed (exit {rc})" + (f": {said}" if said else "")]
    return []


def sides(
    logs: Sequence[tuple[str, str, Side]], run: str
) -> tuple[Side | None, Side | None, list[str]]:
    """The client's and the server's log of one run from its logs (name, path, side).

    A second log of either side is a problem, and neither of that side's logs is read.
    """
    by_role: dict[Role, list[Side]] = {"client": [], "server": []}
    for name, _, side in logs:
        by_role[role_of(name, run)].append(side)
    problems = [
        f"{extra.path}: a second {role}'s log of {run} beside {found[0].path}: neither is read"
        for role, found in by_role.items()
        for extra in found[1:]
    ]
    client = by_role["client"][0] if len(by_role["client"]) == 1 else None
    server = by_role["server"][0] if len(by_role["server"]) == 1 else None
    return client, server, problems


class PairLogs:
    """The RDMA pair kind's reader of a run's two logs (`results/kindlogs.py`'s `PairReader`)."""

    def role_of(self, name: str, run: str) -> str:
        """Which side a log is (`role_of`)."""
        return role_of(name, run)

    def sides(
        self, logs: Sequence[tuple[str, str, Side]], run: str
    ) -> tuple[Side | None, Side | None, list[str]]:
        """The client's and the server's log of one run (`sides`)."""
        return sides(logs, run)

    def read(
        self, client: Side | None, server: Side | None, base: Mapping[str, Any], unit: TestUnit
    ) -> dict[str, Any]:
        """A LogRecord's fields for one round of one pair (`read_pair`)."""
        return read_pair(client, server, base, unit)


PAIR = PairLogs()
