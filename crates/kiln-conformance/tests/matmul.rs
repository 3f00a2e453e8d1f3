//! Batched matmul with batch broadcasting, any layouts (row-major, transposed, padded,
//! permuted batches) and types, on every engine that claims it.

mod common;

use common::{config, conform, matmul};
use kiln::DataType;
use kiln_conformance::{assert_conforms, Layout, MatmulSpec, MATMUL};
use proptest::prelude::*;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn matmul_conforms(spec in matmul(), seed in any::<u64>()) {
        conform(spec.case(), seed)?;
    }
}

/// Larger products (k = 300, beyond any single register block) in each type, with a
/// transposed b and a broadcast batch.
#[test]
fn long_inner_dims() {
    for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
        let spec = MatmulSpec {
            batch_a: vec![2, 1],
            batch_b: vec![1, 3],
            m: 17,
            k: 300,
            n: 33,
            a_layout: Layout::packed(),
            b_layout: Layout::transposed(),
            c_layout: Layout::packed().with_padding(&[3]),
            a_type: dt,
            b_type: dt,
            c_type: dt,
        };
        let outcome = assert_conforms(spec.case(), 5);
        assert!(common::cpu_engine_claimed(&outcome, MATMUL), "{outcome:?}");
        assert!(common::compared_where_claimed(&outcome), "{outcome:?}");
    }
}

/// An output wide enough (n = 2100) that the engine cuts it into several row and column tiles.
#[test]
fn wide_outputs_span_several_tiles() {
    let spec = MatmulSpec {
        batch_a: vec![],
        batch_b: vec![],
        m: 150,
        k: 6,
        n: 2100,
        a_layout: Layout::transposed(),
        b_layout: Layout::packed(),
        c_layout: Layout::packed(),
        a_type: DataType::F32,
        b_type: DataType::Bf16,
        c_type: DataType::F32,
    };
    let outcome = assert_conforms(spec.case(), 8);
    assert!(common::cpu_engine_claimed(&outcome, MATMUL), "{outcome:?}");
}
