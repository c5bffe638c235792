#!/usr/bin/env bash
# nccl_calibrate.sh: build nccl-tests and run the sweep that nvcregen's catalog emits,
# keeping everything a calibration needs (issue #15).
#
# Usage:
#   tools/nccl_calibrate.sh SRC_DIR CUDA_HOME NCCL_HOME OUT_DIR
#
#   SRC_DIR    an nccl-tests source tree (src/ and verifiable/ as upstream lays them out)
#   CUDA_HOME  the CUDA toolkit (bin/nvcc); the driver comes from the machine
#   NCCL_HOME  NCCL's include/ and lib/ (lib/libnccl.so or lib/libnccl.so.2); the pip
#              wheel nvidia-nccl-cu13 has them under site-packages/nvidia/nccl
#   OUT_DIR    created if missing; gets the files listed below
#
# What runs: all_reduce_perf, all_gather_perf and alltoall_perf, each once, as
#   <bin> -b 8 -e 16G -f 2 -n 100 -N 10 -g $GPUS
# i.e. the arguments nvcregen/kinds/nccl/launch.py builds from catalog/tests/
# nccl-{all-reduce,all-gather,alltoall}.yaml (minBytes 8B, maxBytes 16GiB, stepFactor 2,
# iterations 100, cycles 10), with the environment nccl_env() emits for a run with no
# network (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET) plus NCCL_NVLS_ENABLE=0 (NVLink
# multicast stays off on shared machines). The catalog runs the MPI build under mpirun;
# here the binaries are built without MPI (MPI=0) and one process drives $GPUS GPUs (-g).
#
# Environment knobs (defaults in brackets); whatever is used is written to env.txt:
#   GPUS [1]  MIN_BYTES [8]  MAX_BYTES [16G]  STEP_FACTOR [2]  ITERS [100]  CYCLES [10]
#   COLLECTIVES ["all_reduce all_gather alltoall"]
#   GENCODE [-gencode=arch=compute_90,code=sm_90]   (Hopper: H100/H200)
#   RUN_TIMEOUT_S [240]  wall-time bound of one run (coreutils timeout, SIGTERM then KILL)
#   DEADLINE_S [540]     bound on the whole script from its start; a run gets
#                        min(RUN_TIMEOUT_S, time left - 10 s) and is skipped under 30 s
#   FALLBACK_CYCLES [1]  when a run hits its bound and >= 60 s are left, it is run again
#                        with -N FALLBACK_CYCLES into <coll>_perf.N<k>.log (0 disables)
#   BUILD_ONLY [0]       1: stop after the build and keep the binaries in OUT_DIR/.build
#
# Output files (OUT_DIR):
#   <coll>_perf.log      raw stdout+stderr of the run, byte for byte (one stream, as a
#                        launcher would capture it)
#   build.log            compiler output
#   env.txt              command lines, exit codes, wall times, versions (NCCL header,
#                        wheel and library; CUDA; driver), GPUs, `nvidia-smi topo -m`
#   nvidia-smi-q.txt     `nvidia-smi -q`
#
# Exit code: 0 when every run exited 0, 1 when a run failed or was cut, 2 on a bad call
# or a failed build.
set -uo pipefail

if [[ $# -ne 4 ]]; then
  sed -n '2,20p' "$0" >&2
  exit 2
fi
SRC_DIR=$(cd "$1" && pwd) || exit 2
CUDA_HOME=$2
NCCL_HOME=$3
OUT_DIR=$4
mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd) || exit 2

GPUS=${GPUS:-1}
MIN_BYTES=${MIN_BYTES:-8}
MAX_BYTES=${MAX_BYTES:-16G}
STEP_FACTOR=${STEP_FACTOR:-2}
ITERS=${ITERS:-100}
CYCLES=${CYCLES:-10}
COLLECTIVES=${COLLECTIVES:-"all_reduce all_gather alltoall"}
GENCODE=${GENCODE:--gencode=arch=compute_90,code=sm_90}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-240}
DEADLINE_S=${DEADLINE_S:-540}
FALLBACK_CYCLES=${FALLBACK_CYCLES:-1}
START=$(date +%s)
ENV_TXT=$OUT_DIR/env.txt

note() { printf '%s\n' "$*" >>"$ENV_TXT"; }
left() { echo $((DEADLINE_S - ($(date +%s) - START))); }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

: >"$ENV_TXT"
note "# nccl_calibrate.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
note "host: $(hostname)  kernel: $(uname -r)  cpus: $(nproc)"
note "src: $SRC_DIR"
note "cuda_home: $CUDA_HOME"
note "nccl_home: $NCCL_HOME"
note "settings: GPUS=$GPUS MIN_BYTES=$MIN_BYTES MAX_BYTES=$MAX_BYTES STEP_FACTOR=$STEP_FACTOR ITERS=$ITERS CYCLES=$CYCLES RUN_TIMEOUT_S=$RUN_TIMEOUT_S DEADLINE_S=$DEADLINE_S FALLBACK_CYCLES=$FALLBACK_CYCLES"
note "gencode: $GENCODE"

# --- versions --------------------------------------------------------------------------
note ""
note "## versions"
note "nvcc: $("$CUDA_HOME/bin/nvcc" --version | grep -i release)"
hdr=$NCCL_HOME/include/nccl.h
note "nccl.h: $(grep -E '^#define NCCL_(MAJOR|MINOR|PATCH|SUFFIX|VERSION_CODE) ' "$hdr" | awk '{printf "%s=%s ", $2, $3}')"
wheel=$(python3 -c 'import importlib.metadata as m; print(m.version("nvidia-nccl-cu13"))' 2>/dev/null || echo "n/a")
note "nvidia-nccl-cu13 wheel: $wheel"
if [[ -e $NCCL_HOME/lib/libnccl.so ]]; then NCCL_LIB=$NCCL_HOME/lib/libnccl.so; else NCCL_LIB=$NCCL_HOME/lib/libnccl.so.2; fi
note "libnccl: $(readlink -f "$NCCL_LIB") sha256=$(sha256sum "$NCCL_LIB" | cut -c1-64)"
note "nvidia-smi: $(nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv,noheader | tr '\n' ';')"
note "driver (nvidia-smi header): $(nvidia-smi | grep -m1 -o 'Driver Version: [0-9.]*  *CUDA Version: [0-9.]*')"
note ""
note "## nvidia-smi topo -m"
nvidia-smi topo -m >>"$ENV_TXT" 2>&1
nvidia-smi -q >"$OUT_DIR/nvidia-smi-q.txt" 2>&1

# --- build (MPI=0) ---------------------------------------------------------------------
BUILD=$OUT_DIR/.build
mkdir -p "$BUILD"
NVCC=$CUDA_HOME/bin/nvcc
NVCUFLAGS=(-ccbin "${CXX:-g++}" $GENCODE -std=c++17 -O3 -g -I"$NCCL_HOME/include")
t0=$(date +%s.%N)
(
  set -x
  g++ -O3 -g -o "$BUILD/timer.o" -c "$SRC_DIR/src/timer.cc" &
  "$NVCC" "${NVCUFLAGS[@]}" -o "$BUILD/verifiable.o" -c "$SRC_DIR/verifiable/verifiable.cu" &
  "$NVCC" "${NVCUFLAGS[@]}" -o "$BUILD/common.o" -c "$SRC_DIR/src/common.cu" &
  for coll in $COLLECTIVES; do
    "$NVCC" "${NVCUFLAGS[@]}" -o "$BUILD/$coll.o" -c "$SRC_DIR/src/$coll.cu" &
  done
  set +x
  ok=0
  for job in $(jobs -p); do wait "$job" || ok=1; done
  set -x
  ln -sf "$(readlink -f "$NCCL_LIB")" "$BUILD/libnccl.so"  # the wheel ships only libnccl.so.2
  for coll in $COLLECTIVES; do
    "$NVCC" "${NVCUFLAGS[@]}" -o "$BUILD/${coll}_perf" "$BUILD/$coll.o" "$BUILD/common.o" \
      "$BUILD/timer.o" "$BUILD/verifiable.o" -L"$CUDA_HOME/lib64" -lcudart -L"$BUILD" -lnccl \
      -Xlinker -rpath -Xlinker "$(dirname "$(readlink -f "$NCCL_LIB")")" || ok=1
  done
  set +x
  exit $ok
) >"$OUT_DIR/build.log" 2>&1 < /dev/null
build_rc=$?
note ""
note "## build"
note "rc=$build_rc wall_s=$(secs "$t0" "$(date +%s.%N)")"
if [[ $build_rc -ne 0 ]]; then
  tail -n 40 "$OUT_DIR/build.log" >&2
  exit 2
fi
if [[ ${BUILD_ONLY:-0} == 1 ]]; then
  note "BUILD_ONLY=1: binaries left in $BUILD"
  exit 0
fi

# --- runs ------------------------------------------------------------------------------
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_NVLS_ENABLE=0
RUN_ENV="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_NVLS_ENABLE=0"
note ""
note "## runs (environment: $RUN_ENV)"
status=0

run_one() {  # run_one COLL CYCLES LOGNAME
  local coll=$1 cycles=$2 log=$OUT_DIR/$3 budget rc t1 t2
  budget=$(( $(left) - 10 ))
  (( budget > RUN_TIMEOUT_S )) && budget=$RUN_TIMEOUT_S
  local cmd=("$BUILD/${coll}_perf" -b "$MIN_BYTES" -e "$MAX_BYTES" -f "$STEP_FACTOR" -n "$ITERS" -N "$cycles" -g "$GPUS")
  if (( budget < 30 )); then
    note "$3: SKIPPED (only $(left) s left of DEADLINE_S=$DEADLINE_S): ${cmd[*]##*/}"
    return 3
  fi
  t1=$(date +%s.%N)
  timeout --kill-after=10 "$budget" "${cmd[@]}" >"$log" 2>&1 </dev/null
  rc=$?
  t2=$(date +%s.%N)
  note "$3: rc=$rc wall_s=$(secs "$t1" "$t2") bound_s=$budget cmd: $RUN_ENV ${coll}_perf ${cmd[*]:1}"
  return $rc
}

for coll in $COLLECTIVES; do
  run_one "$coll" "$CYCLES" "${coll}_perf.log"
  rc=$?
  if (( rc != 0 )); then
    status=1
    if (( rc == 124 || rc == 137 )) && (( FALLBACK_CYCLES > 0 )) && (( $(left) >= 60 )); then
      run_one "$coll" "$FALLBACK_CYCLES" "${coll}_perf.N${FALLBACK_CYCLES}.log"
    fi
  fi
done
note ""
note "total_wall_s=$(( $(date +%s) - START ))"
rm -rf "$BUILD"
exit $status
