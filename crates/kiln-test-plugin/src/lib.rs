//! A test-only engine plugin whose plan-serialization faults each test chooses.
//!
//! Its required hooks forward to the embedded CPU plugin's C table, so it offers the CPU engines
//! with their engine IDs, under its own name [`FAULT_PLUGIN_NAME`]. Its three optional hooks are
//! the test's choice: each present or absent, and save and restore with an injected fault. The
//! plugin counts every save, free and restore call and the execution contexts alive.
//!
//! Every instance carries the state of the [`FaultPlugin`] whose [`FaultPlugin::handle`] created
//! it, so tests running in parallel threads never share fault state or counters.
//!
//! A test-support crate (`publish = false`, as wgpu keeps its `noop` backend): a dev-dependency
//! of the backend's and the frontend's tests. It also hands those tests the CPU engine's table
//! ([`cpu_plugin_table`]), so the backend needs no engine crate even among its dev-dependencies.

use kiln_backend::{Device, Handle, Plugin, PluginSource, Registry};
use kiln_core::Result;
use kiln_plugin_abi::*;
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::sync::Arc;

/// The plugin's name, as `plugin_name` returns it and as saved plan envelopes record it.
pub const FAULT_PLUGIN_NAME: &str = "kiln-fault-test";
/// The last-error text of an injected save failure.
pub const INJECTED_SAVE_FAILURE: &str = "kiln-fault-test: injected save failure (disk on fire)";
/// The last-error text of an injected restore failure.
pub const INJECTED_RESTORE_FAILURE: &str =
    "kiln-fault-test: injected restore failure (payload refused by the test)";

/// What the save hook does when called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveFault {
    /// Forwards to the CPU plugin's save hook.
    None,
    /// Succeeds with `{null, 0}`.
    NullPayload,
    /// Succeeds with `{null, 16}`, which breaks the ABI's rule for byte slices.
    NullPointerWithLength,
    /// Succeeds with a non-null pointer and length 0.
    EmptyPayload,
    /// Fails with `INTERNAL_ERROR` and [`INJECTED_SAVE_FAILURE`].
    Fail,
    /// Fails like [`SaveFault::Fail`] on the plugin's first save call only, then forwards.
    FailFirstCall,
}

/// What the restore hook does when called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreFault {
    /// Forwards to the CPU plugin's restore hook.
    None,
    /// Fails with `INVALID_VALUE` and [`INJECTED_RESTORE_FAILURE`].
    Fail,
}

/// The plugin's configuration for one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Faults {
    /// Export `serialize_execution_context`.
    pub save_hook: bool,
    /// Export `destroy_serialized_execution_context`.
    pub free_hook: bool,
    /// Export `create_execution_context_from_serialized`.
    pub restore_hook: bool,
    pub save: SaveFault,
    pub restore: RestoreFault,
    /// Also accept CUDA devices, running on the host all the same: lets a test hold handles of
    /// two devices on a machine with only a CPU.
    pub pretend_cuda: bool,
}

impl Faults {
    /// All three hooks, no fault: behaves like the CPU plugin under another name.
    pub fn all_hooks() -> Faults {
        Faults::hooks(true, true, true)
    }
    /// No optional hook at all.
    pub fn no_hooks() -> Faults {
        Faults::hooks(false, false, false)
    }
    /// Exactly the optional hooks named, no fault.
    pub fn hooks(save_hook: bool, free_hook: bool, restore_hook: bool) -> Faults {
        Faults {
            save_hook,
            free_hook,
            restore_hook,
            save: SaveFault::None,
            restore: RestoreFault::None,
            pretend_cuda: false,
        }
    }
    /// With `fault` injected in the save hook.
    pub fn save(mut self, fault: SaveFault) -> Faults {
        self.save = fault;
        self
    }
    /// With `fault` injected in the restore hook.
    pub fn restore(mut self, fault: RestoreFault) -> Faults {
        self.restore = fault;
        self
    }
    /// Accepting CUDA devices too.
    pub fn pretend_cuda(mut self) -> Faults {
        self.pretend_cuda = true;
        self
    }
}

/// One test's fault configuration and counters, shared by the instances it creates.
#[derive(Debug)]
struct FaultState {
    faults: Faults,
    saves: AtomicUsize,
    frees: AtomicUsize,
    restores: AtomicUsize,
    live_contexts: AtomicIsize,
}

/// The fault plugin of one test: its own registry (holding only this plugin) and its counters.
pub struct FaultPlugin {
    state: Arc<FaultState>,
    registry: Arc<Registry>,
}

impl FaultPlugin {
    /// A fault plugin configured by `faults`, registered alone in a registry of its own.
    pub fn new(faults: Faults) -> FaultPlugin {
        let table: &'static KilnPluginTable = Box::leak(Box::new(fault_table(&faults)));
        // SAFETY: the table is leaked ('static) and every function it points to is a static
        // function of this test binary or of the linked-in CPU plugin.
        let plugin = unsafe { Plugin::from_table(table, PluginSource::InProcess, None) }
            .expect("the fault plugin's table is accepted");
        assert_eq!(plugin.name(), FAULT_PLUGIN_NAME);
        let mut registry = Registry::empty();
        registry
            .add(plugin)
            .expect("the fault plugin registers in an empty registry");
        FaultPlugin {
            state: Arc::new(FaultState {
                faults,
                saves: AtomicUsize::new(0),
                frees: AtomicUsize::new(0),
                restores: AtomicUsize::new(0),
                live_contexts: AtomicIsize::new(0),
            }),
            registry: Arc::new(registry),
        }
    }

    /// A handle on `device` whose fault-plugin instance reports to this test's counters.
    pub fn handle_on(&self, device: Device) -> Result<Handle> {
        PENDING_STATE.with(|p| *p.borrow_mut() = Some(self.state.clone()));
        let handle = Handle::with_registry(device, self.registry.clone());
        PENDING_STATE.with(|p| *p.borrow_mut() = None);
        handle
    }

    /// A CPU handle whose fault-plugin instance reports to this test's counters.
    pub fn handle(&self) -> Handle {
        self.handle_on(Device::Cpu)
            .expect("the fault plugin accepts the CPU")
    }

    /// The registry holding only this plugin.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
    /// Calls of the save hook so far.
    pub fn saves(&self) -> usize {
        self.state.saves.load(Ordering::SeqCst)
    }
    /// Calls of the free hook so far.
    pub fn frees(&self) -> usize {
        self.state.frees.load(Ordering::SeqCst)
    }
    /// Calls of the restore hook so far.
    pub fn restores(&self) -> usize {
        self.state.restores.load(Ordering::SeqCst)
    }
    /// Execution contexts created (built or restored) and not yet destroyed.
    pub fn live_contexts(&self) -> isize {
        self.state.live_contexts.load(Ordering::SeqCst)
    }
}

thread_local! {
    /// The state that `create_instance` gives the instance it makes on this thread.
    static PENDING_STATE: RefCell<Option<Arc<FaultState>>> = const { RefCell::new(None) };
    /// This plugin's own last error; `None` defers to the CPU plugin's.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// An instance of the fault plugin: the CPU plugin's instance and the test's state.
struct FaultInstance {
    cpu: KilnPluginInstance,
    state: Arc<FaultState>,
}

/// Bytes whose address the empty payload uses; never freed.
static EMPTY_PAYLOAD_ANCHOR: [u8; 16] = [0; 16];

/// The embedded CPU engine's plugin table, which the fault plugin forwards to.
pub fn cpu_plugin_table() -> &'static KilnPluginTable {
    kiln_engine_cpu::plugin_table()
}

/// The CPU engine plugin's name, as its plans' envelopes record it.
pub const CPU_PLUGIN_NAME: &str = kiln_engine_cpu::PLUGIN_NAME;

fn cpu() -> &'static KilnPluginTable {
    cpu_plugin_table()
}

fn clear_error() {
    LAST_ERROR.with(|e| *e.borrow_mut() = None);
}

fn fail(status: KilnPluginStatus, message: &str) -> KilnPluginStatus {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(c));
    status
}

/// # Safety
/// `instance` must be null or a pointer made by [`create_instance`] and not yet destroyed.
unsafe fn instance<'a>(instance: KilnPluginInstance) -> Option<&'a FaultInstance> {
    // SAFETY: per the contract above.
    unsafe { (instance as *const FaultInstance).as_ref() }
}

/// The CPU plugin's instance inside `i`, or null for a null `i` (which the CPU plugin refuses).
///
/// # Safety
/// As [`instance`].
unsafe fn cpu_instance(i: KilnPluginInstance) -> KilnPluginInstance {
    // SAFETY: forwarded contract.
    unsafe { instance(i) }.map_or(std::ptr::null_mut(), |f| f.cpu)
}

unsafe extern "C" fn plugin_name() -> *const c_char {
    c"kiln-fault-test".as_ptr()
}

unsafe extern "C" fn plugin_version() -> *const c_char {
    c"0.0.1-fault".as_ptr()
}

unsafe extern "C" fn get_last_error() -> *const c_char {
    let own = LAST_ERROR.with(|e| e.borrow().as_ref().map(|c| c.as_ptr()));
    // SAFETY: the CPU plugin's hook takes no arguments. The pointer of our own message stays
    // valid until this thread's next call into the plugin, which replaces it.
    own.unwrap_or_else(|| unsafe { (cpu().get_last_error)() })
}

unsafe extern "C" fn get_engine_ids(
    out: *mut u64,
    capacity: usize,
    count: *mut usize,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded verbatim; the host's pointers follow the same contract.
    unsafe { (cpu().get_engine_ids)(out, capacity, count) }
}

unsafe extern "C" fn get_engine_details(id: u64, out: *mut KilnEngineDetails) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded verbatim.
    unsafe { (cpu().get_engine_details)(id, out) }
}

unsafe extern "C" fn create_instance(
    device: KilnDevice,
    out: *mut KilnPluginInstance,
) -> KilnPluginStatus {
    clear_error();
    let Some(state) = PENDING_STATE.with(|p| p.borrow().clone()) else {
        return fail(
            KilnPluginStatus::BAD_PARAM,
            "kiln-fault-test: no test state on this thread; create handles with FaultPlugin::handle",
        );
    };
    if out.is_null() {
        return fail(KilnPluginStatus::BAD_PARAM, "kiln-fault-test: out is null");
    }
    let device = if device.kind == KILN_DEVICE_CUDA && state.faults.pretend_cuda {
        KilnDevice {
            kind: KILN_DEVICE_CPU,
            ordinal: 0,
        }
    } else {
        device
    };
    let mut cpu_inst: KilnPluginInstance = std::ptr::null_mut();
    // SAFETY: cpu_inst is writable; the device is a plain struct.
    let st = unsafe { (cpu().create_instance)(device, &mut cpu_inst) };
    if st != KilnPluginStatus::SUCCESS {
        return st;
    }
    let boxed = Box::new(FaultInstance {
        cpu: cpu_inst,
        state,
    });
    // SAFETY: out is non-null and the host's.
    unsafe { *out = Box::into_raw(boxed) as KilnPluginInstance };
    KilnPluginStatus::SUCCESS
}

unsafe extern "C" fn destroy_instance(i: KilnPluginInstance) -> KilnPluginStatus {
    clear_error();
    if i.is_null() {
        return KilnPluginStatus::SUCCESS;
    }
    // SAFETY: a non-null instance came from Box::into_raw in create_instance and the host
    // destroys it once.
    let boxed = unsafe { Box::from_raw(i as *mut FaultInstance) };
    // SAFETY: the CPU instance came from the CPU plugin's create_instance.
    unsafe { (cpu().destroy_instance)(boxed.cpu) }
}

unsafe extern "C" fn set_stream(i: KilnPluginInstance, stream: *mut c_void) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded with the CPU plugin's own instance.
    unsafe { (cpu().set_stream)(cpu_instance(i), stream) }
}

unsafe extern "C" fn get_applicable_engine_ids(
    i: KilnPluginInstance,
    graph: KilnBytes,
    out: *mut u64,
    capacity: usize,
    count: *mut usize,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded with the CPU plugin's own instance.
    unsafe { (cpu().get_applicable_engine_ids)(cpu_instance(i), graph, out, capacity, count) }
}

unsafe extern "C" fn create_execution_context(
    i: KilnPluginInstance,
    config: *const KilnEngineConfig,
    graph: KilnBytes,
    out: *mut KilnExecutionContext,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded with the CPU plugin's own instance.
    let st = unsafe { (cpu().create_execution_context)(cpu_instance(i), config, graph, out) };
    if st == KilnPluginStatus::SUCCESS {
        // SAFETY: the instance is live (the CPU plugin accepted it).
        if let Some(f) = unsafe { instance(i) } {
            f.state.live_contexts.fetch_add(1, Ordering::SeqCst);
        }
    }
    st
}

unsafe extern "C" fn destroy_execution_context(
    i: KilnPluginInstance,
    ctx: KilnExecutionContext,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded with the CPU plugin's own instance.
    let st = unsafe { (cpu().destroy_execution_context)(cpu_instance(i), ctx) };
    if !ctx.is_null() {
        // SAFETY: the host destroys contexts before their instance.
        if let Some(f) = unsafe { instance(i) } {
            f.state.live_contexts.fetch_sub(1, Ordering::SeqCst);
        }
    }
    st
}

unsafe extern "C" fn get_workspace_size(
    i: KilnPluginInstance,
    ctx: KilnExecutionContext,
    out: *mut usize,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded with the CPU plugin's own instance.
    unsafe { (cpu().get_workspace_size)(cpu_instance(i), ctx, out) }
}

unsafe extern "C" fn execute(
    i: KilnPluginInstance,
    ctx: KilnExecutionContext,
    bindings: *const KilnTensorBinding,
    num_bindings: usize,
    workspace: *mut c_void,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: forwarded with the CPU plugin's own instance.
    unsafe { (cpu().execute)(cpu_instance(i), ctx, bindings, num_bindings, workspace) }
}

unsafe extern "C" fn save(
    i: KilnPluginInstance,
    engine_id: u64,
    ctx: KilnExecutionContext,
    out: *mut KilnBytes,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: the host passes an instance made by create_instance.
    let Some(f) = (unsafe { instance(i) }) else {
        return fail(
            KilnPluginStatus::BAD_PARAM,
            "kiln-fault-test: the instance is null",
        );
    };
    if out.is_null() {
        return fail(KilnPluginStatus::BAD_PARAM, "kiln-fault-test: out is null");
    }
    let call = f.state.saves.fetch_add(1, Ordering::SeqCst);
    let write = |bytes: KilnBytes| {
        // SAFETY: out is non-null and the host's.
        unsafe { *out = bytes };
        KilnPluginStatus::SUCCESS
    };
    match f.state.faults.save {
        SaveFault::NullPayload => write(KilnBytes {
            ptr: std::ptr::null(),
            len: 0,
        }),
        SaveFault::NullPointerWithLength => write(KilnBytes {
            ptr: std::ptr::null(),
            len: 16,
        }),
        SaveFault::EmptyPayload => write(KilnBytes {
            ptr: EMPTY_PAYLOAD_ANCHOR.as_ptr(),
            len: 0,
        }),
        SaveFault::Fail => fail(KilnPluginStatus::INTERNAL_ERROR, INJECTED_SAVE_FAILURE),
        SaveFault::FailFirstCall if call == 0 => {
            fail(KilnPluginStatus::INTERNAL_ERROR, INJECTED_SAVE_FAILURE)
        }
        SaveFault::None | SaveFault::FailFirstCall => match cpu().serialize_execution_context {
            // SAFETY: forwarded with the CPU plugin's own instance.
            Some(cpu_save) => unsafe { cpu_save(f.cpu, engine_id, ctx, out) },
            None => fail(
                KilnPluginStatus::INTERNAL_ERROR,
                "kiln-fault-test: the CPU plugin has no save hook",
            ),
        },
    }
}

unsafe extern "C" fn free(i: KilnPluginInstance, bytes: KilnBytes) {
    clear_error();
    // SAFETY: the host passes an instance made by create_instance.
    let Some(f) = (unsafe { instance(i) }) else {
        return;
    };
    f.state.frees.fetch_add(1, Ordering::SeqCst);
    // Only bytes the CPU plugin allocated go back to it; the injected payloads are not owned.
    if bytes.ptr.is_null() || std::ptr::eq(bytes.ptr, EMPTY_PAYLOAD_ANCHOR.as_ptr()) {
        return;
    }
    if let Some(cpu_free) = cpu().destroy_serialized_execution_context {
        // SAFETY: these bytes came from the CPU plugin's save hook and are freed once.
        unsafe { cpu_free(f.cpu, bytes) };
    }
}

unsafe extern "C" fn restore(
    i: KilnPluginInstance,
    engine_id: u64,
    payload: KilnBytes,
    out: *mut KilnExecutionContext,
) -> KilnPluginStatus {
    clear_error();
    // SAFETY: the host passes an instance made by create_instance.
    let Some(f) = (unsafe { instance(i) }) else {
        return fail(
            KilnPluginStatus::BAD_PARAM,
            "kiln-fault-test: the instance is null",
        );
    };
    f.state.restores.fetch_add(1, Ordering::SeqCst);
    if f.state.faults.restore == RestoreFault::Fail {
        return fail(KilnPluginStatus::INVALID_VALUE, INJECTED_RESTORE_FAILURE);
    }
    let Some(cpu_restore) = cpu().create_execution_context_from_serialized else {
        return fail(
            KilnPluginStatus::INTERNAL_ERROR,
            "kiln-fault-test: the CPU plugin has no restore hook",
        );
    };
    // SAFETY: forwarded with the CPU plugin's own instance; the payload view is the host's.
    let st = unsafe { cpu_restore(f.cpu, engine_id, payload, out) };
    if st == KilnPluginStatus::SUCCESS {
        f.state.live_contexts.fetch_add(1, Ordering::SeqCst);
    }
    st
}

/// The fault plugin's table for `faults`.
fn fault_table(faults: &Faults) -> KilnPluginTable {
    KilnPluginTable {
        struct_size: std::mem::size_of::<KilnPluginTable>(),
        abi_major: KILN_PLUGIN_ABI_MAJOR,
        abi_minor: KILN_PLUGIN_ABI_MINOR,
        plugin_name,
        plugin_version,
        get_last_error,
        get_engine_ids,
        get_engine_details,
        create_instance,
        destroy_instance,
        set_stream,
        get_applicable_engine_ids,
        create_execution_context,
        destroy_execution_context,
        get_workspace_size,
        execute,
        serialize_execution_context: if faults.save_hook { Some(save) } else { None },
        destroy_serialized_execution_context: if faults.free_hook { Some(free) } else { None },
        create_execution_context_from_serialized: if faults.restore_hook {
            Some(restore)
        } else {
            None
        },
        // Not reported: the fault plugin's restored plans take the backend's path for plugins
        // that do not describe their contexts' tensors.
        get_execution_context_tensors: None,
        // Not described: `kiln inspect` shows no description for its plans.
        describe_serialized_execution_context: None,
        get_engine_targets: None,
    }
}
