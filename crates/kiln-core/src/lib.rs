//! kiln-core: the plain data of kiln.
//!
//! Data types, tensor descriptions, operation nodes, the graph IR with its validation and shape
//! inference, engine IDs and the one [`Error`] type. No I/O and no plugins live here.

pub mod dtype;
pub mod engine_id;
pub mod error;
pub mod fp8;
pub mod graph;
pub mod op;
pub mod ops;
pub mod shape;
pub mod tensor;

pub use dtype::DataType;
pub use engine_id::engine_id;
pub use error::{Error, Result, Status};
pub use graph::{Node, OpGraph};
pub use op::{
    ConvDirection, ConvOp, ConvParams, MatmulOp, Op, OpKind, PointwiseMode, PointwiseOp,
    PointwiseParams, ReductionMode, ReductionOp,
};
pub use ops::{AttrValue, GenericOp, OpSpec, Port};
pub use tensor::TensorDesc;
