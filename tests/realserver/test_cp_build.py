"""The control plane's build, when it cannot succeed: a clear error, never a hang.

These run without the binaries: each points the build cache at an empty folder and puts
a `go` of its own (or none) first on the PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import kubecontrolplane
import pytest
from kubecontrolplane import ControlPlaneError


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_without_go_the_build_fails_saying_go_is_needed(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("go", path="/usr/bin:/bin"):
        pytest.skip("a Go toolchain in /usr/bin or /bin: no PATH without Go to test with")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no Go toolchain
    with pytest.raises(ControlPlaneError, match=r"Go 1\.24 or newer is needed"):
        kubecontrolplane.binaries()
    assert not list((empty_cache / "cache").rglob("bin"))  # no folder left to be reused


@pytest.mark.slow
def test_a_build_that_hangs_is_stopped_with_its_processes(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = empty_cache / "fakebin"
    fake.mkdir()
    pids = empty_cache / "go.pid"
    (fake / "go").write_text(f"#!/bin/sh\necho $$ > {pids}\nexec sleep 600\n")
    (fake / "go").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    monkeypatch.setattr(kubecontrolplane, "BUILD_TIMEOUT", 3.0)
    began = time.monotonic()
    with pytest.raises(ControlPlaneError, match=r"build\.sh ran over 3 s"):
        kubecontrolplane.binaries()
    assert time.monotonic() - began < 30
    pid = int(pids.read_text())
    for _ in range(50):  # the killed process is reaped by init
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the build's go (pid {pid}) still runs")


FAKE_GO = """\
#!/bin/sh
# `go build [-flags] -o OUT PKG...`: an executable per package, named as go names it
out=""; pkgs=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    -ldflags) shift 2 ;;
    build|-*) shift ;;
    *) pkgs="$pkgs $1"; shift ;;
  esac
done
for p in $pkgs; do
  case "$out" in */) f="$out$(basename "$p")" ;; *) f="$out" ;; esac
  printf '#!/bin/sh\\necho Kubernetes v0\\n' > "$f"; chmod +x "$f"
done
"""


@pytest.fixture
def fake_go(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `go` that builds instantly; the cache folder build.sh will fill."""
    fake = empty_cache / "fakebin"
    fake.mkdir()
    (fake / "go").write_text(FAKE_GO)
    (fake / "go").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    return kubecontrolplane.bin_dir()


def test_build_sh_fills_the_cache_folder_whole_and_then_reuses_it(fake_go: Path) -> None:
    assert kubecontrolplane.binaries() == fake_go
    assert sorted(p.name for p in fake_go.iterdir()) == sorted(kubecontrolplane.BINARIES)
    assert [p.name for p in fake_go.parent.iterdir()] == ["bin"]  # no temporary folder left
    done = subprocess.run(
        [str(kubecontrolplane.MODULE / "build.sh")], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith(f"controlplane: reusing {fake_go}")


def test_build_sh_replaces_a_cache_folder_missing_a_binary(fake_go: Path) -> None:
    fake_go.mkdir(parents=True)
    (fake_go / "kube-apiserver").write_text("#!/bin/sh\n")
    (fake_go / "kube-apiserver").chmod(0o755)  # etcd and the controller manager gone
    assert kubecontrolplane.binaries() == fake_go
    assert sorted(p.name for p in fake_go.iterdir()) == sorted(kubecontrolplane.BINARIES)
    assert [p.name for p in fake_go.parent.iterdir()] == ["bin"]
