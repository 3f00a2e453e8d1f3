"""The operation table: the named pointwise forms and kiln's generic operations, as methods of
``kiln.Graph``.

The typed operations (``pointwise``, ``conv_fprop``, ``conv_dgrad``, ``conv_wgrad``,
``matmul``, ``reduction``) and ``generic_op`` are methods of the extension's graph class. This
module adds, from tables:

* one method per pointwise mode (``g.relu(x)``, ``g.add(a, b)``, ``g.cmp_lt(a, b)``...), from
  kiln-core's list of modes, so a new mode needs no change here;
* one method per entry of ``GENERIC`` below, for the operations of kiln-core's generic table
  (``kiln_core::ops::SPECS``): a new operation there (a norm, pooling, attention) is one line in
  ``GENERIC`` (see docs/python.md).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from . import _kiln


def _pointwise_method(mode: str, binary: bool) -> Callable[..., Any]:
    if binary:

        def method(self, a, b, *, name: str = "", **params):
            return self.pointwise(a, b, mode=mode, name=name, **params)

        method.__doc__ = (
            f"Adds a pointwise ``{mode}(a, b)`` node (``a``/``b``: tensors or numbers, "
            "broadcast); returns the output tensor (virtual until ``set_output(True)``)."
        )
    else:

        def method(self, a, *, name: str = "", **params):
            return self.pointwise(a, None, mode=mode, name=name, **params)

        method.__doc__ = (
            f"Adds a pointwise ``{mode}(a)`` node; returns the output tensor (virtual until "
            "``set_output(True)``). Mode parameters are keywords (e.g. ``relu_lower_clip_slope``)."
        )
    method.__name__ = mode
    return method


class Generic:
    """One operation of kiln's generic table as a ``kiln.Graph`` method.

    ``op`` is its name in kiln (``kiln.operation_specs()``); ``method`` the Python name
    (default ``op``); ``outputs(attributes)`` picks the output ports to create from the
    attribute values given (default: the required ones).

    The method takes the input ports positionally in the operation's order (or by keyword),
    the attributes by keyword, and ``name=``; a keyword that is both a port and an attribute
    (rmsnorm's ``epsilon``) goes to the port when it is a tensor, else to the attribute. It
    returns the output tensor when the operation has one output port, else a tuple with one
    entry per port (None for ports not created), as cuDNN frontend's Python API does.
    """

    def __init__(
        self,
        op: str,
        method: Optional[str] = None,
        outputs: Optional[Callable[[Dict[str, Any]], Sequence[str]]] = None,
    ) -> None:
        self.op = op
        self.method = method or op
        self.outputs = outputs

    def make(self, spec: Dict[str, Any]) -> Callable[..., Any]:
        op = self.op
        inputs: List[str] = [p for p, _ in spec["inputs"]]
        out_ports: List[str] = [p for p, _ in spec["outputs"]]
        required_out = [p for p, req in spec["outputs"] if req]
        attr_names = [a for a, _ in spec["attributes"]]
        choose = self.outputs or (lambda _attrs: required_out)

        def method(self, *args, name: str = "", **kwargs):
            if len(args) > len(inputs):
                raise TypeError(
                    f"{op}() takes {len(inputs)} positional inputs ({', '.join(inputs)}), "
                    f"{len(args)} given"
                )
            ports = dict(zip(inputs, args))
            attrs: Dict[str, Any] = {}
            for key, value in kwargs.items():
                if value is None:
                    continue
                if key in inputs and (isinstance(value, _kiln.Tensor) or key not in attr_names):
                    if key in ports:
                        raise TypeError(f"{op}() got input '{key}' twice")
                    ports[key] = value
                elif key in attr_names:
                    attrs[key] = value
                else:
                    raise TypeError(
                        f"{op}() has no input or attribute '{key}' (inputs: "
                        f"{', '.join(inputs)}; attributes: {', '.join(attr_names) or 'none'})"
                    )
            wanted = list(choose(attrs))
            made = self.generic_op(op, ports, wanted, attrs, name)
            if len(out_ports) == 1:
                return made[0]
            by_port = dict(zip(wanted, made))
            return tuple(by_port.get(p) for p in out_ports)

        method.__name__ = self.method
        method.__doc__ = (
            f"Adds a ``{op}`` node (kiln's generic table). Inputs: "
            + ", ".join(f"{p}{'' if req else ' (optional)'}" for p, req in spec["inputs"])
            + ". Attributes: "
            + (", ".join(f"{a} ({t})" for a, t in spec["attributes"]) or "none")
            + ". Outputs: "
            + ", ".join(out_ports)
            + "."
        )
        return method


def _phase_outputs(training: Sequence[str], inference: Sequence[str]):
    """Output ports by ``forward_phase``: ``"training"`` or ``"inference"`` (the default)."""

    def choose(attrs: Dict[str, Any]) -> Sequence[str]:
        phase = str(attrs.get("forward_phase", "inference")).lower()
        return training if phase == "training" else inference

    return choose


# kiln's generic operations: one line each.
GENERIC = [
    Generic("rmsnorm", outputs=_phase_outputs(training=("y", "inv_rms"), inference=("y",))),
    Generic(
        "sdpa",
        outputs=lambda attrs: ("o", "stats") if attrs.get("generate_stats") else ("o",),
    ),
    Generic("sdpa_backward"),
    Generic(
        "layernorm",
        outputs=_phase_outputs(training=("y", "mean", "inv_variance"), inference=("y",)),
    ),
    Generic("layernorm_backward"),
    # dbias (with a bias) and batchnorm's next running statistics are bound through generic_op.
    Generic("rmsnorm_backward"),
    Generic("batchnorm"),
    Generic("batchnorm_inference"),
    Generic("batchnorm_backward"),
    # The max-pooling index output is bound through generic_op(..., ["y", "index"], ...).
    Generic("resample"),
    Generic("resample_backward"),
]


def install(graph_class: type) -> None:
    """Adds the named pointwise forms and the generic operations to ``graph_class``."""
    for mode, binary in _kiln._pointwise_modes():
        if not hasattr(graph_class, mode):
            setattr(graph_class, mode, _pointwise_method(mode, binary))
    specs = _kiln.operation_specs()
    for entry in GENERIC:
        spec = specs.get(entry.op)
        if spec is None:
            # The table names an operation this build of kiln does not have.
            continue
        setattr(graph_class, entry.method, entry.make(spec))
