"""The site file an archived run was judged against, read back and checked (untrusted).

`provenance.json` names the file (relative to the project) and its sha256. The file is
read from there, or from where the user says (`--site`), and refused unless its bytes
still hash to that sha256: a changed site would name other nodes. `retest` builds its
site from it; `quarantine` and `retest` take the plan from it (`results/planned.py`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from nvcregen.emit.canonical import load_yaml_plain
from nvcregen.report.archive import ReadArchive
from nvcregen.report.folder import ReportError
from nvcregen.spec.bounded import MAX_SITE_BYTES, read_limited


def judged_site(archive: ReadArchive, path: Path) -> dict[str, Any]:
    """The site's plain data, when `path` holds the bytes the run was judged against.

    Raises:
        ReportError: When the file cannot be read, its sha256 is not provenance.json's,
            or it is not a Site file.

    """
    named = archive.provenance.site
    if not named.sha256:  # collect always records it: an archive without it cannot tell
        raise ReportError(
            "provenance.json names no sha256 of the site the run was judged against, so no"
            " site file can be checked to be it: collect the run again"
        )
    try:
        raw = read_limited(path, MAX_SITE_BYTES)  # a regular file, read no further than this
    except OSError as exc:
        raise ReportError(
            f"the site file {path} cannot be read ({exc.strerror or exc}): give it with --site"
        ) from exc
    if raw is None:
        raise ReportError(
            f"{path} is over {MAX_SITE_BYTES // (1 << 20)} MiB, the most a site file holds:"
            " not the site the run was judged against; give that file with --site"
        )
    if hashlib.sha256(raw).hexdigest() != named.sha256:
        raise ReportError(
            f"{path} is not the site the run was judged against (its sha256 differs from"
            " provenance.json): give that file with --site"
        )
    from ruamel.yaml.error import YAMLError

    try:
        data = load_yaml_plain(raw.decode("utf-8"))
    except (UnicodeDecodeError, YAMLError) as exc:
        raise ReportError(f"{path} is not a Site file: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("spec"), dict):
        raise ReportError(f"{path} is not a Site file")
    return data


def site_path(archive: ReadArchive, given: Path | None, root: Path) -> Path:
    """Where the site file is: as given, or as provenance.json names it under `root`."""
    return given or root / archive.provenance.site.file
