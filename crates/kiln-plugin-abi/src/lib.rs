//! The C ABI between the kiln backend and engine plugins.
//!
//! Only plain C types cross this boundary: integers, `{ptr, len}` byte slices, opaque handles
//! and function pointers. Status codes are integer newtypes, never Rust enums read from foreign
//! memory. Whoever allocates, frees. The header `include/kiln_plugin.h` mirrors this file.
//!
//! A plugin exports one symbol, [`ENTRY_POINT_SYMBOL`], of type [`EntryPointFn`]: given the
//! host's ABI major it returns its [`KilnPluginTable`] (or null to refuse). The table starts with
//! its own size and ABI version and is append-only within a major version.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// ABI major version: a plugin of another major is refused.
pub const KILN_PLUGIN_ABI_MAJOR: u32 = 1;
/// ABI minor version: fields appended to the table within major 1. Minor 1 appended
/// `get_execution_context_tensors`; minor 2 appended `describe_serialized_execution_context`;
/// minor 3 appended `get_engine_targets`.
pub const KILN_PLUGIN_ABI_MINOR: u32 = 3;

/// Name of the exported entry point.
pub const ENTRY_POINT_SYMBOL: &[u8] = b"kiln_engine_plugin_v1\0";

/// The entry point's type: `const KilnPluginTable* kiln_engine_plugin_v1(uint32_t host_abi_major)`.
pub type EntryPointFn = unsafe extern "C" fn(host_abi_major: u32) -> *const KilnPluginTable;

/// A status returned by plugin hooks. Unknown values are treated as `INTERNAL_ERROR`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KilnPluginStatus(pub i32);

impl KilnPluginStatus {
    pub const SUCCESS: Self = Self(0);
    /// An argument is wrong (null pointer, unknown engine, bad graph).
    pub const BAD_PARAM: Self = Self(1);
    /// Bytes handed to the plugin are damaged.
    pub const INVALID_VALUE: Self = Self(2);
    /// Valid, but cannot be used here (another device arch, a newer format).
    pub const NOT_APPLICABLE: Self = Self(3);
    /// The plugin does not support what was asked.
    pub const NOT_SUPPORTED: Self = Self(4);
    pub const ALLOC_FAILED: Self = Self(5);
    pub const EXECUTION_FAILED: Self = Self(6);
    /// A bug or a caught panic inside the plugin.
    pub const INTERNAL_ERROR: Self = Self(7);

    /// A name for messages.
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "SUCCESS",
            1 => "BAD_PARAM",
            2 => "INVALID_VALUE",
            3 => "NOT_APPLICABLE",
            4 => "NOT_SUPPORTED",
            5 => "ALLOC_FAILED",
            6 => "EXECUTION_FAILED",
            7 => "INTERNAL_ERROR",
            _ => "UNKNOWN_STATUS",
        }
    }
}

/// A borrowed byte slice. `ptr` may be null only when `len` is 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnBytes {
    pub ptr: *const u8,
    pub len: usize,
}

impl KilnBytes {
    /// An empty slice.
    pub const EMPTY: KilnBytes = KilnBytes {
        ptr: std::ptr::null(),
        len: 0,
    };

    /// Borrows `bytes`.
    pub fn from_slice(bytes: &[u8]) -> KilnBytes {
        KilnBytes {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        }
    }

    /// The slice, or `None` when `ptr` is null and `len` is not 0.
    ///
    /// # Safety
    /// `ptr` must point to `len` readable bytes that stay valid and unchanged for `'a`.
    pub unsafe fn as_slice<'a>(self) -> Option<&'a [u8]> {
        if self.len == 0 {
            Some(&[])
        } else if self.ptr.is_null() {
            None
        } else {
            // SAFETY: non-null and the caller vouches for len readable bytes living for 'a.
            Some(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
        }
    }
}

/// Device kinds.
pub const KILN_DEVICE_CPU: u32 = 0;
pub const KILN_DEVICE_CUDA: u32 = 1;
/// A CUDA target architecture with no device behind it (deviceless plan building): the
/// ordinal is the SM number, e.g. 90 for `sm_90`. Plugins that cannot build without a device
/// refuse it.
pub const KILN_DEVICE_CUDA_TARGET: u32 = 2;

/// The device a plugin instance is bound to.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KilnDevice {
    /// `KILN_DEVICE_CPU`, `KILN_DEVICE_CUDA` or `KILN_DEVICE_CUDA_TARGET`.
    pub kind: u32,
    /// Device ordinal (0 for the CPU; the SM number for `KILN_DEVICE_CUDA_TARGET`).
    pub ordinal: i32,
}

/// One tensor binding at execute: a UID and a pointer to its memory on the instance's device.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnTensorBinding {
    pub uid: i64,
    pub ptr: *mut c_void,
}

/// What an execution context reads or writes of one bound tensor: its data type and how many
/// bytes from the bound pointer it may touch. The host compares these with the plan envelope's
/// tensor layouts when it restores a plan, so that a payload describing other tensors than its
/// envelope is refused at load instead of reaching memory it was not given.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KilnTensorExtent {
    pub uid: i64,
    /// The element type's stable code (kiln-core `DataType::code()`).
    pub data_type: u32,
    /// Reserved, 0.
    pub reserved: u32,
    /// Bytes from the bound pointer that the context may touch (the tensor's storage extent).
    pub storage_bytes: u64,
}

/// One knob set to a value.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KilnKnobSetting {
    pub knob_id: i64,
    pub value: i64,
}

/// An engine and its knob choices.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnEngineConfig {
    pub engine_id: u64,
    pub knobs: *const KilnKnobSetting,
    pub num_knobs: usize,
}

/// A knob an engine offers: values `min..=max` in steps of `stride`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnKnobInfo {
    pub knob_id: i64,
    /// NUL-terminated name, owned by the plugin, valid while the plugin is loaded.
    pub name: *const c_char,
    pub min_value: i64,
    pub max_value: i64,
    pub stride: i64,
    pub default_value: i64,
}

/// Behaviour note: the engine's plans can be saved and restored.
pub const KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION: u64 = 1 << 0;
/// Behaviour note: results are bitwise reproducible run to run.
pub const KILN_BEHAVIOR_DETERMINISTIC: u64 = 1 << 1;
/// Behaviour note: a numerical reference engine (plain loops, wide accumulation); the fallback
/// heuristic mode selects only these.
pub const KILN_BEHAVIOR_REFERENCE: u64 = 1 << 2;

/// What a plugin says of one engine. All pointers are owned by the plugin and stay valid while
/// the plugin is loaded.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnEngineDetails {
    pub engine_id: u64,
    /// NUL-terminated unique engine name; the engine ID is its FNV-1a 64 hash.
    pub name: *const c_char,
    /// `KILN_BEHAVIOR_*` bits.
    pub behavior_notes: u64,
    pub knobs: *const KilnKnobInfo,
    pub num_knobs: usize,
}

/// Opaque per-handle plugin instance.
pub type KilnPluginInstance = *mut c_void;
/// Opaque execution context (a compiled plan inside the plugin).
pub type KilnExecutionContext = *mut c_void;

/// The plugin's function table. All hooks return a status; on failure the plugin sets its
/// per-thread last error, read with `get_last_error`.
#[repr(C)]
pub struct KilnPluginTable {
    /// `size_of::<KilnPluginTable>()` as the plugin was compiled; the host reads only the fields
    /// that fit.
    pub struct_size: usize,
    pub abi_major: u32,
    pub abi_minor: u32,

    /// NUL-terminated plugin name (static).
    pub plugin_name: unsafe extern "C" fn() -> *const c_char,
    /// NUL-terminated plugin version (static).
    pub plugin_version: unsafe extern "C" fn() -> *const c_char,
    /// The calling thread's last error message, NUL-terminated, "" if none; valid until the
    /// thread's next call into the plugin.
    pub get_last_error: unsafe extern "C" fn() -> *const c_char,

    /// Writes up to `capacity` engine IDs to `out` and the total count to `count`; `out` may be
    /// null to ask for the count.
    pub get_engine_ids:
        unsafe extern "C" fn(out: *mut u64, capacity: usize, count: *mut usize) -> KilnPluginStatus,
    /// Fills `out` with the details of engine `engine_id`.
    pub get_engine_details:
        unsafe extern "C" fn(engine_id: u64, out: *mut KilnEngineDetails) -> KilnPluginStatus,

    /// Creates an instance bound to `device`.
    pub create_instance:
        unsafe extern "C" fn(device: KilnDevice, out: *mut KilnPluginInstance) -> KilnPluginStatus,
    pub destroy_instance: unsafe extern "C" fn(instance: KilnPluginInstance) -> KilnPluginStatus,
    /// Sets the stream later work is queued on (ignored by CPU plugins).
    pub set_stream:
        unsafe extern "C" fn(instance: KilnPluginInstance, stream: *mut c_void) -> KilnPluginStatus,

    /// The engines that can run `graph` (a kiln graph blob): up to `capacity` IDs in the plugin's
    /// order of preference, and the total in `count`; `out` may be null to ask for the count.
    pub get_applicable_engine_ids: unsafe extern "C" fn(
        instance: KilnPluginInstance,
        graph: KilnBytes,
        out: *mut u64,
        capacity: usize,
        count: *mut usize,
    ) -> KilnPluginStatus,

    /// Builds an execution context for `config` and `graph` (a kiln graph blob).
    pub create_execution_context: unsafe extern "C" fn(
        instance: KilnPluginInstance,
        config: *const KilnEngineConfig,
        graph: KilnBytes,
        out: *mut KilnExecutionContext,
    ) -> KilnPluginStatus,
    pub destroy_execution_context: unsafe extern "C" fn(
        instance: KilnPluginInstance,
        context: KilnExecutionContext,
    ) -> KilnPluginStatus,
    /// Workspace bytes the context needs at execute.
    pub get_workspace_size: unsafe extern "C" fn(
        instance: KilnPluginInstance,
        context: KilnExecutionContext,
        out: *mut usize,
    ) -> KilnPluginStatus,
    /// Runs the context with `num_bindings` (uid, pointer) pairs and a workspace of at least the
    /// context's workspace size (null when that is 0).
    pub execute: unsafe extern "C" fn(
        instance: KilnPluginInstance,
        context: KilnExecutionContext,
        bindings: *const KilnTensorBinding,
        num_bindings: usize,
        workspace: *mut c_void,
    ) -> KilnPluginStatus,

    // Optional plan-serialization hooks: all three or none (a plugin with only some is treated
    // as having none).
    /// Saves `context` (built for `engine_id`) to plugin-owned bytes in `out`; the host copies
    /// them and always calls `destroy_serialized_execution_context` on them.
    pub serialize_execution_context: Option<
        unsafe extern "C" fn(
            instance: KilnPluginInstance,
            engine_id: u64,
            context: KilnExecutionContext,
            out: *mut KilnBytes,
        ) -> KilnPluginStatus,
    >,
    /// Frees bytes returned by `serialize_execution_context` (with the instance that saved them)
    /// or text returned by `describe_serialized_execution_context` (with a null instance).
    pub destroy_serialized_execution_context:
        Option<unsafe extern "C" fn(instance: KilnPluginInstance, bytes: KilnBytes)>,
    /// Restores a context of engine `engine_id` from `payload`, a view of the loaded bytes that
    /// is valid only during the call.
    pub create_execution_context_from_serialized: Option<
        unsafe extern "C" fn(
            instance: KilnPluginInstance,
            engine_id: u64,
            payload: KilnBytes,
            out: *mut KilnExecutionContext,
        ) -> KilnPluginStatus,
    >,

    // Appended in ABI minor 1; optional.
    /// The tensors `context` binds at execute: up to `capacity` extents in `out` and the total
    /// in `count`; `out` may be null to ask for the count. The host calls it on every restored
    /// plan and refuses a plan whose extents contradict its envelope. `NOT_SUPPORTED` (or an
    /// absent hook) means the plugin does not report them; the host then trusts its payload
    /// checks (docs/plugin-development.md, trust model).
    pub get_execution_context_tensors: Option<
        unsafe extern "C" fn(
            instance: KilnPluginInstance,
            context: KilnExecutionContext,
            out: *mut KilnTensorExtent,
            capacity: usize,
            count: *mut usize,
        ) -> KilnPluginStatus,
    >,

    // Appended in ABI minor 2; optional.
    /// Describes `payload` (a saved execution context of engine `engine_id`, as
    /// `serialize_execution_context` wrote it) for people, with no instance and no device: what
    /// it holds and what it needs to load (format version, code objects and their target archs,
    /// versions, knobs). On success `out` receives plugin-owned UTF-8 text (not NUL-terminated;
    /// `len` bytes). Whoever allocates, frees: the host copies the text and always hands it back
    /// to `destroy_serialized_execution_context` with a null instance, so a plugin exports this
    /// hook only together with the three plan-serialization hooks (the host ignores it
    /// otherwise). `NOT_SUPPORTED` means the plugin does not describe its payloads; damaged bytes
    /// are `INVALID_VALUE` and a payload the plugin cannot read (a newer format) `NOT_APPLICABLE`,
    /// as at restore. `payload` is valid only during the call.
    pub describe_serialized_execution_context: Option<
        unsafe extern "C" fn(
            engine_id: u64,
            payload: KilnBytes,
            out: *mut KilnBytes,
        ) -> KilnPluginStatus,
    >,

    // Appended in ABI minor 3; optional.
    /// Where engine `engine_id` runs, for people (`kiln plugins`): NUL-terminated UTF-8 text
    /// owned by the plugin and valid while it is loaded, e.g. "compute capability 9.0 only
    /// (sm_90a)"; null when the plugin does not say (or knows no such engine). Informative
    /// only: the host never decides anything on it (applicability is
    /// `get_applicable_engine_ids`'s).
    pub get_engine_targets: Option<unsafe extern "C" fn(engine_id: u64) -> *const c_char>,
}

/// The smallest table the host accepts: everything up to and including `execute`.
pub const KILN_PLUGIN_TABLE_MIN_SIZE: usize =
    std::mem::offset_of!(KilnPluginTable, serialize_execution_context);

// SAFETY: the table holds only function pointers and integers; it is immutable once published.
unsafe impl Sync for KilnPluginTable {}
