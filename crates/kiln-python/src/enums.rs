//! The enumerations of cuDNN frontend's Python API, with its spellings (`kiln.data_type.FLOAT`,
//! `kiln.heur_mode.A`, ...). Pointwise and reduction modes come from kiln-core's lists, so a new
//! mode appears here with no change.

use crate::errors::bad_param;
use kiln::{BehaviorNote, BuildPlanPolicy, DataType, HeurMode, PointwiseMode, ReductionMode};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// Element types (`kiln.data_type.FLOAT`, `HALF`, `BFLOAT16`, `DOUBLE`, `BOOLEAN`, `INT8`,
/// `INT32`, `FP8_E4M3`, `FP8_E5M2`).
#[pyclass(
    name = "data_type",
    eq,
    eq_int,
    frozen,
    hash,
    from_py_object,
    module = "kiln"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum PyDataType {
    FLOAT,
    HALF,
    BFLOAT16,
    DOUBLE,
    BOOLEAN,
    INT8,
    INT32,
    FP8_E4M3,
    FP8_E5M2,
}

impl PyDataType {
    pub fn to_kiln(self) -> DataType {
        match self {
            PyDataType::FLOAT => DataType::F32,
            PyDataType::HALF => DataType::F16,
            PyDataType::BFLOAT16 => DataType::Bf16,
            PyDataType::DOUBLE => DataType::F64,
            PyDataType::BOOLEAN => DataType::Boolean,
            PyDataType::INT8 => DataType::I8,
            PyDataType::INT32 => DataType::I32,
            PyDataType::FP8_E4M3 => DataType::Fp8E4m3,
            PyDataType::FP8_E5M2 => DataType::Fp8E5m2,
        }
    }
    pub fn from_kiln(dt: DataType) -> PyDataType {
        match dt {
            DataType::F32 => PyDataType::FLOAT,
            DataType::F16 => PyDataType::HALF,
            DataType::Bf16 => PyDataType::BFLOAT16,
            DataType::F64 => PyDataType::DOUBLE,
            DataType::Boolean => PyDataType::BOOLEAN,
            DataType::I8 => PyDataType::INT8,
            DataType::I32 => PyDataType::INT32,
            DataType::Fp8E4m3 => PyDataType::FP8_E4M3,
            DataType::Fp8E5m2 => PyDataType::FP8_E5M2,
        }
    }
}

#[pymethods]
impl PyDataType {
    /// kiln's short name: `f32`, `f16`, `bf16`, `f64`.
    #[getter]
    fn short_name(&self) -> &'static str {
        self.to_kiln().name()
    }
    /// Bytes per element.
    #[getter]
    fn size(&self) -> usize {
        self.to_kiln().size()
    }
}

/// A data type given as `kiln.data_type.X` or as kiln's short name (`"f32"`, `"bf16"`).
pub fn data_type_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<DataType> {
    if let Ok(dt) = obj.extract::<PyDataType>() {
        return Ok(dt.to_kiln());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let s: String = s.extract()?;
        return DataType::from_name(&s).ok_or_else(|| {
            bad_param(format!(
                "{what}: data type '{s}' is not one of f32, f16, bf16, f64, bool, i8, i32, \
                 fp8_e4m3, fp8_e5m2"
            ))
        });
    }
    Err(bad_param(format!(
        "{what}: a data type is a kiln.data_type or a name such as 'f32', not {}",
        obj.repr().map(|r| r.to_string()).unwrap_or_default()
    )))
}

/// Heuristic modes for `create_execution_plans` (`kiln.heur_mode.A`, `FALLBACK`).
#[pyclass(
    name = "heur_mode",
    eq,
    eq_int,
    frozen,
    hash,
    from_py_object,
    module = "kiln"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum PyHeurMode {
    /// Optimized engines first, then reference engines.
    A,
    /// Reference engines only.
    FALLBACK,
}

impl PyHeurMode {
    pub fn to_kiln(self) -> HeurMode {
        match self {
            PyHeurMode::A => HeurMode::A,
            PyHeurMode::FALLBACK => HeurMode::Fallback,
        }
    }
}

/// How many plans `build_plans` builds (`kiln.build_plan_policy.HEURISTICS_CHOICE`, `ALL`).
#[pyclass(
    name = "build_plan_policy",
    eq,
    eq_int,
    frozen,
    hash,
    from_py_object,
    module = "kiln"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum PyBuildPlanPolicy {
    /// Keep the first candidate that builds.
    HEURISTICS_CHOICE,
    /// Build every candidate that builds; the first is selected.
    ALL,
}

impl PyBuildPlanPolicy {
    pub fn to_kiln(self) -> BuildPlanPolicy {
        match self {
            PyBuildPlanPolicy::HEURISTICS_CHOICE => BuildPlanPolicy::HeuristicsChoice,
            PyBuildPlanPolicy::ALL => BuildPlanPolicy::All,
        }
    }
}

/// Behaviour notes that filter engines (`kiln.behavior_note.SUPPORTS_PLAN_SERIALIZATION`, ...).
#[pyclass(
    name = "behavior_note",
    eq,
    eq_int,
    frozen,
    hash,
    from_py_object,
    module = "kiln"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum PyBehaviorNote {
    SUPPORTS_PLAN_SERIALIZATION,
    DETERMINISTIC,
    REFERENCE,
}

impl PyBehaviorNote {
    pub fn to_kiln(self) -> BehaviorNote {
        match self {
            PyBehaviorNote::SUPPORTS_PLAN_SERIALIZATION => BehaviorNote::SupportsPlanSerialization,
            PyBehaviorNote::DETERMINISTIC => BehaviorNote::Deterministic,
            PyBehaviorNote::REFERENCE => BehaviorNote::Reference,
        }
    }
}

/// A pointwise mode given by kiln's name (`"relu"`, `"add"`, `"cmp_lt"`; the attribute names of
/// `kiln.pointwise_mode` are these strings).
pub fn pointwise_mode_arg(s: &str) -> PyResult<PointwiseMode> {
    PointwiseMode::from_name(&s.to_ascii_lowercase()).ok_or_else(|| {
        bad_param(format!(
            "pointwise mode '{s}' is not one of: {}",
            PointwiseMode::ALL.map(|m| m.name()).join(", ")
        ))
    })
}

/// A reduction mode given by kiln's name (`"sum"`, `"max"`, ...).
pub fn reduction_mode_arg(s: &str) -> PyResult<ReductionMode> {
    ReductionMode::from_name(&s.to_ascii_lowercase()).ok_or_else(|| {
        bad_param(format!(
            "reduction mode '{s}' is not one of: {}",
            ReductionMode::ALL.map(|m| m.name()).join(", ")
        ))
    })
}

/// `[(name, is_binary)]` of every pointwise mode of one or two operands, for the operation
/// table (`binary_select`, of three, is reached through `Graph.pointwise`).
#[pyfunction]
pub fn _pointwise_modes() -> Vec<(&'static str, bool)> {
    PointwiseMode::ALL
        .iter()
        .filter(|m| m.operand_count() <= 2)
        .map(|m| (m.name(), m.is_binary()))
        .collect()
}

/// The names of every reduction mode.
#[pyfunction]
pub fn _reduction_modes() -> Vec<&'static str> {
    ReductionMode::ALL.iter().map(|m| m.name()).collect()
}
