//! kiln's CUDA driver layer, thinly: loading libcuda (checked before any call, see
//! [`availability`]), a device's primary context, modules and launches, streams' events, and
//! device memory. Shared by the CUDA kernel provider and the frontend's device buffers, so that
//! the frontend depends on no engine. Every call makes the context current on the calling thread
//! first, so plans can be executed from any thread.

pub mod availability;

use cudarc::driver::{result, sys};
use std::ffi::{c_void, CString};

fn err(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

/// A retained primary context of one device. Cloning retains it again; dropping releases.
pub struct DeviceContext {
    pub ordinal: i32,
    device: sys::CUdevice,
    ctx: sys::CUcontext,
    /// Compute capability as an SM number (90 for 9.0).
    pub arch: u32,
    /// Multiprocessors (what a persistent kernel's grid is sized from).
    pub sm_count: u32,
    /// Dynamic shared memory one block may opt in to, in bytes.
    pub max_shared_optin: u32,
}

// SAFETY: a CUcontext may be made current on any thread; the handle is only an identifier.
unsafe impl Send for DeviceContext {}
unsafe impl Sync for DeviceContext {}

impl DeviceContext {
    /// Retains device `ordinal`'s primary context. Refuses when the driver is unavailable or
    /// the ordinal is not a device here.
    pub fn new(ordinal: i32) -> Result<DeviceContext, String> {
        availability::driver().map_err(|e| format!("CUDA engine not available: {e}"))?;
        let count = result::device::get_count().map_err(|e| err("cuDeviceGetCount", e))?;
        if ordinal < 0 || ordinal >= count {
            return Err(format!(
                "cuda:{ordinal} does not exist: this machine has {count} CUDA device(s)"
            ));
        }
        let device = result::device::get(ordinal).map_err(|e| err("cuDeviceGet", e))?;
        // SAFETY: device is a valid device handle.
        let ctx = unsafe { result::primary_ctx::retain(device) }
            .map_err(|e| err("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: device is valid; the attributes are plain ints.
        let (major, minor) = unsafe {
            (
                result::device::get_attribute(
                    device,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                ),
                result::device::get_attribute(
                    device,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                ),
            )
        };
        let arch = (major.unwrap_or(0) * 10 + minor.unwrap_or(0)) as u32;
        // SAFETY: as above.
        let (sm_count, max_shared_optin) = unsafe {
            (
                result::device::get_attribute(
                    device,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                ),
                result::device::get_attribute(
                    device,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                ),
            )
        };
        Ok(DeviceContext {
            ordinal,
            device,
            ctx,
            arch,
            sm_count: sm_count.unwrap_or(1).max(1) as u32,
            max_shared_optin: max_shared_optin.unwrap_or(48 * 1024).max(0) as u32,
        })
    }

    /// Makes the context current on this thread.
    pub fn bind(&self) -> Result<(), String> {
        // SAFETY: ctx is a retained primary context.
        unsafe { result::ctx::set_current(self.ctx) }.map_err(|e| err("cuCtxSetCurrent", e))
    }

    /// Waits for all work on the device.
    pub fn synchronize(&self) -> Result<(), String> {
        self.bind()?;
        result::ctx::synchronize().map_err(|e| err("cuCtxSynchronize", e))
    }
}

impl Clone for DeviceContext {
    fn clone(&self) -> Self {
        // SAFETY: retaining an already retained primary context only bumps its count.
        let ctx = unsafe { result::primary_ctx::retain(self.device) }.unwrap_or(self.ctx);
        DeviceContext {
            ordinal: self.ordinal,
            device: self.device,
            ctx,
            arch: self.arch,
            sm_count: self.sm_count,
            max_shared_optin: self.max_shared_optin,
        }
    }
}

impl Drop for DeviceContext {
    fn drop(&mut self) {
        // SAFETY: balanced with the retain in new/clone.
        let _ = unsafe { result::primary_ctx::release(self.device) };
    }
}

/// A loaded module and the functions of its launches.
pub struct Module {
    device: DeviceContext,
    module: sys::CUmodule,
    pub functions: Vec<sys::CUfunction>,
}

// SAFETY: module and function handles are identifiers valid in their context on any thread.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    /// Loads `image` (a cubin, or NUL-terminated PTX) on `device` and looks up `symbols`.
    /// Refuses an image the driver rejects and a symbol it does not hold.
    pub fn load(device: &DeviceContext, image: &[u8], symbols: &[&str]) -> Result<Module, String> {
        device.bind()?;
        // The driver parses the ELF image in place and wants it 8-byte aligned. A payload keeps
        // its cubins 16-byte aligned, so loaded plans pass their bytes straight through; only
        // an image at an odd address is copied into an aligned buffer first.
        let copy: Vec<u64>;
        let ptr = if (image.as_ptr() as usize).is_multiple_of(8) {
            image.as_ptr() as *const c_void
        } else {
            let mut aligned = vec![0u64; image.len().div_ceil(8) + 1];
            // SAFETY: the buffer holds at least image.len() bytes; the two do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    image.as_ptr(),
                    aligned.as_mut_ptr() as *mut u8,
                    image.len(),
                )
            };
            copy = aligned;
            copy.as_ptr() as *const c_void
        };
        // SAFETY: `ptr` addresses a complete cubin or NUL-terminated PTX (the payload's checks
        // passed), 8-byte aligned, alive until the call returns (the driver copies what it keeps).
        let module = unsafe { result::module::load_data(ptr) }.map_err(|e| {
            format!(
                "the driver refused the code object on cuda:{}: {e}",
                device.ordinal
            )
        })?;
        let mut m = Module {
            device: device.clone(),
            module,
            functions: Vec::new(),
        };
        for s in symbols {
            let name = CString::new(*s).map_err(|_| format!("symbol {s:?} holds a NUL byte"))?;
            // SAFETY: module is loaded.
            let f = unsafe { result::module::get_function(m.module, name) }
                .map_err(|e| format!("the code object has no kernel '{s}': {e}"))?;
            m.functions.push(f);
        }
        Ok(m)
    }

    /// Lets function `index` use up to `bytes` of dynamic shared memory (above the default 48 KiB).
    pub fn set_max_dynamic_shared(&self, index: usize, bytes: u32) -> Result<(), String> {
        self.device.bind()?;
        let f = *self.functions.get(index).ok_or("no such function")?;
        // SAFETY: f is a function of this loaded module; the attribute is a plain int.
        unsafe {
            result::function::set_function_attribute(
                f,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        }
        .map_err(|e| format!("cuFuncSetAttribute (dynamic shared memory {bytes} bytes): {e}"))
    }

    /// How many blocks of `threads` threads and `shared` bytes of dynamic shared memory of
    /// function `index` one multiprocessor holds at once (0: none fits).
    pub fn max_active_blocks(
        &self,
        index: usize,
        threads: u32,
        shared: u32,
    ) -> Result<u32, String> {
        self.device.bind()?;
        let f = *self.functions.get(index).ok_or("no such function")?;
        // SAFETY: f is a function of this loaded module; the sizes are plain values.
        let n = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                f,
                threads as i32,
                shared as usize,
            )
        }
        .map_err(|e| format!("cuOccupancyMaxActiveBlocksPerMultiprocessor: {e}"))?;
        Ok(n.max(0) as u32)
    }

    /// Launches function `index` with `params`, one pointer to each parameter's value (as
    /// cuLaunchKernel takes them), on `stream`; with `cooperative`, through
    /// cuLaunchCooperativeKernel (every block resident at once, or the launch fails).
    ///
    /// # Safety
    /// Each pointer addresses a value of its kernel parameter's size and type, alive for the
    /// call; pointer values address memory large enough for the kernel.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch_with_params(
        &self,
        index: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
        cooperative: bool,
    ) -> Result<(), String> {
        self.device.bind()?;
        let f = *self.functions.get(index).ok_or("no such function")?;
        let (g, b) = ((grid[0], grid[1], grid[2]), (block[0], block[1], block[2]));
        if cooperative {
            // SAFETY: per the contract.
            unsafe { result::launch_cooperative_kernel(f, g, b, shared, stream, params) }
                .map_err(|e| format!("cuLaunchCooperativeKernel failed: {e}"))
        } else {
            // SAFETY: per the contract.
            unsafe { result::launch_kernel(f, g, b, shared, stream, params) }
                .map_err(|e| format!("cuLaunchKernel failed: {e}"))
        }
    }

    /// Launches function `index` with `args` (device pointers) on `stream`.
    ///
    /// # Safety
    /// `args` match the kernel's parameters and address memory large enough for them.
    pub unsafe fn launch(
        &self,
        index: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        stream: sys::CUstream,
        args: &[u64],
    ) -> Result<(), String> {
        self.device.bind()?;
        let f = *self.functions.get(index).ok_or("no such function")?;
        let mut values: Vec<u64> = args.to_vec();
        let mut ptrs: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: per the contract; each parameter pointer addresses one u64 alive for the call.
        unsafe {
            result::launch_kernel(
                f,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                shared,
                stream,
                &mut ptrs,
            )
        }
        .map_err(|e| format!("cuLaunchKernel failed: {e}"))
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: loaded in Module::load and unloaded once.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

/// Device memory of one device, freed on drop.
pub struct DeviceMemory {
    device: DeviceContext,
    ptr: sys::CUdeviceptr,
    len: usize,
}

// SAFETY: a device pointer is an address valid in its context on any thread.
unsafe impl Send for DeviceMemory {}
unsafe impl Sync for DeviceMemory {}

impl DeviceMemory {
    /// `len` zeroed bytes on device `ordinal` (at least 256-byte aligned).
    pub fn zeroed(ordinal: i32, len: usize) -> Result<DeviceMemory, String> {
        let device = DeviceContext::new(ordinal)?;
        device.bind()?;
        let n = len.max(1);
        // SAFETY: a context is current.
        let ptr = unsafe { result::malloc_sync(n) }
            .map_err(|e| format!("cannot allocate {len} bytes on cuda:{ordinal}: {e}"))?;
        // SAFETY: ptr addresses n bytes.
        unsafe { result::memset_d8_sync(ptr, 0, n) }.map_err(|e| err("cuMemsetD8", e))?;
        Ok(DeviceMemory { device, ptr, len })
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> i32 {
        self.device.ordinal
    }

    /// The device address.
    pub fn as_ptr(&self) -> u64 {
        self.ptr
    }

    /// Copies `src` to the start of the buffer (after all work on the device). Refuses more
    /// bytes than the buffer has.
    pub fn upload(&mut self, src: &[u8]) -> Result<(), String> {
        if src.len() > self.len {
            return Err(format!(
                "{} bytes do not fit a device buffer of {}",
                src.len(),
                self.len
            ));
        }
        self.device.synchronize()?;
        // SAFETY: the buffer holds at least src.len() bytes.
        unsafe { result::memcpy_htod_sync(self.ptr, src) }.map_err(|e| err("cuMemcpyHtoD", e))
    }

    /// Copies the start of the buffer into `dst` (after all work on the device). Refuses more
    /// bytes than the buffer has.
    pub fn download(&self, dst: &mut [u8]) -> Result<(), String> {
        if dst.len() > self.len {
            return Err(format!(
                "{} bytes asked of a device buffer of {}",
                dst.len(),
                self.len
            ));
        }
        self.device.synchronize()?;
        // SAFETY: the buffer holds at least dst.len() bytes.
        unsafe { result::memcpy_dtoh_sync(dst, self.ptr) }.map_err(|e| err("cuMemcpyDtoH", e))
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: allocated in zeroed and freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}

/// Times `f` on the device with events: milliseconds between before and after (for benches).
pub fn time_ms(
    device: &DeviceContext,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<f32, String> {
    device.bind()?;
    let e0 = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
        .map_err(|e| err("cuEventCreate", e))?;
    let e1 = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
        .map_err(|e| err("cuEventCreate", e))?;
    // SAFETY: events are live; the null stream is valid.
    let r = unsafe {
        result::event::record(e0, std::ptr::null_mut()).map_err(|e| err("record", e))?;
        f()?;
        result::event::record(e1, std::ptr::null_mut()).map_err(|e| err("record", e))?;
        result::event::synchronize(e1).map_err(|e| err("sync", e))?;
        result::event::elapsed(e0, e1).map_err(|e| err("elapsed", e))
    };
    // SAFETY: created above, destroyed once.
    unsafe {
        let _ = result::event::destroy(e0);
        let _ = result::event::destroy(e1);
    }
    r
}
