//! Shape inference of the typed operations, re-exported from their modules in [`crate::ops`]
//! so that callers keep one short path.

pub use crate::ops::conv::{check_conv_params, conv_out_size, conv_output_dims};
pub use crate::ops::matmul::matmul_output_dims;
pub use crate::ops::pointwise::broadcast;
pub use crate::ops::reduction::check_reduction_dims;
pub use crate::ops::rmsnorm::inv_rms_dims;
