"""Read `nvidia-smi -q -x` safely: no entities, no external references, bounded size.

The XML comes from a node, so it is untrusted: `defusedxml` refuses entity declarations
(a billion-laughs document) and external references, while still accepting the
`<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">` line every driver prints (the
DTD is never loaded). The caller bounds the size before the text reaches the parser.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET  # only the Element type; parsing is defusedxml's

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from nvcregen.core.errors import Span
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.node.fields import Path, gpu_facts
from nvcregen.kinds.node.models import GpuFacts, NodeFacts
from nvcregen.kinds.node.values import LineFinder, Refusals, integer, known

MAX_GPUS = 64


class _XmlGpu:
    """One `<gpu>` element, answering paths of child tags."""

    def __init__(self, element: ET.Element, finder: LineFinder, start: int) -> None:
        self._element = element
        self._finder = finder
        self._start = start

    def get(self, path: Path) -> tuple[str | None, Span | None]:
        found = self._element.find("/".join(path))
        if found is None:
            return None, None
        return (found.text or "").strip(), self._finder.find(self._start, path)


def looks_like_xml(text: str) -> bool:
    """Whether the text is an XML document whose root is `nvidia_smi_log`."""
    head = text.lstrip()[:512]
    return head.startswith("<?xml") or "<nvidia_smi_log" in head


def parse_node_xml(text: str, file: str) -> NodeFacts:
    """The node's facts from `nvidia-smi -q -x`.

    Raises:
        IngestFormatError: Not well-formed XML, entity declarations or external references,
            a root other than `nvidia_smi_log`, no `<gpu>`, or more than `MAX_GPUS` of them.

    """
    try:
        root = fromstring(text, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise IngestFormatError(
            f"refused XML: {type(exc).__name__} (entities are not read)"
        ) from exc
    except ET.ParseError as exc:
        raise IngestFormatError(f"not well-formed XML: {exc}") from exc
    if root.tag != "nvidia_smi_log":
        raise IngestFormatError(f"XML whose root is <{root.tag}>, not <nvidia_smi_log>")
    gpus = root.findall("gpu")
    if not gpus:
        raise IngestFormatError("nvidia_smi_log without any <gpu> element")
    if len(gpus) > MAX_GPUS:
        raise IngestFormatError(f"{len(gpus)} <gpu> elements: more than {MAX_GPUS}")
    finder = LineFinder(text, file, "<{label}>")
    refusals = Refusals(file)
    facts: list[GpuFacts] = []
    for index, gpu in enumerate(gpus):
        bus_id = gpu.get("id", "")
        start = finder.line_of(f'<gpu id="{bus_id}"') or 0
        lookup = _XmlGpu(gpu, finder, start)
        raw, span = lookup.get(("minor_number",))
        minor = refusals.read(integer, raw, f"minor_number of GPU {bus_id}", span)
        number = index if minor is None else minor
        facts.append(gpu_facts(number, bus_id, lookup, True, refusals))
    where = {
        name: finder.find(0, (tag,))
        for name, tag in (
            ("driver", "driver_version"),
            ("cuda", "cuda_version"),
            ("gpus", "attached_gpus"),
        )
    }
    return NodeFacts(
        file=file,
        form="xml",
        driver=known(_text(root, "driver_version")),
        cuda=known(_text(root, "cuda_version")),
        attached_gpus=refusals.read(
            integer, _text(root, "attached_gpus"), "attached_gpus", where["gpus"]
        ),
        gpus=tuple(sorted(facts, key=lambda g: g.index)),
        unjudged=tuple(refusals.found),
        where=where,
    )


def _text(element: ET.Element, tag: str) -> str | None:
    found = element.find(tag)
    return None if found is None else (found.text or "").strip()
