//! NVRTC: CUDA C to a cubin for one exact architecture (and optionally PTX beside it), through
//! cudarc's `sys` layer (its safe API returns PTX only), with the on-disk kernel cache.

use crate::codegen::HEADERS;
use crate::{availability, kernel_cache};
use cudarc::nvrtc::sys;
use std::cell::Cell;
use std::ffi::{c_char, CString};
use std::path::PathBuf;

thread_local! {
    static COMPILES: Cell<u64> = const { Cell::new(0) };
}

/// NVRTC compilations run on this thread (cache hits and plan loads run none). Per thread, so
/// that a test asserting "this load compiled nothing" is not disturbed by another test's build
/// on another thread; the provider compiles on the calling thread.
pub fn compile_count() -> u64 {
    COMPILES.with(Cell::get)
}

/// The folder given to NVRTC for `cuda_fp16.h`, `cuda_bf16.h` and `mma.h`:
/// `$KILN_CUDA_INCLUDE_DIR`, else `$CUDA_PATH/include`, else `/usr/local/cuda/include`.
pub fn include_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("KILN_CUDA_INCLUDE_DIR").map(PathBuf::from),
        std::env::var_os("CUDA_PATH").map(|p| PathBuf::from(p).join("include")),
        Some(PathBuf::from("/usr/local/cuda/include")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("cuda_fp16.h").is_file())
}

/// What NVRTC compiles for: `sm_<arch>`, or the architecture-specific `sm_<arch>a` (whose
/// code, wgmma and setmaxnreg among it, runs on that exact compute capability only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub arch: u32,
    pub specific: bool,
}

impl From<u32> for Target {
    fn from(arch: u32) -> Target {
        Target {
            arch,
            specific: false,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sm_{}{}",
            self.arch,
            if self.specific { "a" } else { "" }
        )
    }
}

/// A compiled code object.
pub struct Compiled {
    pub cubin: Vec<u8>,
    pub ptx: Vec<u8>,
}

fn check(st: sys::nvrtcResult, what: &str) -> Result<(), String> {
    if st == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(format!("NVRTC {what} failed: {st:?}"))
    }
}

/// The NVRTC options of a compilation for `sm_<arch>` with headers from `include` (and from its
/// `cccl` folder, where CUDA 13 keeps the C++ library that `cooperative_groups.h` includes).
fn options(target: Target, include: &std::path::Path) -> [String; 5] {
    [
        format!("--gpu-architecture={target}"),
        "--std=c++17".to_string(),
        "-default-device".to_string(),
        format!("-I{}", include.display()),
        format!("-I{}", include.join("cccl").display()),
    ]
}

/// Compiles `source` for `sm_<arch>`; with `with_ptx` the PTX is kept too. `source` may include
/// the kernel headers ([`crate::codegen::HEADERS`]) by name. Uses the kernel cache, whose key
/// covers the source, the headers' contents, the options, the NVRTC version and the arch.
/// Refuses when NVRTC is unavailable or the source does not compile (with NVRTC's log).
pub fn compile(
    source: &str,
    name: &str,
    target: impl Into<Target>,
    with_ptx: bool,
) -> Result<Compiled, String> {
    let target = target.into();
    let version = availability::nvrtc().map_err(|e| format!("CUDA engine not available: {e}"))?;
    let include = include_dir().ok_or(NO_INCLUDE_DIR)?;
    let options = options(target, &include);
    // The options name the exact target (sm_90 or sm_90a), so the key tells the two apart.
    let key = kernel_cache::key(source, &HEADERS, &options[..3], version, target.arch);
    if let Some((cubin, ptx)) = kernel_cache::get(&key) {
        if !cubin.is_empty() && (!with_ptx || !ptx.is_empty()) {
            return Ok(Compiled { cubin, ptx });
        }
    }
    let c = compile_uncached(source, name, target, with_ptx)?;
    kernel_cache::put(&key, &c.cubin, &c.ptx);
    Ok(c)
}

const NO_INCLUDE_DIR: &str = "CUDA engine not available: no CUDA include folder with cuda_fp16.h; \
     set KILN_CUDA_INCLUDE_DIR (scripts/install-nvrtc.sh prints it)";

/// [`compile`] without the kernel cache: always runs NVRTC (tests use it to prove a source
/// compiles).
pub fn compile_uncached(
    source: &str,
    name: &str,
    target: impl Into<Target>,
    with_ptx: bool,
) -> Result<Compiled, String> {
    let target = target.into();
    availability::nvrtc().map_err(|e| format!("CUDA engine not available: {e}"))?;
    let include = include_dir().ok_or(NO_INCLUDE_DIR)?;
    let options = options(target, &include);
    let src =
        CString::new(source).map_err(|_| "the generated source holds a NUL byte".to_string())?;
    let cname = CString::new(name).map_err(|_| "the kernel name holds a NUL byte".to_string())?;
    let header_names: Vec<CString> = HEADERS
        .iter()
        .map(|(n, _)| CString::new(*n))
        .collect::<Result<_, _>>()
        .map_err(|_| "a kernel header name holds a NUL byte".to_string())?;
    let header_texts: Vec<CString> = HEADERS
        .iter()
        .map(|(_, t)| CString::new(*t))
        .collect::<Result<_, _>>()
        .map_err(|_| "a kernel header holds a NUL byte".to_string())?;
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|h| h.as_ptr()).collect();
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|h| h.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: NVRTC is present (checked above); the source, name and both header arrays
    // (HEADERS.len() NUL-terminated strings each) outlive the call, which copies them.
    check(
        unsafe {
            sys::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                HEADERS.len() as i32,
                text_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
            )
        },
        "create program",
    )?;
    let result = (|| {
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(o.as_str()).unwrap_or_default())
            .collect();
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        COMPILES.with(|c| c.set(c.get() + 1));
        // SAFETY: prog is live; ptrs point to NUL-terminated options alive for the call.
        let st = unsafe { sys::nvrtcCompileProgram(prog, ptrs.len() as i32, ptrs.as_ptr()) };
        if st != sys::nvrtcResult::NVRTC_SUCCESS {
            let mut n = 0usize;
            // SAFETY: prog is live; the log is copied into a buffer of the size NVRTC gives.
            let log = unsafe {
                let _ = sys::nvrtcGetProgramLogSize(prog, &mut n);
                let mut buf = vec![0u8; n.max(1)];
                let _ = sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char);
                String::from_utf8_lossy(&buf)
                    .trim_end_matches('\0')
                    .to_string()
            };
            return Err(format!(
                "NVRTC could not compile {name} for {target}: {st:?}\n{log}"
            ));
        }
        let mut n = 0usize;
        // SAFETY: prog compiled; the cubin is copied into a buffer of its reported size.
        check(
            unsafe { sys::nvrtcGetCUBINSize(prog, &mut n) },
            "cubin size",
        )?;
        let mut cubin = vec![0u8; n];
        // SAFETY: as above.
        check(
            unsafe { sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char) },
            "get cubin",
        )?;
        let mut ptx = Vec::new();
        if with_ptx {
            let mut n = 0usize;
            // SAFETY: prog compiled; the PTX is copied into a buffer of its reported size.
            check(unsafe { sys::nvrtcGetPTXSize(prog, &mut n) }, "PTX size")?;
            ptx = vec![0u8; n];
            // SAFETY: as above.
            check(
                unsafe { sys::nvrtcGetPTX(prog, ptx.as_mut_ptr() as *mut c_char) },
                "get PTX",
            )?;
        }
        Ok(Compiled { cubin, ptx })
    })();
    // SAFETY: prog was created above and is destroyed once.
    unsafe { sys::nvrtcDestroyProgram(&mut prog) };
    let c = result?;
    if c.cubin.is_empty() {
        return Err(format!("NVRTC returned an empty cubin for {name}"));
    }
    Ok(c)
}
