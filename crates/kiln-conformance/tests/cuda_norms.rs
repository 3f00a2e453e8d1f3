//! `KILN_CUDA_NORM_V1` on every norm, against the reference: random shapes with odd sizes (rows
//! and channels that fill no block evenly), any layouts (NCHW and NHWC), f32, f16 and bf16, the
//! fused chain after y; the saved statistics of the backwards are those of their x. Every case
//! must be claimed and compared by the CUDA norm engine, so none passes by comparing nothing.
//!
//! Ignored without a GPU; on the GPU machine run with `KILN_CONFORMANCE_DEVICE=cuda:0` and
//! `--include-ignored` (scripts/gpu-package.sh's `conformance` part). With the CPU under test
//! they fail, saying so. Case counts: 32 per test, or `PROPTEST_CASES`.

mod common;

use common::config_with;
use common::norms::{fixed, norm_spec, Norm, NormSpec};
use kiln::Device;
use kiln_conformance::{check_session, device_under_test, Layout, Session, DEVICE_ENV};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// The CUDA normalization engine.
const CUDA_NORM: &str = "KILN_CUDA_NORM_V1";

/// Runs `spec` with the CUDA device under test, requiring the CUDA norm engine to be compared.
fn conform_cuda(spec: &NormSpec, seed: u64) -> Result<(), TestCaseError> {
    let device = match device_under_test() {
        Ok(d @ Device::Cuda(_)) => d,
        Ok(d) => {
            return Err(TestCaseError::fail(format!(
                "these tests check the CUDA engines but the device under test is {d}: set \
                 {DEVICE_ENV}=cuda:N"
            )))
        }
        Err(e) => return Err(TestCaseError::fail(e)),
    };
    let mut case = spec.case().expect_engine(CUDA_NORM);
    let mut session = Session::open_on(&mut case, seed, device).map_err(TestCaseError::fail)?;
    spec.set_saved_stats(&mut session)
        .map_err(TestCaseError::fail)?;
    let outcome = check_session(&mut session).map_err(TestCaseError::fail)?;
    prop_assert!(
        outcome
            .compared
            .iter()
            .any(|(e, runs)| e == CUDA_NORM && *runs >= 1),
        "{CUDA_NORM} was not compared: {outcome:?}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(config_with(32))]

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_layernorm(spec in norm_spec(Norm::Layernorm, 9), seed in any::<u64>()) {
        conform_cuda(&spec, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_batchnorm(spec in norm_spec(Norm::Batchnorm, 9), seed in any::<u64>()) {
        conform_cuda(&spec, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_batchnorm_inference(spec in norm_spec(Norm::BatchnormInference, 9), seed in any::<u64>()) {
        conform_cuda(&spec, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_layernorm_backward(spec in norm_spec(Norm::LayernormBackward, 7), seed in any::<u64>()) {
        conform_cuda(&spec, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_rmsnorm_backward(spec in norm_spec(Norm::RmsnormBackward, 7), seed in any::<u64>()) {
        conform_cuda(&spec, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_batchnorm_backward(spec in norm_spec(Norm::BatchnormBackward, 7), seed in any::<u64>()) {
        conform_cuda(&spec, seed)?;
    }
}

/// Rows and channels large enough for many blocks, NCHW and NHWC, every norm.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_norms_on_large_odd_shapes() {
    for (norm, dims) in [
        (Norm::Layernorm, vec![257, 1031]),
        (Norm::LayernormBackward, vec![129, 2049]),
        (Norm::RmsnormBackward, vec![33, 4097]),
        (Norm::Batchnorm, vec![7, 33, 9, 11]),
        (Norm::BatchnormInference, vec![7, 33, 9, 11]),
        (Norm::BatchnormBackward, vec![7, 33, 9, 11]),
    ] {
        for layout in [Layout::packed(), Layout::channels_last()] {
            let mut spec = fixed(norm, &dims, layout);
            if matches!(
                norm,
                Norm::Layernorm | Norm::Batchnorm | Norm::BatchnormInference
            ) {
                spec.then = Some(kiln::PointwiseMode::Relu);
            }
            conform_cuda(&spec, 17).unwrap_or_else(|e| panic!("{norm:?} {dims:?}: {e}"));
        }
    }
}

/// The wide (16-byte, vectorised) kernels: rows whose length is a multiple of 8, a warp or a
/// block per row (with a row group's vectors partly past the row), backwards that walk several
/// rows per group and sum their parameter gradients through the workspace (also through the
/// shared-memory ring of knob value 2), and channels-last
/// batchnorms with 8-channel groups that fill no block evenly; f32 and bf16.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_norms_on_the_wide_paths() {
    let rows = [
        (Norm::Layernorm, vec![37, 1024]),
        (Norm::Layernorm, vec![5, 8192]),
        (Norm::Layernorm, vec![3, 4, 1000]),
        (Norm::LayernormBackward, vec![300, 1024]),
        (Norm::LayernormBackward, vec![77, 256]),
        (Norm::RmsnormBackward, vec![50, 4096]),
        // The ring path (knob wide = 2): three stages of 8192 columns, a row group's vectors
        // partly past the row, and groups with fewer rows than stages.
        (Norm::LayernormBackward, vec![300, 8192]),
        (Norm::RmsnormBackward, vec![40, 2056]),
        (Norm::LayernormBackward, vec![3, 4096]),
    ];
    let channels = [
        (Norm::Batchnorm, vec![5, 24, 7, 9]),
        (Norm::Batchnorm, vec![64, 16, 15, 15]),
        (Norm::BatchnormInference, vec![5, 24, 7, 9]),
        (Norm::BatchnormInference, vec![3, 256, 5, 5]),
        // One position a channel: a variance of 0, so inv_variance is 1/sqrt(epsilon) and y
        // must not lose its low bits to x * a - mean * a (proptest found [1, 8] f32).
        (Norm::Batchnorm, vec![1, 8, 1, 1]),
        (Norm::Batchnorm, vec![1, 32, 1, 1]),
    ];
    let cases = rows
        .into_iter()
        .map(|(n, d)| (n, d, Layout::packed()))
        .chain(
            channels
                .into_iter()
                .map(|(n, d)| (n, d, Layout::channels_last())),
        );
    for (norm, dims, layout) in cases {
        for dt in [kiln::DataType::F32, kiln::DataType::Bf16] {
            let mut spec = fixed(norm, &dims, layout.clone());
            spec.x.data_type = dt;
            spec.y_layout = layout.clone();
            // One value a channel has no unbiased variance: no running statistics there.
            if dims.iter().product::<i64>() == dims[1] {
                spec.variant = false;
            }
            conform_cuda(&spec, 23).unwrap_or_else(|e| panic!("{norm:?} {dims:?} {dt}: {e}"));
        }
    }
}
