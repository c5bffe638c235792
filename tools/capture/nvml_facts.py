"""Print, as JSON, the node-health facts NVML gives for every GPU (nvidia-ml-py).

Each fact is read on its own; one NVML refuses (not supported in a VM, say) is recorded as
its error name instead of stopping the capture.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pynvml as nv  # type: ignore[import-not-found]


def fact(read: Callable[[], Any]) -> Any:
    try:
        value = read()
    except nv.NVMLError as err:
        return {"error": str(err)}
    if isinstance(value, bytes):
        return value.decode()
    return value


def gpu(index: int) -> dict[str, Any]:
    h = nv.nvmlDeviceGetHandleByIndex(index)
    dram = nv.NVML_MEMORY_LOCATION_DRAM
    sram = nv.NVML_MEMORY_LOCATION_SRAM
    unc = nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    vol, agg = nv.NVML_VOLATILE_ECC, nv.NVML_AGGREGATE_ECC
    return {
        "index": index,
        "name": fact(lambda: nv.nvmlDeviceGetName(h)),
        "vbios": fact(lambda: nv.nvmlDeviceGetVbiosVersion(h)),
        "pcieGenCurrent": fact(lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(h)),
        "pcieGenMax": fact(lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(h)),
        "pcieWidthCurrent": fact(lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(h)),
        "pcieWidthMax": fact(lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(h)),
        "eccMode": fact(lambda: list(nv.nvmlDeviceGetEccMode(h))),
        "eccUncorrectedVolatile": fact(lambda: nv.nvmlDeviceGetTotalEccErrors(h, unc, vol)),
        "eccUncorrectedAggregate": fact(lambda: nv.nvmlDeviceGetTotalEccErrors(h, unc, agg)),
        "eccDramUncorrectedVolatile": fact(
            lambda: nv.nvmlDeviceGetMemoryErrorCounter(h, unc, vol, dram)
        ),
        "eccSramUncorrectedVolatile": fact(
            lambda: nv.nvmlDeviceGetMemoryErrorCounter(h, unc, vol, sram)
        ),
        "remappedRows": fact(lambda: list(nv.nvmlDeviceGetRemappedRows(h))),
        "clockEventReasons": fact(lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h)),
        "migMode": fact(lambda: list(nv.nvmlDeviceGetMigMode(h))),
        "temperatureGpu": fact(lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
        "temperatureSlowdown": fact(
            lambda: nv.nvmlDeviceGetTemperatureThreshold(h, nv.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
        ),
        "temperatureShutdown": fact(
            lambda: nv.nvmlDeviceGetTemperatureThreshold(h, nv.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)
        ),
    }


def main() -> None:
    nv.nvmlInit()
    try:
        count = nv.nvmlDeviceGetCount()
        facts = {
            "driver": fact(nv.nvmlSystemGetDriverVersion),
            "cudaDriverVersion": fact(nv.nvmlSystemGetCudaDriverVersion),
            "nvmlVersion": fact(nv.nvmlSystemGetNVMLVersion),
            "gpuCount": count,
            "gpus": [gpu(i) for i in range(count)],
        }
    finally:
        nv.nvmlShutdown()
    print(json.dumps(facts, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
