//! The generic C entry points behind [`crate::export_plugin!`].

use crate::{Device, EnginePlugin, PluginError, PluginResult, RESTORED_CONTEXT_SAVE_REFUSAL};
use kiln_core::engine_id;
use kiln_plugin_abi::*;
use std::any::TypeId;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Runs `f` inside a panic guard, recording its error (or panic) as the thread's last error.
fn guard(f: impl FnOnce() -> PluginResult<()>) -> KilnPluginStatus {
    set_last_error("");
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => KilnPluginStatus::SUCCESS,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            if e.status == KilnPluginStatus::SUCCESS {
                KilnPluginStatus::INTERNAL_ERROR
            } else {
                e.status
            }
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("internal error: the plugin panicked: {what}"));
            KilnPluginStatus::INTERNAL_ERROR
        }
    }
}

/// What the plugin's engine details point into: built once per plugin type and kept for the
/// life of the process.
struct EngineTable {
    ids: Vec<u64>,
    details: Vec<KilnEngineDetails>,
    /// (engine id, where it runs) for the engines whose plugin says.
    targets: Vec<(u64, CString)>,
    _strings: Vec<CString>,
    _knobs: Vec<Vec<KilnKnobInfo>>,
    name: CString,
    version: CString,
}

// SAFETY: the raw pointers point into the owned strings/vectors of the same value, which is
// immutable and leaked for 'static.
unsafe impl Send for EngineTable {}
unsafe impl Sync for EngineTable {}

fn engine_table<P: EnginePlugin>() -> &'static EngineTable {
    static TABLES: OnceLock<Mutex<HashMap<TypeId, &'static EngineTable>>> = OnceLock::new();
    let map = TABLES.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(TypeId::of::<P>()).or_insert_with(|| {
        let cstr = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        let mut strings = Vec::new();
        let mut knobs_all = Vec::new();
        let mut details = Vec::new();
        let mut ids = Vec::new();
        let mut targets = Vec::new();
        for e in P::engines() {
            let name = cstr(e.name);
            if let Some(t) = P::engine_targets(e.name) {
                targets.push((engine_id(e.name), cstr(t)));
            }
            let knobs: Vec<KilnKnobInfo> = e
                .knobs
                .iter()
                .map(|k| {
                    let kn = cstr(k.name);
                    let info = KilnKnobInfo {
                        knob_id: k.id,
                        name: kn.as_ptr(),
                        min_value: k.min,
                        max_value: k.max,
                        stride: k.stride,
                        default_value: k.default,
                    };
                    strings.push(kn);
                    info
                })
                .collect();
            let id = engine_id(e.name);
            ids.push(id);
            details.push(KilnEngineDetails {
                engine_id: id,
                name: name.as_ptr(),
                behavior_notes: e.behavior_notes,
                knobs: if knobs.is_empty() {
                    std::ptr::null()
                } else {
                    knobs.as_ptr()
                },
                num_knobs: knobs.len(),
            });
            strings.push(name);
            knobs_all.push(knobs);
        }
        Box::leak(Box::new(EngineTable {
            ids,
            details,
            targets,
            _strings: strings,
            _knobs: knobs_all,
            name: cstr(P::NAME),
            version: cstr(P::VERSION),
        }))
    })
}

/// An execution context as the SDK hands it across the boundary.
struct ContextBox<C> {
    engine_id: u64,
    restored: bool,
    inner: C,
}

/// # Safety
/// `instance` must be null or a pointer returned by this plugin's `create_instance`.
unsafe fn instance_ref<'a, P: EnginePlugin>(instance: KilnPluginInstance) -> PluginResult<&'a P> {
    // SAFETY: per the contract above, a non-null instance is a live Box<P>.
    unsafe { (instance as *const P).as_ref() }
        .ok_or_else(|| PluginError::bad_param("the plugin instance is null"))
}

/// # Safety
/// `ctx` must be null or a pointer returned by this plugin's context constructors.
unsafe fn context_ref<'a, P: EnginePlugin>(
    ctx: KilnExecutionContext,
) -> PluginResult<&'a ContextBox<P::Context>> {
    // SAFETY: per the contract above, a non-null context is a live Box<ContextBox<_>>.
    unsafe { (ctx as *const ContextBox<P::Context>).as_ref() }
        .ok_or_else(|| PluginError::bad_param("the execution context is null"))
}

/// Writes up to `capacity` items of `items` to `out` (when not null) and their total to `count`:
/// the ask-for-the-count-then-fill pattern of the table's list hooks.
fn write_list<T: Copy>(
    items: &[T],
    out: *mut T,
    capacity: usize,
    count: *mut usize,
) -> PluginResult<()> {
    if count.is_null() {
        return Err(PluginError::bad_param("count is null"));
    }
    // SAFETY: count is non-null and points to a usize the caller owns.
    unsafe { *count = items.len() };
    if !out.is_null() {
        let n = items.len().min(capacity);
        // SAFETY: the caller gives `capacity` writable slots of T at `out`.
        unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), out, n) };
    }
    Ok(())
}

fn write_ids(ids: &[u64], out: *mut u64, capacity: usize, count: *mut usize) -> PluginResult<()> {
    write_list(ids, out, capacity, count)
}

fn decode_graph(graph: KilnBytes) -> PluginResult<kiln_core::OpGraph> {
    // SAFETY: the host passes a view of a live graph blob for the duration of the call.
    let bytes = unsafe { graph.as_slice() }
        .ok_or_else(|| PluginError::bad_param("the graph bytes are null"))?;
    Ok(kiln_format::decode_graph(bytes)?)
}

unsafe extern "C" fn plugin_name<P: EnginePlugin>() -> *const c_char {
    engine_table::<P>().name.as_ptr()
}

unsafe extern "C" fn plugin_version<P: EnginePlugin>() -> *const c_char {
    engine_table::<P>().version.as_ptr()
}

unsafe extern "C" fn get_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

unsafe extern "C" fn get_engine_ids<P: EnginePlugin>(
    out: *mut u64,
    capacity: usize,
    count: *mut usize,
) -> KilnPluginStatus {
    guard(|| write_ids(&engine_table::<P>().ids, out, capacity, count))
}

unsafe extern "C" fn get_engine_details<P: EnginePlugin>(
    id: u64,
    out: *mut KilnEngineDetails,
) -> KilnPluginStatus {
    guard(|| {
        let t = engine_table::<P>();
        let d = t
            .details
            .iter()
            .find(|d| d.engine_id == id)
            .ok_or_else(|| {
                PluginError::bad_param(format!("{}: no engine with id {id:#x}", P::NAME))
            })?;
        if out.is_null() {
            return Err(PluginError::bad_param("out is null"));
        }
        // SAFETY: out is non-null and points to caller-owned storage for one details struct.
        unsafe { *out = *d };
        Ok(())
    })
}

/// Where engine `id` runs (ABI minor 3), or null when the plugin does not say. Returns a pointer
/// into the leaked engine table, valid for the life of the process.
unsafe extern "C" fn get_engine_targets<P: EnginePlugin>(id: u64) -> *const c_char {
    // A panic must not unwind into the host; any failure reads as "does not say".
    std::panic::catch_unwind(|| {
        engine_table::<P>()
            .targets
            .iter()
            .find(|(e, _)| *e == id)
            .map_or(std::ptr::null(), |(_, t)| t.as_ptr())
    })
    .unwrap_or(std::ptr::null())
}

unsafe extern "C" fn create_instance<P: EnginePlugin>(
    device: KilnDevice,
    out: *mut KilnPluginInstance,
) -> KilnPluginStatus {
    guard(|| {
        if out.is_null() {
            return Err(PluginError::bad_param("out is null"));
        }
        let dev = match device.kind {
            KILN_DEVICE_CPU => Device::Cpu,
            KILN_DEVICE_CUDA => Device::Cuda(device.ordinal),
            KILN_DEVICE_CUDA_TARGET => {
                let instance = Box::new(P::create_for_target(device.ordinal)?);
                // SAFETY: out is non-null and caller-owned.
                unsafe { *out = Box::into_raw(instance) as KilnPluginInstance };
                return Ok(());
            }
            k => return Err(PluginError::bad_param(format!("unknown device kind {k}"))),
        };
        let instance = Box::new(P::create(dev)?);
        // SAFETY: out is non-null and caller-owned.
        unsafe { *out = Box::into_raw(instance) as KilnPluginInstance };
        Ok(())
    })
}

unsafe extern "C" fn destroy_instance<P: EnginePlugin>(
    instance: KilnPluginInstance,
) -> KilnPluginStatus {
    guard(|| {
        if !instance.is_null() {
            // SAFETY: a non-null instance came from Box::into_raw in create_instance and is
            // destroyed once by the host.
            drop(unsafe { Box::from_raw(instance as *mut P) });
        }
        Ok(())
    })
}

unsafe extern "C" fn set_stream<P: EnginePlugin>(
    instance: KilnPluginInstance,
    stream: *mut c_void,
) -> KilnPluginStatus {
    // SAFETY: the host passes an instance it created with this table.
    guard(|| unsafe { instance_ref::<P>(instance) }?.set_stream(stream))
}

unsafe extern "C" fn get_applicable_engine_ids<P: EnginePlugin>(
    instance: KilnPluginInstance,
    graph: KilnBytes,
    out: *mut u64,
    capacity: usize,
    count: *mut usize,
) -> KilnPluginStatus {
    guard(|| {
        // SAFETY: the host passes an instance it created with this table.
        let p = unsafe { instance_ref::<P>(instance) }?;
        let g = decode_graph(graph)?;
        write_ids(&p.applicable_engines(&g), out, capacity, count)
    })
}

unsafe extern "C" fn create_execution_context<P: EnginePlugin>(
    instance: KilnPluginInstance,
    config: *const KilnEngineConfig,
    graph: KilnBytes,
    out: *mut KilnExecutionContext,
) -> KilnPluginStatus {
    guard(|| {
        // SAFETY: the host passes an instance it created with this table.
        let p = unsafe { instance_ref::<P>(instance) }?;
        // SAFETY: a non-null config points to a caller-owned struct for the call.
        let cfg = unsafe { config.as_ref() }
            .ok_or_else(|| PluginError::bad_param("the engine config is null"))?;
        let knobs: &[KnobSetting] = if cfg.num_knobs == 0 {
            &[]
        } else if cfg.knobs.is_null() {
            return Err(PluginError::bad_param("the knob array is null"));
        } else {
            // SAFETY: non-null and the host vouches for num_knobs settings.
            unsafe { std::slice::from_raw_parts(cfg.knobs, cfg.num_knobs) }
        };
        if out.is_null() {
            return Err(PluginError::bad_param("out is null"));
        }
        let g = decode_graph(graph)?;
        let inner = p.create_context(cfg.engine_id, knobs, &g)?;
        let b = Box::new(ContextBox {
            engine_id: cfg.engine_id,
            restored: false,
            inner,
        });
        // SAFETY: out is non-null and caller-owned.
        unsafe { *out = Box::into_raw(b) as KilnExecutionContext };
        Ok(())
    })
}

use crate::KnobSetting;

unsafe extern "C" fn destroy_execution_context<P: EnginePlugin>(
    _instance: KilnPluginInstance,
    ctx: KilnExecutionContext,
) -> KilnPluginStatus {
    guard(|| {
        if !ctx.is_null() {
            // SAFETY: a non-null context came from Box::into_raw here and is destroyed once.
            drop(unsafe { Box::from_raw(ctx as *mut ContextBox<P::Context>) });
        }
        Ok(())
    })
}

unsafe extern "C" fn get_workspace_size<P: EnginePlugin>(
    instance: KilnPluginInstance,
    ctx: KilnExecutionContext,
    out: *mut usize,
) -> KilnPluginStatus {
    guard(|| {
        // SAFETY: the host passes handles it created with this table.
        let (p, c) = unsafe { (instance_ref::<P>(instance)?, context_ref::<P>(ctx)?) };
        if out.is_null() {
            return Err(PluginError::bad_param("out is null"));
        }
        // SAFETY: out is non-null and caller-owned.
        unsafe { *out = p.workspace_size(&c.inner) };
        Ok(())
    })
}

unsafe extern "C" fn execute<P: EnginePlugin>(
    instance: KilnPluginInstance,
    ctx: KilnExecutionContext,
    bindings: *const KilnTensorBinding,
    num_bindings: usize,
    workspace: *mut c_void,
) -> KilnPluginStatus {
    guard(|| {
        // SAFETY: the host passes handles it created with this table.
        let (p, c) = unsafe { (instance_ref::<P>(instance)?, context_ref::<P>(ctx)?) };
        let b: &[KilnTensorBinding] = if num_bindings == 0 {
            &[]
        } else if bindings.is_null() {
            return Err(PluginError::bad_param("the binding array is null"));
        } else {
            // SAFETY: non-null and the host vouches for num_bindings entries.
            unsafe { std::slice::from_raw_parts(bindings, num_bindings) }
        };
        // SAFETY: the host checked every pointer against the plan's tensors and the workspace
        // size before calling (EnginePlugin::execute's contract).
        unsafe { p.execute(&c.inner, b, workspace as *mut u8) }
    })
}

unsafe extern "C" fn serialize_execution_context<P: EnginePlugin>(
    instance: KilnPluginInstance,
    engine_id: u64,
    ctx: KilnExecutionContext,
    out: *mut KilnBytes,
) -> KilnPluginStatus {
    guard(|| {
        // SAFETY: the host passes handles it created with this table.
        let (p, c) = unsafe { (instance_ref::<P>(instance)?, context_ref::<P>(ctx)?) };
        if out.is_null() {
            return Err(PluginError::bad_param("out is null"));
        }
        if c.restored {
            return Err(PluginError::not_supported(RESTORED_CONTEXT_SAVE_REFUSAL));
        }
        if c.engine_id != engine_id {
            return Err(PluginError::bad_param(format!(
                "the context was built for engine {:#x}, not {engine_id:#x}",
                c.engine_id
            )));
        }
        let bytes = p.serialize_context(engine_id, &c.inner)?.into_boxed_slice();
        let len = bytes.len();
        let ptr = Box::into_raw(bytes) as *const u8;
        // SAFETY: out is non-null and caller-owned; the box is freed by
        // destroy_serialized_execution_context.
        unsafe { *out = KilnBytes { ptr, len } };
        Ok(())
    })
}

unsafe extern "C" fn destroy_serialized_execution_context(
    _instance: KilnPluginInstance,
    bytes: KilnBytes,
) {
    let _ = guard(|| {
        if !bytes.ptr.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(bytes.ptr as *mut u8, bytes.len);
            // SAFETY: these bytes came from Box::into_raw of a Box<[u8]> of exactly this length
            // in serialize_execution_context or describe_serialized_execution_context, and the
            // host frees them once.
            drop(unsafe { Box::from_raw(slice) });
        }
        Ok(())
    });
}

unsafe extern "C" fn create_execution_context_from_serialized<P: EnginePlugin>(
    instance: KilnPluginInstance,
    engine_id: u64,
    payload: KilnBytes,
    out: *mut KilnExecutionContext,
) -> KilnPluginStatus {
    guard(|| {
        // SAFETY: the host passes an instance it created with this table.
        let p = unsafe { instance_ref::<P>(instance) }?;
        if out.is_null() {
            return Err(PluginError::bad_param("out is null"));
        }
        // SAFETY: the host passes a view of the loaded bytes, valid for the call.
        let bytes = unsafe { payload.as_slice() }
            .ok_or_else(|| PluginError::bad_param("the payload pointer is null"))?;
        let inner = p.restore_context(engine_id, bytes)?;
        let b = Box::new(ContextBox {
            engine_id,
            restored: true,
            inner,
        });
        // SAFETY: out is non-null and caller-owned.
        unsafe { *out = Box::into_raw(b) as KilnExecutionContext };
        Ok(())
    })
}

unsafe extern "C" fn get_execution_context_tensors<P: EnginePlugin>(
    instance: KilnPluginInstance,
    ctx: KilnExecutionContext,
    out: *mut KilnTensorExtent,
    capacity: usize,
    count: *mut usize,
) -> KilnPluginStatus {
    guard(|| {
        // SAFETY: the host passes handles it created with this table.
        let (p, c) = unsafe { (instance_ref::<P>(instance)?, context_ref::<P>(ctx)?) };
        let extents: Vec<KilnTensorExtent> = p
            .context_tensors(&c.inner)?
            .into_iter()
            .map(|e| KilnTensorExtent {
                uid: e.uid,
                data_type: e.data_type.code() as u32,
                reserved: 0,
                storage_bytes: e.storage_bytes,
            })
            .collect();
        write_list(&extents, out, capacity, count)
    })
}

unsafe extern "C" fn describe_serialized_execution_context<P: EnginePlugin>(
    engine_id: u64,
    payload: KilnBytes,
    out: *mut KilnBytes,
) -> KilnPluginStatus {
    guard(|| {
        if out.is_null() {
            return Err(PluginError::bad_param("out is null"));
        }
        // SAFETY: the host passes a view of the payload, valid for the call.
        let bytes = unsafe { payload.as_slice() }
            .ok_or_else(|| PluginError::bad_param("the payload pointer is null"))?;
        let text = P::describe_payload(engine_id, bytes)?
            .into_bytes()
            .into_boxed_slice();
        let len = text.len();
        let ptr = Box::into_raw(text) as *const u8;
        // SAFETY: out is non-null and caller-owned. The text is a Box<[u8]> exactly like the save
        // hook's bytes, so destroy_serialized_execution_context frees it.
        unsafe { *out = KilnBytes { ptr, len } };
        Ok(())
    })
}

/// Builds the table of plugin `P` (implementation detail of [`crate::export_plugin!`]).
pub trait PluginTableFor {
    const TABLE: KilnPluginTable;
}

impl<P: EnginePlugin> PluginTableFor for P {
    const TABLE: KilnPluginTable = KilnPluginTable {
        struct_size: std::mem::size_of::<KilnPluginTable>(),
        abi_major: KILN_PLUGIN_ABI_MAJOR,
        abi_minor: KILN_PLUGIN_ABI_MINOR,
        plugin_name: plugin_name::<P>,
        plugin_version: plugin_version::<P>,
        get_last_error,
        get_engine_ids: get_engine_ids::<P>,
        get_engine_details: get_engine_details::<P>,
        create_instance: create_instance::<P>,
        destroy_instance: destroy_instance::<P>,
        set_stream: set_stream::<P>,
        get_applicable_engine_ids: get_applicable_engine_ids::<P>,
        create_execution_context: create_execution_context::<P>,
        destroy_execution_context: destroy_execution_context::<P>,
        get_workspace_size: get_workspace_size::<P>,
        execute: execute::<P>,
        serialize_execution_context: if P::SUPPORTS_SERIALIZATION {
            Some(serialize_execution_context::<P>)
        } else {
            None
        },
        destroy_serialized_execution_context: if P::SUPPORTS_SERIALIZATION {
            Some(destroy_serialized_execution_context)
        } else {
            None
        },
        create_execution_context_from_serialized: if P::SUPPORTS_SERIALIZATION {
            Some(create_execution_context_from_serialized::<P>)
        } else {
            None
        },
        get_execution_context_tensors: Some(get_execution_context_tensors::<P>),
        describe_serialized_execution_context: if P::SUPPORTS_SERIALIZATION {
            Some(describe_serialized_execution_context::<P>)
        } else {
            None
        },
        get_engine_targets: Some(get_engine_targets::<P>),
    };
}

/// The static table of plugin `P`.
pub fn plugin_table<P: EnginePlugin>() -> &'static KilnPluginTable {
    static TABLES: OnceLock<Mutex<HashMap<TypeId, &'static KilnPluginTable>>> = OnceLock::new();
    let map = TABLES.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(TypeId::of::<P>())
        .or_insert_with(|| Box::leak(Box::new(<P as PluginTableFor>::TABLE)))
}
