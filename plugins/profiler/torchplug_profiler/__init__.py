"""``torchplug.profiler``: PyTorch's ``torch.profiler`` on torchplug's dispatcher (provided by the profiler plugin).

Every op a profiled thread dispatches, nested ones included, is timed by the boxed fallback of the
``Profiler`` dispatch key (:mod:`torchplug_profiler._recorder`), which is in the thread's key sets only while
a profile records. Names are PyTorch's (``aten::add``); there is no device (CUDA) activity and no Kineto.
"""

from __future__ import annotations

from ._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401  (torch.autograd.profiler_util's)
from ._profile import (
    DeviceType, ProfilerAction, ProfilerActivity, kineto_available, profile, schedule, supported_activities,
    tensorboard_trace_handler,
)
from ._recorder import record_function
from . import _legacy  # noqa: F401,E402  (torchplug.autograd.profiler's names)

__all__ = [
    "profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
    "ProfilerActivity", "kineto_available", "DeviceType", "record_function",
]
