"""Every NVC code nvcregen reports, registered once (after mypy's `errorcodes.py`).

A code is a `Code`: its number, a short title, its family (the hundreds, as the README
groups them), the severity where every place that reports it fixes one ("" where the
caller decides: a `--strict` flag, a finding's weight) and the design note or README
section that documents it ("" where only `docs/codes.md` does). Modules report
`codes.NVC309.code`; `docs/codes.md` is generated from `REGISTRY` (`python -m tools.codes`),
and `tests/unit/core/test_codes.py` fails when a code is reported but not registered,
registered but reported nowhere (unless `reserved` says why), or documented nowhere.
A test kind declares its own codes in its package (`kinds/<kind>/codes.py`, registered
here by `kindapi.registry.load_codes()`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

FixedSeverity = Literal["error", "warning", "info", ""]

ERROR: Final = "error"
WARNING: Final = "warning"
INFO: Final = "info"

FAMILIES: Final[dict[int, str]] = {
    0: "the output itself",
    1: "YAML",
    2: "schema",
    3: "semantics",
    4: "Helm",
    5: "output",
    6: "checks of generated objects",
    7: "results read back",
    8: "node health",
}

# Where codes are documented, as paths from the repository root.
ARCHITECTURE: Final = "docs/architecture.md"
ARGOCD_CMP: Final = "docs/argocd-cmp.md"
NOTE_0002_WEBHOOK_RULES: Final = "docs/design/0002-webhook-rules.md"
NOTE_0003_TRAINER_MODE: Final = "docs/design/0003-trainer-mode.md"
NOTE_0004_COLLECT: Final = "docs/design/0004-collect.md"
NOTE_0005_PHYSICS: Final = "docs/design/0005-physics.md"
NOTE_0006_STAGE_GATING: Final = "docs/design/0006-stage-gating.md"
NOTE_0007_ADMISSION: Final = "docs/design/0007-admission.md"
NOTE_0008_REPLAY: Final = "docs/design/0008-replay.md"
NOTE_0009_ATOMIC_OUT: Final = "docs/design/0009-atomic-out.md"
NOTE_0010_SIGNED_ARCHIVES: Final = "docs/design/0010-signed-archives.md"
NOTE_0011_FABRIC: Final = "docs/design/0011-fabric.md"
NOTE_0012_EVIDENCE: Final = "docs/design/0012-evidence.md"
NOTE_0013_HOSTILE_RESULTS: Final = "docs/design/0013-hostile-results.md"
NOTE_0014_NODE_HEALTH: Final = "docs/design/0014-node-health.md"
NOTE_0015_SECRETS_AND_NAMES: Final = "docs/design/0015-secrets-and-names.md"
NOTE_0017_FLEET_SCALE: Final = "docs/design/0017-fleet-scale.md"
NOTE_0018_FLEET_UNITS: Final = "docs/design/0018-fleet-units.md"
NOTE_0021_PERIODIC: Final = "docs/design/0021-periodic.md"
NOTE_0022_RDMA_RAILS: Final = "docs/design/0022-rdma-rails.md"
NOTE_0023_LINK_COUNTERS: Final = "docs/design/0023-link-counters.md"
NOTE_0024_BURN_IN: Final = "docs/design/0024-burn-in.md"
README: Final = "README.md"
THREAT_MODEL: Final = "docs/threat-model.md"


@dataclass(frozen=True)
class Code:
    """One NVC code: `code` is what diagnostics print (`NVC309`)."""

    number: int
    title: str
    severity: FixedSeverity = ""
    doc: str = ""
    reserved: str = ""

    @property
    def code(self) -> str:
        """The code as printed: `NVC` and three digits."""
        return f"NVC{self.number:03d}"

    @property
    def family(self) -> str:
        """The README's group of this code, by its hundreds."""
        return FAMILIES[self.number // 100]

    def __str__(self) -> str:
        return self.code


REGISTRY: dict[str, Code] = {}
"""Every code by its printed form, in the order registered (ascending)."""


def register(registry: dict[str, Code], entry: Code) -> Code:
    """Add `entry` to `registry`; a number outside every family or registered twice is a bug."""
    if entry.number <= 0 or entry.number // 100 not in FAMILIES:
        raise ValueError(f"{entry.code}: no family holds this number")
    if entry.code in registry:
        raise ValueError(f"{entry.code} is registered twice")
    later = [code for code, known in registry.items() if known.number > entry.number]
    registry[entry.code] = entry
    for code in later:  # a kind's codes, registered after these: the registry stays ascending
        registry[code] = registry.pop(code)
    return entry


def _code(
    number: int, title: str, severity: FixedSeverity = "", *, doc: str = "", reserved: str = ""
) -> Code:
    return register(REGISTRY, Code(number, title, severity, doc, reserved))


def lookup(code: str) -> Code | None:
    """The registered code printed as `code` (`NVC309`), or None."""
    return REGISTRY.get(code)


NVC001 = _code(1, "diagnostics past the per-file limit left out", INFO)
NVC100 = _code(100, "a site file that cannot be read, or no site files", ERROR)
NVC101 = _code(101, "a file that is not UTF-8", ERROR)
NVC102 = _code(102, "a YAML syntax error", ERROR)
NVC103 = _code(103, "a TAB character in indentation", ERROR)
NVC104 = _code(104, "a key given twice", ERROR)
NVC105 = _code(105, "an anchor, alias or merge key", ERROR)
NVC106 = _code(106, "a document that is not a YAML mapping", ERROR)
NVC107 = _code(107, "more than one YAML document in a file", ERROR)
NVC108 = _code(108, "a document that does not start with apiVersion and kind", ERROR)
NVC109 = _code(109, "a YAML 1.1 boolean or another ambiguous scalar", WARNING)
NVC110 = _code(110, "a file too large or nested too deep", ERROR)
NVC111 = _code(111, "a key that is not a plain string", ERROR)
NVC112 = _code(112, "a YAML tag", ERROR)
NVC113 = _code(113, "a password in a URL in a site", doc=NOTE_0015_SECRETS_AND_NAMES)
NVC114 = _code(114, "secret material in a site", doc=NOTE_0015_SECRETS_AND_NAMES)
NVC115 = _code(
    115, "a label map's key or value Kubernetes does not accept", ERROR,
    doc=NOTE_0015_SECRETS_AND_NAMES,
)  # fmt: skip
NVC118 = _code(118, "a number too long to convert", ERROR, doc=THREAT_MODEL)
NVC119 = _code(119, "a line over 64 KiB that holds a comment", ERROR, doc=ARCHITECTURE)
NVC200 = _code(200, "a value the site schema refuses")
NVC201 = _code(201, "a required field missing")
NVC202 = _code(202, "a value of the wrong type")
NVC203 = _code(203, "a value outside its enumeration")
NVC204 = _code(204, "a string that does not match its pattern")
NVC205 = _code(205, "a number out of range")
NVC206 = _code(206, "a list too short or too long")
NVC207 = _code(207, "a string too short or too long")
NVC208 = _code(208, "an unknown key", ERROR)
NVC210 = _code(210, "a value the site model refuses")
NVC220 = _code(220, "a catalog entry its model refuses")
NVC301 = _code(301, "an unknown GPU model", ERROR)
NVC302 = _code(302, "an unknown test", ERROR)
NVC303 = _code(303, "a test at a scope it does not run at", ERROR)
NVC304 = _code(304, "a stage without a pool, or an unknown pool", ERROR)
NVC305 = _code(305, "a pool, stage or test defined twice", ERROR)
NVC306 = _code(306, "a threshold for a test the plan does not run", ERROR)
NVC307 = _code(307, "a threshold's transport the test cannot run over", ERROR)
NVC308 = _code(308, "a threshold on a field the test does not measure", ERROR)
NVC309 = _code(309, "a malformed value (duration, size, comparison)", ERROR)
NVC310 = _code(310, "a DCGM test without a standalone hostengine", ERROR)
NVC311 = _code(311, "a pool or stage whose node counts do not fit", ERROR)
NVC312 = _code(312, "NIC list and count disagree, or RDMA NICs without resourceName")
NVC313 = _code(
    313, "a plan over its GPU-hour budget or past its deadline", ERROR, doc=NOTE_0005_PHYSICS
)
NVC314 = _code(314, "an image pinned by tag only")
NVC315 = _code(315, "GPUs per node other than the catalog's", WARNING)
NVC316 = _code(316, "a threshold in bits per second", INFO)
NVC317 = _code(317, "a GPU product label the catalog has not confirmed", INFO)
NVC318 = _code(318, "an RDMA test on a pool without RDMA NICs", WARNING)
NVC320 = _code(320, "NUMA groups that do not list each GPU once", ERROR)
NVC321 = _code(321, "a DCGM test on a selector pool in trainer mode", doc=NOTE_0003_TRAINER_MODE)
NVC322 = _code(322, "a test with no trainer-mode form", doc=NOTE_0003_TRAINER_MODE)
NVC323 = _code(
    323, "an NCCL test on a selector pool in trainer mode", WARNING, doc=NOTE_0003_TRAINER_MODE
)
NVC324 = _code(324, "readiness.packing outside trainer mode", WARNING, doc=NOTE_0003_TRAINER_MODE)
NVC325 = _code(325, "a periodic schedule a CronJob refuses", ERROR, doc=NOTE_0021_PERIODIC)
NVC326 = _code(
    326, "a periodic stage that is not a single-node stage", ERROR, doc=NOTE_0021_PERIODIC
)
NVC327 = _code(327, "readiness.periodic outside trainer mode", ERROR, doc=NOTE_0021_PERIODIC)
NVC328 = _code(328, "a periodic stage with no node-pack form", ERROR, doc=NOTE_0021_PERIODIC)
NVC329 = _code(
    329, "periodic runs at the default priority (external Kueue)", WARNING, doc=NOTE_0021_PERIODIC
)
NVC330 = _code(330, "ServiceMonitor labels the Prometheus selector misses", ERROR)
NVC331 = _code(331, "metrics TLS verification off", WARNING)
NVC332 = _code(332, "a scrape timeout longer than the interval", ERROR)
NVC333 = _code(333, "a link counters test in NVCRE mode", ERROR, doc=NOTE_0023_LINK_COUNTERS)
NVC337 = _code(
    337, "a burn-in on a GPU model without burn-in figures", ERROR, doc=NOTE_0024_BURN_IN
)
NVC340 = _code(340, "no GitOps repoURL: nothing generated", WARNING)
NVC341 = _code(341, "a repoURL the GitOps engine refuses", ERROR)
NVC342 = _code(342, "a target revision Flux cannot follow", ERROR)
NVC343 = _code(343, "Flux over ssh without a credentials Secret", WARNING)
NVC344 = _code(344, "an RDMA pair test in NVCRE mode", ERROR, doc=NOTE_0022_RDMA_RAILS)
NVC345 = _code(345, "an RDMA pair test on a pool naming no nodes", ERROR, doc=NOTE_0022_RDMA_RAILS)
NVC350 = _code(
    350, "a timeoutPerJob shorter than the test's expected duration", ERROR, doc=NOTE_0005_PHYSICS
)
NVC351 = _code(351, "a threshold above the physical ceiling", ERROR, doc=NOTE_0005_PHYSICS)
NVC352 = _code(352, "a threshold above the expected bandwidth", WARNING, doc=NOTE_0005_PHYSICS)
NVC353 = _code(353, "a threshold at a size the test does not run", ERROR, doc=NOTE_0005_PHYSICS)
NVC354 = _code(
    354, "productLabels outside the catalog's labels for the model", ERROR, doc=NOTE_0005_PHYSICS
)
NVC355 = _code(355, "a threshold naming an unknown pool", ERROR, doc=NOTE_0005_PHYSICS)
NVC356 = _code(
    356, "NVCRE's catalog entry stopping a run before it ends", WARNING, doc=NOTE_0005_PHYSICS
)
NVC360 = _code(
    360, "a Kueue version that cannot drive the Trainer version", ERROR, doc=NOTE_0007_ADMISSION
)
NVC361 = _code(
    361, "a managed Kueue other than the release nvcregen installs", ERROR, doc=NOTE_0007_ADMISSION
)
NVC362 = _code(362, "both kueue and gangScheduler set", ERROR, doc=NOTE_0007_ADMISSION)
NVC363 = _code(363, "gangScheduler in trainer mode", ERROR, doc=NOTE_0007_ADMISSION)
NVC364 = _code(
    364, "gangScheduler.queueLabelKey for a WorkloadRun test", ERROR, doc=NOTE_0007_ADMISSION
)
NVC365 = _code(365, "an inventory taint the pool does not tolerate", doc=README)
NVC366 = _code(366, "a Pod or workload object without its spec", ERROR, doc=README)
NVC370 = _code(
    370, "a CA named for the controller's self-signed metrics certificate", ERROR, doc=README
)
NVC371 = _code(371, "RoCE RDMA runs without a pod network", doc=ARCHITECTURE)
NVC372 = _code(372, "a pod network NVCRE mode cannot apply")
NVC373 = _code(373, "pod networks that do not match the NICs one to one", ERROR, doc=README)
NVC374 = _code(374, "a toleration NVCRE cannot express", WARNING, doc=ARCHITECTURE)
NVC375 = _code(375, "a managed JobSet without a managed Trainer", ERROR, doc=README)
NVC376 = _code(376, "an example digest from nvcregen's own sites", doc=ARCHITECTURE)
NVC377 = _code(377, "a chart or image pinned by version or tag only", doc=README)
NVC378 = _code(378, "an offline site whose NCCL image lacks sshd", ERROR, doc=README)
NVC379 = _code(379, "GitOps objects that name another folder than the output", doc=ARGOCD_CMP)
NVC380 = _code(380, "a platform certificate without its CA", ERROR, doc=README)
NVC381 = _code(381, "NVCRE mode admitted by Kueue", INFO, doc=README)
NVC382 = _code(382, "Flux reading the whole repository", INFO, doc=NOTE_0006_STAGE_GATING)
NVC383 = _code(
    383, "a run's prebuilt Workload missing or in another step's folder", doc=NOTE_0006_STAGE_GATING
)
NVC384 = _code(
    384,
    "Flux unable to wait for a batch Job without prebuilt Workloads",
    ERROR,
    doc=NOTE_0006_STAGE_GATING,
)
NVC385 = _code(
    385,
    "a deactivated run that looks queued without prebuilt Workloads",
    INFO,
    doc=NOTE_0006_STAGE_GATING,
)
NVC386 = _code(386, "prebuiltWorkloads where it has no effect", WARNING, doc=NOTE_0006_STAGE_GATING)
NVC387 = _code(387, "a NIC speed written in bytes", ERROR, doc=README)
NVC388 = _code(388, "a NIC speed no port has", WARNING, doc=README)
NVC389 = _code(389, "more than two NICs per GPU", WARNING, doc=README)
NVC390 = _code(390, "an inventory file that cannot be read", doc=NOTE_0011_FABRIC)
NVC391 = _code(391, "a named node not in the inventory", doc=NOTE_0011_FABRIC)
NVC392 = _code(392, "a node with another GPU product", doc=NOTE_0011_FABRIC)
NVC393 = _code(393, "a node with fewer GPUs than its pool", doc=NOTE_0011_FABRIC)
NVC394 = _code(394, "a node without a leaf label", doc=NOTE_0011_FABRIC)
NVC395 = _code(395, "fabric groups without a placed fabric", doc=NOTE_0011_FABRIC)
NVC396 = _code(396, "fabric groups on a scope or engine that has none", doc=NOTE_0011_FABRIC)
NVC397 = _code(397, "too few fabric groups to compare", doc=NOTE_0011_FABRIC)
NVC398 = _code(398, "pools naming different fabric levels", doc=NOTE_0011_FABRIC)
NVC399 = _code(399, "a node missing another fabric level's label", doc=README)
NVC401 = _code(401, "a chart archive not pinned or of another digest")
NVC402 = _code(402, "a chart archive that does not exist")
NVC403 = _code(403, "no Helm renderer for a chart archive")
NVC404 = _code(404, "a Kubernetes version outside a dependency's support", WARNING)
NVC405 = _code(405, "rendering a chart archive failed")
NVC501 = _code(501, "two objects written to one path", ERROR)
NVC502 = _code(
    502, "an output folder holding what nvcregen did not write", ERROR, doc=NOTE_0009_ATOMIC_OUT
)
NVC503 = _code(503, "a site name used twice", ERROR)
NVC504 = _code(504, "an output folder that cannot be written", doc=NOTE_0009_ATOMIC_OUT)
NVC505 = _code(505, "no space left on the device", doc=NOTE_0009_ATOMIC_OUT)
NVC506 = _code(506, "a file that cannot be written", doc=NOTE_0009_ATOMIC_OUT)
NVC507 = _code(507, "another render holds the output lock", ERROR, doc=NOTE_0009_ATOMIC_OUT)
NVC508 = _code(508, "a site output that is a link or a file", ERROR, doc=NOTE_0009_ATOMIC_OUT)
NVC509 = _code(509, "a leftover folder with foreign files kept", WARNING, doc=NOTE_0009_ATOMIC_OUT)
NVC510 = _code(510, "an absolute path of this machine in the output", ERROR, doc=THREAT_MODEL)
NVC511 = _code(
    511, "a FIFO, socket or device where a file belongs", ERROR, doc=NOTE_0009_ATOMIC_OUT
)
NVC600 = _code(600, "a generated file that is not an object", ERROR)
NVC601 = _code(601, "an object of an unknown kind")
NVC602 = _code(602, "an object its schema refuses")
NVC603 = _code(603, "an unknown field in an object")
NVC604 = _code(604, "object metadata Kubernetes refuses")
NVC605 = _code(605, "a number too long in a generated file", doc=ARCHITECTURE)
NVC606 = _code(606, "nesting too deep in a generated file", doc=THREAT_MODEL)
NVC607 = _code(607, "a key given twice in a generated file", doc=ARCHITECTURE)
NVC608 = _code(608, "an index.json that cannot be read", ERROR, doc=THREAT_MODEL)
NVC610 = _code(610, "a CEL validation rule broken")
NVC611 = _code(611, "a CEL rule not checked offline", WARNING)
NVC620 = _code(620, "a deprecated _gbps metric name")
NVC621 = _code(621, "an image pinned by tag only in the tree")
NVC622 = _code(622, "TLS certificate verification off in the tree")
NVC623 = _code(623, "a Secret with values in the tree")
NVC624 = _code(624, "NVCRE's pre-rename API group")
NVC625 = _code(625, "a run without its queue", doc=NOTE_0007_ADMISSION)
NVC630 = _code(630, "a LogProfile neither generated nor installed", doc=NOTE_0017_FLEET_SCALE)
NVC631 = _code(631, "counts that disagree across objects", doc=ARCHITECTURE)
NVC633 = _code(633, "an object defined twice")
NVC640 = _code(640, "an object the server rejects")
NVC641 = _code(641, "a kind the server does not serve")
NVC642 = _code(642, "a server that cannot be reached")
NVC643 = _code(643, "a site precondition the cluster does not meet", doc=README)
NVC650 = _code(650, "an unsupported runtime kind", doc=NOTE_0002_WEBHOOK_RULES)
NVC651 = _code(651, "a runtime neither generated nor installed", doc=NOTE_0002_WEBHOOK_RULES)
NVC652 = _code(652, "an environment variable the torch plugin sets", doc=NOTE_0002_WEBHOOK_RULES)
NVC653 = _code(653, "a TrainJob name too long for JobSet's pods", doc=NOTE_0002_WEBHOOK_RULES)
NVC654 = _code(
    654, "a runtime patch manager that is not a domain-prefixed path", doc=NOTE_0002_WEBHOOK_RULES
)
NVC655 = _code(655, "a dependsOn that is not a replicated job", doc=NOTE_0002_WEBHOOK_RULES)
NVC656 = _code(656, "a JobSet-derived job name too long", doc=NOTE_0002_WEBHOOK_RULES)
NVC657 = _code(657, "a sync-wave that is not an integer string", doc=NOTE_0002_WEBHOOK_RULES)
NVC658 = _code(658, "an object too large for client-side apply", doc=NOTE_0002_WEBHOOK_RULES)
NVC659 = _code(659, "a TrainJob step job of the wrong shape", doc=NOTE_0002_WEBHOOK_RULES)
NVC660 = _code(660, "a TrainJob that does not fit its runtime", doc=NOTE_0002_WEBHOOK_RULES)
NVC669 = _code(669, "secret material in the generated tree", doc=NOTE_0015_SECRETS_AND_NAMES)
NVC670 = _code(670, "a run never admitted or never run", doc=NOTE_0008_REPLAY)
NVC671 = _code(671, "a multi-node run that may be placed partially", doc=NOTE_0008_REPLAY)
NVC672 = _code(672, "stages that may overlap", doc=NOTE_0008_REPLAY)
NVC673 = _code(673, "runs nothing waits for at the end", doc=NOTE_0008_REPLAY)
NVC674 = _code(674, "concurrency above maxConcurrentJobs", doc=NOTE_0007_ADMISSION)
NVC675 = _code(675, "a plan that cannot finish before its deadline", doc=NOTE_0008_REPLAY)
NVC676 = _code(676, "a worst case past the window with every retest", doc=NOTE_0005_PHYSICS)
NVC677 = _code(677, "a tree over the GitOps engine's limits", doc=NOTE_0018_FLEET_UNITS)
NVC680 = _code(680, "an object outside its project's permissions", doc=NOTE_0007_ADMISSION)
NVC681 = _code(681, "an HTTPS endpoint verifying without a CA", doc=ARCHITECTURE)
NVC682 = _code(682, "pods Pod Security refuses", doc=ARCHITECTURE)
NVC683 = _code(683, "pods without cpu and memory requests", doc=ARCHITECTURE)
NVC684 = _code(684, "a field Kueue writes", doc=NOTE_0006_STAGE_GATING)
NVC685 = _code(685, "node affinity the API server refuses", ERROR, doc=ARCHITECTURE)
NVC690 = _code(690, "sites sharing a cluster that collide", doc=NOTE_0004_COLLECT)
NVC700 = _code(700, "an input file over its size limit", doc=ARCHITECTURE)
NVC710 = _code(710, "a result file that is not a regular file", doc=NOTE_0013_HOSTILE_RESULTS)
NVC711 = _code(711, "two saved logs of one run", doc=THREAT_MODEL)
NVC712 = _code(712, "a key given twice in a result", doc=THREAT_MODEL)
NVC713 = _code(713, "a number or line too long in a result", doc=NOTE_0013_HOSTILE_RESULTS)
NVC714 = _code(714, "nesting too deep in a result", doc=NOTE_0013_HOSTILE_RESULTS)
NVC715 = _code(715, "a measurement that is not finite", doc=NOTE_0013_HOSTILE_RESULTS)
NVC716 = _code(716, "a result that cannot be decoded", doc=ARCHITECTURE)
NVC720 = _code(720, "a malformed SHA256SUMS", doc=NOTE_0013_HOSTILE_RESULTS)
NVC721 = _code(721, "a folder in a run that holds no listed file", doc=NOTE_0013_HOSTILE_RESULTS)
NVC722 = _code(722, "a run folder that is a link", doc=NOTE_0013_HOSTILE_RESULTS)
NVC725 = _code(725, "report exports that cannot all be read", doc=NOTE_0013_HOSTILE_RESULTS)
NVC728 = _code(728, "a leftover of an interrupted collect", doc=NOTE_0013_HOSTILE_RESULTS)
NVC730 = _code(730, "a log whose ranks ran on another host", doc=NOTE_0012_EVIDENCE)
NVC731 = _code(731, "a log on another GPU model than the pool's", doc=NOTE_0012_EVIDENCE)
NVC732 = _code(732, "a log on other ranks, hosts or GPUs than planned", doc=NOTE_0012_EVIDENCE)
NVC733 = _code(733, "an NVCRE round on a node the pool does not name", doc=NOTE_0012_EVIDENCE)
NVC734 = _code(734, "a log with no device list", doc=NOTE_0012_EVIDENCE)
NVC735 = _code(735, "an implausible bus bandwidth", doc=NOTE_0012_EVIDENCE)
NVC736 = _code(736, "a sweep that collapses under its plateau", doc=NOTE_0012_EVIDENCE)
NVC737 = _code(737, "a sweep that falls as messages grow", doc=NOTE_0012_EVIDENCE)
NVC738 = _code(738, "rounds that disagree", doc=NOTE_0012_EVIDENCE)
NVC739 = _code(739, "a selector pool bound by model and count", doc=NOTE_0012_EVIDENCE)
NVC740 = _code(740, "one log's figures in two groups or tests", doc=NOTE_0012_EVIDENCE)
NVC741 = _code(741, "a copied round within one group", doc=NOTE_0012_EVIDENCE)
NVC742 = _code(742, "a final round or run with no figure", doc=NOTE_0012_EVIDENCE)
NVC743 = _code(743, "a packed run's test section that never ends", doc=NOTE_0012_EVIDENCE)
NVC744 = _code(744, "a packed run's log out of its pack's order", doc=NOTE_0012_EVIDENCE)
NVC745 = _code(745, "a measurement whose number is refused", doc=NOTE_0012_EVIDENCE)
NVC746 = _code(746, "a measurement whose times cannot be", doc=NOTE_0012_EVIDENCE)
NVC747 = _code(747, "a measurement another object owns", doc=NOTE_0012_EVIDENCE)
NVC748 = _code(748, "a group or planned node no measurement holds", doc=NOTE_0012_EVIDENCE)
NVC749 = _code(749, "a log whose timestamps go backwards", doc=NOTE_0012_EVIDENCE)
NVC750 = _code(750, "a node name outside the plan", doc=NOTE_0012_EVIDENCE)
NVC751 = _code(751, "a packed run's section from another node", doc=NOTE_0012_EVIDENCE)
NVC752 = _code(752, "two pod logs of one packed Job on one node", doc=NOTE_0012_EVIDENCE)
NVC755 = _code(755, "a run measured after it was collected", doc=NOTE_0010_SIGNED_ARCHIVES)
NVC756 = _code(756, "one run in two folders", doc=ARCHITECTURE)
NVC757 = _code(757, "a signed run in another run's or site's folder", doc=NOTE_0010_SIGNED_ARCHIVES)
NVC758 = _code(758, "a file nvcregen may not write", doc=NOTE_0009_ATOMIC_OUT)
NVC759 = _code(759, "an archive file over its size limit", doc=NOTE_0013_HOSTILE_RESULTS)
NVC770 = _code(770, "a node gone from the cluster", doc=NOTE_0011_FABRIC)
NVC771 = _code(771, "a node with fewer GPUs or NICs", doc=README)
NVC772 = _code(772, "a node whose product, fabric, driver or CUDA changed", doc=README)
NVC773 = _code(773, "node drift that cannot be compared", doc=NOTE_0011_FABRIC)
NVC780 = _code(780, "an inventory export refused", doc=NOTE_0011_FABRIC)
NVC781 = _code(781, "an unknown node or leaf to fail", doc=NOTE_0011_FABRIC)
NVC782 = _code(782, "a run of another site among a site's runs", doc=NOTE_0021_PERIODIC)
NVC783 = _code(783, "a run judged against another site file", doc=NOTE_0021_PERIODIC)
NVC784 = _code(784, "two samples of one series at one time", doc=NOTE_0021_PERIODIC)
NVC785 = _code(785, "one period in two runs", doc=NOTE_0021_PERIODIC)
NVC786 = _code(786, "a period rehearsed of a site without one", ERROR, doc=NOTE_0021_PERIODIC)
NVC790 = _code(790, "a cabling map refused", ERROR, doc=NOTE_0011_FABRIC)
NVC791 = _code(
    791, "a run timeout too short for a link-counters run", ERROR, doc=NOTE_0023_LINK_COUNTERS
)
NVC792 = _code(792, "an unknown rail to fail or retest", ERROR, doc=NOTE_0022_RDMA_RAILS)
NVC824 = _code(
    824, "an NCCL network plugin failed to initialize", WARNING, doc=NOTE_0014_NODE_HEALTH
)
NVC833 = _code(
    833, "an RDMA rails test on a pool naming no RDMA NICs", ERROR, doc=NOTE_0022_RDMA_RAILS
)
