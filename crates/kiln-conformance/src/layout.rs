//! Memory layouts of test tensors: which dim is innermost, and how much padding each run of
//! elements leaves after it.

use std::fmt;

/// A memory layout for a tensor of any rank, turned into strides by [`Layout::strides`].
///
/// `order` lists the dims from outermost to innermost (row-major is `0, 1, .., rank-1`); `pad`
/// adds unused elements after each run of a dim (a padded row pitch, making the tensor
/// non-contiguous); `inner_step` spaces consecutive elements of the innermost dim apart. Entries
/// that do not fit the rank are ignored, so one layout can describe tensors of several ranks.
#[derive(Clone, PartialEq, Eq)]
pub struct Layout {
    kind: Kind,
    pad: Vec<i64>,
    inner_step: i64,
}

#[derive(Clone, PartialEq, Eq, Debug)]
enum Kind {
    Packed,
    ChannelsLast,
    Transposed,
    Order(Vec<usize>),
}

impl Layout {
    /// Dense row-major in logical order (NCHW for convolutions).
    pub fn packed() -> Layout {
        Layout {
            kind: Kind::Packed,
            pad: Vec::new(),
            inner_step: 1,
        }
    }

    /// Channels innermost (NHWC, NDHWC, NWC): dim 1 moves after the spatial dims. For ranks
    /// below 3 it is row-major.
    pub fn channels_last() -> Layout {
        Layout {
            kind: Kind::ChannelsLast,
            pad: Vec::new(),
            inner_step: 1,
        }
    }

    /// The last two dims swapped (column-major matrices). For rank 1 it is row-major.
    pub fn transposed() -> Layout {
        Layout {
            kind: Kind::Transposed,
            pad: Vec::new(),
            inner_step: 1,
        }
    }

    /// Dims in `order`, outermost first. An `order` that is not a permutation of the tensor's
    /// dims is replaced by row-major for that tensor.
    pub fn permuted(order: &[usize]) -> Layout {
        Layout {
            kind: Kind::Order(order.to_vec()),
            pad: Vec::new(),
            inner_step: 1,
        }
    }

    /// The same layout with `pad[k]` unused elements after each run of the `k`-th dim of the
    /// order counted from the innermost (so `pad[0]` pads rows, `pad[1]` planes, ...).
    pub fn with_padding(mut self, pad: &[i64]) -> Layout {
        self.pad = pad.iter().map(|&p| p.max(0)).collect();
        self
    }

    /// The same layout with consecutive innermost elements `step` apart (at least 1).
    pub fn with_inner_step(mut self, step: i64) -> Layout {
        self.inner_step = step.max(1);
        self
    }

    /// True when the layout leaves gaps between elements.
    pub fn is_padded(&self) -> bool {
        self.inner_step > 1 || self.pad.iter().any(|&p| p > 0)
    }

    /// The dims of a rank-`rank` tensor from outermost to innermost.
    pub fn order(&self, rank: usize) -> Vec<usize> {
        let row_major: Vec<usize> = (0..rank).collect();
        match &self.kind {
            Kind::Packed => row_major,
            Kind::ChannelsLast if rank >= 3 => {
                let mut o = vec![0];
                o.extend(2..rank);
                o.push(1);
                o
            }
            Kind::Transposed if rank >= 2 => {
                let mut o = row_major;
                o.swap(rank - 2, rank - 1);
                o
            }
            Kind::Order(order) if is_permutation(order, rank) => order.clone(),
            _ => row_major,
        }
    }

    /// Strides in elements for `dims` in this layout. Always at least 1 and never overlapping.
    pub fn strides(&self, dims: &[i64]) -> Vec<i64> {
        let rank = dims.len();
        let order = self.order(rank);
        let mut strides = vec![1i64; rank];
        let mut running = self.inner_step;
        for (k, &d) in order.iter().rev().enumerate() {
            strides[d] = running;
            let pad = self.pad.get(k).copied().unwrap_or(0);
            running = running * dims[d].max(1) + pad * self.inner_step;
        }
        strides
    }
}

fn is_permutation(order: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    order.len() == rank
        && order
            .iter()
            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true))
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Packed => write!(f, "packed")?,
            Kind::ChannelsLast => write!(f, "channels_last")?,
            Kind::Transposed => write!(f, "transposed")?,
            Kind::Order(o) => write!(f, "order{o:?}")?,
        }
        if self.pad.iter().any(|&p| p > 0) {
            write!(f, "+pad{:?}", self.pad)?;
        }
        if self.inner_step > 1 {
            write!(f, "+step{}", self.inner_step)?;
        }
        Ok(())
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_of_each_layout() {
        let dims = [2, 3, 4, 5];
        assert_eq!(Layout::packed().strides(&dims), vec![60, 20, 5, 1]);
        assert_eq!(Layout::channels_last().strides(&dims), vec![60, 1, 15, 3]);
        assert_eq!(Layout::transposed().strides(&dims), vec![60, 20, 1, 4]);
        assert_eq!(
            Layout::permuted(&[3, 1, 0, 2]).strides(&dims),
            vec![4, 8, 1, 24]
        );
        assert_eq!(
            Layout::packed().with_padding(&[1, 2]).strides(&dims),
            vec![78, 26, 6, 1]
        );
        assert_eq!(
            Layout::packed().with_inner_step(2).strides(&[3, 2]),
            vec![4, 2]
        );
        // A bad order falls back to row-major.
        assert_eq!(Layout::permuted(&[0, 0]).strides(&[2, 3]), vec![3, 1]);
    }
}
