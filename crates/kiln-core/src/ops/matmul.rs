//! Batched matmul: validation and shape inference.

use crate::ops::pointwise::broadcast;
use crate::{Error, OpGraph, Result};
use serde::{Deserialize, Serialize};

/// A batched matmul node: `c[..., M, N] = a[..., M, K] * b[..., K, N]`, batch dims broadcast
/// through size 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatmulOp {
    pub a: i64,
    pub b: i64,
    pub c: i64,
}

/// The dims of `c` for `a[..., M, K] * b[..., K, N]`; errors name `what`.
pub fn matmul_output_dims(a: &[i64], b: &[i64], what: &str) -> Result<Vec<i64>> {
    if a.len() < 2 || a.len() != b.len() {
        return Err(Error::BadParam(format!(
            "{what}: a has rank {} and b rank {}; matmul needs equal ranks of at least 2",
            a.len(),
            b.len()
        )));
    }
    let r = a.len();
    if a[r - 1] != b[r - 2] {
        return Err(Error::BadParam(format!(
            "{what}: a is [.., {}, {}] and b is [.., {}, {}]: inner dims differ",
            a[r - 2],
            a[r - 1],
            b[r - 2],
            b[r - 1]
        )));
    }
    let mut out = broadcast(&a[..r - 2], &b[..r - 2], what)?;
    out.push(a[r - 2]);
    out.push(b[r - 1]);
    Ok(out)
}

impl MatmulOp {
    /// Checks that `a` and `b` are tensors whose dims give `c`'s. Errors name `what`.
    pub fn validate(&self, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let t = |uid: i64| graph.tensor_for(uid, node);
        let (a, b, c) = (t(self.a)?, t(self.b)?, t(self.c)?);
        if a.scalar.is_some() || b.scalar.is_some() {
            return Err(Error::BadParam(format!(
                "{what}: matmul operands cannot be by-value scalars"
            )));
        }
        super::expect_dims(what, c, &matmul_output_dims(&a.dims, &b.dims, what)?)
    }
}
