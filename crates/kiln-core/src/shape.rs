//! Shape inference: the dims an operation's output must have, given its inputs.

use crate::{ConvParams, Error, Result};

/// Broadcast of two same-rank dim lists through size-1 dims; `what` names the node in errors.
pub fn broadcast(a: &[i64], b: &[i64], what: &str) -> Result<Vec<i64>> {
    if a.len() != b.len() {
        return Err(Error::BadParam(format!(
            "{what}: operands have ranks {} and {}; pointwise operands must have the same rank",
            a.len(),
            b.len()
        )));
    }
    a.iter()
        .zip(b)
        .enumerate()
        .map(|(i, (&x, &y))| match (x, y) {
            _ if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(Error::BadParam(format!(
                "{what}: dim {i} is {x} in one operand and {y} in the other; \
                 they must be equal or one of them 1"
            ))),
        })
        .collect()
}

/// Checks a convolution's geometry against the spatial rank; errors name `what`.
pub fn check_conv_params(p: &ConvParams, what: &str) -> Result<()> {
    let n = p.stride.len();
    if !(1..=3).contains(&n) {
        return Err(Error::BadParam(format!(
            "{what}: {n} spatial dims; convolutions have 1 to 3"
        )));
    }
    for (field, v) in [
        ("pre_padding", &p.pre_padding),
        ("post_padding", &p.post_padding),
        ("dilation", &p.dilation),
    ] {
        if v.len() != n {
            return Err(Error::BadParam(format!(
                "{what}: {field} has {} entries but stride has {n}",
                v.len()
            )));
        }
    }
    let bad = |field: &str, v: &[i64], min: i64| -> Result<()> {
        match v.iter().position(|&x| x < min || x > 1 << 30) {
            Some(i) => Err(Error::BadParam(format!(
                "{what}: {field}[{i}] is {}, must be in {min}..=2^30",
                v[i]
            ))),
            None => Ok(()),
        }
    };
    bad("stride", &p.stride, 1)?;
    bad("dilation", &p.dilation, 1)?;
    bad("pre_padding", &p.pre_padding, 0)?;
    bad("post_padding", &p.post_padding, 0)
}

/// Output spatial size of a convolution along one dim.
pub fn conv_out_size(input: i64, filter: i64, pre: i64, post: i64, stride: i64, dil: i64) -> i64 {
    let effective = dil * (filter - 1) + 1;
    let span = input + pre + post - effective;
    if span < 0 {
        0
    } else {
        span / stride + 1
    }
}

/// The dims of `y` for a convolution with input dims `x` and filter dims `w`.
///
/// Checks ranks, groups (C divisible by w's C, K divisible by the group count) and that the
/// output is not empty; errors name `what`.
pub fn conv_output_dims(x: &[i64], w: &[i64], p: &ConvParams, what: &str) -> Result<Vec<i64>> {
    check_conv_params(p, what)?;
    let n = p.spatial_rank();
    if x.len() != n + 2 || w.len() != n + 2 {
        return Err(Error::BadParam(format!(
            "{what}: x has rank {} and w rank {}; {n} spatial dims need rank {}",
            x.len(),
            w.len(),
            n + 2
        )));
    }
    let (c, wc, k) = (x[1], w[1], w[0]);
    if wc < 1 || c % wc != 0 {
        return Err(Error::BadParam(format!(
            "{what}: x has {c} channels, not a multiple of w's {wc} channels per group"
        )));
    }
    let groups = c / wc;
    if k % groups != 0 {
        return Err(Error::BadParam(format!(
            "{what}: {k} output channels are not divisible by {groups} groups"
        )));
    }
    let mut out = vec![x[0], k];
    for i in 0..n {
        let o = conv_out_size(
            x[i + 2],
            w[i + 2],
            p.pre_padding[i],
            p.post_padding[i],
            p.stride[i],
            p.dilation[i],
        );
        if o < 1 {
            return Err(Error::BadParam(format!(
                "{what}: spatial dim {i} has input {} and dilated filter {}: \
                 the output would be empty",
                x[i + 2],
                p.dilation[i] * (w[i + 2] - 1) + 1
            )));
        }
        out.push(o);
    }
    Ok(out)
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

/// Checks that reduction output dims `y` keep or reduce (to 1) each dim of `x`.
pub fn check_reduction_dims(x: &[i64], y: &[i64], what: &str) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::BadParam(format!(
            "{what}: x has rank {} but y rank {}; a reduction keeps the rank",
            x.len(),
            y.len()
        )));
    }
    match x.iter().zip(y).position(|(&a, &b)| b != a && b != 1) {
        Some(i) => Err(Error::BadParam(format!(
            "{what}: y dim {i} is {} but x dim {i} is {}; it must equal it or be 1",
            y[i], x[i]
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p2(pad: i64, stride: i64, dil: i64) -> ConvParams {
        ConvParams {
            pre_padding: vec![pad; 2],
            post_padding: vec![pad; 2],
            stride: vec![stride; 2],
            dilation: vec![dil; 2],
        }
    }

    #[test]
    fn conv_shapes() {
        let y = conv_output_dims(&[8, 64, 56, 56], &[64, 64, 3, 3], &p2(1, 1, 1), "c").unwrap();
        assert_eq!(y, vec![8, 64, 56, 56]);
        let y = conv_output_dims(&[1, 4, 9, 9], &[6, 2, 3, 3], &p2(0, 2, 2), "c").unwrap();
        assert_eq!(y, vec![1, 6, 3, 3]);
        assert!(conv_output_dims(&[1, 3, 9, 9], &[6, 2, 3, 3], &p2(0, 1, 1), "c").is_err());
        assert!(conv_output_dims(&[1, 2, 2, 2], &[6, 2, 3, 3], &p2(0, 1, 1), "c").is_err());
    }

    #[test]
    fn matmul_and_broadcast() {
        assert_eq!(
            matmul_output_dims(&[3, 1, 4, 5], &[1, 2, 5, 6], "m").unwrap(),
            vec![3, 2, 4, 6]
        );
        assert!(matmul_output_dims(&[4, 5], &[4, 6], "m").is_err());
        assert!(broadcast(&[2, 3], &[3, 3], "p").is_err());
        check_reduction_dims(&[2, 3, 4], &[1, 3, 1], "r").unwrap();
        assert!(check_reduction_dims(&[2, 3, 4], &[2, 2, 4], "r").is_err());
    }
}
