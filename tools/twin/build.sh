#!/usr/bin/env bash
# Builds the twin: the controllers a rehearsal runs beside the test control plane, from
# published Go modules pinned in the go.mod/go.sum files under this folder (issue #34):
#   kwok/      sigs.k8s.io/kwok v0.8.0 (cmd/kwok), in a module of its own;
#   managers/  sigs.k8s.io/kueue v0.19.2 (cmd/kueue), sigs.k8s.io/jobset v0.12.0 (its
#              manager, the module's root package) and github.com/kubeflow/trainer/v2
#              v2.2.1 (cmd/trainer-controller-manager), sharing one module;
#   flux/      Flux source-controller and kustomize-controller v1.9.6;
# and kube-scheduler from the control plane's own module (tools/controlplane/go.mod, its
# pins reused as they are: that folder is not changed, so its cache key is not either).
# Into a cache folder outside the repository keyed by all eight go.mod/go.sum files:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/nvcregen/twin/<sha256 of the pins, 16>/bin/
# beside it manifests/: the modules' own CRDs, webhook configurations and kwok stages,
# copied from the module cache, which the twin applies (nothing of them is in the repository).
# A complete folder is reused as is. The build goes into a temporary folder beside it,
# renamed into place when complete (manifests/ first, bin/ last), so an interrupted build
# never leaves a half-filled bin/. Prints the folder and the time each module took.
# Needs Go 1.26+ (the modules' go directives) and the Go module proxy, or a warm module cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
controlplane="$(cd "$here/../controlplane" && pwd)"
pins=(
  "$here/kwok/go.mod" "$here/kwok/go.sum"
  "$here/managers/go.mod" "$here/managers/go.sum"
  "$here/flux/go.mod" "$here/flux/go.sum"
  "$controlplane/go.mod" "$controlplane/go.sum"
)
key="$(cat "${pins[@]}" | sha256sum | cut -c1-16)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nvcregen/twin/$key"
bin="$cache/bin"
binaries=(kwok kube-scheduler kueue jobset trainer-controller-manager
  source-controller kustomize-controller)
complete() {
  local name
  for name in "${binaries[@]}"; do [[ -x "$bin/$name" ]] || return 1; done
  [[ -d "$cache/manifests" ]]
}
if complete; then
  echo "twin: reusing $bin (built for these pins)"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "twin: Go 1.26 or newer is needed to build kwok, kube-scheduler, Kueue, JobSet, Trainer and Flux (https://go.dev/dl/)" >&2
  exit 1
fi
pinned() { # pinned MODULE-FOLDER MODULE-PATH: the version its go.mod requires
  local version
  version="$(sed -n "s|^\t$2 \(v[^ ]*\).*|\1|p" "$1/go.mod")"
  [[ -n "$version" ]] || { echo "twin: no $2 version in $1/go.mod" >&2; exit 1; }
  echo "$version"
}
# kube-scheduler reports the release pinned, as the control plane's binaries do.
release="$(pinned "$controlplane" k8s.io/kubernetes)"
release="${release#v}"
major="${release%%.*}"
minor="${release#*.}"
minor="${minor%%.*}"
base=k8s.io/component-base/version
kube_ldflags="-X $base.gitVersion=v$release -X $base.gitMajor=$major -X $base.gitMinor=$minor"
kube_ldflags+=" -X $base.gitTreeState=clean -X $base.buildDate=1970-01-01T00:00:00Z"
kueue_ldflags="-X sigs.k8s.io/kueue/pkg/version.GitVersion=$(pinned "$here/managers" sigs.k8s.io/kueue)"
kueue_ldflags+=" -X sigs.k8s.io/jobset/pkg/version.GitVersion=$(pinned "$here/managers" sigs.k8s.io/jobset)"

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/build.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin" "$tmp/manifests"
start=$SECONDS
echo "twin: building kwok, kube-scheduler, Kueue, JobSet, Trainer and Flux into $bin (first time: many minutes)" >&2
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
build() { # build MODULE-FOLDER LDFLAGS PACKAGE...: one module at a time (2 shared cores)
  local folder="$1" ldflags="$2" began=$SECONDS
  shift 2
  (cd "$folder" && go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/" "$@")
  echo "twin: built ${*##*/} in $((SECONDS - began)) s" >&2
}
build "$here/kwok" "" sigs.k8s.io/kwok/cmd/kwok
build "$controlplane" "$kube_ldflags" k8s.io/kubernetes/cmd/kube-scheduler
build "$here/managers" "$kueue_ldflags" sigs.k8s.io/kueue/cmd/kueue sigs.k8s.io/jobset \
  github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
build "$here/flux" "" github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller

# The manifests each controller ships, from the module downloaded for the build.
manifest() { # manifest MODULE-FOLDER MODULE-PATH NAME SUBFOLDER...
  local folder="$1" module="$2" name="$3" dir sub
  shift 3
  dir="$(cd "$folder" && go list -m -f '{{.Dir}}' "$module")"
  [[ -n "$dir" && -d "$dir" ]] || { echo "twin: $module is not in the module cache" >&2; exit 1; }
  for sub in "$@"; do
    mkdir -p "$tmp/manifests/$name/$(dirname "$sub")"
    cp -R "$dir/$sub" "$tmp/manifests/$name/$sub"
  done
}
manifest "$here/kwok" sigs.k8s.io/kwok kwok kustomize/stage
manifest "$here/managers" sigs.k8s.io/kueue kueue config/components/crd config/components/webhook
manifest "$here/managers" sigs.k8s.io/jobset jobset config/components/crd config/components/webhook
manifest "$here/managers" github.com/kubeflow/trainer/v2 trainer manifests/base/crds \
  manifests/base/webhook
manifest "$here/flux" github.com/fluxcd/source-controller source-controller config/crd
manifest "$here/flux" github.com/fluxcd/kustomize-controller kustomize-controller config/crd
chmod -R u+w "$tmp/manifests" # the module cache's files are read-only
"$tmp/bin/kube-scheduler" --version >&2

# manifests/ first, bin/ last: a bin/ with every binary means the folder is complete.
# Another build that finished first keeps its folders; a folder missing a binary (one
# removed by hand) is this script's own cache, replaced by the build.
if complete; then
  echo "twin: another build filled $bin first; keeping it" >&2
else
  rm -rf "$cache/manifests" "$bin"
  mv -T "$tmp/manifests" "$cache/manifests" &&
    mv -T "$tmp/bin" "$bin" || { echo "twin: cannot move the build into $cache" >&2; exit 1; }
fi
trap - EXIT
rm -rf "$tmp"
echo "twin: built into $bin in $((SECONDS - start)) s"
