//! How the normalization kernels walk packed row-major buffers: per sample (rows of dim 0) or
//! per channel (dim 1 between the batch and the spatial dims).

use kiln_core::TensorDesc;
use kiln_plugin_sdk::{PluginError, PluginResult};

/// `count` rows of `inner` values each: the values that share one per-sample statistic.
pub(super) struct Rows {
    pub count: usize,
    pub inner: usize,
}

impl Rows {
    /// The rows of `x` (holding `len` values), refusing an empty or inconsistent tensor.
    pub fn per_sample(what: &str, x: &TensorDesc, len: usize) -> PluginResult<Rows> {
        let count = usize::try_from(x.dims.first().copied().unwrap_or(0)).unwrap_or(0);
        if count == 0 || len == 0 || !len.is_multiple_of(count) {
            return Err(PluginError::bad_param(format!(
                "{what}: x {} holds {len} values, which is not a whole number of its {count} samples",
                x.label()
            )));
        }
        Ok(Rows {
            count,
            inner: len / count,
        })
    }
}

/// `x` seen as [batch, channels, spatial]: the values of channel `c` are
/// `x[(n * channels + c) * spatial + s]`.
pub(super) struct Channels {
    pub batch: usize,
    pub channels: usize,
    pub spatial: usize,
}

impl Channels {
    /// The channel view of `x` (holding `len` values), refusing an empty or inconsistent tensor.
    pub fn of(what: &str, x: &TensorDesc, len: usize) -> PluginResult<Channels> {
        let dim = |i: usize| usize::try_from(x.dims.get(i).copied().unwrap_or(0)).unwrap_or(0);
        let (batch, channels) = (dim(0), dim(1));
        let spatial = len.checked_div(batch * channels).unwrap_or(0);
        if spatial == 0 || batch * channels * spatial != len {
            return Err(PluginError::bad_param(format!(
                "{what}: x {} holds {len} values, which is not {batch} samples of {channels} \
                 channels",
                x.label()
            )));
        }
        Ok(Channels {
            batch,
            channels,
            spatial,
        })
    }

    /// Values per channel: batch times spatial.
    pub fn per_channel(&self) -> usize {
        self.batch * self.spatial
    }

    /// Calls `f(flat index)` for every value of channel `c`, in row-major order.
    pub fn for_each(&self, c: usize, mut f: impl FnMut(usize)) {
        for n in 0..self.batch {
            let base = (n * self.channels + c) * self.spatial;
            for i in base..base + self.spatial {
                f(i);
            }
        }
    }
}

/// Refuses `values` of `t` unless it holds `want` values.
pub(super) fn check_len(
    what: &str,
    t: &TensorDesc,
    values: &[f64],
    want: usize,
) -> PluginResult<()> {
    if values.len() != want {
        return Err(PluginError::bad_param(format!(
            "{what}: {} holds {} values; the operation needs {want}",
            t.label(),
            values.len()
        )));
    }
    Ok(())
}
