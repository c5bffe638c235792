"""The rdmapair kind's logs: a pair run's server and client, each on its own node (pure).

What `templates/rdma-pair-server.sh.j2` (the TrainJob's worker) and
`rdma-pair-client.sh.j2` (its launcher) print, read back together by `collect` with
`logs.py`. The pod's side is the section's `role`, its node `nodes[0]` and
its partner `nodes[1]`:

- the server: its begin line (`@@nvcregen-rdma-server begin node=... pod=...
  start=...`), then for each HCA of the pool's `nics.hcas` the rail's section holding
  what the perftest server printed (its CUDA lines where the buffers are in a GPU, the
  banner it waited under, the header and both addresses; a write test's server prints
  no table) and `rail end ... rc=0`; its end line, `rc=0` (the script always exits 0);
- the client: its begin line, the server's DNS name (`<trainjob>-node-0-0.<trainjob>`),
  each HCA's client output as the loopback form prints it (`kinds/rdma/maker.py`), the
  addresses the two nodes' (10.0.<rail>.1 and .2, by the pair's names in order); a
  rail below the floor is said so and fails the script, as it would.

A healthy rail's average is midway between its floor and the NIC's line rate. On a run
holding a failing node the client's first rail runs at a tenth of its floor and the
client exits 1; collect then fails the round naming both nodes and the HCA (NVC832),
and both nodes are suspects of the pair, as an NCCL pair's are. The server's log is the
same either way: what it printed does not say the rail was slow.
"""

from __future__ import annotations

from nvcregen.kinds.rdma.maker import RailSide, rail_sections, rails_of
from nvcregen.kinds.rdma.params import RdmaParams
from nvcregen.kinds.rdma.reader import MARK
from nvcregen.kinds.rdmapair.kind import KIND as RDMAPAIR
from nvcregen.kinds.rdmapair.logs import CLIENT_MARK, SERVER_MARK
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.printer import Maker, Output, Printer, Section, stamp

SERVER_POD = "node-0-0"  # JobSet's first pod of the `node` replicated job: the server


def rdma_pair_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """One side of a pair run: the server's log on its node, or the client's on its own."""
    rdma: RdmaParams = RDMAPAIR.block(unit.test)
    rails = rails_of(unit, rdma)
    own, *rest = at.pack.nodes
    pair = sorted({own, *rest[:1]})
    here = pair.index(own) + 1
    hosts = (here, len(pair) + 1 - here)  # the last octets of this node's and its partner's
    server = at.pack.role == "server"
    mark = SERVER_MARK if server else CLIENT_MARK
    lines = [f"{mark} begin node={own} pod={at.pack.pod} start={stamp(at.start)}"]
    if not server:
        lines.append(f"{MARK} server host={at.pack.run}-{SERVER_POD}.{at.pack.run}")
    # only the client measures, its floor as Jinja prints it
    side = RailSide(not server, at.failing, f"{round(rails.floor, 3)}", hosts=hosts)
    sections, worst = rail_sections(unit, rdma, rails, side)
    lines += [*sections, f"{MARK} end rc={worst}"]
    return Output("\n".join(lines) + "\n", worst, at.seconds, exit_line=False)


MAKER: Maker = rdma_pair_output  # what `rehearse/makers/registry.py` finds by the kind's name
