#!/usr/bin/env bash
# Builds the tests' control plane (etcd, kube-apiserver, kube-controller-manager) from the
# published Go modules pinned in go.mod/go.sum beside this script, into a cache folder
# outside the repository keyed by those two files:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/nvcregen/controlplane/<sha256(go.mod+go.sum), 16>/bin/
# A folder that exists is reused as is (nothing to do while the pins are unchanged).
# The build goes into a temporary folder beside it, renamed into place when complete, so
# an interrupted build never leaves a half-filled bin/. Prints the folder and the time taken.
# Needs Go 1.24+ (the `tool` directives) and the Go module proxy, or a warm module cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
key="$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-16)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nvcregen/controlplane/$key"
bin="$cache/bin"
complete() {
  [[ -x "$bin/etcd" && -x "$bin/kube-apiserver" && -x "$bin/kube-controller-manager" ]]
}
if complete; then
  echo "controlplane: reusing $bin (built for these pins)"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "controlplane: Go 1.24 or newer is needed to build kube-apiserver and etcd (https://go.dev/dl/)" >&2
  exit 1
fi
# The release pinned in go.mod, so the server reports its real version to clients
# (without it, `kube-apiserver --version` prints v0.0.0-master+$Format:%H$).
release="$(sed -n 's|^\tk8s.io/kubernetes v\([0-9.]*\).*|\1|p' "$here/go.mod")"
[[ -n "$release" ]] || { echo "controlplane: no k8s.io/kubernetes version in $here/go.mod" >&2; exit 1; }
major="${release%%.*}"
minor="${release#*.}"
minor="${minor%%.*}"
base=k8s.io/component-base/version
ldflags="-X $base.gitVersion=v$release -X $base.gitMajor=$major -X $base.gitMinor=$minor"
ldflags+=" -X $base.gitTreeState=clean -X $base.buildDate=1970-01-01T00:00:00Z"

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "controlplane: building Kubernetes v$release and etcd into $bin (first time: many minutes)" >&2
(
  cd "$here"
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
  # Go names this binary after its module's last element (v3); etcd is its real name.
  go build -trimpath -o "$tmp/etcd" go.etcd.io/etcd/server/v3
)
"$tmp/kube-apiserver" --version >&2
if ! mv -T "$tmp" "$bin" 2>/dev/null; then
  # Another build finished first: keep its folder, drop ours. A folder missing a binary
  # (one removed by hand) is this script's own cache: replaced by the build.
  if ! complete; then
    rm -rf "$bin"
    mv -T "$tmp" "$bin" || { echo "controlplane: cannot move the build into $bin" >&2; exit 1; }
  fi
fi
trap - EXIT
rm -rf "$tmp"
echo "controlplane: built into $bin in $((SECONDS - start)) s"
