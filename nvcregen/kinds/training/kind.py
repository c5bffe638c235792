"""The training kind: its own start-up, steps and synchronous checkpoint saves."""

from __future__ import annotations

from typing import ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, TestKind
from nvcregen.kinds.training.params import TrainingParams


class Training(TestKind[TrainingParams]):
    """Checkpointed training."""

    name: ClassVar[str] = "training"
    params = TrainingParams
    per_node = False
    one_node = False
    collective = False
    # NVCRE 0.7.0's training entries request cpu 64 and memory 500Gi per node
    # (CategoryOptions.resources defaults, nvcre-api.md §1.1).
    nvcre_pod = (64_000, 500 * 1024**3)
    node_health = False

    def duration_basis(self, test: KindTest) -> str:
        """Its step count."""
        t: TrainingParams = self.block(test)
        return f"{t.max_steps} steps"

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """Its own start-up, every step, and a checkpoint every `saveInterval` steps."""
        t: TrainingParams = self.block(test)
        steps = t.max_steps * units.parse_duration(t.step_time)
        saves = t.max_steps // t.save_interval
        saved = saves * units.parse_duration(t.checkpoint_save)
        why = (
            f"{t.startup} start-up + {t.max_steps} steps x {t.step_time} "
            f"+ {saves} checkpoints x {t.checkpoint_save}"
        )
        return FixedTime((units.parse_duration(t.startup) + steps + saved) / 1000, why)

    def nvcre_options(self, test: KindTest) -> dict[str, object]:
        """Checkpointing on, the run's steps, interval and storage."""
        t: TrainingParams = self.block(test)
        return {
            "enableCheckpoint": True,
            "maxSteps": t.max_steps,
            "saveInterval": t.save_interval,
            "storageSize": t.storage_size,
        }


KIND = Training()  # registered in `kindapi/registry.py` by this module's name
