//! The CUDA provider's saved-plan payload (format 2.0). Every byte is documented in
//! docs/engines/cuda.md.
//!
//! Header (48 bytes, little-endian): marker `KCUD`, format major (u16, 2), minor (u16, 0), kind
//! (u16, 1 = execution context), header size (u16, 48), reserved u32 (0), SHA-256 of the body.
//! Body: a `kiln.cuda.CudaPayload` FlatBuffer (`schemas/cuda_payload.fbs`) whose cubins start
//! 16-byte aligned relative to the body (and so to the payload, whose header is 48 bytes).
//!
//! Digests: every byte is hashed once on load. The header's SHA-256 covers the whole body, code
//! objects included, so one flipped byte anywhere in the body is refused by it. Each code object
//! also carries the SHA-256 of its cubin, computed at build from NVRTC's output; it identifies
//! the code object and is not recomputed on load, since the body digest covers the same bytes.
//!
//! [`decode`] runs the checks that need no device, in the documented order: header length,
//! marker, format version, kind, header size, body digest, FlatBuffer verification (every
//! offset followed is bounds-checked by planus), values (counts, sizes, digests' lengths, cubin
//! alignment, launch geometry, indexes, data types). Damaged bytes are `INVALID_VALUE`
//! ("damaged: ..."); a valid payload this reader cannot use (another major, a newer minor,
//! another kind) is `NOT_APPLICABLE`, naming both sides.

pub use crate::codegen::TensorMapRecipe;
use crate::generated::fb;
use kiln_core::DataType;
use kiln_plugin_sdk::{PayloadFormat, PluginError, PluginResult};
use planus::{Builder, Offset, ReadAsRoot};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::mem::MaybeUninit;

/// The payload's first four bytes.
pub const MARKER: [u8; 4] = *b"KCUD";
/// The format major this provider writes and reads (2: FlatBuffer body).
pub const FORMAT_MAJOR: u16 = 2;
/// The newest format minor this provider reads. It writes minor 1 only for a payload that uses
/// a minor-1 field (tensor maps, persistent grids, arch-specific code objects), minor 2 only
/// for one with a workspace argument, and minor 3 only for one with a cooperative launch, so
/// plans of the older engines keep the bytes (and the readers) of their minor.
pub const FORMAT_MINOR: u16 = 3;
/// Payload kind: a saved execution context.
pub const KIND_EXECUTION_CONTEXT: u16 = 1;
/// Header bytes in front of the body.
pub const HEADER_SIZE: usize = kiln_plugin_sdk::PAYLOAD_HEADER_SIZE;

/// The header this provider writes and accepts (the SDK checks it).
const FORMAT: PayloadFormat = PayloadFormat {
    owner: "kiln-cuda",
    marker: MARKER,
    major: FORMAT_MAJOR,
    minor: FORMAT_MINOR,
    kind: KIND_EXECUTION_CONTEXT,
};
/// Alignment of each cubin inside the body (and the payload).
pub const CODE_ALIGN: usize = 16;

/// At most this many tensors, code objects, launches, or arguments of one launch.
const MAX_ITEMS: usize = 4096;

/// A bound tensor of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSig {
    pub uid: i64,
    pub data_type: DataType,
    pub storage_bytes: u64,
}

/// A compiled code object; borrowed from the loaded bytes when decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeObject<'a> {
    /// The SM number the cubin was compiled for.
    pub arch: u32,
    /// SHA-256 of `cubin`.
    pub sha256: [u8; 32],
    pub cubin: Cow<'a, [u8]>,
    /// PTX (NUL-terminated) for newer architectures; empty when absent.
    pub ptx: Cow<'a, [u8]>,
    /// Compiled for the architecture-specific target (`sm_<arch>a`): runs on `arch` only.
    pub arch_specific: bool,
}

impl CodeObject<'static> {
    /// A code object owning `cubin` and `ptx`, with the cubin's SHA-256 computed here.
    pub fn new(arch: u32, cubin: Vec<u8>, ptx: Vec<u8>) -> CodeObject<'static> {
        CodeObject {
            arch,
            sha256: Sha256::digest(&cubin).into(),
            cubin: Cow::Owned(cubin),
            ptx: Cow::Owned(ptx),
            arch_specific: false,
        }
    }
}

impl CodeObject<'_> {
    /// The target name: `sm_90`, or `sm_90a` for an arch-specific code object.
    pub fn target(&self) -> String {
        format!(
            "sm_{}{}",
            self.arch,
            if self.arch_specific { "a" } else { "" }
        )
    }
}

/// One kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Argument {
    /// The device pointer bound to this tensor UID.
    Tensor(i64),
    /// A 4-byte value passed by value.
    Scalar32(u32),
    /// An 8-byte value passed by value.
    Scalar64(u64),
    /// Tensor map `n` of the launch's `tensor_maps`, encoded over its tensor's bound pointer.
    TensorMap(u32),
    /// (minor 2) The workspace's device pointer plus this many bytes (less than the plan's
    /// workspace size).
    Workspace(u64),
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub code_object: u32,
    pub symbol: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    /// The kernel's parameters, in order.
    pub args: Vec<Argument>,
    /// The recipes of the tensor maps that `TensorMap` arguments name.
    pub tensor_maps: Vec<TensorMapRecipe>,
    /// `grid[0]` is an upper bound, capped at the load device's multiprocessor count.
    pub persistent: bool,
    /// Launched cooperatively; `grid[0]` is an upper bound, capped at the blocks the load device
    /// holds at once.
    pub cooperative: bool,
}

/// What a CUDA plan holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload<'a> {
    pub engine_name: String,
    pub provider_version: String,
    pub nvrtc_version: (u32, u32),
    pub workspace: u64,
    pub tensors: Vec<TensorSig>,
    pub code_objects: Vec<CodeObject<'a>>,
    pub launches: Vec<Launch>,
}

/// Writes `data` as a `[ubyte]` vector whose first data byte lies [`CODE_ALIGN`]-aligned
/// relative to the start of the finished FlatBuffer.
///
/// planus builds back to front and aligns each write relative to the end of the buffer, whose
/// final length it pads to the largest alignment requested; so data written with a 16-byte
/// request lands at a multiple of 16 from the start. The 4-byte length prefix goes right in
/// front (a 16-aligned position is 4-aligned, so no padding comes between). Data longer than
/// the format's 32-bit lengths allow is cut; such a payload is beyond FlatBuffers' 2 GiB limit.
fn create_aligned_bytes(builder: &mut Builder, data: &[u8]) -> Offset<[u8]> {
    let data = &data[..data.len().min(u32::MAX as usize - CODE_ALIGN)];
    let len = data.len() as u32;
    // SAFETY: `write_with` requires every byte of the `data.len()`-byte slice it hands out to be
    // initialised; it is filled completely from `data`.
    unsafe {
        builder.write_with(data.len(), CODE_ALIGN - 1, |_, out| {
            for (dst, &src) in out.iter_mut().zip(data) {
                *dst = MaybeUninit::new(src);
            }
        });
    }
    // SAFETY: as above; the 4-byte slice is filled with the little-endian length.
    unsafe {
        builder.write_with(4, 3, |_, out| {
            for (dst, src) in out.iter_mut().zip(len.to_le_bytes()) {
                *dst = MaybeUninit::new(src);
            }
        });
    }
    builder.current_offset()
}

fn dim3(v: [u32; 3]) -> fb::Dim3 {
    fb::Dim3 {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

/// Encodes a payload: the 48-byte header, then the FlatBuffer body. Deterministic (the same
/// payload gives the same bytes); refuses nothing.
pub fn encode(p: &Payload<'_>) -> Vec<u8> {
    let mut b = Builder::new();
    // Code bytes first: they end up at the end of the body, each cubin 16-byte aligned.
    let cubins: Vec<_> = p
        .code_objects
        .iter()
        .map(|c| create_aligned_bytes(&mut b, &c.cubin))
        .collect();
    let code_objects: Vec<_> = p
        .code_objects
        .iter()
        .zip(cubins)
        .map(|(c, cubin)| {
            let ptx = (!c.ptx.is_empty()).then(|| b.create_vector(&c.ptx[..]));
            let sha = b.create_vector(&c.sha256[..]);
            fb::CodeObject::create(&mut b, c.arch, sha, cubin, ptx, c.arch_specific)
        })
        .collect();
    let code_objects = b.create_vector(code_objects.as_slice());
    let tensors: Vec<_> = p
        .tensors
        .iter()
        .map(|t| fb::Tensor::create(&mut b, t.uid, t.data_type.code(), t.storage_bytes))
        .collect();
    let tensors = b.create_vector(tensors.as_slice());
    let launches: Vec<_> = p
        .launches
        .iter()
        .map(|l| {
            let args: Vec<_> = l
                .args
                .iter()
                .map(|a| {
                    let (kind, uid, bits) = match *a {
                        Argument::Tensor(uid) => (fb::ArgumentKind::TensorPointer, uid, 0),
                        Argument::Scalar32(v) => (fb::ArgumentKind::Scalar32, 0, v as u64),
                        Argument::Scalar64(v) => (fb::ArgumentKind::Scalar64, 0, v),
                        Argument::TensorMap(n) => (fb::ArgumentKind::TensorMap, 0, u64::from(n)),
                        Argument::Workspace(at) => (fb::ArgumentKind::Workspace, 0, at),
                    };
                    fb::Argument::create(&mut b, kind, uid, bits)
                })
                .collect();
            let args = b.create_vector(args.as_slice());
            let maps: Vec<_> = l
                .tensor_maps
                .iter()
                .map(|m| {
                    let dims = b.create_vector(m.dims.as_slice());
                    let strides = b.create_vector(m.strides.as_slice());
                    let boxes = b.create_vector(m.box_dims.as_slice());
                    fb::TensorMap::create(&mut b, m.uid, m.data_type.code(), dims, strides, boxes)
                })
                .collect();
            let maps = (!maps.is_empty()).then(|| b.create_vector(maps.as_slice()));
            let symbol = b.create_string(l.symbol.as_str());
            fb::Launch::create(
                &mut b,
                l.code_object,
                symbol,
                dim3(l.grid),
                dim3(l.block),
                l.shared_bytes,
                args,
                maps,
                l.persistent,
                l.cooperative,
            )
        })
        .collect();
    let launches = b.create_vector(launches.as_slice());
    let engine_name = b.create_string(p.engine_name.as_str());
    let provider_version = b.create_string(p.provider_version.as_str());
    let root = fb::CudaPayload::create(
        &mut b,
        engine_name,
        provider_version,
        p.nvrtc_version.0,
        p.nvrtc_version.1,
        p.workspace,
        tensors,
        code_objects,
        launches,
    );
    let body = b.finish(root, None);
    let minor_1 = p.code_objects.iter().any(|c| c.arch_specific)
        || p.launches
            .iter()
            .any(|l| l.persistent || !l.tensor_maps.is_empty());
    let minor_2 = p
        .launches
        .iter()
        .any(|l| l.args.iter().any(|a| matches!(a, Argument::Workspace(_))));
    let minor_3 = p.launches.iter().any(|l| l.cooperative);
    PayloadFormat {
        minor: if minor_3 {
            3
        } else if minor_2 {
            2
        } else {
            u16::from(minor_1)
        },
        ..FORMAT
    }
    .wrap(body)
}

/// `INVALID_VALUE` "kiln-cuda payload damaged: ...".
pub fn damaged(what: impl std::fmt::Display) -> PluginError {
    FORMAT.damaged(what)
}

/// Checks the header (steps 1 to 6: length, marker, format version, kind, header size, body
/// digest; `kiln_plugin_sdk::PayloadFormat`) and returns the body.
fn check_header(bytes: &[u8]) -> PluginResult<&[u8]> {
    FORMAT.unwrap(bytes)
}

/// Step 7: reads every field through planus's verifying accessors. Any offset out of bounds, a
/// string that is not UTF-8, an unknown argument kind or a missing required table is refused.
fn read_body(body: &[u8]) -> PluginResult<Payload<'_>> {
    let bad =
        |what: &str, e: planus::Error| damaged(format!("FlatBuffer verification: {what}: {e}"));
    let root = fb::CudaPayloadRef::read_as_root(body).map_err(|e| bad("root", e))?;
    let engine_name = root
        .engine_name()
        .map_err(|e| bad("engine name", e))?
        .unwrap_or("");
    let provider_version = root
        .provider_version()
        .map_err(|e| bad("provider version", e))?
        .unwrap_or("");
    let nvrtc_version = (
        root.nvrtc_major().map_err(|e| bad("NVRTC major", e))?,
        root.nvrtc_minor().map_err(|e| bad("NVRTC minor", e))?,
    );
    let workspace = root
        .workspace_size()
        .map_err(|e| bad("workspace size", e))?;
    let count = |n: usize, what: &str| {
        if n > MAX_ITEMS {
            Err(damaged(format!("{what} is {n} (at most {MAX_ITEMS})")))
        } else {
            Ok(n)
        }
    };

    let mut tensors = Vec::new();
    if let Some(v) = root.tensors().map_err(|e| bad("tensors", e))? {
        count(v.len(), "tensor count")?;
        for (i, t) in v.iter().enumerate() {
            let what = format!("tensor {i}");
            let t = t.map_err(|e| bad(&what, e))?;
            let code = t.data_type().map_err(|e| bad(&what, e))?;
            let data_type = DataType::from_code(code)
                .ok_or_else(|| damaged(format!("tensor {i} has data type code {code}")))?;
            tensors.push(TensorSig {
                uid: t.uid().map_err(|e| bad(&what, e))?,
                data_type,
                storage_bytes: t.storage_bytes().map_err(|e| bad(&what, e))?,
            });
        }
    }

    let mut code_objects = Vec::new();
    if let Some(v) = root.code_objects().map_err(|e| bad("code objects", e))? {
        count(v.len(), "code object count")?;
        for (i, c) in v.iter().enumerate() {
            let what = format!("code object {i}");
            let c = c.map_err(|e| bad(&what, e))?;
            let sha = c.sha256().map_err(|e| bad(&what, e))?.unwrap_or(&[]);
            let sha256: [u8; 32] = sha.try_into().map_err(|_| {
                damaged(format!("code object {i} has a {}-byte SHA-256", sha.len()))
            })?;
            code_objects.push(CodeObject {
                arch: c.target_arch().map_err(|e| bad(&what, e))?,
                sha256,
                cubin: Cow::Borrowed(c.cubin().map_err(|e| bad(&what, e))?.unwrap_or(&[])),
                ptx: Cow::Borrowed(c.ptx().map_err(|e| bad(&what, e))?.unwrap_or(&[])),
                arch_specific: c.arch_specific().map_err(|e| bad(&what, e))?,
            });
        }
    }

    let mut launches = Vec::new();
    if let Some(v) = root.launches().map_err(|e| bad("launches", e))? {
        count(v.len(), "launch count")?;
        for (i, l) in v.iter().enumerate() {
            let what = format!("launch {i}");
            let l = l.map_err(|e| bad(&what, e))?;
            let geometry = |d: Option<fb::Dim3Ref<'_>>, which: &str| {
                d.map(|d| [d.x(), d.y(), d.z()])
                    .ok_or_else(|| damaged(format!("launch {i} has no {which}")))
            };
            let grid = geometry(l.grid().map_err(|e| bad(&what, e))?, "grid")?;
            let block = geometry(l.block().map_err(|e| bad(&what, e))?, "block")?;
            let mut args = Vec::new();
            if let Some(a) = l.arguments().map_err(|e| bad(&what, e))? {
                count(a.len(), &format!("launch {i} argument count"))?;
                for (j, arg) in a.iter().enumerate() {
                    let what = format!("launch {i} argument {j}");
                    let arg = arg.map_err(|e| bad(&what, e))?;
                    let bits = arg.scalar_bits().map_err(|e| bad(&what, e))?;
                    args.push(match arg.kind().map_err(|e| bad(&what, e))? {
                        fb::ArgumentKind::TensorPointer => {
                            Argument::Tensor(arg.tensor_uid().map_err(|e| bad(&what, e))?)
                        }
                        fb::ArgumentKind::Scalar32 => {
                            let v = u32::try_from(bits).map_err(|_| {
                                damaged(format!("{what}: 4-byte scalar with bits {bits:#x}"))
                            })?;
                            Argument::Scalar32(v)
                        }
                        fb::ArgumentKind::Scalar64 => Argument::Scalar64(bits),
                        fb::ArgumentKind::TensorMap => {
                            let n = u32::try_from(bits).map_err(|_| {
                                damaged(format!("{what}: tensor map index {bits:#x}"))
                            })?;
                            Argument::TensorMap(n)
                        }
                        fb::ArgumentKind::Workspace => Argument::Workspace(bits),
                    });
                }
            }
            let mut tensor_maps = Vec::new();
            if let Some(v) = l.tensor_maps().map_err(|e| bad(&what, e))? {
                count(v.len(), &format!("launch {i} tensor map count"))?;
                for (j, m) in v.iter().enumerate() {
                    let what = format!("launch {i} tensor map {j}");
                    let m = m.map_err(|e| bad(&what, e))?;
                    let code = m.data_type().map_err(|e| bad(&what, e))?;
                    let data_type = DataType::from_code(code)
                        .ok_or_else(|| damaged(format!("{what} has data type code {code}")))?;
                    let list64 = |v: Option<planus::Vector<'_, u64>>| {
                        v.map(|v| v.iter().collect::<Vec<u64>>())
                            .unwrap_or_default()
                    };
                    tensor_maps.push(TensorMapRecipe {
                        uid: m.tensor_uid().map_err(|e| bad(&what, e))?,
                        data_type,
                        dims: list64(m.dims().map_err(|e| bad(&what, e))?),
                        strides: list64(m.strides().map_err(|e| bad(&what, e))?),
                        box_dims: m
                            .box_dims()
                            .map_err(|e| bad(&what, e))?
                            .map(|v| v.iter().collect())
                            .unwrap_or_default(),
                    });
                }
            }
            launches.push(Launch {
                code_object: l.code_object().map_err(|e| bad(&what, e))?,
                symbol: l
                    .symbol()
                    .map_err(|e| bad(&what, e))?
                    .unwrap_or("")
                    .to_string(),
                grid,
                block,
                shared_bytes: l.shared_memory_bytes().map_err(|e| bad(&what, e))?,
                args,
                tensor_maps,
                persistent: l.persistent_grid().map_err(|e| bad(&what, e))?,
                cooperative: l.cooperative().map_err(|e| bad(&what, e))?,
            });
        }
    }
    Ok(Payload {
        engine_name: engine_name.to_string(),
        provider_version: provider_version.to_string(),
        nvrtc_version,
        workspace,
        tensors,
        code_objects,
        launches,
    })
}

/// Step 8: the values of a verified body.
fn check_values(p: &Payload<'_>, body: &[u8]) -> PluginResult<()> {
    if p.engine_name.is_empty() {
        return Err(damaged("the engine name is empty"));
    }
    if p.launches.is_empty() || p.code_objects.is_empty() {
        return Err(damaged(
            "a plan needs at least one code object and one launch",
        ));
    }
    for (i, c) in p.code_objects.iter().enumerate() {
        if c.cubin.is_empty() {
            return Err(damaged(format!("code object {i} has an empty cubin")));
        }
        let at = (c.cubin.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        if !at.is_multiple_of(CODE_ALIGN) {
            return Err(damaged(format!(
                "code object {i}: its cubin starts at body offset {at}, not {CODE_ALIGN}-byte aligned"
            )));
        }
        if !c.ptx.is_empty() && c.ptx.last() != Some(&0) {
            return Err(damaged(format!(
                "code object {i}: its PTX is not NUL-terminated"
            )));
        }
    }
    for (i, t) in p.tensors.iter().enumerate() {
        if p.tensors[..i].iter().any(|o| o.uid == t.uid) {
            return Err(damaged(format!("tensor uid {} is listed twice", t.uid)));
        }
    }
    for (i, l) in p.launches.iter().enumerate() {
        if l.code_object as usize >= p.code_objects.len() {
            return Err(damaged(format!(
                "launch {i} names code object {} of {}",
                l.code_object,
                p.code_objects.len()
            )));
        }
        if l.grid.contains(&0)
            || l.block.contains(&0)
            || l.block.iter().map(|&b| b as u64).product::<u64>() > 1024
        {
            return Err(damaged(format!(
                "launch {i} has grid {:?} and block {:?}",
                l.grid, l.block
            )));
        }
        if l.symbol.is_empty() || l.symbol.contains('\0') {
            return Err(damaged(format!("launch {i} has symbol {:?}", l.symbol)));
        }
        for (j, a) in l.args.iter().enumerate() {
            if let Argument::TensorMap(n) = a {
                if *n as usize >= l.tensor_maps.len() {
                    return Err(damaged(format!(
                        "launch {i} argument {j} names tensor map {n} of {}",
                        l.tensor_maps.len()
                    )));
                }
            }
            if let Argument::Workspace(at) = a {
                if *at >= p.workspace {
                    return Err(damaged(format!(
                        "launch {i} argument {j} points {at} bytes into a workspace of {}",
                        p.workspace
                    )));
                }
            }
        }
        for (j, m) in l.tensor_maps.iter().enumerate() {
            let t = p.tensors.iter().find(|t| t.uid == m.uid).ok_or_else(|| {
                damaged(format!(
                    "launch {i} tensor map {j} names tensor uid {}, which the plan does not list",
                    m.uid
                ))
            })?;
            crate::tensor_map::check_recipe(m, t.storage_bytes)
                .map_err(|e| damaged(format!("launch {i} tensor map {j}: {e}")))?;
        }
    }
    Ok(())
}

/// Decodes and checks a payload (the device-independent load checks 1 to 8, in the documented
/// order). The code objects borrow from `bytes`; nothing large is copied.
pub fn decode(bytes: &[u8]) -> PluginResult<Payload<'_>> {
    let body = check_header(bytes)?;
    let p = read_body(body)?;
    check_values(&p, body)?;
    Ok(p)
}

/// A description of a payload for people (`kiln inspect`), without a device: its format version,
/// engine, the provider and NVRTC versions that built it, each code object (target arch, cubin
/// size and SHA-256, PTX), each launch and the tensors it binds. Checks the payload as [`decode`]
/// does (steps 1 to 8), so damaged bytes are `INVALID_VALUE` and a newer format `NOT_APPLICABLE`.
/// `has_engine` says whether this provider has an engine of that name; `envelope_engine_id` is the
/// engine the plan envelope names.
pub fn describe(
    bytes: &[u8],
    envelope_engine_id: u64,
    has_engine: impl Fn(&str) -> bool,
) -> PluginResult<String> {
    let p = decode(bytes)?;
    // decode checked the header, so the minor is there.
    let minor = u16::from_le_bytes([bytes[6], bytes[7]]);
    let mut lines = vec![format!(
        "format      {} payload {FORMAT_MAJOR}.{minor}, {} bytes",
        FORMAT.owner,
        bytes.len()
    )];
    lines.push(if has_engine(&p.engine_name) {
        format!("engine      {}", p.engine_name)
    } else {
        format!(
            "engine      {}, which this provider does not have (it cannot restore the plan)",
            p.engine_name
        )
    });
    if kiln_core::engine_id(&p.engine_name) != envelope_engine_id {
        lines.push(format!(
            "mismatch    the plan envelope names engine {envelope_engine_id:#018x}: restore \
             refuses the payload as damaged"
        ));
    }
    lines.push(format!(
        "built by    {} {} with NVRTC {}.{}",
        FORMAT.owner, p.provider_version, p.nvrtc_version.0, p.nvrtc_version.1
    ));
    lines.push(format!("workspace   {} bytes", p.workspace));
    let mut archs: Vec<String> = Vec::new();
    for (i, c) in p.code_objects.iter().enumerate() {
        let sha: String = c.sha256.iter().map(|b| format!("{b:02x}")).collect();
        let ptx = if c.arch_specific {
            format!(
                "arch-specific (loads on compute capability {}.{} only)",
                c.arch / 10,
                c.arch % 10
            )
        } else if c.ptx.is_empty() {
            format!("no PTX (loads on sm_{} only)", c.arch)
        } else {
            format!("PTX {} bytes (also loads on newer archs)", c.ptx.len())
        };
        lines.push(format!(
            "code object {i}: {} cubin {} bytes sha256 {sha}; {ptx}",
            c.target(),
            c.cubin.len()
        ));
        let arch = if c.ptx.is_empty() || c.arch_specific {
            c.target()
        } else {
            format!("sm_{} and newer", c.arch)
        };
        if !archs.contains(&arch) {
            archs.push(arch);
        }
    }
    lines.push(format!("loads on    {}", archs.join(" + ")));
    for (i, l) in p.launches.iter().enumerate() {
        let args: Vec<String> = l
            .args
            .iter()
            .map(|a| match a {
                Argument::Tensor(uid) => format!("tensor uid {uid}"),
                Argument::Scalar32(v) => format!("u32 {v:#x}"),
                Argument::Scalar64(v) => format!("u64 {v:#x}"),
                Argument::Workspace(at) => format!("workspace + {at}"),
                Argument::TensorMap(n) => match l.tensor_maps.get(*n as usize) {
                    Some(m) => format!(
                        "tensor map over uid {} dims {:?} box {:?}",
                        m.uid, m.dims, m.box_dims
                    ),
                    None => format!("tensor map {n}"),
                },
            })
            .collect();
        let grid = if l.persistent {
            format!("{:?} (x at most the device's SM count)", l.grid)
        } else if l.cooperative {
            format!(
                "{:?} (cooperative; x at most the blocks the device holds at once)",
                l.grid
            )
        } else {
            format!("{:?}", l.grid)
        };
        lines.push(format!(
            "launch {i}    {} (code object {}) grid {grid} block {:?} shared memory {} bytes; \
             arguments: {}",
            l.symbol,
            l.code_object,
            l.block,
            l.shared_bytes,
            args.join(", ")
        ));
    }
    for t in &p.tensors {
        lines.push(format!(
            "bound       tensor uid {} {} {} bytes",
            t.uid, t.data_type, t.storage_bytes
        ));
    }
    lines.push(
        "tiles       not recorded (the payload keeps each launch's grid and block only)"
            .to_string(),
    );
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A payload as a deviceless build for sm_90 makes one, with stand-in code bytes (describing
    /// needs no NVRTC: nothing is compiled or loaded).
    fn payload() -> Payload<'static> {
        Payload {
            engine_name: "KILN_CUDA_POINTWISE_V1".into(),
            provider_version: "9.9.9".into(),
            nvrtc_version: (13, 0),
            workspace: 0,
            tensors: vec![
                TensorSig {
                    uid: 1,
                    data_type: DataType::F32,
                    storage_bytes: 64,
                },
                TensorSig {
                    uid: 2,
                    data_type: DataType::F32,
                    storage_bytes: 64,
                },
            ],
            code_objects: vec![CodeObject::new(90, vec![0xab; 100], Vec::new())],
            launches: vec![Launch {
                code_object: 0,
                symbol: "kiln_pw_test".into(),
                grid: [1, 1, 1],
                block: [128, 1, 1],
                shared_bytes: 0,
                args: vec![
                    Argument::Tensor(1),
                    Argument::Tensor(2),
                    Argument::Scalar32(16),
                ],
                tensor_maps: Vec::new(),
                persistent: false,
                cooperative: false,
            }],
        }
    }

    #[test]
    fn describe_names_archs_code_objects_versions_and_launches() {
        let p = payload();
        let bytes = encode(&p);
        let id = kiln_core::engine_id(&p.engine_name);
        let text = describe(&bytes, id, |n| n == "KILN_CUDA_POINTWISE_V1").expect("described");
        let sha: String = p.code_objects[0]
            .sha256
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        for want in [
            "kiln-cuda payload 2.0",
            "engine      KILN_CUDA_POINTWISE_V1",
            "kiln-cuda 9.9.9 with NVRTC 13.0",
            "code object 0: sm_90 cubin 100 bytes",
            sha.as_str(),
            "no PTX (loads on sm_90 only)",
            "loads on    sm_90",
            "kiln_pw_test (code object 0) grid [1, 1, 1] block [128, 1, 1]",
            "tensor uid 1, tensor uid 2, u32 0x10",
            "bound       tensor uid 2 f32 64 bytes",
        ] {
            assert!(text.contains(want), "lacks {want:?}:\n{text}");
        }
        assert!(!text.contains("mismatch"), "{text}");
        // PTX makes newer archs loadable, and the description says so.
        let mut with_ptx = payload();
        with_ptx.code_objects = vec![CodeObject::new(80, vec![1; 32], b"ptx\0".to_vec())];
        let text = describe(&encode(&with_ptx), id, |_| true).expect("described");
        assert!(text.contains("loads on    sm_80 and newer"), "{text}");
        // An engine this provider lacks, and an envelope naming another engine.
        let text = describe(&bytes, id ^ 1, |_| false).expect("described");
        assert!(text.contains("does not have"), "{text}");
        assert!(text.contains("mismatch"), "{text}");
    }

    #[test]
    fn a_workspace_argument_round_trips_as_minor_2_and_stays_inside_the_workspace() {
        let mut p = payload();
        assert_eq!(u16::from_le_bytes([encode(&p)[6], encode(&p)[7]]), 0);
        p.workspace = 256;
        p.launches[0].args.push(Argument::Workspace(128));
        let bytes = encode(&p);
        assert_eq!(u16::from_le_bytes([bytes[6], bytes[7]]), 2);
        let back = decode(&bytes).expect("decodes");
        assert_eq!(back.launches[0].args, p.launches[0].args);
        assert_eq!(back.workspace, 256);
        assert!(
            describe(&bytes, kiln_core::engine_id(&p.engine_name), |_| true)
                .expect("describes")
                .contains("workspace + 128")
        );
        p.launches[0].args[3] = Argument::Workspace(256);
        let why = decode(&encode(&p)).expect_err("refused").message;
        assert!(why.contains("workspace of 256"), "{why}");
    }

    #[test]
    fn describe_refuses_damaged_and_newer_payloads_as_restore_does() {
        let bytes = encode(&payload());
        let mut damaged = bytes.clone();
        *damaged.last_mut().unwrap() ^= 1;
        let e = describe(&damaged, 0, |_| true).unwrap_err();
        assert_eq!(e.status, kiln_plugin_sdk::KilnPluginStatus::INVALID_VALUE);
        let newer = PayloadFormat {
            minor: FORMAT_MINOR + 1,
            ..FORMAT
        }
        .wrap(&bytes[HEADER_SIZE..]);
        let e = describe(&newer, 0, |_| true).unwrap_err();
        assert_eq!(e.status, kiln_plugin_sdk::KilnPluginStatus::NOT_APPLICABLE);
        let newest = format!("{FORMAT_MAJOR}.{FORMAT_MINOR}");
        assert!(e.message.contains(&newest), "{}", e.message);
    }
}
