"""prof's in-script profiler objects, in the three styles prof replaces.

    import prof                      # torch.profiler / torch_npu.profiler style
    import prof.paddle               # paddle.profiler style
    import prof.mindspore            # mindspore.Profiler style

They work under `prof run` (they reconfigure the agent it loaded: one
recorder) and in a plain `python` (they start `prof session`, which makes
the run directory, samples the host and parses). Keep
<prefix>/share/prof/python on PYTHONPATH; `prof run` puts it there.
`prof_tx` (marks, ranges, steps) stays as it is.
"""
from . import dynamic_profile
from ._runtime import ProfError
from .profiler import (AiCMetrics, ExperimentalConfig, ExportType, ProfilerAction,
                       ProfilerActivity, ProfilerLevel, _ExperimentalConfig, profile, schedule,
                       supported_activities, supported_export_type, supported_profiler_level,
                       tensorboard_trace_handler)

__all__ = ["profile", "schedule", "tensorboard_trace_handler", "ProfilerActivity",
           "ProfilerAction", "ProfilerLevel", "ExportType", "AiCMetrics", "ExperimentalConfig",
           "_ExperimentalConfig", "supported_activities", "supported_profiler_level",
           "supported_export_type", "dynamic_profile", "ProfError"]
