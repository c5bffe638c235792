"""The twin's build (tools/twin/build.sh), run with a `go` of the tests' own (or none).

Each test points the build cache at an empty folder. The fake `go` builds instantly and
answers `go list -m` with folders of fake manifests, so what is checked is the script:
its cache key, the folders it fills whole or not at all, and its reuse.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import twin

BUILD = twin.TOOLS / "twin" / "build.sh"
FAKE_GO = """\
#!/bin/sh
# `go build [-flags] -o DIR/ PKG...`: an executable per package, named as go names it;
# `go list -m -f {{.Dir}} MODULE`: a folder of fake manifests under $FAKE_MODULES.
case "$1" in
  list) for last; do :; done; echo "$FAKE_MODULES/$last"; exit 0 ;;
  build) shift ;;
  *) echo "fake go: $1 unknown" >&2; exit 2 ;;
esac
out=""; pkgs=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    -ldflags) shift 2 ;;
    -*) shift ;;
    *) pkgs="$pkgs $1"; shift ;;
  esac
done
echo "$PWD $pkgs" >> "$FAKE_MODULES/builds.log"
for p in $pkgs; do
  if [ "$p" = "$FAKE_GO_FAIL" ]; then echo "fake go: cannot build $p" >&2; exit 1; fi
  f="$out$(basename "$p")"
  printf '#!/bin/sh\\necho Kubernetes v0\\n' > "$f"; chmod +x "$f"
done
"""
# What build.sh copies from each module (module path, folders), as the module cache has them.
MANIFESTS = {
    "sigs.k8s.io/kwok": ("kustomize/stage",),
    "sigs.k8s.io/kueue": ("config/components/crd", "config/components/webhook"),
    "sigs.k8s.io/jobset": ("config/components/crd", "config/components/webhook"),
    "github.com/kubeflow/trainer/v2": ("manifests/base/crds", "manifests/base/webhook"),
    "github.com/fluxcd/source-controller": ("config/crd",),
    "github.com/fluxcd/kustomize-controller": ("config/crd",),
}


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


@pytest.fixture
def fake_go(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A `go` that builds instantly, modules whose manifests are read-only (as Go's module
    cache keeps them); the cache folder build.sh will fill."""
    fake = empty_cache / "fakebin"
    fake.mkdir()
    (fake / "go").write_text(FAKE_GO)
    (fake / "go").chmod(0o755)
    modules = empty_cache / "modules"
    for module, folders in MANIFESTS.items():
        for folder in folders:
            path = modules / module / folder
            path.mkdir(parents=True)
            (path / "kustomization.yaml").write_text(f"# {module} {folder}\n")
            (path / "kustomization.yaml").chmod(0o444)
            path.chmod(0o555)
    monkeypatch.setenv("FAKE_MODULES", str(modules))
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    yield twin.cache_dir()
    for path in modules.rglob("*"):  # let pytest remove them
        if path.is_dir():
            path.chmod(0o755)


def build() -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BUILD)], capture_output=True, text=True, check=False)


def test_without_go_the_build_fails_saying_go_is_needed(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("go", path="/usr/bin:/bin"):
        pytest.skip("a Go toolchain in /usr/bin or /bin: no PATH without Go to test with")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    done = build()
    assert done.returncode == 1
    assert done.stderr.startswith("twin: Go 1.26 or newer is needed to build kwok")
    assert not (empty_cache / "cache").exists()  # nothing left to be taken for a build
    assert twin.missing().startswith("the twin is not built (no kwok, kube-scheduler, kueue")


def test_build_sh_fills_the_cache_folder_whole_and_then_reuses_it(
    fake_go: Path, empty_cache: Path
) -> None:
    assert twin.missing().endswith("; run `make twin`)")
    done = build()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"twin: built into {fake_go / 'bin'} in ")
    assert twin.missing() == ""  # the key build.sh used is the one the tests compute
    assert sorted(p.name for p in (fake_go / "bin").iterdir()) == sorted(twin.BINARIES)
    assert sorted(p.name for p in fake_go.iterdir()) == ["bin", "manifests"]  # no temporary
    copied = fake_go / "manifests" / "kueue" / "config" / "components" / "webhook"
    text = (copied / "kustomization.yaml").read_text()
    assert text == "# sigs.k8s.io/kueue config/components/webhook\n"
    assert copied.stat().st_mode & stat.S_IWUSR  # writable, so the cache can be removed
    said = re.findall(r"^twin: built (.*) in \d+ s$", done.stderr, re.MULTILINE)
    assert said == [
        "kwok",
        "kube-scheduler",
        "kueue jobset trainer-controller-manager",
        "source-controller kustomize-controller",
    ]
    # One module at a time, kube-scheduler from the control plane's own module.
    builds = (empty_cache / "modules" / "builds.log").read_text().splitlines()
    assert [line.split()[0] for line in builds] == [
        str(twin.TOOLS / "twin" / "kwok"),
        str(twin.TOOLS / "controlplane"),
        str(twin.TOOLS / "twin" / "managers"),
        str(twin.TOOLS / "twin" / "flux"),
    ]
    again = build()
    assert again.returncode == 0
    assert again.stdout == f"twin: reusing {fake_go / 'bin'} (built for these pins)\n"
    assert len(builds) == len((empty_cache / "modules" / "builds.log").read_text().splitlines())


def test_a_failed_build_leaves_no_folder_to_be_reused(
    fake_go: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GO_FAIL", "github.com/fluxcd/kustomize-controller")
    done = build()
    assert done.returncode == 1
    assert "fake go: cannot build github.com/fluxcd/kustomize-controller" in done.stderr
    assert list(fake_go.iterdir()) == []  # the temporary folder removed, no bin/
    assert twin.missing().startswith("the twin is not built")


def test_a_cache_folder_missing_a_binary_is_rebuilt(fake_go: Path) -> None:
    assert build().returncode == 0
    (fake_go / "bin" / "kueue").unlink()
    assert (
        twin.missing() == f"the twin is not built (no kueue in {fake_go / 'bin'}; run `make twin`)"
    )
    done = build()
    assert done.returncode == 0, done.stderr
    assert twin.missing() == ""
    assert sorted(p.name for p in fake_go.iterdir()) == ["bin", "manifests"]


def test_the_key_changes_with_each_pin_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every go.mod and go.sum build.sh reads is in the key, the control plane's included."""
    keys = {twin.cache_key()}
    for pin in twin.PIN_FILES:
        copy = tmp_path / pin.relative_to(twin.TOOLS)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(pin.read_bytes() + b"\n")
        changed = tuple(copy if p == pin else p for p in twin.PIN_FILES)
        monkeypatch.setattr(twin, "PIN_FILES", changed)
        keys.add(twin.cache_key())
        monkeypatch.undo()
    assert len(keys) == 1 + len(twin.PIN_FILES) == 9
