//! rmsnorm_backward over random shapes, layouts and types, with and without dbias, on every
//! engine that claims it, with an inv_rms that is that of its x; and the reference checked
//! against the Jacobian of the forward written out here.

mod common;

use common::config;
use common::norms::{conform_norm, norm_spec, reference_is_right, Norm};
use proptest::prelude::*;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn rmsnorm_backward_conforms(spec in norm_spec(Norm::RmsnormBackward, 5), seed in any::<u64>()) {
        conform_norm(&spec, seed)?;
    }

    #[test]
    fn reference_rmsnorm_backward_is_right(spec in norm_spec(Norm::RmsnormBackward, 5), seed in any::<u64>()) {
        reference_is_right(&spec, seed)?;
    }
}
