"""The readiness layer: the tests themselves, in NVCRE mode or trainer mode.

NVCRE mode: `nvcre.py` (Certifications, WorkloadRuns, LogProfile), `nccl.py` (nccl-tests
arguments), `preview.py` (what NVCRE will make of each WorkloadRun). Trainer mode:
`trainer.py` (TrainingRuntimes and TrainJobs), `nodejob.py` (per-node Jobs),
`runs.py` (one run per test, round and group), `mpi.py` (the MPI runtime both modes share).
"""
