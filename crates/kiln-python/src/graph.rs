//! `kiln.Graph`: cuDNN frontend's Python graph over `kiln::Graph`. The typed operations
//! (pointwise, convolutions, matmul, reduction) and `generic_op` live here; the named forms
//! (`relu`, `add`, ...) and the operations of `kiln_core::ops::SPECS` (`rmsnorm`, ...) are made
//! from a table in `python/kiln/_operations.py` (docs/python.md says how to add one).

use crate::dlpack;
use crate::enums::{
    data_type_arg, pointwise_mode_arg, reduction_mode_arg, PyBehaviorNote, PyBuildPlanPolicy,
    PyHeurMode,
};
use crate::errors::{bad_param, to_py, IntoPyResult};
use crate::execute::BindingTable;
use crate::handle::PyHandle;
use crate::tensor::PyTensor;
use kiln::{
    AttrValue, ConvAttributes, DataType, Error, Graph, MatmulAttributes, PointwiseAttributes,
    ReductionAttributes, TensorAttributes,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use std::collections::BTreeMap;

/// A graph of tensor operations with its plans once built (cuDNN frontend's `pygraph`).
#[pyclass(name = "Graph", module = "kiln", subclass)]
pub struct PyGraph {
    inner: Graph,
    /// The handle given to the constructor, `build_operation_graph`, `build` or a loader: the
    /// one `execute` runs on when it is given none.
    handle: Option<Py<PyHandle>>,
    /// The binding table of the selected plan (`None` while no plan is selected), or why the
    /// plan cannot be executed from Python.
    table: Option<Result<BindingTable, Error>>,
}

impl PyGraph {
    /// The graph, for a change: the binding table is dropped with the plans it described.
    fn edit(&mut self) -> &mut Graph {
        self.table = None;
        &mut self.inner
    }

    /// Makes the binding table of the selected plan.
    fn plans_changed(&mut self) {
        self.table = self.inner.plan().map(|_| BindingTable::new(&self.inner));
    }

    fn handle_arg(
        &mut self,
        py: Python<'_>,
        handle: Option<Py<PyHandle>>,
        what: &str,
    ) -> PyResult<Py<PyHandle>> {
        match handle.or_else(|| self.handle.as_ref().map(|h| h.clone_ref(py))) {
            Some(h) => {
                self.handle = Some(h.clone_ref(py));
                Ok(h)
            }
            None => Err(to_py(Error::NotInitialized(format!(
                "{what}: give a handle (handle=kiln.Handle(\"cpu\")), here or to kiln.Graph(handle=...)"
            )))),
        }
    }

    /// A tensor operand: a `kiln.Tensor`, or a number (a by-value scalar).
    fn operand(&mut self, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<kiln::Tensor> {
        if let Ok(t) = obj.cast::<PyTensor>() {
            return Ok(t.get().inner.clone());
        }
        if obj.cast::<PyFloat>().is_ok()
            || (obj.cast::<PyInt>().is_ok() && obj.cast::<PyBool>().is_err())
        {
            let v: f64 = obj.extract()?;
            return Ok(self.edit().scalar(v));
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{what}: expected a kiln.Tensor or a number, got {}",
            obj.get_type().name()?
        )))
    }

    fn wrap(py: Python<'_>, t: kiln::Tensor) -> PyResult<Py<PyTensor>> {
        Py::new(py, PyTensor::wrap(t))
    }

    /// A new instance of `cls` (kiln.Graph or a subclass) holding `graph`.
    fn instance<'py>(
        cls: &Bound<'py, PyType>,
        graph: Graph,
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let obj = cls.call0()?;
        {
            let mut g = obj.cast::<PyGraph>()?.borrow_mut();
            g.inner = graph;
            g.handle = handle;
            g.plans_changed();
        }
        Ok(obj)
    }
}

fn compute_type_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<()> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(());
    };
    let dt = data_type_arg(obj, what)?;
    if dt != DataType::F32 {
        return Err(to_py(Error::NotSupported(format!(
            "{what}: kiln computes in f32; compute_data_type {dt} is not supported"
        ))));
    }
    Ok(())
}

fn conv_attrs(
    name: &str,
    padding: Option<Vec<i64>>,
    pre_padding: Option<Vec<i64>>,
    post_padding: Option<Vec<i64>>,
    stride: Option<Vec<i64>>,
    dilation: Option<Vec<i64>>,
) -> ConvAttributes {
    let mut a = ConvAttributes::new().name(name);
    if let Some(p) = padding {
        a = a.padding(&p);
    }
    if let Some(p) = pre_padding {
        a = a.pre_padding(&p);
    }
    if let Some(p) = post_padding {
        a = a.post_padding(&p);
    }
    if let Some(s) = stride {
        a = a.stride(&s);
    }
    if let Some(d) = dilation {
        a = a.dilation(&d);
    }
    a
}

/// A Python value as a generic attribute, of the type the operation declares for it (`want`:
/// `float`, `int`, `bool`, `str`, `ints`, `floats`) so that `epsilon=1` is the float 1.0.
fn attr_value(v: &Bound<'_, PyAny>, want: Option<&str>, what: &str) -> PyResult<AttrValue> {
    let bad = || {
        bad_param(format!(
            "{what}: {} is not a {}",
            v.repr().map(|r| r.to_string()).unwrap_or_default(),
            want.unwrap_or("bool, int, float, str or list of numbers")
        ))
    };
    let is_bool = v.cast::<PyBool>().is_ok();
    let is_int = v.cast::<PyInt>().is_ok() && !is_bool;
    let is_float = v.cast::<PyFloat>().is_ok();
    Ok(match want {
        Some("bool") if is_bool => AttrValue::Bool(v.extract()?),
        Some("int") if is_int => AttrValue::Int(v.extract()?),
        Some("float") if is_int || is_float => AttrValue::Float(v.extract()?),
        Some("str") if v.cast::<PyString>().is_ok() => AttrValue::Str(v.extract()?),
        Some("ints") => AttrValue::Ints(v.extract().map_err(|_| bad())?),
        Some("floats") => AttrValue::Floats(v.extract().map_err(|_| bad())?),
        Some(_) => return Err(bad()),
        None if is_bool => AttrValue::Bool(v.extract()?),
        None if is_int => AttrValue::Int(v.extract()?),
        None if is_float => AttrValue::Float(v.extract()?),
        None if v.cast::<PyString>().is_ok() => AttrValue::Str(v.extract()?),
        None => match v.extract::<Vec<i64>>() {
            Ok(ints) => AttrValue::Ints(ints),
            Err(_) => AttrValue::Floats(v.extract().map_err(|_| bad())?),
        },
    })
}

#[pymethods]
impl PyGraph {
    /// An empty graph. `io_data_type` is the type of real tensors whose type is unset,
    /// `intermediate_data_type` that of virtual ones; `compute_data_type` may only be FLOAT
    /// (kiln computes in f32). `handle` is the handle later steps use when given none.
    #[new]
    #[pyo3(signature = (io_data_type=None, intermediate_data_type=None, compute_data_type=None, name="", handle=None))]
    fn new(
        io_data_type: Option<&Bound<'_, PyAny>>,
        intermediate_data_type: Option<&Bound<'_, PyAny>>,
        compute_data_type: Option<&Bound<'_, PyAny>>,
        name: &str,
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<PyGraph> {
        let mut inner = Graph::new();
        inner.set_name(name);
        if let Some(dt) = io_data_type.filter(|o| !o.is_none()) {
            inner.set_io_data_type(data_type_arg(dt, "io_data_type")?);
        }
        if let Some(dt) = intermediate_data_type.filter(|o| !o.is_none()) {
            inner.set_intermediate_data_type(data_type_arg(dt, "intermediate_data_type")?);
        }
        compute_type_arg(compute_data_type, "compute_data_type")?;
        Ok(PyGraph {
            inner,
            handle,
            table: None,
        })
    }

    /// Adds a tensor (an input, or an output when a node writes it). Unset strides are packed
    /// row-major, an unset data type is the graph's io type; uids are assigned at validate.
    #[pyo3(signature = (name="", dim=None, stride=None, data_type=None, uid=None, is_virtual=false, alignment=0))]
    #[allow(clippy::too_many_arguments)]
    fn tensor(
        &mut self,
        py: Python<'_>,
        name: &str,
        dim: Option<Vec<i64>>,
        stride: Option<Vec<i64>>,
        data_type: Option<&Bound<'_, PyAny>>,
        uid: Option<i64>,
        is_virtual: bool,
        alignment: u32,
    ) -> PyResult<Py<PyTensor>> {
        let mut a = TensorAttributes::new().name(name).alignment(alignment);
        if let Some(d) = dim {
            a = a.dim(&d);
        }
        if let Some(s) = stride {
            a = a.stride(&s);
        }
        if let Some(dt) = data_type.filter(|o| !o.is_none()) {
            a = a.data_type(data_type_arg(dt, &format!("tensor '{name}'"))?);
        }
        if let Some(u) = uid {
            a = a.uid(u);
        }
        let t = self.edit().tensor(a);
        if is_virtual {
            t.set_output(false);
        }
        Self::wrap(py, t)
    }

    /// Adds a tensor with the dims, strides and data type of `array` (anything with
    /// `__dlpack__`: NumPy, PyTorch, CuPy, JAX).
    #[pyo3(signature = (array, name=""))]
    fn tensor_like(
        &mut self,
        py: Python<'_>,
        array: &Bound<'_, PyAny>,
        name: &str,
    ) -> PyResult<Py<PyTensor>> {
        let arr = dlpack::import(array, dlpack::Stream::None)?;
        let dt = arr.data_type.ok_or_else(|| {
            to_py(Error::NotSupported(format!(
                "tensor_like('{name}'): the array is {}; kiln tensors are f32, f16, bf16 or f64",
                arr.dtype_text
            )))
        })?;
        let a = TensorAttributes::new()
            .name(name)
            .dim(&arr.shape)
            .stride(&arr.strides)
            .data_type(dt);
        drop(arr);
        let t = self.edit().tensor(a);
        Self::wrap(py, t)
    }

    /// Adds a by-value scalar operand (f32, not bound at execute).
    fn scalar(&mut self, py: Python<'_>, value: f64) -> PyResult<Py<PyTensor>> {
        let t = self.edit().scalar(value);
        Self::wrap(py, t)
    }

    /// Adds a pointwise node `mode(a)` or `mode(a, b)`; `a`/`b` may be numbers (by-value
    /// scalars). Mode parameters: relu_lower_clip, relu_upper_clip, relu_lower_clip_slope,
    /// elu_alpha, softplus_beta, swish_beta. Returns the output tensor (virtual).
    #[pyo3(signature = (a, b=None, *, mode, name="", compute_data_type=None, relu_lower_clip=None, relu_upper_clip=None, relu_lower_clip_slope=None, elu_alpha=None, softplus_beta=None, swish_beta=None))]
    #[allow(clippy::too_many_arguments)]
    fn pointwise(
        &mut self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: Option<&Bound<'_, PyAny>>,
        mode: &str,
        name: &str,
        compute_data_type: Option<&Bound<'_, PyAny>>,
        relu_lower_clip: Option<f64>,
        relu_upper_clip: Option<f64>,
        relu_lower_clip_slope: Option<f64>,
        elu_alpha: Option<f64>,
        softplus_beta: Option<f64>,
        swish_beta: Option<f64>,
    ) -> PyResult<Py<PyTensor>> {
        let m = pointwise_mode_arg(mode)?;
        compute_type_arg(compute_data_type, mode)?;
        let a = self.operand(a, &format!("{mode}: input a"))?;
        let b = match b.filter(|o| !o.is_none()) {
            Some(b) => Some(self.operand(b, &format!("{mode}: input b"))?),
            None => None,
        };
        let mut attrs = PointwiseAttributes::new(m).name(name);
        if let Some(v) = relu_lower_clip {
            attrs = attrs.relu_lower_clip(v);
        }
        if let Some(v) = relu_upper_clip {
            attrs = attrs.relu_upper_clip(v);
        }
        if let Some(v) = relu_lower_clip_slope {
            attrs = attrs.relu_lower_clip_slope(v);
        }
        if let Some(v) = elu_alpha {
            attrs = attrs.elu_alpha(v);
        }
        if let Some(v) = softplus_beta {
            attrs = attrs.softplus_beta(v);
        }
        if let Some(v) = swish_beta {
            attrs = attrs.swish_beta(v);
        }
        let out = self.edit().pointwise(&a, b.as_ref(), attrs);
        Self::wrap(py, out)
    }

    /// Adds a forward convolution of `image` [N, C, spatial...] with `weight`
    /// [K, C/groups, filter...]; returns `y` [N, K, out...]. Unset lists default to padding 0,
    /// stride 1, dilation 1.
    #[pyo3(signature = (image, weight, *, padding=None, stride=None, dilation=None, pre_padding=None, post_padding=None, name="", compute_data_type=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv_fprop(
        &mut self,
        py: Python<'_>,
        image: PyRef<'_, PyTensor>,
        weight: PyRef<'_, PyTensor>,
        padding: Option<Vec<i64>>,
        stride: Option<Vec<i64>>,
        dilation: Option<Vec<i64>>,
        pre_padding: Option<Vec<i64>>,
        post_padding: Option<Vec<i64>>,
        name: &str,
        compute_data_type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTensor>> {
        compute_type_arg(compute_data_type, "conv_fprop")?;
        let a = conv_attrs(name, padding, pre_padding, post_padding, stride, dilation);
        let y = self.edit().conv_fprop(&image.inner, &weight.inner, a);
        Self::wrap(py, y)
    }

    /// Adds a data-gradient convolution: from `loss` (dy) and `filter` (w), returns dx, whose
    /// dims must be set with `set_dim` (cuDNN frontend's argument order).
    #[pyo3(signature = (loss, filter, *, padding=None, stride=None, dilation=None, pre_padding=None, post_padding=None, name="", compute_data_type=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv_dgrad(
        &mut self,
        py: Python<'_>,
        loss: PyRef<'_, PyTensor>,
        filter: PyRef<'_, PyTensor>,
        padding: Option<Vec<i64>>,
        stride: Option<Vec<i64>>,
        dilation: Option<Vec<i64>>,
        pre_padding: Option<Vec<i64>>,
        post_padding: Option<Vec<i64>>,
        name: &str,
        compute_data_type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTensor>> {
        compute_type_arg(compute_data_type, "conv_dgrad")?;
        let a = conv_attrs(name, padding, pre_padding, post_padding, stride, dilation);
        let dx = self.edit().conv_dgrad(&loss.inner, &filter.inner, a);
        Self::wrap(py, dx)
    }

    /// Adds a weight-gradient convolution: from `image` (x) and `loss` (dy), returns dw, whose
    /// dims must be set with `set_dim` (cuDNN frontend's argument order).
    #[pyo3(signature = (image, loss, *, padding=None, stride=None, dilation=None, pre_padding=None, post_padding=None, name="", compute_data_type=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv_wgrad(
        &mut self,
        py: Python<'_>,
        image: PyRef<'_, PyTensor>,
        loss: PyRef<'_, PyTensor>,
        padding: Option<Vec<i64>>,
        stride: Option<Vec<i64>>,
        dilation: Option<Vec<i64>>,
        pre_padding: Option<Vec<i64>>,
        post_padding: Option<Vec<i64>>,
        name: &str,
        compute_data_type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTensor>> {
        compute_type_arg(compute_data_type, "conv_wgrad")?;
        let a = conv_attrs(name, padding, pre_padding, post_padding, stride, dilation);
        let dw = self.edit().conv_wgrad(&loss.inner, &image.inner, a);
        Self::wrap(py, dw)
    }

    /// Adds a batched matmul `A[..., M, K] @ B[..., K, N]`; returns C [..., M, N].
    #[pyo3(signature = (A, B, *, name="", compute_data_type=None))]
    #[allow(non_snake_case)]
    fn matmul(
        &mut self,
        py: Python<'_>,
        A: PyRef<'_, PyTensor>,
        B: PyRef<'_, PyTensor>,
        name: &str,
        compute_data_type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTensor>> {
        compute_type_arg(compute_data_type, "matmul")?;
        let c = self
            .edit()
            .matmul(&A.inner, &B.inner, MatmulAttributes::new().name(name));
        Self::wrap(py, c)
    }

    /// Adds a reduction of `input` by `mode` (`"sum"`, `"max"`, ...: kiln.reduction_mode);
    /// returns the output, whose dims must be set (1 in the reduced dims).
    #[pyo3(signature = (input, *, mode, name="", compute_data_type=None))]
    fn reduction(
        &mut self,
        py: Python<'_>,
        input: PyRef<'_, PyTensor>,
        mode: &str,
        name: &str,
        compute_data_type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTensor>> {
        let m = reduction_mode_arg(mode)?;
        compute_type_arg(compute_data_type, "reduction")?;
        let y = self
            .edit()
            .reduction(&input.inner, ReductionAttributes::new(m).name(name));
        Self::wrap(py, y)
    }

    /// Adds a node of `op`, an operation of kiln's generic table (`kiln.operation_specs()`),
    /// binding `inputs` (port → tensor) and making a fresh virtual tensor for each port of
    /// `outputs`; returns those tensors in that order. Attribute values take the type the
    /// operation declares (an int given for a float attribute is that float).
    #[pyo3(signature = (op, inputs, outputs, attributes=None, name=""))]
    fn generic_op(
        &mut self,
        py: Python<'_>,
        op: &str,
        inputs: &Bound<'_, PyDict>,
        outputs: Vec<String>,
        attributes: Option<&Bound<'_, PyDict>>,
        name: &str,
    ) -> PyResult<Vec<Py<PyTensor>>> {
        let spec = kiln_core::ops::spec(op);
        let mut ports: Vec<(String, kiln::Tensor)> = Vec::new();
        for (k, v) in inputs.iter() {
            let port: String = k.extract()?;
            let t = self.operand(&v, &format!("{op}: input '{port}'"))?;
            ports.push((port, t));
        }
        let mut attrs = BTreeMap::new();
        if let Some(a) = attributes {
            for (k, v) in a.iter() {
                let key: String = k.extract()?;
                let want = spec.and_then(|s| {
                    s.attributes()
                        .iter()
                        .find(|(n, _)| *n == key)
                        .map(|(_, t)| *t)
                });
                let value = attr_value(&v, want, &format!("{op}: attribute '{key}'"))?;
                attrs.insert(key, value);
            }
        }
        let inputs: Vec<(&str, &kiln::Tensor)> =
            ports.iter().map(|(p, t)| (p.as_str(), t)).collect();
        let outputs: Vec<&str> = outputs.iter().map(String::as_str).collect();
        let made = self
            .edit()
            .generic_op(op, name, &inputs, &outputs, attrs)
            .py()?;
        made.into_iter().map(|t| Self::wrap(py, t)).collect()
    }

    /// Infers unset dims, strides and data types, assigns uids and validates the graph; errors
    /// name the tensor or node at fault.
    fn validate(&mut self, py: Python<'_>) -> PyResult<()> {
        let g = self.edit();
        py.detach(|| g.validate()).py()
    }

    /// Validates (when needed) and lowers the graph for `handle`'s engines.
    #[pyo3(signature = (handle=None))]
    fn build_operation_graph(
        &mut self,
        py: Python<'_>,
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<()> {
        let h = self.handle_arg(py, handle, "build_operation_graph")?;
        let h = h.get().inner.clone();
        let g = self.edit();
        py.detach(|| g.build_operation_graph(&h)).py()
    }

    /// Asks the heuristics for engine configurations for each of `heur_modes`
    /// (`[kiln.heur_mode.A]`).
    fn create_execution_plans(
        &mut self,
        py: Python<'_>,
        heur_modes: Vec<PyHeurMode>,
    ) -> PyResult<()> {
        let modes: Vec<_> = heur_modes.iter().map(|m| m.to_kiln()).collect();
        let g = self.edit();
        py.detach(|| g.create_execution_plans(&modes)).py()
    }

    /// Keeps only engines that declare every one of `notes` (kiln.behavior_note).
    fn select_behavior_notes(&mut self, notes: Vec<PyBehaviorNote>) {
        let notes: Vec<_> = notes.iter().map(|n| n.to_kiln()).collect();
        self.edit().select_behavior_notes(&notes);
    }

    /// Leaves out the engines named in `names`.
    fn deselect_engines(&mut self, names: Vec<String>) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.edit().deselect_engines(&names);
    }

    /// Raises NotSupportedError when no engine configuration is left, with each engine's reason.
    fn check_support(&self) -> PyResult<()> {
        self.inner.check_support().py()
    }

    /// Builds plans per `policy` (kiln.build_plan_policy); the first built is selected.
    #[pyo3(signature = (policy=PyBuildPlanPolicy::HEURISTICS_CHOICE))]
    fn build_plans(&mut self, py: Python<'_>, policy: PyBuildPlanPolicy) -> PyResult<()> {
        let g = self.edit();
        let r = py.detach(|| g.build_plans(policy.to_kiln()));
        self.plans_changed();
        r.py()
    }

    /// Validates, lowers, asks the heuristics and builds the first plan that builds
    /// (`heur_modes` defaults to `[kiln.heur_mode.A]`).
    #[pyo3(signature = (heur_modes=None, handle=None))]
    fn build(
        &mut self,
        py: Python<'_>,
        heur_modes: Option<Vec<PyHeurMode>>,
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<()> {
        let h = self.handle_arg(py, handle, "build")?;
        let h = h.get().inner.clone();
        let modes: Vec<_> = heur_modes
            .unwrap_or_else(|| vec![PyHeurMode::A])
            .iter()
            .map(|m| m.to_kiln())
            .collect();
        let g = self.edit();
        let r = py.detach(|| g.build(&h, &modes));
        self.plans_changed();
        r.py()
    }

    /// Makes the built plan of engine `name` the selected one.
    fn select_plan_by_engine(&mut self, name: &str) -> PyResult<()> {
        let r = self.edit().select_plan_by_engine(name);
        self.plans_changed();
        r.py()
    }

    /// Workspace bytes the selected plan needs.
    fn get_workspace_size(&self) -> PyResult<usize> {
        self.inner.get_workspace_size().py()
    }

    /// The engine of the selected plan.
    fn get_engine_name(&self) -> PyResult<String> {
        self.inner
            .plan()
            .map(|p| p.engine_name().to_string())
            .ok_or_else(|| {
                to_py(Error::NotInitialized(
                    "no plan: build or load one first".into(),
                ))
            })
    }

    /// The engines of every built plan, the selected first.
    fn get_plan_engines(&self) -> Vec<String> {
        self.inner
            .plans()
            .iter()
            .map(|p| p.engine_name().to_string())
            .collect()
    }

    /// Runs the selected plan. `variant_pack` maps each real tensor (a kiln.Tensor or its uid)
    /// to an array with `__dlpack__` (NumPy, PyTorch, CuPy, JAX) on the handle's device, of the
    /// tensor's data type, shape and strides; `workspace` is an array of at least
    /// `get_workspace_size()` bytes (None when that is 0). `handle` defaults to the graph's.
    /// CUDA arrays are exported for the handle's stream and used in place (no copy).
    #[pyo3(signature = (variant_pack, workspace=None, handle=None))]
    fn execute(
        &self,
        py: Python<'_>,
        variant_pack: &Bound<'_, PyDict>,
        workspace: Option<&Bound<'_, PyAny>>,
        handle: Option<PyRef<'_, PyHandle>>,
    ) -> PyResult<()> {
        let table = match &self.table {
            Some(Ok(t)) => t,
            Some(Err(e)) => return Err(to_py(e.clone())),
            None => {
                return Err(to_py(Error::NotInitialized(
                    "no plan: call build_plans (or build) first".into(),
                )))
            }
        };
        let plan = self
            .inner
            .plan()
            .ok_or_else(|| to_py(Error::Internal("binding table without a plan".into())))?;
        match handle {
            Some(h) => table.execute(py, plan, &h, variant_pack, workspace),
            None => match &self.handle {
                Some(h) => table.execute(py, plan, h.get(), variant_pack, workspace),
                None => Err(to_py(Error::NotInitialized(
                    "execute: give a handle (handle=...)".into(),
                ))),
            },
        }
    }

    /// Saves the graph and, when its plan's engine can save plans, the plan with it (a
    /// graph-and-plan container). A loaded plan saves to exactly the bytes it was loaded from.
    fn serialize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = py.detach(|| self.inner.serialize()).py()?;
        Ok(PyBytes::new(py, &b))
    }

    /// Same as `serialize` (cuDNN frontend's other name).
    fn to_binary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.serialize(py)
    }

    /// Loads a saved graph (or graph with plan). With `handle`, a plan in the bytes is restored
    /// on its device without recompiling and selected. A bare plan is refused (load it into a
    /// graph with `deserialize_compiled_plan`).
    #[classmethod]
    #[pyo3(signature = (data, handle=None))]
    fn deserialize<'py>(
        cls: &Bound<'py, PyType>,
        data: &[u8],
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let h = handle.as_ref().map(|h| h.get().inner.clone());
        let g = py.detach(|| Graph::deserialize(h.as_ref(), data)).py()?;
        Self::instance(cls, g, handle)
    }

    /// Same as `deserialize`.
    #[classmethod]
    #[pyo3(signature = (data, handle=None))]
    fn from_binary<'py>(
        cls: &Bound<'py, PyType>,
        data: &[u8],
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::deserialize(cls, data, handle)
    }

    /// The selected plan's saved bytes (a bare plan). A loaded plan returns exactly the bytes
    /// it was loaded from.
    fn serialize_compiled_plan<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = py.detach(|| self.inner.serialize_compiled_plan()).py()?;
        Ok(PyBytes::new(py, &b))
    }

    /// Same as `serialize_compiled_plan`.
    fn to_compiled_plan_binary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.serialize_compiled_plan(py)
    }

    /// Restores a plan from `data` (a bare plan, or the plan part of a container) on `handle`
    /// (default: the graph's) and selects it; refuses a plan built for another graph.
    #[pyo3(signature = (data, handle=None))]
    fn deserialize_compiled_plan(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<()> {
        let h = self.handle_arg(py, handle, "deserialize_compiled_plan")?;
        let h = h.get().inner.clone();
        let g = self.edit();
        let r = py.detach(|| g.deserialize_compiled_plan(&h, data));
        self.plans_changed();
        r.py()
    }

    /// Same as `deserialize_compiled_plan`.
    #[pyo3(signature = (data, handle=None))]
    // cuDNN frontend's name for a method that loads into this graph.
    #[allow(clippy::wrong_self_convention)]
    fn from_compiled_plan_binary(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        handle: Option<Py<PyHandle>>,
    ) -> PyResult<()> {
        self.deserialize_compiled_plan(py, data, handle)
    }

    /// The graph's tensors, in creation order.
    fn tensors(&self, py: Python<'_>) -> PyResult<Vec<Py<PyTensor>>> {
        self.inner
            .tensors()
            .iter()
            .map(|t| Self::wrap(py, t.clone()))
            .collect()
    }

    /// The tensor named `name`, or None.
    fn tensor_by_name(&self, py: Python<'_>, name: &str) -> PyResult<Option<Py<PyTensor>>> {
        self.inner
            .tensor_by_name(name)
            .map(|t| Self::wrap(py, t))
            .transpose()
    }

    /// The tensor with `uid`, or None.
    fn tensor_by_uid(&self, py: Python<'_>, uid: i64) -> PyResult<Option<Py<PyTensor>>> {
        self.inner
            .tensor_by_uid(uid)
            .map(|t| Self::wrap(py, t))
            .transpose()
    }

    /// The handle the graph runs on by default (None until given).
    #[getter]
    fn handle(&self, py: Python<'_>) -> Option<Py<PyHandle>> {
        self.handle.as_ref().map(|h| h.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        let plan = self
            .inner
            .plan()
            .map(|p| format!(", plan={}", p.engine_name()))
            .unwrap_or_default();
        format!("kiln.Graph({} tensors{plan})", self.inner.tensors().len())
    }
}

/// `{name: {"inputs": [(port, required)], "outputs": [...], "attributes": [(name, type)]}}` of
/// every operation in kiln's generic table, for the Python operation table.
#[pyfunction]
pub fn operation_specs<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for s in kiln_core::ops::SPECS {
        let d = PyDict::new(py);
        let ports = |ps: &[kiln_core::ops::Port]| -> PyResult<Bound<'py, PyList>> {
            PyList::new(
                py,
                ps.iter()
                    .map(|p| {
                        PyTuple::new(
                            py,
                            [
                                p.name.into_pyobject(py)?.into_any(),
                                PyBool::new(py, p.required).to_owned().into_any(),
                            ],
                        )
                    })
                    .collect::<PyResult<Vec<_>>>()?,
            )
        };
        d.set_item("inputs", ports(s.inputs())?)?;
        d.set_item("outputs", ports(s.outputs())?)?;
        d.set_item("attributes", s.attributes().to_vec())?;
        out.set_item(s.name(), d)?;
    }
    Ok(out)
}
