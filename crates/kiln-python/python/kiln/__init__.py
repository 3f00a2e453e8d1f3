"""kiln: describe a graph of tensor operations, build a durable execution plan once, run it on
NumPy arrays or PyTorch tensors (anything with ``__dlpack__``).

The API follows cuDNN frontend's Python API::

    import numpy as np, kiln
    handle = kiln.Handle("cpu")
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT, handle=handle)
    x = g.tensor(name="x", dim=[2, 3])
    y = g.relu(x).set_output(True)
    g.build([kiln.heur_mode.A])
    xa = np.random.rand(2, 3).astype(np.float32); ya = np.empty_like(xa)
    g.execute({x: xa, y: ya})

See docs/python.md.
"""

from . import _kiln, _operations
from ._kiln import (
    AllocFailedError,
    BadParamError,
    Error,
    ExecutionFailedError,
    Handle,
    InternalError,
    NotInitializedError,
    NotSupportedError,
    NullPointerError,
    PluginError,
    SizeInsufficientError,
    Tensor,
    __version__,
    behavior_note,
    build_plan_policy,
    data_type,
    heur_mode,
    operation_specs,
    probe,
)


class Graph(_kiln.Graph):
    """A graph of tensor operations with its plans once built (cuDNN frontend's ``pygraph``).

    ``kiln.Graph(io_data_type=, intermediate_data_type=, compute_data_type=, name=, handle=)``.
    Operation methods return tensors; the lifecycle is ``validate``, ``build_operation_graph``,
    ``create_execution_plans``, ``check_support``, ``build_plans`` (``build`` chains them),
    then ``execute``. The named pointwise forms (``relu``, ``add``...) and kiln's generic
    operations (``rmsnorm``...) come from the table in ``kiln._operations``.
    """

    __slots__ = ()


_operations.install(Graph)


class _Modes:
    """Names of modes as attributes: ``kiln.pointwise_mode.RELU == "relu"``."""

    def __init__(self, kind: str, names):
        self._kind = kind
        for n in names:
            setattr(self, n.upper(), n)

    def __repr__(self) -> str:
        return f"kiln.{self._kind}"


#: Pointwise modes: ``kiln.pointwise_mode.RELU`` is ``"relu"`` (for ``Graph.pointwise(mode=)``).
pointwise_mode = _Modes("pointwise_mode", [m for m, _ in _kiln._pointwise_modes()])
#: Reduction modes: ``kiln.reduction_mode.SUM`` is ``"sum"``.
reduction_mode = _Modes("reduction_mode", _kiln._reduction_modes())
#: Normalization phases (``rmsnorm(forward_phase=)``).
norm_forward_phase = _Modes("norm_forward_phase", ["training", "inference"])


def create_handle(device: str = "cpu") -> Handle:
    """cuDNN frontend's spelling of ``kiln.Handle(device)``."""
    return Handle(device)


def set_stream(handle: Handle, stream) -> None:
    """cuDNN frontend's spelling of ``handle.set_stream(stream)``."""
    handle.set_stream(stream)


def version() -> str:
    """The version of kiln this package was built from."""
    return _kiln.version()


__all__ = [
    "AllocFailedError",
    "BadParamError",
    "Error",
    "ExecutionFailedError",
    "Graph",
    "Handle",
    "InternalError",
    "NotInitializedError",
    "NotSupportedError",
    "NullPointerError",
    "PluginError",
    "SizeInsufficientError",
    "Tensor",
    "behavior_note",
    "build_plan_policy",
    "create_handle",
    "data_type",
    "heur_mode",
    "norm_forward_phase",
    "operation_specs",
    "pointwise_mode",
    "probe",
    "reduction_mode",
    "set_stream",
    "version",
]
