"""The input-hash cache: what a site's output depends on, and whether `out/` still holds it.

`render` seals each `out/<site>/index.json` with two blocks:

- `inputs`: the sha256 of everything the site's tree is a function of (the site file's
  bytes, its chart archive's bytes, the folder in the repository GitOps reads it from,
  nvcregen's version, the catalog, the Site schema and the compiled upstream schemas),
  and how many warnings and notes the compile gave;
- `digests`: the sha256 of every file in the folder, `index.json` included (the sha256 of
  its exact bytes with its own entry empty, so the file can hold its own digest).

`render --check` recomputes the input key of each site without compiling it. When the key
matches and every file on disk still has its recorded digest (and no file was added), the
folder is exactly what a compile would produce, so the site is skipped. Anything else (a
hand edit, a new file, a site edit, a new nvcregen) sends the site through the compiler,
which shows the diff.

The whole catalog is hashed, not only the entries `index.json` names: baselines and the
default images shape a site's output without being listed there. It is about 100 KiB.
Installed package versions are left out on purpose: the key is committed in `out/`, which
must be the same bytes on every machine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvcregen import __version__
from nvcregen.core.datafiles import data_dir
from nvcregen.core.regular import read_regular
from nvcregen.emit.naming import INDEX_FILE
from nvcregen.spec.bounded import MAX_SITE_BYTES, load_json, read_limited

INPUTS = "inputs"
DIGESTS = "digests"
_SCHEME = b"nvcregen-inputs-v1\0"  # bump when what the key covers changes

Tree = dict[str, str]


@dataclass(frozen=True)
class Stamp:
    """What `index.json` records about a compile: its input key and its notices.

    `notices` counts the warnings and information diagnostics: `--strict` turns some of
    either into errors (an unpinned image, an example digest).
    """

    key: str
    notices: int = 0


def dump_index(index: dict[str, Any]) -> str:
    """The one serialisation of `index.json` (sorted keys, two-space indent, final newline)."""
    return json.dumps(index, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def bundle_digest() -> str:
    """sha256 over nvcregen's version and the data it ships: catalog and schemas.

    Computed once per process; relative paths only, and CRLF read as LF (a Windows
    checkout's line endings change no output), so it is the same on every machine.
    """
    digest = hashlib.sha256(f"nvcregen {__version__}\0".encode())
    catalog = data_dir("catalog")
    schemas = data_dir("schemas")
    files = [
        *(("catalog", catalog, f) for f in sorted(catalog.rglob("*.yaml"))),
        ("schemas", schemas, schemas / "site.v1alpha1.json"),
        *(("schemas", schemas, f) for f in sorted(schemas.glob("upstream/_compiled/*.json"))),
    ]
    for label, folder, file in files:
        digest.update(f"{label}/{file.relative_to(folder).as_posix()}\0".encode())
        digest.update(hashlib.sha256(file.read_bytes().replace(b"\r\n", b"\n")).digest())
    return digest.hexdigest()


def input_key(
    site: bytes,
    chart: bytes | None,
    gitops_folder: str | None = None,
    inventory: bytes | None = None,
) -> str:
    """The sha256 of one site's inputs.

    They are its file's bytes, its chart archive's (if any), the folder of the
    repository its GitOps objects apply (`gitops.path`, or where render wrote it) and
    its inventory's bytes (if it names one: fabric groups come from it).
    """
    digest = hashlib.sha256(_SCHEME)
    digest.update(bundle_digest().encode())
    digest.update(hashlib.sha256(site).digest())
    digest.update(b"chart\0" + hashlib.sha256(chart).digest() if chart is not None else b"-\0")
    if gitops_folder is not None:  # no GitOps objects: the key as before
        digest.update(b"gitops\0" + gitops_folder.encode())
    if inventory is not None:  # no inventory: the key as before
        digest.update(b"inventory\0" + hashlib.sha256(inventory).digest())
    return digest.hexdigest()


def seal_index(index: dict[str, Any], tree: Tree, stamp: Stamp) -> str:
    """Return the text of `index.json` with the `inputs` and `digests` blocks added.

    `tree` holds every other file of the site folder, as written.
    """
    digests = {path: _sha(text.encode()) for path, text in tree.items() if path != INDEX_FILE}
    digests[INDEX_FILE] = ""
    sealed = {**index, INPUTS: {"sha256": stamp.key, "notices": stamp.notices}}
    sealed[DIGESTS] = digests
    blank = dump_index(sealed)
    return blank.replace(_self_entry(""), _self_entry(_sha(blank.encode())), 1)


def _self_entry(digest: str) -> str:
    """How the index's own digest is written inside it."""
    return f"{json.dumps(INDEX_FILE)}: {json.dumps(digest)}"


def fresh_sites(
    out_dir: Path,
    sources: dict[str, Path],
    root: Path,
    *,
    strict: bool,
    out_path: str | None = None,
) -> dict[str, str]:
    """Find the site files whose `out/` folder is fresh, without compiling them.

    Args:
        out_dir: The output folder.
        sources: Site files to consider, by the name `index.json` records (`sites/x.yaml`).
        root: The project folder chart archives are relative to.
        strict: Whether the run is `--strict` (see `is_fresh`).
        out_path: The output folder's path in the repository (`input_key`).

    Returns:
        Each fresh site file's recorded name, mapped to its site (and folder) name.

    """
    fresh: dict[str, str] = {}
    for shown, site_dir, text, index in _indexes(out_dir):
        path = sources.get(shown)
        if path is None or index.get("site") != site_dir.name:
            continue
        key = site_input_key(path, root, out_path)
        if key is not None and _fresh(site_dir, text, index, key, strict=strict):
            fresh[shown] = site_dir.name
    return fresh


def site_input_key(path: Path, root: Path, out_path: str | None = None) -> str | None:
    """The input key of a site file, read without compiling it; None if it cannot be read.

    The chart archive is found with a plain YAML parse, skipped when the word `archive`
    is not in the file; should either disagree with the compiler's reading, the key only
    fails to match and the site is compiled.
    """
    try:
        raw = read_limited(path, MAX_SITE_BYTES)  # a larger site is refused (NVC110)
        if raw is None:
            return None
        wanted = b"archive" in raw or b"repoURL" in raw or b"inventory" in raw
        data = _parsed(raw) if wanted else None
        if data is _UNREADABLE:
            return None
        chart = chart_bytes(root, _dig(data, "spec", "nvcre", "chart", "archive"))
        inventory = chart_bytes(root, _dig(data, "spec", "inventory"))
    except OSError:
        return None
    return input_key(raw, chart, _gitops_folder(data, out_path), inventory)


def _gitops_folder(data: object, out_path: str | None) -> str | None:
    """The folder the site's GitOps objects apply, as the compiler sets it (None: none)."""
    if not _dig(data, "spec", "gitops", "repoURL"):
        return None
    named = _dig(data, "spec", "gitops", "path")
    if isinstance(named, str):
        return named
    name = _dig(data, "metadata", "name")
    return site_folder(str(name), out_path) if out_path is not None else None


def site_folder(name: str, out_path: str) -> str:
    """A site's output folder in the repository: `<out_path>/<site>`."""
    return name if out_path in {"", "."} else f"{out_path}/{name}"


_UNREADABLE = object()


def site_data(path: Path) -> object:
    """A site file's data, read without validating it; None if unreadable or not YAML.

    One parse per file and run: `render --check` reads each site's cluster and, here,
    its chart archive and GitOps folder.
    """
    try:
        raw = read_limited(path, MAX_SITE_BYTES)  # a larger site is refused (NVC110)
    except OSError:
        return None
    data = _parsed(raw) if raw is not None else _UNREADABLE
    return None if data is _UNREADABLE else data


@functools.lru_cache(maxsize=1024)
def _parsed(raw: bytes) -> object:
    """A site file's data; `_UNREADABLE` if not YAML.

    PyYAML is imported here, only for site files that mention an archive or a repository.
    Callers must not change what it returns: it is shared.
    """
    import yaml

    from nvcregen.spec.fast import parse_fast

    try:
        return parse_fast(raw)
    except yaml.YAMLError:
        return _UNREADABLE


def chart_bytes(root: Path, archive: object) -> bytes | None:
    """The bytes of a file a site names (a chart archive, an inventory; relative to `root`).

    None when it names none.
    """
    return (root / archive).read_bytes() if isinstance(archive, str) else None


def _dig(data: object, *keys: str) -> object:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _indexes(out_dir: Path) -> list[tuple[str, Path, str, dict[str, Any]]]:
    """Every site folder with a readable index: (its source file, folder, text, data)."""
    found = []
    for index_file in sorted(out_dir.glob(f"*/{INDEX_FILE}")):
        loaded = _read_index(index_file.parent)
        if loaded is not None:
            source = _dig(loaded[1], "source", "file")
            if isinstance(source, str):
                found.append((source, index_file.parent, *loaded))
    return found


def is_fresh(site_dir: Path, key: str, *, strict: bool) -> bool:
    """Whether `site_dir` holds exactly the tree a compile with input `key` would write.

    With `strict`, a site that compiled with warnings or notes is not fresh: `--strict`
    may turn them into errors, so it must be compiled again.
    """
    loaded = _read_index(site_dir)
    return loaded is not None and _fresh(site_dir, *loaded, key, strict=strict)


def _fresh(site_dir: Path, text: str, index: dict[str, Any], key: str, *, strict: bool) -> bool:
    inputs, digests = index.get(INPUTS), index.get(DIGESTS)
    if not isinstance(inputs, dict) or inputs.get("sha256") != key:
        return False
    if strict and inputs.get("notices") != 0:
        return False
    if not isinstance(digests, dict) or not _index_intact(text, digests.get(INDEX_FILE)):
        return False
    if _files(site_dir) != set(digests):
        return False
    top = os.fspath(site_dir)
    try:
        return all(
            _sha(_read(f"{top}/{path}")) == digest
            for path, digest in digests.items()
            if path != INDEX_FILE
        )
    except OSError:  # vanished or unreadable since it was listed: let the compiler say
        return False


def _read(path: str) -> bytes:
    """A file's bytes (plain strings, not Path: this runs for every file of every site)."""
    return read_regular(path)  # a FIFO at a listed path is refused, never opened


def _index_intact(text: str, own: object) -> bool:
    """The index's bytes, with its own digest blanked, still have that digest.

    Hashing the bytes, not the parsed data, also catches an edit to spacing or order.
    """
    if not isinstance(own, str):
        return False
    blank = text.replace(_self_entry(own), _self_entry(""), 1)
    return blank != text and _sha(blank.encode()) == own


def _files(site_dir: Path) -> set[str]:
    """Every file under a folder, relative and '/'-separated (os.walk on plain strings)."""
    top = os.fspath(site_dir)
    found: set[str] = set()
    for folder, subfolders, names in os.walk(top):
        rel = folder[len(top) :].lstrip(os.sep).replace(os.sep, "/")
        prefix = f"{rel}/" if rel else ""
        found.update(prefix + name for name in names)
        # os.walk does not enter a linked folder; nvcregen never writes one: make it differ
        found.update(f"{prefix}{d}/" for d in subfolders if Path(folder, d).is_symlink())
    return found


def _read_index(site_dir: Path) -> tuple[str, dict[str, Any]] | None:
    """A site folder's `index.json`, as text and data; None unless it is a JSON object."""
    try:
        text = read_regular(site_dir / INDEX_FILE).decode("utf-8")
        data = load_json(text)  # bounded: a hostile index.json is a miss, not a crash
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    return (text, data) if isinstance(data, dict) else None
