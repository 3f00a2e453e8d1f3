//! Device memory for CUDA handles (the `cuda` feature): a tensor's layout on one GPU, filled
//! from and read back into [`HostTensor`]s, bound in a [`crate::VariantPack`] with
//! `insert_device`, checked for data type and size like host memory.

use crate::{HostTensor, Tensor};
use kiln_core::{Error, Result, TensorDesc};
use kiln_cuda_driver::DeviceMemory;

/// A tensor's memory on a CUDA device: its description and the bytes its layout spans.
pub struct DeviceTensor {
    desc: TensorDesc,
    memory: DeviceMemory,
}

impl DeviceTensor {
    /// Zeroed device memory for `desc`'s layout on `cuda:ordinal`. Refuses an invalid
    /// description, a missing CUDA driver or device, and a failed allocation.
    pub fn zeros(desc: &TensorDesc, ordinal: u32) -> Result<DeviceTensor> {
        desc.validate()?;
        let bytes = desc
            .storage_bytes()
            .ok_or_else(|| Error::BadParam(format!("{}: size overflows", desc.label())))?;
        let ordinal = i32::try_from(ordinal)
            .map_err(|_| Error::BadParam(format!("cuda:{ordinal} is not a device")))?;
        let memory = DeviceMemory::zeroed(ordinal, bytes).map_err(Error::AllocFailed)?;
        Ok(DeviceTensor {
            desc: desc.clone(),
            memory,
        })
    }

    /// Zeroed device memory for tensor `t` of a validated graph.
    pub fn for_tensor(t: &Tensor, ordinal: u32) -> Result<DeviceTensor> {
        DeviceTensor::zeros(&t.desc()?, ordinal)
    }

    /// Device memory on `cuda:ordinal` holding a copy of `host`.
    pub fn upload(host: &HostTensor, ordinal: u32) -> Result<DeviceTensor> {
        let mut d = DeviceTensor::zeros(host.desc(), ordinal)?;
        d.copy_from(host)?;
        Ok(d)
    }

    /// Copies `host` into this memory (after all queued work on the device). Refuses host
    /// memory of another data type or layout.
    pub fn copy_from(&mut self, host: &HostTensor) -> Result<()> {
        self.check_same(host.desc())?;
        self.memory
            .upload(host.bytes())
            .map_err(Error::ExecutionFailed)
    }

    /// A host copy of this memory (after all queued work on the device).
    pub fn download(&self) -> Result<HostTensor> {
        let mut h = HostTensor::zeros(&self.desc)?;
        self.copy_to(&mut h)?;
        Ok(h)
    }

    /// Copies this memory into `host` (after all queued work on the device). Refuses host
    /// memory of another data type or layout.
    pub fn copy_to(&self, host: &mut HostTensor) -> Result<()> {
        self.check_same(host.desc())?;
        self.memory
            .download(host.bytes_mut())
            .map_err(Error::ExecutionFailed)
    }

    fn check_same(&self, other: &TensorDesc) -> Result<()> {
        if other.data_type != self.desc.data_type
            || other.dims != self.desc.dims
            || other.strides != self.desc.strides
        {
            return Err(Error::BadParam(format!(
                "{}: host memory is {} {:?} strides {:?}, the device memory {} {:?} strides {:?}",
                self.desc.label(),
                other.data_type,
                other.dims,
                other.strides,
                self.desc.data_type,
                self.desc.dims,
                self.desc.strides
            )));
        }
        Ok(())
    }

    /// The tensor description this memory was made for.
    pub fn desc(&self) -> &TensorDesc {
        &self.desc
    }

    /// Bytes of device memory.
    pub fn len(&self) -> usize {
        self.memory.len()
    }

    /// True when it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.memory.is_empty()
    }

    /// The CUDA device ordinal.
    pub fn ordinal(&self) -> u32 {
        self.memory.ordinal() as u32
    }

    /// The device address (a `CUdeviceptr`), for plans executed through the backend directly.
    pub fn device_ptr(&self) -> u64 {
        self.memory.as_ptr()
    }
}

impl std::fmt::Debug for DeviceTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTensor")
            .field("desc", &self.desc)
            .field("cuda", &self.ordinal())
            .field("bytes", &self.len())
            .finish()
    }
}
