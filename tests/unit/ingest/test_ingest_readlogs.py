"""The files of one `ingest` command, each read on its own (`ingest/readlog.py`'s `read_logs`):
the one loop every kind's `ingest` reads its files with."""

from __future__ import annotations

from pathlib import Path

from nvcregen.ingest.limits import MAX_LOG_BYTES
from nvcregen.ingest.models import IngestFormatError
from nvcregen.ingest.readlog import Hints, read_logs


def parse(text: str, name: str) -> tuple[str, str]:
    if not text.startswith("ok"):
        raise IngestFormatError(f"{Path(name).name} says {text.strip()!r}")
    return Path(name).name, text.strip()


def test_each_file_is_read_on_its_own_in_order_one_that_fails_naming_itself(
    tmp_path: Path,
) -> None:
    files = []
    for name, text in (("a", "ok 1"), ("b", "no"), ("c", "ok 3"), ("d", None), ("e", "ok 5")):
        file = tmp_path / name
        if text is not None:
            file.write_text(text)
        files.append(file)
    big = tmp_path / "big"
    with big.open("wb") as out:
        out.truncate(MAX_LOG_BYTES + 1)
    found, problems = read_logs([*files, big], parse, Hints("give ok", unreadable="none here"))
    assert found == [("a", "ok 1"), ("c", "ok 3"), ("e", "ok 5")]
    assert [(str(p.span.file), p.code, p.hint) for p in problems] == [
        (str(files[1]), "NVC700", "give ok"),
        (str(files[3]), "NVC700", "none here"),
        (str(big), "NVC700", "give ok"),
    ]
    assert problems[0].message == "b says 'no'"
    assert problems[1].message.startswith("cannot read the file: ")
    assert read_logs([], parse, Hints("")) == ([], [])
