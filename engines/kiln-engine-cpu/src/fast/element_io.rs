//! Runs of tensor elements of any data type read into, and written from, f32 buffers, plus the
//! raw-pointer wrapper the engines share across rayon workers.

use half::{bf16, f16};
use kiln_core::DataType;

/// A tensor's base address, shareable across worker threads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SharedPtr(pub *mut u8);

// SAFETY: the engines only dereference a SharedPtr inside `Prepared::execute`, whose contract
// keeps the memory valid for the call; workers write disjoint elements, and reads of inputs
// never race with writes because a graph never writes a tensor it reads.
unsafe impl Send for SharedPtr {}
// SAFETY: as above.
unsafe impl Sync for SharedPtr {}

impl SharedPtr {
    /// The address (a method, so that closures capture the whole wrapper).
    #[inline(always)]
    pub fn get(self) -> *mut u8 {
        self.0
    }
}

/// Reads `out.len()` elements of type `dt`: element `i` at element offset `off + i * stride` from
/// `base` (`stride` may be 0 or negative).
///
/// # Safety
/// Every addressed element lies inside one allocation that `base` points into.
#[inline]
pub(crate) unsafe fn load(
    base: *const u8,
    dt: DataType,
    off: isize,
    stride: isize,
    out: &mut [f32],
) {
    let n = out.len();
    if n == 0 {
        return;
    }
    // SAFETY (all arms): the caller guarantees every offset addresses a valid element; reads
    // are unaligned so any byte address works.
    unsafe {
        match dt {
            DataType::F32 => {
                let p = (base as *const f32).offset(off);
                if stride == 1 {
                    std::ptr::copy_nonoverlapping(
                        p as *const u8,
                        out.as_mut_ptr() as *mut u8,
                        n * 4,
                    );
                } else if stride == 0 {
                    out.fill(p.read_unaligned());
                } else {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = p.offset(i as isize * stride).read_unaligned();
                    }
                }
            }
            DataType::F16 => {
                let p = (base as *const u16).offset(off);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = f16::from_bits(p.offset(i as isize * stride).read_unaligned()).to_f32();
                }
            }
            DataType::Bf16 => {
                let p = (base as *const u16).offset(off);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = f32::from_bits(
                        (p.offset(i as isize * stride).read_unaligned() as u32) << 16,
                    );
                }
            }
            DataType::F64 => {
                let p = (base as *const f64).offset(off);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = p.offset(i as isize * stride).read_unaligned() as f32;
                }
            }
            DataType::I32 => {
                let p = (base as *const i32).offset(off);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = p.offset(i as isize * stride).read_unaligned() as f32;
                }
            }
            DataType::Boolean | DataType::I8 | DataType::Fp8E4m3 | DataType::Fp8E5m2 => {
                let p = base.offset(off);
                let decode = byte_decoder(dt);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = decode[p.offset(i as isize * stride).read() as usize];
                }
            }
        }
    }
}

/// The value of every byte of a one-byte type, so that a load is one table lookup.
fn byte_decoder(dt: DataType) -> &'static [f32; 256] {
    use std::sync::OnceLock;
    static TABLES: [OnceLock<[f32; 256]>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let slot = match dt {
        DataType::Boolean => 0,
        DataType::I8 => 1,
        DataType::Fp8E4m3 => 2,
        _ => 3,
    };
    TABLES[slot]
        .get_or_init(|| std::array::from_fn(|b| dt.read_f64(&[b as u8]).unwrap_or(f64::NAN) as f32))
}

/// Writes `src` as elements of type `dt` (rounded to nearest): element `i` at element offset
/// `off + i * stride` from `base`.
///
/// # Safety
/// Every addressed element lies inside one allocation that `base` points into, and no other
/// thread accesses those elements during the call.
#[inline]
pub(crate) unsafe fn store(base: *mut u8, dt: DataType, off: isize, stride: isize, src: &[f32]) {
    let n = src.len();
    if n == 0 {
        return;
    }
    // SAFETY (all arms): as documented above; writes are unaligned so any address works.
    unsafe {
        match dt {
            DataType::F32 => {
                let p = (base as *mut f32).offset(off);
                if stride == 1 {
                    std::ptr::copy_nonoverlapping(src.as_ptr() as *const u8, p as *mut u8, n * 4);
                } else {
                    for (i, &v) in src.iter().enumerate() {
                        p.offset(i as isize * stride).write_unaligned(v);
                    }
                }
            }
            DataType::F16 => {
                let p = (base as *mut u16).offset(off);
                for (i, &v) in src.iter().enumerate() {
                    p.offset(i as isize * stride)
                        .write_unaligned(f16::from_f32(v).to_bits());
                }
            }
            DataType::Bf16 => {
                let p = (base as *mut u16).offset(off);
                for (i, &v) in src.iter().enumerate() {
                    p.offset(i as isize * stride)
                        .write_unaligned(bf16::from_f32(v).to_bits());
                }
            }
            DataType::F64 => {
                let p = (base as *mut f64).offset(off);
                for (i, &v) in src.iter().enumerate() {
                    p.offset(i as isize * stride).write_unaligned(v as f64);
                }
            }
            DataType::I32 => {
                let p = (base as *mut i32).offset(off);
                let mut bytes = [0u8; 4];
                for (i, &v) in src.iter().enumerate() {
                    // Four bytes always fit: the write cannot fail.
                    let _ = dt.write_f64(v as f64, &mut bytes);
                    p.offset(i as isize * stride)
                        .write_unaligned(i32::from_ne_bytes(bytes));
                }
            }
            DataType::Boolean | DataType::I8 | DataType::Fp8E4m3 | DataType::Fp8E5m2 => {
                let p = base.offset(off);
                let mut byte = [0u8; 1];
                for (i, &v) in src.iter().enumerate() {
                    let _ = dt.write_f64(v as f64, &mut byte);
                    p.offset(i as isize * stride).write(byte[0]);
                }
            }
        }
    }
}

/// Reads one element of type `dt` at element offset `off` from `base`.
///
/// # Safety
/// The element lies inside the allocation `base` points into.
#[inline]
pub(crate) unsafe fn load_one(base: *const u8, dt: DataType, off: isize) -> f32 {
    let mut v = [0f32];
    // SAFETY: forwarded contract, one element.
    unsafe { load(base, dt, off, 0, &mut v) };
    v[0]
}

/// Reads elements at arbitrary element offsets `base_off + offsets[i]`.
///
/// # Safety
/// Every addressed element lies inside the allocation `base` points into.
#[inline]
pub(crate) unsafe fn gather(
    base: *const u8,
    dt: DataType,
    base_off: isize,
    offsets: &[isize],
    out: &mut [f32],
) {
    for (o, &off) in out.iter_mut().zip(offsets) {
        // SAFETY: forwarded contract.
        *o = unsafe { load_one(base, dt, base_off + off) };
    }
}

/// Writes elements at arbitrary element offsets `base_off + offsets[i]`.
///
/// # Safety
/// As for [`store`].
#[inline]
pub(crate) unsafe fn scatter(
    base: *mut u8,
    dt: DataType,
    base_off: isize,
    offsets: &[isize],
    src: &[f32],
) {
    for (&v, &off) in src.iter().zip(offsets) {
        // SAFETY: forwarded contract.
        unsafe { store(base, dt, base_off + off, 0, std::slice::from_ref(&v)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_with_strides() {
        for dt in DataType::ALL {
            let mut buf = vec![0u8; 64 * 8];
            let src = [1.5f32, -2.0, 0.25, 3.0];
            // SAFETY: offsets 1, 4, 7, 10 lie inside 64 elements of any type.
            unsafe {
                store(buf.as_mut_ptr(), dt, 1, 3, &src);
                let want = src.map(|v| dt.round_trip(v as f64) as f32);
                let mut out = [0f32; 4];
                load(buf.as_ptr(), dt, 1, 3, &mut out);
                assert_eq!(out, want, "{dt}");
                assert_eq!(load_one(buf.as_ptr(), dt, 4), want[1]);
                let mut g = [0f32; 2];
                gather(buf.as_ptr(), dt, 1, &[9, 0], &mut g);
                assert_eq!(g, [want[3], want[0]]);
            }
        }
    }
}
