"""The input key and the sealed index that let `render --check` skip unchanged sites."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nvcregen.emit import cache
from nvcregen.emit.cache import (
    Stamp,
    input_key,
    is_fresh,
    seal_index,
    site_data,
    site_input_key,
)

ROOT = Path(__file__).resolve().parents[3]
SITE = b"apiVersion: nvcregen.io/v1alpha1\nkind: Site\nspec:\n  nvcre:\n    chart:\n"


def write_site_dir(folder: Path, stamp: Stamp) -> dict[str, str]:
    """Write a small sealed site folder; return its tree."""
    tree = {"a/x.yaml": "kind: X\n", "images.txt": "img\n"}
    tree["index.json"] = seal_index({"files": {"a/x.yaml": {}}, "site": "s"}, tree, stamp)
    for path, text in tree.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return tree


def test_the_key_covers_site_and_chart_bytes() -> None:
    keys = {
        input_key(b"a", None),
        input_key(b"b", None),
        input_key(b"a", b""),
        input_key(b"a", b"chart"),
    }
    assert len(keys) == 4
    assert input_key(b"a", b"chart") == input_key(b"a", b"chart")


def test_the_key_covers_the_catalog_and_the_schemas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    compiled = Path("schemas", "upstream", "_compiled")
    shutil.copytree(ROOT / compiled, tmp_path / compiled)
    shutil.copyfile(
        ROOT / "schemas" / "site.v1alpha1.json", tmp_path / "schemas" / "site.v1alpha1.json"
    )
    monkeypatch.setattr(cache, "data_dir", lambda name: tmp_path / name)
    compute = cache.bundle_digest.__wrapped__
    before = compute()
    assert before == cache.bundle_digest()  # the copy hashes like the original
    baseline = next((tmp_path / "catalog" / "baselines").glob("*.yaml"))
    baseline.write_bytes(baseline.read_bytes().replace(b"\n", b"\r\n"))
    assert compute() == before  # a Windows checkout's line endings change no output
    baseline.write_text(baseline.read_text() + "# edited\n")
    after_catalog = compute()
    schema = next((tmp_path / "schemas" / "upstream" / "_compiled").glob("*.json"))
    schema.write_text(schema.read_text() + " ")
    assert len({before, after_catalog, compute()}) == 3


def test_the_chart_archive_is_read_from_the_site(tmp_path: Path) -> None:
    site = tmp_path / "sites" / "s.yaml"
    site.parent.mkdir()
    site.write_bytes(SITE + b"      archive: charts/c.tgz\n")
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "c.tgz").write_bytes(b"one")
    first = site_input_key(site, tmp_path)
    assert first == input_key(site.read_bytes(), b"one")
    (tmp_path / "charts" / "c.tgz").write_bytes(b"two")
    assert site_input_key(site, tmp_path) not in {first, None}
    (tmp_path / "charts" / "c.tgz").unlink()
    assert site_input_key(site, tmp_path) is None  # compile it: the compiler explains
    site.write_bytes(b"archive: [unclosed\n")
    assert site_input_key(site, tmp_path) is None
    site.write_bytes(b"kind: Site\n")  # names no archive: not even parsed
    assert site_input_key(site, tmp_path) == input_key(b"kind: Site\n", None)


def test_the_key_holds_the_folder_the_gitops_objects_apply(tmp_path: Path) -> None:
    """Rendered into another folder, a site without gitops.path gets other GitOps paths."""
    site = tmp_path / "s.yaml"
    gitops = b"metadata: {name: lab}\nspec:\n  gitops: {repoURL: https://g.example/r.git}\n"
    site.write_bytes(gitops)
    in_out = site_input_key(site, tmp_path, "out")
    assert in_out == input_key(gitops, None, "out/lab")
    assert site_input_key(site, tmp_path, "deploy/out") == input_key(gitops, None, "deploy/out/lab")
    assert site_input_key(site, tmp_path, ".") == input_key(gitops, None, "lab")
    named = gitops.replace(b"}\n", b", path: gitops/lab}\n")
    site.write_bytes(named)
    assert site_input_key(site, tmp_path, "out") == site_input_key(site, tmp_path, "x/out")
    assert site_input_key(site, tmp_path, "out") == input_key(named, None, "gitops/lab")
    site.write_bytes(b"metadata: {name: lab}\n")  # no GitOps objects: no folder in the key
    assert site_input_key(site, tmp_path, "out") == input_key(site.read_bytes(), None)


def test_a_sealed_folder_is_fresh_until_touched(tmp_path: Path) -> None:
    write_site_dir(tmp_path, Stamp("k1"))
    assert is_fresh(tmp_path, "k1", strict=True)
    assert not is_fresh(tmp_path, "k2", strict=False)
    (tmp_path / "images.txt").write_text("other\n")
    assert not is_fresh(tmp_path, "k1", strict=False)


def test_a_linked_folder_makes_the_folder_stale(tmp_path: Path) -> None:
    write_site_dir(tmp_path / "site", Stamp("k1"))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "site" / "more").symlink_to(tmp_path / "elsewhere")
    assert not is_fresh(tmp_path / "site", "k1", strict=False)


def test_the_index_records_its_own_digest(tmp_path: Path) -> None:
    tree = write_site_dir(tmp_path, Stamp("k1", notices=2))
    index = json.loads(tree["index.json"])
    assert index["inputs"] == {"sha256": "k1", "notices": 2}
    assert sorted(index["digests"]) == ["a/x.yaml", "images.txt", "index.json"]
    assert is_fresh(tmp_path, "k1", strict=False)
    assert not is_fresh(tmp_path, "k1", strict=True)  # --strict may fail on the warnings
    (tmp_path / "index.json").write_text(tree["index.json"].replace("  ", "   ", 1))
    assert not is_fresh(tmp_path, "k1", strict=False)  # spacing alone
    index["files"]["a/x.yaml"] = {"edited": True}
    (tmp_path / "index.json").write_text(cache.dump_index(index))
    assert not is_fresh(tmp_path, "k1", strict=False)


def test_a_site_file_is_parsed_once_per_run(tmp_path: Path) -> None:
    """render --check reads each site's cluster and its key's fields from one parse."""
    site = tmp_path / "s.yaml"
    site.write_bytes(b"metadata: {name: lab}\nspec: {cluster: c, gitops: {repoURL: https://x/r}}\n")
    first = site_data(site)
    assert first == {
        "metadata": {"name": "lab"},
        "spec": {"cluster": "c", "gitops": {"repoURL": "https://x/r"}},
    }
    assert site_data(site) is first  # the same parse, shared
    site.write_bytes(b"spec: [unclosed\n")
    assert site_data(site) is None
    assert site_data(tmp_path / "missing.yaml") is None
