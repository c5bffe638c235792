"""Both engines write archives that fit schemas/archive.v1alpha1.json (issue #35, item 4).

The `archiveschemas` plugin checks every archive a test collects; this names one of
each engine, and that its files read back through the model to the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archiveschemas import schema_errors, validators
from labstate import lab_state, write_export
from trainerlogs import write_saved_logs

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions
from nvcregen.results.archivemodel import FILES, file_text, read_json_file

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("engine", ["nvcre", "trainer"])
@pytest.mark.slow
def test_an_archive_of_each_engine_fits_the_schema(tmp_path: Path, engine: str) -> None:
    if engine == "nvcre":
        folder = write_export(tmp_path / "export", lab_state())
        site = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
    else:
        folder = write_saved_logs(tmp_path / "saved")
        site = ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml"
    outcome = collect(CollectOptions(str(site), tmp_path / "results", ROOT, from_dir=folder))
    run = outcome.archive.path
    files = {name: (run / name).read_bytes() for name in validators()}
    assert schema_errors(files) == []
    summary = json.loads(files["summary.json"])
    assert ("logs" in summary) == (engine == "trainer")
    provenance = json.loads(files["provenance.json"])
    assert ("dcgm_versions" in provenance) == (engine == "trainer")
    for name, data in files.items():  # and what the model reads, it writes back unchanged
        assert file_text(read_json_file(FILES[name], data.decode())).encode() == data
