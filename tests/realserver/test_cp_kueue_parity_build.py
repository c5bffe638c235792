"""The Kueue parity tool's build (tools/kueueparity/build.sh), without building Kueue.

Each test builds a copy of the tool's folder into a cache folder of its own, with a `go`
of its own (or none) first on the PATH, so none of them compiles anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import kueueparity
import pytest
from kubecontrolplane import ControlPlaneError

# `go build -trimpath -o OUT .`: an executable at OUT, and a note that go ran
FAKE_GO = """\
#!/bin/sh
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    *) shift ;;
  esac
done
echo ran >> "$GO_RAN"
printf '#!/bin/sh\\necho fake\\n' > "$out"; chmod +x "$out"
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of tools/kueueparity, the cache in tmp_path, a fake go first on the PATH."""
    copy = tmp_path / "kueueparity"
    shutil.copytree(kueueparity.MODULE, copy)
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "go").write_text(FAKE_GO)
    (fake / "go").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GO_RAN", str(tmp_path / "go-ran"))
    monkeypatch.setattr(kueueparity, "MODULE", copy)
    return copy


def build(module: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(module / "build.sh")], capture_output=True, text=True, check=False, env=os.environ
    )


def test_the_build_lands_where_the_tests_look_and_is_reused(module: Path, tmp_path: Path) -> None:
    first = build(module)
    assert first.returncode == 0, first.stderr
    assert kueueparity.binary() == kueueparity.bin_dir() / "kueueparity"
    assert kueueparity.bin_dir().parent.name == kueueparity.cache_key()
    assert not list(kueueparity.bin_dir().parent.glob("bin.tmp.*"))  # renamed into place
    again = build(module)
    assert "reusing" in again.stdout
    assert (tmp_path / "go-ran").read_text() == "ran\n"  # go ran once, for the first build


def test_a_changed_go_file_is_a_new_build(module: Path) -> None:
    before = kueueparity.cache_key()
    main = module / "main.go"
    main.write_text(main.read_text() + "\n// changed\n")
    assert kueueparity.cache_key() != before
    kueueparity.binary()  # builds for the new key
    assert (kueueparity.bin_dir() / "kueueparity").is_file()


def test_a_release_constant_that_is_not_go_mods_pin_is_refused(module: Path) -> None:
    main = module / "main.go"
    text = main.read_text()
    assert '\tkueueRelease   = "v0.19.2"\n' in text
    main.write_text(text.replace('kueueRelease   = "v0.19.2"', 'kueueRelease   = "v0.19.1"'))
    with pytest.raises(ControlPlaneError, match=r"main\.go's kueueRelease is not go\.mod's"):
        kueueparity.binary()
    assert not list(kueueparity.bin_dir().parent.glob("bin*"))


def test_without_go_the_build_says_go_is_needed(
    module: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("go", path="/usr/bin:/bin"):
        pytest.skip("a Go toolchain in /usr/bin or /bin: no PATH without Go to test with")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(ControlPlaneError, match=r"Go 1\.26 or newer is needed"):
        kueueparity.binary()
    assert not kueueparity.bin_dir().exists()
