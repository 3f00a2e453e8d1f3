//! Tensor maps (`CUtensorMap`) from a plan's recipes. A map embeds its tensor's device address,
//! so plans store only the recipe; the provider checks it at load (against the tensor's recorded
//! size, so a forged recipe cannot reach past the bound memory), encodes it once on the load
//! device with a stand-in address (the driver validates it there), and at execute encodes it over
//! the bound pointer, keeping the last encoding per map so that repeated executes on the same
//! buffers encode nothing. docs/engines/cuda.md gives the measured cost of an encode.

use crate::codegen::TensorMapRecipe;
use cudarc::driver::sys;
use kiln_core::DataType;
use std::sync::Mutex;

/// The most dims a tiled tensor map has.
pub const MAX_RANK: usize = 5;

/// Checks a recipe without a device: rank, extents, strides (multiples of 16 bytes, below
/// 2^40), boxes (1 to 256, the innermost 16 to 128 bytes for the 128-byte swizzle) and that the
/// bytes the map spans fit in `storage_bytes`, the tensor's recorded size.
pub fn check_recipe(m: &TensorMapRecipe, storage_bytes: u64) -> Result<(), String> {
    let rank = m.dims.len();
    if !(2..=MAX_RANK).contains(&rank) || m.strides.len() + 1 != rank || m.box_dims.len() != rank {
        return Err(format!(
            "rank {rank} with {} strides and {} box dims (rank 2 to {MAX_RANK}, one stride fewer, \
             one box dim each)",
            m.strides.len(),
            m.box_dims.len()
        ));
    }
    let esize = match m.data_type {
        DataType::F16 | DataType::Bf16 => 2u128,
        other => return Err(format!("data type {other} (f16 or bf16)")),
    };
    if let Some(d) = m.dims.iter().find(|&&d| d == 0 || d > 1 << 32) {
        return Err(format!("extent {d} (1 to 2^32)"));
    }
    if let Some(s) = m
        .strides
        .iter()
        .find(|&&s| s == 0 || s % 16 != 0 || s >= 1 << 40)
    {
        return Err(format!(
            "stride {s} bytes (a positive multiple of 16 below 2^40)"
        ));
    }
    if let Some(b) = m.box_dims.iter().find(|&&b| b == 0 || b > 256) {
        return Err(format!("box dim {b} (1 to 256)"));
    }
    let inner = u128::from(m.box_dims[0]) * esize;
    if inner % 16 != 0 || inner > 128 {
        return Err(format!(
            "an innermost box of {inner} bytes (a multiple of 16, at most 128)"
        ));
    }
    // The last byte the map can address, plus one.
    let mut span = u128::from(m.dims[0]) * esize;
    for (d, s) in m.dims[1..].iter().zip(&m.strides) {
        span += u128::from(d - 1) * u128::from(*s);
    }
    if span > u128::from(storage_bytes) {
        return Err(format!(
            "it spans {span} bytes but the tensor holds {storage_bytes}"
        ));
    }
    Ok(())
}

/// Encodes `m` over the device address `ptr` (16-byte aligned).
pub fn encode(m: &TensorMapRecipe, ptr: u64) -> Result<sys::CUtensorMap, String> {
    if !ptr.is_multiple_of(16) {
        return Err(format!(
            "tensor uid {} is bound to address {ptr:#x}; the tensor memory accelerator needs \
             16-byte aligned buffers",
            m.uid
        ));
    }
    let dt = match m.data_type {
        DataType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        DataType::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        other => return Err(format!("tensor map of {other}")),
    };
    let rank = m.dims.len();
    let element_strides = [1u32; MAX_RANK];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: the driver is loaded (the instance has a device); every array holds `rank`
    // entries (strides `rank - 1`), checked by `check_recipe` when the plan was built or
    // loaded; the driver writes only `map`.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            dt,
            rank as u32,
            ptr as *mut std::ffi::c_void,
            m.dims.as_ptr(),
            m.strides.as_ptr(),
            m.box_dims.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(format!(
            "cuTensorMapEncodeTiled refused the map over tensor uid {} (dims {:?}, strides {:?}, \
             box {:?}): {r:?}",
            m.uid, m.dims, m.strides, m.box_dims
        ));
    }
    Ok(map)
}

/// A map's last encoding, reused while its tensor stays bound to the same address.
pub struct Encoded {
    recipe: TensorMapRecipe,
    last: Mutex<(u64, sys::CUtensorMap)>,
}

impl Encoded {
    /// Checks `recipe` on the load device by encoding it over a stand-in aligned address.
    pub fn new(recipe: TensorMapRecipe) -> Result<Encoded, String> {
        const STAND_IN: u64 = 1 << 20;
        let map = encode(&recipe, STAND_IN)?;
        Ok(Encoded {
            recipe,
            last: Mutex::new((STAND_IN, map)),
        })
    }

    /// The map over `ptr`.
    pub fn at(&self, ptr: u64) -> Result<sys::CUtensorMap, String> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.0 != ptr {
            *last = (ptr, encode(&self.recipe, ptr)?);
        }
        Ok(last.1)
    }

    pub fn uid(&self) -> i64 {
        self.recipe.uid
    }
}
