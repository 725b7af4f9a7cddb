"""Generation pipelines and their presets (``track_gen.pipeline.presets``)."""
from . import presets

__all__ = ["presets"]
