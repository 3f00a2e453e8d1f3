//! kiln: a deep-learning operation-graph library.
//!
//! Describe a graph of tensor operations, let kiln pick an engine, build an execution plan once,
//! and run it on caller-owned memory. Method names follow cuDNN frontend and hipDNN.
//!
//! ```
//! use kiln::{DataType, Graph, Handle, HeurMode, HostTensor, PointwiseAttributes, PointwiseMode,
//!            TensorAttributes, VariantPack, Workspace};
//!
//! let handle = Handle::cpu()?;
//! let mut graph = Graph::new();
//! let x = graph.tensor(TensorAttributes::new().name("x").dim(&[2, 3]).data_type(DataType::F32));
//! let y = graph.pointwise(&x, None, PointwiseAttributes::new(PointwiseMode::Relu));
//! y.set_output(true);
//! graph.build(&handle, &[HeurMode::A])?;
//!
//! let mut hx = HostTensor::from_f32(&x, &[-1.0, 2.0, -3.0, 4.0, -5.0, 6.0])?;
//! let mut hy = HostTensor::for_tensor(&y)?;
//! let mut workspace = Workspace::for_graph(&graph)?;
//! let mut pack = VariantPack::new();
//! pack.insert(&x, &mut hx).insert(&y, &mut hy);
//! graph.execute(&handle, &mut pack, &mut workspace)?;
//! drop(pack);
//! assert_eq!(hy.to_f32_vec(), vec![0.0, 2.0, 0.0, 4.0, 0.0, 6.0]);
//! # Ok::<(), kiln::Error>(())
//! ```

mod attributes;
mod autotune;
mod builtins;
#[cfg(feature = "cuda")]
mod device_tensor;
mod graph;
mod host;
mod operations;
mod resample;
mod serialize;
mod tensor;

pub use attributes::{
    ConvAttributes, ConvDgradAttributes, ConvFpropAttributes, ConvWgradAttributes,
    MatmulAttributes, PointwiseAttributes, ReductionAttributes,
};
pub use autotune::{AutotuneReport, AutotuneTrial};
#[cfg(feature = "cuda")]
pub use device_tensor::DeviceTensor;
pub use graph::{BuildPlanPolicy, Graph};
pub use host::{HostTensor, VariantPack, Workspace};
pub use kiln_format::{BlobInfo, BlobKind};
pub use operations::*;
pub use resample::{ResampleAttributes, ResampleMode, ResampleOutputs};
pub use serialize::{
    deserialize_compiled_plan, from_compiled_plan_binary, probe, serialize_compiled_plan,
    to_compiled_plan_binary,
};
pub use tensor::{Tensor, TensorAttributes};

pub use kiln_backend::{
    BehaviorNote, BuiltinPlugin, Device, EngineConfig, EngineInfo, ExecutionPlan, Handle, HeurMode,
    PlanOrigin, Registry, RegistryOptions,
};
pub use kiln_core::{
    AttrValue, DataType, Error, OpGraph, PointwiseMode, ReductionMode, Result, Status, TensorDesc,
};

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
