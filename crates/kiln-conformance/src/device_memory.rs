//! Device memory for a case's tensors on a CUDA device (the `cuda` feature): inputs copied up
//! from the host copies the reference reads, outputs copied up already poisoned, both copied
//! back after the engine ran so that the host-side checks apply unchanged.

use kiln::{DataType, DeviceTensor, HostTensor, TensorDesc};

/// A case's tensors on one device, in the case's declaration order.
pub(crate) struct DeviceBuffers {
    /// The inputs, holding copies of the host inputs.
    pub inputs: Vec<DeviceTensor>,
    /// The outputs, holding copies of the (poisoned) host outputs.
    pub outputs: Vec<DeviceTensor>,
}

fn upload_all(tensors: &[HostTensor], ordinal: u32) -> Result<Vec<DeviceTensor>, String> {
    tensors
        .iter()
        .map(|h| {
            DeviceTensor::upload(h, ordinal)
                .map_err(|e| format!("copying {} to cuda:{ordinal}: {e}", h.desc().label()))
        })
        .collect()
}

fn download_all(tensors: &[DeviceTensor]) -> Result<Vec<HostTensor>, String> {
    tensors
        .iter()
        .map(|d| {
            d.download().map_err(|e| {
                format!(
                    "copying {} back from cuda:{}: {e}",
                    d.desc().label(),
                    d.ordinal()
                )
            })
        })
        .collect()
}

impl DeviceBuffers {
    /// Copies of `inputs` and `outputs` (padding included) on `cuda:ordinal`.
    pub fn upload(
        inputs: &[HostTensor],
        outputs: &[HostTensor],
        ordinal: u32,
    ) -> Result<DeviceBuffers, String> {
        Ok(DeviceBuffers {
            inputs: upload_all(inputs, ordinal)?,
            outputs: upload_all(outputs, ordinal)?,
        })
    }

    /// Host copies of the inputs, as the engine left them.
    pub fn download_inputs(&self) -> Result<Vec<HostTensor>, String> {
        download_all(&self.inputs)
    }

    /// Host copies of the outputs, as the engine left them.
    pub fn download_outputs(&self) -> Result<Vec<HostTensor>, String> {
        download_all(&self.outputs)
    }
}

/// Device scratch memory of at least `bytes` bytes for a plan's workspace, or `None` for none.
pub(crate) fn workspace(bytes: usize, ordinal: u32) -> Result<Option<DeviceTensor>, String> {
    if bytes == 0 {
        return Ok(None);
    }
    let words = bytes.div_ceil(4);
    let desc = TensorDesc {
        uid: 0,
        name: "workspace".into(),
        dims: vec![words as i64],
        strides: vec![1],
        data_type: DataType::F32,
        is_virtual: false,
        alignment: 0,
        scalar: None,
    };
    DeviceTensor::zeros(&desc, ordinal)
        .map(Some)
        .map_err(|e| format!("{bytes} bytes of workspace on cuda:{ordinal}: {e}"))
}
