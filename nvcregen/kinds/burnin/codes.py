"""The burn-in kind's NVC codes, registered with every other (`kindapi.registry.load_codes`)."""

from __future__ import annotations

from nvcregen.core.codes import NOTE_0024_BURN_IN, REGISTRY, Code, register


def _code(number: int, title: str) -> Code:
    return register(REGISTRY, Code(number, title, doc=NOTE_0024_BURN_IN))


NVC765 = _code(765, "a burn-in figure above the GPU's datasheet peak")
NVC766 = _code(766, "a GPU whose clocks slowed under burn-in")
NVC767 = _code(767, "a burn-in log without a figure for every GPU")
NVC768 = _code(768, "a GPU under its model's burn-in floor")
