//! batchnorm_backward (per channel, NCHW semantics in any layout) over random shapes, layouts and
//! types, on every engine that claims it, with saved statistics that are those of its x; and the
//! reference checked against the Jacobian of the forward written out here.

mod common;

use common::config;
use common::norms::{conform_norm, norm_spec, reference_is_right, Norm};
use proptest::prelude::*;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn batchnorm_backward_conforms(spec in norm_spec(Norm::BatchnormBackward, 5), seed in any::<u64>()) {
        conform_norm(&spec, seed)?;
    }

    #[test]
    fn reference_batchnorm_backward_is_right(spec in norm_spec(Norm::BatchnormBackward, 5), seed in any::<u64>()) {
        reference_is_right(&spec, seed)?;
    }
}
