"""`collect --from DIR` reads regular files inside the folder only (issue #20).

A log or an export that is a symbolic link to a file outside was archived byte for
byte; two logs of one run (`x.log`, `x.txt`) gave a "verified" archive whose log bytes
differed from the sha256 judged. Both are refused now, with a code at the path, and
nothing is archived. Duplicate keys in an export are findings, not last-one-wins.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from labstate import lab_state, write_export
from trainerlogs import write_saved_logs

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions
from nvcregen.collect.source import MAX_DEPTH, SourceError, read_folder

ROOT = Path(__file__).resolve().parents[3]
NVCRE_SITE = str(ROOT / "tests" / "fixtures" / "collect" / "site.yaml")
TRAINER_SITE = str(ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml")
SECRET = b"outside the folder: never to be archived\n"


def names(folder: Path) -> list[str]:
    """What a folder holds, by name, sorted."""
    return sorted(p.name for p in folder.iterdir())


def refused(site: str, folder: Path, out: Path) -> str:
    with pytest.raises(CollectError) as raised:
        collect(CollectOptions(site, out, ROOT, from_dir=folder))
    assert not out.exists()  # nothing archived
    return str(raised.value)


def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.log"
    secret.write_bytes(SECRET)
    return secret


def test_an_export_that_links_outside_is_refused(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "export", lab_state())
    (folder / "stolen.yaml").symlink_to(outside(tmp_path))
    message = refused(NVCRE_SITE, folder, tmp_path / "results")
    assert "stolen.yaml: error[NVC710]: a symbolic link" in message


def test_a_linked_subfolder_is_refused_not_walked(tmp_path: Path) -> None:
    elsewhere = write_export(tmp_path / "elsewhere", lab_state())
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "objects").symlink_to(elsewhere, target_is_directory=True)
    message = refused(NVCRE_SITE, folder, tmp_path / "results")
    assert "objects: error[NVC710]" in message


def test_a_fifo_with_a_read_suffix_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "export", lab_state())
    os.mkfifo(folder / "pipe.yaml")
    message = refused(NVCRE_SITE, folder, tmp_path / "results")
    assert "pipe.yaml: error[NVC710]: not a regular file" in message


def test_a_saved_log_that_links_outside_is_refused(tmp_path: Path) -> None:
    folder = write_saved_logs(tmp_path / "saved")
    log = sorted((folder / "logs" / "nvcre").glob("*.log"))[0]
    log.unlink()
    log.symlink_to(outside(tmp_path))
    message = refused(TRAINER_SITE, folder, tmp_path / "results")
    assert f"logs/nvcre/{log.name}: error[NVC710]" in message


def test_two_logs_of_one_run_are_refused(tmp_path: Path) -> None:
    folder = write_saved_logs(tmp_path / "saved")
    log = sorted((folder / "logs" / "nvcre").glob("*.log"))[0]
    log.with_suffix(".txt").write_text("# nThread 1 nGpus 1\n# Avg bus bandwidth : 900\n")
    message = refused(TRAINER_SITE, folder, tmp_path / "results")
    assert f"logs/nvcre/{log.stem}.txt: error[NVC711]: logs/nvcre/{log.name} is the log" in message


def test_saved_logs_without_links_are_still_collected(tmp_path: Path) -> None:
    folder = write_saved_logs(tmp_path / "saved")
    outcome = collect(CollectOptions(TRAINER_SITE, tmp_path / "results", ROOT, from_dir=folder))
    assert outcome.archive.verified


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        (
            "a.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nkind: Secret\n",
            "a.yaml:4:1",
        ),
        ("b.json", '{"apiVersion": "v1", "kind": "ConfigMap", "kind": "Secret"}', "b.json"),
    ],
)
def test_a_key_given_twice_in_an_export_is_a_finding(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as raised:
        read_folder(tmp_path)
    assert raised.value.problems == [f"{where}: error[NVC712]: the key 'kind' is given twice"]


def test_the_same_key_in_two_mappings_is_fine(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {name: b}}\n"
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    assert len(read_folder(tmp_path).objects) == 1


@pytest.mark.parametrize(("depth", "deep"), [(MAX_DEPTH, False), (MAX_DEPTH + 1, True)])
def test_nesting_is_bounded_exactly(tmp_path: Path, depth: int, deep: bool) -> None:
    data = "[" * (depth - 1) + "]" * (depth - 1)  # the object itself is one level
    text = f'{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "a"}}, "x": {data}}}'
    (tmp_path / "a.json").write_text(text, encoding="utf-8")
    if not deep:
        assert len(read_folder(tmp_path).objects) == 1
        return
    with pytest.raises(SourceError) as raised:
        read_folder(tmp_path)
    assert raised.value.problems == [f"a.json: error[NVC714]: nested more than {MAX_DEPTH} deep"]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_hundred_thousand_brackets_are_a_finding(tmp_path: Path, suffix: str) -> None:
    (tmp_path / f"a{suffix}").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(SourceError) as raised:
        read_folder(tmp_path)
    [problem] = raised.value.problems
    assert problem.startswith(f"a{suffix}") and "error[NVC714]" in problem


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_5000_digit_number_in_an_export_is_a_finding(tmp_path: Path, suffix: str) -> None:
    text = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "x": '
    (tmp_path / f"a{suffix}").write_text(text + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(SourceError) as raised:
        read_folder(tmp_path)
    [problem] = raised.value.problems
    assert problem.startswith(f"a{suffix}: error[NVC713]: cannot be read: ")
    assert "5000" in problem  # the size of the number refused


@pytest.mark.parametrize("site", [NVCRE_SITE, TRAINER_SITE])
def test_a_linked_site_folder_under_out_is_refused(tmp_path: Path, site: str) -> None:
    """`--out results` whose site folder links elsewhere wrote the archive there (issue #32)."""
    folder = (
        write_export(tmp_path / "export", lab_state())
        if site == NVCRE_SITE
        else write_saved_logs(tmp_path / "saved")
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".undated-0123456789ab.tmp-999999").mkdir()  # no leftover is looked for there
    results = tmp_path / "results"
    results.mkdir()
    name = "lab" if site == NVCRE_SITE else "h20-3e-trainer"
    (results / name).symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(CollectError) as raised:
        collect(CollectOptions(site, results, ROOT, from_dir=folder))
    message = str(raised.value)
    assert message.startswith(f"error[NVC758]: {results / name}: this is a symbolic link below")
    assert "hint: remove the link" in message
    assert names(elsewhere) == [".undated-0123456789ab.tmp-999999"]


def test_a_linked_run_folder_is_refused_and_a_linked_out_is_fine(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "export", lab_state())
    real = tmp_path / "real"
    real.mkdir()
    results = tmp_path / "results"
    results.symlink_to(real, target_is_directory=True)  # the folder the user names may be one
    first = collect(CollectOptions(NVCRE_SITE, results, ROOT, from_dir=folder))
    assert first.archive.verified and (real / "lab" / first.archive.path.name).is_dir()
    run = real / "lab" / first.archive.path.name
    run.rename(real / "moved")
    run.symlink_to(real / "moved", target_is_directory=True)
    with pytest.raises(CollectError, match=rf"error\[NVC758\]: {results}/lab/{run.name}: this is"):
        collect(CollectOptions(NVCRE_SITE, results, ROOT, from_dir=folder))
