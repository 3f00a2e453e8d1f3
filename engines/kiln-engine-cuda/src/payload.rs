//! The CUDA provider's saved-plan payload. Every byte is documented in docs/engines/cuda.md.
//!
//! Header (48 bytes, little-endian): marker `KCUD`, format major (u16, 1), minor (u16, 0), kind
//! (u16, 1 = execution context), header size (u16, 48), reserved u32 0, SHA-256 of the body.
//!
//! Body (little-endian; `str` = u32 length + UTF-8 bytes):
//! engine name (str), provider version (str), NVRTC major and minor (u32 each, diagnostic),
//! workspace bytes (u64), tensors (u32 count; each uid i64, data type code u8, storage bytes
//! u64), code objects (u32 count; each target arch u32, SHA-256 of the cubin, cubin length u64,
//! cubin, PTX length u64, PTX), launches (u32 count; each code object index u32, symbol (str),
//! grid 3×u32, block 3×u32, dynamic shared memory u32, argument count u32, each argument a tag
//! u8 (1 = tensor pointer) and a value i64 (the tensor UID)).
//!
//! [`decode`] runs the checks that need no device, in the documented order: header length,
//! marker, format version, kind, header size, body digest, body structure (every read bounded;
//! trailing bytes refused), values (counts, sizes, launch geometry, indexes, each code object's
//! digest). Damaged bytes are `INVALID_VALUE` ("damaged: ..."); a valid payload this reader
//! cannot use (another major, a newer minor, another kind) is `NOT_APPLICABLE`, naming both
//! sides.

use kiln_core::DataType;
use kiln_plugin_sdk::{PluginError, PluginResult};
use sha2::{Digest, Sha256};

pub const MARKER: [u8; 4] = *b"KCUD";
pub const FORMAT_MAJOR: u16 = 1;
pub const FORMAT_MINOR: u16 = 0;
pub const KIND_EXECUTION_CONTEXT: u16 = 1;
pub const HEADER_SIZE: usize = 48;
/// Argument tag: a tensor's device pointer.
pub const ARG_TENSOR: u8 = 1;

const MAX_ITEMS: u32 = 4096;

/// A bound tensor of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSig {
    pub uid: i64,
    pub data_type: DataType,
    pub storage_bytes: u64,
}

/// A compiled code object.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeObject {
    pub arch: u32,
    pub sha256: [u8; 32],
    pub cubin: Vec<u8>,
    /// PTX (NUL-terminated) for newer architectures; empty when absent.
    pub ptx: Vec<u8>,
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub code_object: u32,
    pub symbol: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    /// Tensor UIDs, in parameter order.
    pub args: Vec<i64>,
}

/// What a CUDA plan holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    pub engine_name: String,
    pub provider_version: String,
    pub nvrtc_version: (u32, u32),
    pub workspace: u64,
    pub tensors: Vec<TensorSig>,
    pub code_objects: Vec<CodeObject>,
    pub launches: Vec<Launch>,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Encodes a payload (deterministic).
pub fn encode(p: &Payload) -> Vec<u8> {
    let mut b = Vec::new();
    put_str(&mut b, &p.engine_name);
    put_str(&mut b, &p.provider_version);
    b.extend_from_slice(&p.nvrtc_version.0.to_le_bytes());
    b.extend_from_slice(&p.nvrtc_version.1.to_le_bytes());
    b.extend_from_slice(&p.workspace.to_le_bytes());
    b.extend_from_slice(&(p.tensors.len() as u32).to_le_bytes());
    for t in &p.tensors {
        b.extend_from_slice(&t.uid.to_le_bytes());
        b.push(t.data_type.code());
        b.extend_from_slice(&t.storage_bytes.to_le_bytes());
    }
    b.extend_from_slice(&(p.code_objects.len() as u32).to_le_bytes());
    for c in &p.code_objects {
        b.extend_from_slice(&c.arch.to_le_bytes());
        b.extend_from_slice(&c.sha256);
        b.extend_from_slice(&(c.cubin.len() as u64).to_le_bytes());
        b.extend_from_slice(&c.cubin);
        b.extend_from_slice(&(c.ptx.len() as u64).to_le_bytes());
        b.extend_from_slice(&c.ptx);
    }
    b.extend_from_slice(&(p.launches.len() as u32).to_le_bytes());
    for l in &p.launches {
        b.extend_from_slice(&l.code_object.to_le_bytes());
        put_str(&mut b, &l.symbol);
        for v in l.grid.iter().chain(&l.block) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&l.shared_bytes.to_le_bytes());
        b.extend_from_slice(&(l.args.len() as u32).to_le_bytes());
        for a in &l.args {
            b.push(ARG_TENSOR);
            b.extend_from_slice(&a.to_le_bytes());
        }
    }
    let mut out = Vec::with_capacity(HEADER_SIZE + b.len());
    out.extend_from_slice(&MARKER);
    out.extend_from_slice(&FORMAT_MAJOR.to_le_bytes());
    out.extend_from_slice(&FORMAT_MINOR.to_le_bytes());
    out.extend_from_slice(&KIND_EXECUTION_CONTEXT.to_le_bytes());
    out.extend_from_slice(&(HEADER_SIZE as u16).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&b));
    out.extend_from_slice(&b);
    out
}

/// `INVALID_VALUE` "kiln-cuda payload damaged: ...".
pub fn damaged(what: impl std::fmt::Display) -> PluginError {
    PluginError::invalid_value(format!("kiln-cuda payload damaged: {what}"))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> PluginResult<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                damaged(format!(
                    "{what} needs {n} bytes at body offset {} but the body has {}",
                    self.at,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self, what: &str) -> PluginResult<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u8(&mut self, what: &str) -> PluginResult<u8> {
        Ok(self.arr::<1>(what)?[0])
    }
    fn u32(&mut self, what: &str) -> PluginResult<u32> {
        Ok(u32::from_le_bytes(self.arr(what)?))
    }
    fn u64(&mut self, what: &str) -> PluginResult<u64> {
        Ok(u64::from_le_bytes(self.arr(what)?))
    }
    fn count(&mut self, what: &str) -> PluginResult<u32> {
        let n = self.u32(what)?;
        if n > MAX_ITEMS {
            return Err(damaged(format!("{what} is {n} (at most {MAX_ITEMS})")));
        }
        Ok(n)
    }
    fn bytes(&mut self, what: &str) -> PluginResult<&'a [u8]> {
        let n = self.u64(&format!("{what} length"))?;
        let n = usize::try_from(n).map_err(|_| damaged(format!("{what} length {n}")))?;
        self.take(n, what)
    }
    fn str(&mut self, what: &str) -> PluginResult<String> {
        let n = self.u32(&format!("{what} length"))? as usize;
        let s = self.take(n, what)?;
        String::from_utf8(s.to_vec()).map_err(|_| damaged(format!("{what} is not UTF-8")))
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// Decodes and checks a payload (the device-independent checks, in the documented order).
pub fn decode(bytes: &[u8]) -> PluginResult<Payload> {
    if bytes.len() < HEADER_SIZE {
        return Err(damaged(format!(
            "{} bytes, shorter than the {HEADER_SIZE}-byte header",
            bytes.len()
        )));
    }
    if bytes[0..4] != MARKER {
        return Err(damaged(format!("marker {:02x?} is not KCUD", &bytes[0..4])));
    }
    let (major, minor, kind) = (u16_at(bytes, 4), u16_at(bytes, 6), u16_at(bytes, 8));
    if major != FORMAT_MAJOR || minor > FORMAT_MINOR {
        return Err(PluginError::not_applicable(format!(
            "kiln-cuda payload format {major}.{minor} cannot be read by this provider, which reads \
             {FORMAT_MAJOR}.0 to {FORMAT_MAJOR}.{FORMAT_MINOR}"
        )));
    }
    if kind != KIND_EXECUTION_CONTEXT {
        return Err(PluginError::not_applicable(format!(
            "kiln-cuda payload kind {kind} is not an execution context (kind {KIND_EXECUTION_CONTEXT})"
        )));
    }
    let header = u16_at(bytes, 10) as usize;
    if header != HEADER_SIZE {
        return Err(damaged(format!(
            "header size {header}, expected {HEADER_SIZE}"
        )));
    }
    let body = &bytes[HEADER_SIZE..];
    if Sha256::digest(body).as_slice() != &bytes[16..48] {
        return Err(damaged("the SHA-256 digest of the body does not match"));
    }
    // Structure.
    let mut r = Reader { bytes: body, at: 0 };
    let engine_name = r.str("engine name")?;
    let provider_version = r.str("provider version")?;
    let nvrtc_version = (r.u32("NVRTC major")?, r.u32("NVRTC minor")?);
    let workspace = r.u64("workspace size")?;
    let nt = r.count("tensor count")?;
    let mut tensors = Vec::with_capacity(nt as usize);
    for i in 0..nt {
        let uid = r.u64(&format!("tensor {i} uid"))? as i64;
        let code = r.u8(&format!("tensor {i} data type"))?;
        let data_type = DataType::from_code(code)
            .ok_or_else(|| damaged(format!("tensor {i} has data type code {code}")))?;
        let storage_bytes = r.u64(&format!("tensor {i} size"))?;
        tensors.push(TensorSig {
            uid,
            data_type,
            storage_bytes,
        });
    }
    let nc = r.count("code object count")?;
    let mut code_objects = Vec::with_capacity(nc as usize);
    for i in 0..nc {
        let arch = r.u32(&format!("code object {i} arch"))?;
        let sha256 = r.arr::<32>(&format!("code object {i} digest"))?;
        let cubin = r.bytes(&format!("code object {i} cubin"))?.to_vec();
        let ptx = r.bytes(&format!("code object {i} PTX"))?.to_vec();
        code_objects.push(CodeObject {
            arch,
            sha256,
            cubin,
            ptx,
        });
    }
    let nl = r.count("launch count")?;
    let mut launches = Vec::with_capacity(nl as usize);
    for i in 0..nl {
        let code_object = r.u32(&format!("launch {i} code object"))?;
        let symbol = r.str(&format!("launch {i} symbol"))?;
        let mut dims = [0u32; 6];
        for d in &mut dims {
            *d = r.u32(&format!("launch {i} geometry"))?;
        }
        let shared_bytes = r.u32(&format!("launch {i} shared memory"))?;
        let na = r.count(&format!("launch {i} argument count"))?;
        let mut args = Vec::with_capacity(na as usize);
        for j in 0..na {
            let tag = r.u8(&format!("launch {i} argument {j} tag"))?;
            if tag != ARG_TENSOR {
                return Err(damaged(format!("launch {i} argument {j} has tag {tag}")));
            }
            args.push(r.u64(&format!("launch {i} argument {j}"))? as i64);
        }
        launches.push(Launch {
            code_object,
            symbol,
            grid: [dims[0], dims[1], dims[2]],
            block: [dims[3], dims[4], dims[5]],
            shared_bytes,
            args,
        });
    }
    if r.at != body.len() {
        return Err(damaged(format!(
            "{} bytes follow the last launch",
            body.len() - r.at
        )));
    }
    // Values.
    if launches.is_empty() || code_objects.is_empty() {
        return Err(damaged(
            "a plan needs at least one code object and one launch",
        ));
    }
    for (i, c) in code_objects.iter().enumerate() {
        if c.cubin.is_empty() {
            return Err(damaged(format!("code object {i} has an empty cubin")));
        }
        if Sha256::digest(&c.cubin).as_slice() != c.sha256 {
            return Err(damaged(format!(
                "code object {i} (sm_{}): the SHA-256 of its cubin does not match",
                c.arch
            )));
        }
        if !c.ptx.is_empty() && c.ptx.last() != Some(&0) {
            return Err(damaged(format!(
                "code object {i}: its PTX is not NUL-terminated"
            )));
        }
    }
    for (i, l) in launches.iter().enumerate() {
        if l.code_object as usize >= code_objects.len() {
            return Err(damaged(format!(
                "launch {i} names code object {} of {}",
                l.code_object,
                code_objects.len()
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
    }
    Ok(Payload {
        engine_name,
        provider_version,
        nvrtc_version,
        workspace,
        tensors,
        code_objects,
        launches,
    })
}
