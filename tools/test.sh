#!/usr/bin/env bash
# `make test`'s suite, with the twin (issue #34): tools/twin/build.sh (reused at once when
# built, many minutes cold) and then the rehearsal tests (tests/realserver/test_twin_*.py),
# run beside the rest of the suite rather than after it. The rest is one pytest process on
# one core; the Go build takes the other (at a lower priority, so the suite's own timed
# waits keep their core) and the rehearsals mostly wait on their pods' clocks. Measured on
# a 2-core machine with the twin built: the suite about 10 minutes, the twin tests about 22.
#
# Both must pass. The twin's output is kept in a log and printed once the suite is done, so
# the two never interleave (followed live from then on). Interrupted, the twin's build and tests are stopped with it.
# The twin's pytest gets its own --basetemp and no cache, so the two sessions share no
# folder. Arguments go to both pytest runs (options such as -x; not -k, which would
# replace the split between the two).
set -uo pipefail
cd "$(dirname "$0")/.."
pytest=.venv/bin/pytest
scratch="$(mktemp -d "${TMPDIR:-/tmp}/nvcregen-test.XXXXXX")"
log="$scratch/twin.log"

set -m # the twin's job gets a process group of its own, so it can be stopped whole
(
  started=$SECONDS
  nice -n 10 tools/twin/build.sh || exit $?
  echo "twin: ready after $((SECONDS - started)) s"
  "$pytest" -q -p no:cacheprovider --basetemp "$scratch/pytest" --durations=10 \
    tests/realserver -k test_twin_ "$@" || exit $?
  # the twin tests skip where the twin is not built; here it was, so a skip (which -ra
  # lists as SKIPPED) means they did not run: no pass
  if grep -q '^SKIPPED' "$log"; then
    echo "twin: built, yet twin tests were skipped (above): they must run here" >&2
    exit 1
  fi
) >"$log" 2>&1 &
twin=$!
set +m
stop_twin() {
  kill -TERM -- "-$twin" 2>/dev/null
  wait "$twin" 2>/dev/null
  rm -rf "$scratch"
}
trap 'stop_twin; exit 130' INT TERM

"$pytest" -q -k 'not test_twin_' "$@"
suite=$?

echo "--- the twin's build and rehearsal tests (tests/realserver/test_twin_*.py):"
tail -n +1 -f --pid="$twin" "$log"
wait "$twin"
twin_status=$?
rm -rf "$scratch"
if ((suite != 0 || twin_status != 0)); then
  echo "make test: the suite exited $suite, the twin's build and tests $twin_status" >&2
  exit 1
fi
