"""The results archive: `results/<site>/<run-id>/`, written once, atomically, and verified.

Layout (every path '/'-separated, relative to the run folder):

    objects/<kind>/<namespace>/<name>.yaml   each object exactly as read (canonical YAML;
                                             `_cluster` for cluster-scoped objects)
    summary.json       runs, nodes, measurements with their finality
    bandwidth.csv      test, stage, group, round, size: algbw, busbw, samples, transport
    verdicts.json      pass / fail / incomplete per threshold, run and report export
    provenance.json    site file sha256, nvcregen version, listings, images, NCCL
    logs/<ns>/<name>.log   trainer mode: each pod log read, byte for byte
    SHA256SUMS         `sha256sum -c` format, for every other file
    attestation.dsse.json  only with `collect --sign-key`: a signed in-toto Statement of
                       every other file, SHA256SUMS included (`attestation.py`)

The run id is `<latest time in the objects>-<12 hex>`, the hex a hash of the site file
and the objects, so collecting the same state twice names the same folder, and a folder
is never written over: it is built beside its final place and renamed into it.

That hidden folder (`.<run-id>.tmp-<pid>`) first receives a marker naming the process
and host that build it, removed just before the rename. A collection killed midway
leaves it behind; the next one in the same site folder removes it when it can prove it
was a collection's own: the marker is there, names this host, and its process is gone
(NVC728). Any other hidden folder is left as it is.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nvcregen.core import codes
from nvcregen.core.atomicfile import refuse_links_below
from nvcregen.core.kube import name_problem
from nvcregen.emit.canonical import dump_yaml
from nvcregen.results.archiveread import (
    MAX_SUMS,
    ArchiveFileTooLargeError,
    read_capped,
    sha256_capped,
)
from nvcregen.results.liveobjects import CLUSTER_SCOPE, Obj, content_digest, key_of
from nvcregen.spec.fast import parse_fast

SUMS = "SHA256SUMS"
ENVELOPE = "attestation.dsse.json"  # signs SHA256SUMS, so SHA256SUMS cannot list it
REQUIRED = ("summary.json", "bandwidth.csv", "verdicts.json", "provenance.json")
OBJECTS = "objects"
_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?Z$")
_TIME_FIELDS = frozenset({"creationTimestamp", "completionTime", "lastTransitionTime"})
_SUM_LINE = re.compile(r"^([0-9a-f]{64})  (\S.*)$")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # no line end but LF
STRICT_SUMS = codes.NVC720.code  # SHA256SUMS with a CR, a control character or a second line end
EXTRA_FOLDER = codes.NVC721.code  # a folder in a run that holds no listed file
LINKED_RUN = codes.NVC722.code  # a run folder that is itself a symbolic link
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")  # one plain path segment
MARKER = ".nvcregen-collect"
_LEFTOVER = re.compile(r"^\.(?P<run>[A-Za-z0-9][A-Za-z0-9_.-]{0,127})\.tmp-(?P<pid>[0-9]{1,10})$")
LEFTOVER = codes.NVC728.code
_MAX_MARKER = 4096  # a marker names a pid and a host: far less
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class Archive:
    """An archive in memory: its run id and every file's bytes."""

    run_id: str
    files: dict[str, bytes]


@dataclass(frozen=True)
class Written:
    """Where an archive is, whether this run wrote it, and what verification found."""

    path: Path
    state: Literal["written", "exists"]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # leftovers of killed collections removed

    @property
    def verified(self) -> bool:
        """The folder matches its SHA256SUMS, file for file."""
        return not self.problems


def object_path(obj: Mapping[str, Any]) -> str:
    """Where an object goes: objects/<kind>/<namespace or _cluster>/<name>.yaml.

    Raises:
        ValueError: When its kind, namespace or name is not a valid Kubernetes one (so
            it could name a path outside the archive).

    """
    key = key_of(obj)
    problem = name_problem(key.kind, key.namespace, key.name)
    if problem is not None:
        raise ValueError(f"{key}: {problem}")
    return f"{OBJECTS}/{key.kind.lower()}/{key.namespace or CLUSTER_SCOPE}/{key.name}.yaml"


def run_id(objects: Sequence[Obj], site_sha256: str) -> str:
    """`<YYYYMMDDTHHMMSSZ>-<12 hex>` from the latest timestamp in the objects and a hash.

    The time is the latest creation, completion or condition time found (`undated`
    when there is none): no clock is read, so the same state gives the same id.
    """
    times = [t for obj in objects for t in _times(obj)]
    stamp = max(times, default="undated")
    digest = hashlib.sha256(f"{site_sha256}:{content_digest(objects)}".encode()).hexdigest()
    return f"{stamp}-{digest[:12]}"


def _times(data: object) -> list[str]:
    found = []
    if isinstance(data, Mapping):
        for key, value in data.items():
            match = _TIME.match(value) if isinstance(value, str) and key in _TIME_FIELDS else None
            if match:
                found.append("{}{}{}T{}{}{}Z".format(*match.groups()))
            else:
                found += _times(value)
    elif isinstance(data, list):
        for item in data:
            found += _times(item)
    return found


def build_archive(
    run: str,
    objects: Sequence[Obj],
    texts: Mapping[str, str],
    blobs: Mapping[str, bytes] | None = None,
    digests: Mapping[str, str] | None = None,
) -> Archive:
    """Every file of an archive, SHA256SUMS included.

    Args:
        run: The run id.
        objects: The site's objects as read.
        texts: The other files by name (summary.json, ...).
        blobs: Files kept byte for byte (trainer mode's logs, `logs/<ns>/<name>.log`).
        digests: The blobs' sha256s by path, when the caller hashed them already (the
            written archive is verified against SHA256SUMS, so a wrong one is caught).

    Raises:
        ValueError: When two objects would share a file (same kind, namespace and name).

    """
    files: dict[str, bytes] = {}
    for obj in objects:
        path = object_path(obj)
        if path in files:
            raise ValueError(f"two objects are {key_of(obj)}")
        files[path] = dump_yaml(obj).encode("utf-8")
    files |= {name: text.encode("utf-8") for name, text in texts.items()}
    files |= dict(blobs or {})
    unsafe = sorted(path for path in files if not _inside(path))
    if unsafe or not _RUN_ID.fullmatch(run):
        raise ValueError(f"not a path inside the run folder: {(unsafe or [run])[0]!r}")
    known = {p: d for p, d in (digests or {}).items() if blobs is not None and p in blobs}
    files[SUMS] = sums(files, known).encode("utf-8")
    return Archive(run, files)


def sums(files: Mapping[str, bytes], known: Mapping[str, str] | None = None) -> str:
    """SHA256SUMS text (`<hex>  <path>` per file, sorted by path); `known`: hashed already."""
    found = known or {}
    lines = [
        f"{found.get(path) or hashlib.sha256(data).hexdigest()}  {path}"
        for path, data in sorted(files.items())
    ]
    return "\n".join(lines) + "\n"


def write_archive(site_dir: Path, archive: Archive) -> Written:
    """Write an archive as `<site_dir>/<run id>/` unless that folder exists; verify it.

    The files are written (and fsynced) into a hidden folder beside the target, which
    is then renamed into place, so a reader never sees half an archive. An existing
    folder is left as it is and only verified. The site folder and the run folder must
    not be symbolic links: nothing is written (or removed) where one points.

    Raises:
        FileWriteError: When the site or run folder is a symbolic link (NVC758).
        OSError: When the files cannot be written (the hidden folder is removed).

    """
    final = site_dir / archive.run_id
    refuse_links_below(site_dir.parent, final)  # before leftovers are looked for there
    notes = remove_leftovers(site_dir)
    if final.exists():
        return Written(final, "exists", verify_archive(final), notes)
    site_dir.mkdir(parents=True, exist_ok=True)
    tmp = site_dir / f".{archive.run_id}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        _write_file(tmp / MARKER, _marker(os.getpid()).encode())
        for path, data in sorted(archive.files.items()):
            _write_file(tmp / path, data)
        (tmp / MARKER).unlink()  # the archive holds its own files only
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # no half-written archive is left behind
        raise
    try:
        tmp.rename(final)
    except OSError:  # another collection of the same state got there first
        shutil.rmtree(tmp, ignore_errors=True)
        return Written(final, "exists", verify_archive(final), notes)
    return Written(final, "written", verify_archive(final), notes)


def _marker(pid: int) -> str:
    return f"nvcregen collect pid {pid} host {socket.gethostname()}\n"


def remove_leftovers(site_dir: Path) -> list[str]:
    """Remove the hidden folders of killed collections in a site folder; say which.

    A folder `.<run-id>.tmp-<pid>` (not a link) is removed only when it holds the marker
    a collection writes first, as a regular file naming this host and that pid, and no
    process has that pid any more. Anything else is left.
    """
    removed = []
    try:
        entries = sorted(os.scandir(site_dir), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        match = _LEFTOVER.match(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        pid = int(match["pid"])
        if pid == os.getpid() or not _marked(Path(entry.path) / MARKER, pid) or _alive(pid):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(
            f"{LEFTOVER}: removed {entry.name}/, left by a collection that was killed (pid {pid})"
        )
    return removed


def _marked(marker: Path, pid: int) -> bool:
    try:
        if not stat.S_ISREG(marker.lstat().st_mode):
            return False
        return read_capped(marker, _MAX_MARKER).decode("utf-8") == _marker(pid)
    except (OSError, UnicodeDecodeError):  # over _MAX_MARKER too: no marker a collection wrote
        return False


def _alive(pid: int) -> bool:
    """Whether a process with this pid exists (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _write_file(file: Path, data: bytes) -> None:
    """A new file in the hidden folder: never one already there, never through a link."""
    file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(file, _NEW_FILE, 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def verify_archive(folder: Path) -> list[str]:
    """Re-read an archive and check it against its SHA256SUMS, strictly.

    As strictly as `sha256sum -c --strict`, and more: only regular files, inside the
    run folder; SHA256SUMS with LF line ends only and no control character (NVC720); no
    folder that holds no listed file (NVC721); the run folder not a link (NVC722).

    Returns:
        Every problem: SHA256SUMS missing, not a regular file, or with a line that is
        not `<sha256>  <path>`, a path outside the run or not in its plain form, or a
        path listed twice; anything in the folder that is not a regular file or a
        folder (a symbolic link, a FIFO); a listed file missing or with another hash; a
        file not listed; a required file absent. Empty when it verifies.

    """
    if folder.is_symlink():
        return [f"error[{LINKED_RUN}]: {folder.name} is a symbolic link, not a run folder"]
    entries = _entries(folder)
    if SUMS not in entries:
        return [f"{SUMS} cannot be read: it is missing"]
    if entries[SUMS] != "file":
        return [f"{SUMS} is a {entries[SUMS]}, not a regular file"]
    try:
        text = read_capped(folder / SUMS, MAX_SUMS).decode("utf-8")
    except ArchiveFileTooLargeError as exc:
        return [str(exc)]
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{SUMS} cannot be read: {exc}"]
    lines = text.split("\n")  # LF only: str.splitlines would also split at \r, \x1c, ...
    if lines[-1] == "":
        lines.pop()
    listed, problems = _parse_sums(lines)
    problems += [
        f"{path} is a {kind}, not a regular file"
        for path, kind in entries.items()
        if kind not in {"file", "folder"}
    ]
    missing, changed, added, large = compare_digests(folder, listed, entries, {SUMS, ENVELOPE})
    problems += large
    problems += [f"{path} is listed in {SUMS} but missing" for path in missing]
    problems += [f"{path} does not match its sha256 in {SUMS}" for path in changed]
    problems += [f"{path} is not listed in {SUMS}" for path in added]
    holding = {"/".join(p.split("/")[:n]) for p in listed for n in range(1, p.count("/") + 1)}
    problems += [
        f"error[{EXTRA_FOLDER}]: {path}/ is a folder holding no listed file"
        for path, kind in sorted(entries.items())
        if kind == "folder" and path not in holding
    ]
    problems += [f"{name} is missing" for name in REQUIRED if name not in listed]
    return problems


def sums_listing(data: bytes) -> dict[str, str] | None:
    """The paths and digests a SHA256SUMS lists; None when it is not read whole and clean."""
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    if lines[-1] == "":
        lines.pop()
    listed, problems = _parse_sums(lines)
    return None if problems else listed


def _parse_sums(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """The listed paths and digests, and every malformed, outside or repeated line."""
    listed: dict[str, str] = {}
    problems = []
    for number, line in enumerate(lines, 1):
        match = _SUM_LINE.match(line)
        if (found := _CONTROL.search(line)) is not None:
            problems.append(
                f"error[{STRICT_SUMS}]: {SUMS} line {number} holds the control character"
                f" {found[0]!r} (only LF ends a line, as `sha256sum -c --strict` reads it)"
            )
        elif match is None:
            problems.append(f"{SUMS} line {number} is not `<sha256>  <path>`")
        elif not _inside(match[2]):
            problems.append(f"{SUMS} line {number} names a path outside the run: {match[2]}")
        elif match[2] in listed:
            problems.append(f"{SUMS} line {number} lists {match[2]} a second time")
        else:
            listed[match[2]] = match[1]
    return listed, problems


def run_files(folder: Path) -> dict[str, str]:
    """Every entry under a run folder but its folders, by relative path: 'file', or what else."""
    return {path: kind for path, kind in _entries(folder).items() if kind != "folder"}


def _entries(folder: Path) -> dict[str, str]:
    """Every entry under a run folder by relative path: 'file', or what else it is.

    Walked with lstat: a symbolic link is reported, never followed; each folder is an
    entry too ('folder'), so one that holds no listed file is seen.
    """
    found: dict[str, str] = {}
    try:
        children = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return found
    for child in children:
        mode = child.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            found[child.name] = "folder"
            found |= {f"{child.name}/{p}": k for p, k in _entries(Path(child.path)).items()}
        else:
            found[child.name] = "file" if stat.S_ISREG(mode) else _kind(mode)
    return found


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symbolic link"
    return "FIFO" if stat.S_ISFIFO(mode) else "special file"


def compare_digests(
    folder: Path, listed: Mapping[str, str], entries: Mapping[str, str], unlisted: set[str]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """A manifest (path -> sha256) against a run folder's entries (`_entries`).

    Returns the paths listed but absent, listed with another sha256, and regular files
    present but not listed (the `unlisted` names, such as the manifest itself, left out),
    each sorted; then the findings of listed files over the size nvcregen reads (NVC759,
    never hashed). A listed path that is there but not a regular file is in none of them:
    callers report entries that are not regular files themselves.
    """
    present = {path for path, kind in entries.items() if kind == "file"} - unlisted
    missing, changed, large = [], [], []
    for path, digest in sorted(listed.items()):
        if path not in present:
            if path not in entries:
                missing.append(path)
            continue
        try:
            if sha256_capped(folder / path) != digest:
                changed.append(path)
        except ArchiveFileTooLargeError as exc:
            large.append(f"{path}: {exc}")
    return missing, changed, sorted(present - listed.keys()), large


def _inside(path: str) -> bool:
    """A relative '/'-separated path in plain form (no `.`, `..` or empty parts)."""
    parts = path.split("/")
    return (
        "\\" not in path and "\0" not in path and all(part not in {"", ".", ".."} for part in parts)
    )


def archived_objects(folder: Path) -> list[Obj]:
    """The objects of an archive, read back from their YAML files."""
    objects = []
    for path, kind in sorted(_entries(folder / OBJECTS).items()):
        if kind == "file" and path.endswith(".yaml"):
            data = parse_fast(read_capped(folder / OBJECTS / path))  # no aliases, bounded
            if isinstance(data, dict):
                objects.append(data)
    return objects
