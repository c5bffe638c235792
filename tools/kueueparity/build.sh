#!/usr/bin/env bash
# Builds the Kueue parity tool (tests/kueueparity.py) from go.mod/go.sum and the Go files
# beside this script, into a cache folder outside the repository keyed by all of them:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/nvcregen/kueueparity/<sha256(go.mod+go.sum+*.go), 16>/bin/
# A folder that exists is reused as is. The build goes into a temporary folder beside it,
# renamed into place when complete, so an interrupted build never leaves a half-filled bin/.
# Needs Go 1.26+ (Kueue v0.19.2's go directive) and the Go module proxy, or a warm module cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
key="$(cd "$here" && cat go.mod go.sum $(LC_ALL=C ls -- *.go) | sha256sum | cut -c1-16)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nvcregen/kueueparity/$key"
bin="$cache/bin"
if [[ -x "$bin/kueueparity" ]]; then
  echo "kueueparity: reusing $bin (built for these pins and sources)"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "kueueparity: Go 1.26 or newer is needed to build the Kueue parity tool (https://go.dev/dl/)" >&2
  exit 1
fi
# main.go names the releases it reports; they must be the ones go.mod pins.
for pin in "sigs.k8s.io/kueue kueueRelease" "github.com/kubeflow/trainer/v2 trainerRelease"; do
  set -- $pin
  want="$(sed -n "s|^\t$1 \(v[0-9.]*\).*|\1|p" "$here/go.mod")"
  grep -qP "^\t$2\s*= \"$want\"$" "$here/main.go" ||
    { echo "kueueparity: main.go's $2 is not go.mod's $1 $want" >&2; exit 1; }
done

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "kueueparity: building Kueue's and Trainer's code into $bin (first time: minutes)" >&2
(
  cd "$here"
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  go build -trimpath -o "$tmp/kueueparity" .
)
if ! mv -T "$tmp" "$bin" 2>/dev/null; then
  # Another build finished first: keep its folder, drop ours; a folder without the
  # binary (removed by hand) is this script's own cache and is replaced.
  if [[ ! -x "$bin/kueueparity" ]]; then
    rm -rf "$bin"
    mv -T "$tmp" "$bin" || { echo "kueueparity: cannot move the build into $bin" >&2; exit 1; }
  fi
fi
trap - EXIT
rm -rf "$tmp"
echo "kueueparity: built into $bin in $((SECONDS - start)) s"
