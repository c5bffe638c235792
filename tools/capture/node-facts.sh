#!/usr/bin/env bash
# Capture what `nvidia-smi` and NVML know about one GPU node, for the node-health fixtures
# (tests/fixtures/node/). Run on the node as root; writes into the folder given (default .).
# Each command's exit status goes to commands.txt so a refused query is recorded, not hidden.
set -uo pipefail
out=${1:-.}
mkdir -p "$out"
run() { # run NAME CMD...: stdout to NAME, the command and its status to commands.txt
  local name=$1; shift
  "$@" >"$out/$name" 2>"$out/$name.stderr"
  echo "$? $*" >>"$out/commands.txt"
  [ -s "$out/$name.stderr" ] || rm -f "$out/$name.stderr"
}
fields=index,name,pci.bus_id,driver_version,vbios_version,inforom.img,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,retired_pages.pending,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure,clocks_event_reasons.active,clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown,clocks_event_reasons.sw_thermal_slowdown,mig.mode.current,temperature.gpu,temperature.memory,power.draw,power.limit,memory.total,clocks.sm,clocks.max.sm
run nvidia-smi-version.txt nvidia-smi --version
run nvidia-smi-q.xml nvidia-smi -q -x
run nvidia-smi-q.txt nvidia-smi -q
run nvidia-smi-topo.txt nvidia-smi topo -m
run query-gpu.csv nvidia-smi --query-gpu=$fields --format=csv
run nvml.json python3 "$(dirname "$0")/nvml_facts.py"
run uname.txt uname -a
