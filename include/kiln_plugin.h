#ifndef KILN_PLUGIN_H
#define KILN_PLUGIN_H

/* Generated from crates/kiln-plugin-abi by cbindgen; do not edit. Regenerate with
   KILN_REGEN_HEADERS=1 cargo test -p kiln-plugin-abi --test header */

#include <stddef.h>
#include <stdint.h>

/**
 * ABI major version: a plugin of another major is refused.
 */
#define KILN_PLUGIN_ABI_MAJOR 1

/**
 * ABI minor version: fields appended to the table within major 1. Minor 1 appended
 * `get_execution_context_tensors`; minor 2 appended `describe_serialized_execution_context`;
 * minor 3 appended `get_engine_targets`.
 */
#define KILN_PLUGIN_ABI_MINOR 3

/**
 * Device kinds.
 */
#define KILN_DEVICE_CPU 0

#define KILN_DEVICE_CUDA 1

/**
 * A CUDA target architecture with no device behind it (deviceless plan building): the
 * ordinal is the SM number, e.g. 90 for `sm_90`. Plugins that cannot build without a device
 * refuse it.
 */
#define KILN_DEVICE_CUDA_TARGET 2

/**
 * Behaviour note: the engine's plans can be saved and restored.
 */
#define KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION (1 << 0)

/**
 * Behaviour note: results are bitwise reproducible run to run.
 */
#define KILN_BEHAVIOR_DETERMINISTIC (1 << 1)

/**
 * Behaviour note: a numerical reference engine (plain loops, wide accumulation); the fallback
 * heuristic mode selects only these.
 */
#define KILN_BEHAVIOR_REFERENCE (1 << 2)

/**
 * A status returned by plugin hooks. Unknown values are treated as `INTERNAL_ERROR`.
 */
typedef int32_t KilnPluginStatus;
#define KilnPluginStatus_SUCCESS 0
/**
 * An argument is wrong (null pointer, unknown engine, bad graph).
 */
#define KilnPluginStatus_BAD_PARAM 1
/**
 * Bytes handed to the plugin are damaged.
 */
#define KilnPluginStatus_INVALID_VALUE 2
/**
 * Valid, but cannot be used here (another device arch, a newer format).
 */
#define KilnPluginStatus_NOT_APPLICABLE 3
/**
 * The plugin does not support what was asked.
 */
#define KilnPluginStatus_NOT_SUPPORTED 4
#define KilnPluginStatus_ALLOC_FAILED 5
#define KilnPluginStatus_EXECUTION_FAILED 6
/**
 * A bug or a caught panic inside the plugin.
 */
#define KilnPluginStatus_INTERNAL_ERROR 7

/**
 * A knob an engine offers: values `min..=max` in steps of `stride`.
 */
typedef struct KilnKnobInfo {
  int64_t knob_id;
  /**
   * NUL-terminated name, owned by the plugin, valid while the plugin is loaded.
   */
  const char *name;
  int64_t min_value;
  int64_t max_value;
  int64_t stride;
  int64_t default_value;
} KilnKnobInfo;

/**
 * What a plugin says of one engine. All pointers are owned by the plugin and stay valid while
 * the plugin is loaded.
 */
typedef struct KilnEngineDetails {
  uint64_t engine_id;
  /**
   * NUL-terminated unique engine name; the engine ID is its FNV-1a 64 hash.
   */
  const char *name;
  /**
   * `KILN_BEHAVIOR_*` bits.
   */
  uint64_t behavior_notes;
  const struct KilnKnobInfo *knobs;
  size_t num_knobs;
} KilnEngineDetails;

/**
 * The device a plugin instance is bound to.
 */
typedef struct KilnDevice {
  /**
   * `KILN_DEVICE_CPU`, `KILN_DEVICE_CUDA` or `KILN_DEVICE_CUDA_TARGET`.
   */
  uint32_t kind;
  /**
   * Device ordinal (0 for the CPU; the SM number for `KILN_DEVICE_CUDA_TARGET`).
   */
  int32_t ordinal;
} KilnDevice;

/**
 * Opaque per-handle plugin instance.
 */
typedef void *KilnPluginInstance;

/**
 * A borrowed byte slice. `ptr` may be null only when `len` is 0.
 */
typedef struct KilnBytes {
  const uint8_t *ptr;
  size_t len;
} KilnBytes;

/**
 * One knob set to a value.
 */
typedef struct KilnKnobSetting {
  int64_t knob_id;
  int64_t value;
} KilnKnobSetting;

/**
 * An engine and its knob choices.
 */
typedef struct KilnEngineConfig {
  uint64_t engine_id;
  const struct KilnKnobSetting *knobs;
  size_t num_knobs;
} KilnEngineConfig;

/**
 * Opaque execution context (a compiled plan inside the plugin).
 */
typedef void *KilnExecutionContext;

/**
 * One tensor binding at execute: a UID and a pointer to its memory on the instance's device.
 */
typedef struct KilnTensorBinding {
  int64_t uid;
  void *ptr;
} KilnTensorBinding;

/**
 * What an execution context reads or writes of one bound tensor: its data type and how many
 * bytes from the bound pointer it may touch. The host compares these with the plan envelope's
 * tensor layouts when it restores a plan, so that a payload describing other tensors than its
 * envelope is refused at load instead of reaching memory it was not given.
 */
typedef struct KilnTensorExtent {
  int64_t uid;
  /**
   * The element type's stable code (kiln-core `DataType::code()`).
   */
  uint32_t data_type;
  /**
   * Reserved, 0.
   */
  uint32_t reserved;
  /**
   * Bytes from the bound pointer that the context may touch (the tensor's storage extent).
   */
  uint64_t storage_bytes;
} KilnTensorExtent;

/**
 * The plugin's function table. All hooks return a status; on failure the plugin sets its
 * per-thread last error, read with `get_last_error`.
 */
typedef struct KilnPluginTable {
  /**
   * `size_of::<KilnPluginTable>()` as the plugin was compiled; the host reads only the fields
   * that fit.
   */
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  /**
   * NUL-terminated plugin name (static).
   */
  const char *(*plugin_name)(void);
  /**
   * NUL-terminated plugin version (static).
   */
  const char *(*plugin_version)(void);
  /**
   * The calling thread's last error message, NUL-terminated, "" if none; valid until the
   * thread's next call into the plugin.
   */
  const char *(*get_last_error)(void);
  /**
   * Writes up to `capacity` engine IDs to `out` and the total count to `count`; `out` may be
   * null to ask for the count.
   */
  KilnPluginStatus (*get_engine_ids)(uint64_t *out, size_t capacity, size_t *count);
  /**
   * Fills `out` with the details of engine `engine_id`.
   */
  KilnPluginStatus (*get_engine_details)(uint64_t engine_id, struct KilnEngineDetails *out);
  /**
   * Creates an instance bound to `device`.
   */
  KilnPluginStatus (*create_instance)(struct KilnDevice device, KilnPluginInstance *out);
  KilnPluginStatus (*destroy_instance)(KilnPluginInstance instance);
  /**
   * Sets the stream later work is queued on (ignored by CPU plugins).
   */
  KilnPluginStatus (*set_stream)(KilnPluginInstance instance, void *stream);
  /**
   * The engines that can run `graph` (a kiln graph blob): up to `capacity` IDs in the plugin's
   * order of preference, and the total in `count`; `out` may be null to ask for the count.
   */
  KilnPluginStatus (*get_applicable_engine_ids)(KilnPluginInstance instance,
                                                struct KilnBytes graph,
                                                uint64_t *out,
                                                size_t capacity,
                                                size_t *count);
  /**
   * Builds an execution context for `config` and `graph` (a kiln graph blob).
   */
  KilnPluginStatus (*create_execution_context)(KilnPluginInstance instance,
                                               const struct KilnEngineConfig *config,
                                               struct KilnBytes graph,
                                               KilnExecutionContext *out);
  KilnPluginStatus (*destroy_execution_context)(KilnPluginInstance instance,
                                                KilnExecutionContext context);
  /**
   * Workspace bytes the context needs at execute.
   */
  KilnPluginStatus (*get_workspace_size)(KilnPluginInstance instance,
                                         KilnExecutionContext context,
                                         size_t *out);
  /**
   * Runs the context with `num_bindings` (uid, pointer) pairs and a workspace of at least the
   * context's workspace size (null when that is 0).
   */
  KilnPluginStatus (*execute)(KilnPluginInstance instance,
                              KilnExecutionContext context,
                              const struct KilnTensorBinding *bindings,
                              size_t num_bindings,
                              void *workspace);
  /**
   * Saves `context` (built for `engine_id`) to plugin-owned bytes in `out`; the host copies
   * them and always calls `destroy_serialized_execution_context` on them.
   */
  KilnPluginStatus (*serialize_execution_context)(KilnPluginInstance instance,
                                                  uint64_t engine_id,
                                                  KilnExecutionContext context,
                                                  struct KilnBytes *out);
  /**
   * Frees bytes returned by `serialize_execution_context` (with the instance that saved them)
   * or text returned by `describe_serialized_execution_context` (with a null instance).
   */
  void (*destroy_serialized_execution_context)(KilnPluginInstance instance, struct KilnBytes bytes);
  /**
   * Restores a context of engine `engine_id` from `payload`, a view of the loaded bytes that
   * is valid only during the call.
   */
  KilnPluginStatus (*create_execution_context_from_serialized)(KilnPluginInstance instance,
                                                               uint64_t engine_id,
                                                               struct KilnBytes payload,
                                                               KilnExecutionContext *out);
  /**
   * The tensors `context` binds at execute: up to `capacity` extents in `out` and the total
   * in `count`; `out` may be null to ask for the count. The host calls it on every restored
   * plan and refuses a plan whose extents contradict its envelope. `NOT_SUPPORTED` (or an
   * absent hook) means the plugin does not report them; the host then trusts its payload
   * checks (docs/plugin-development.md, trust model).
   */
  KilnPluginStatus (*get_execution_context_tensors)(KilnPluginInstance instance,
                                                    KilnExecutionContext context,
                                                    struct KilnTensorExtent *out,
                                                    size_t capacity,
                                                    size_t *count);
  /**
   * Describes `payload` (a saved execution context of engine `engine_id`, as
   * `serialize_execution_context` wrote it) for people, with no instance and no device: what
   * it holds and what it needs to load (format version, code objects and their target archs,
   * versions, knobs). On success `out` receives plugin-owned UTF-8 text (not NUL-terminated;
   * `len` bytes). Whoever allocates, frees: the host copies the text and always hands it back
   * to `destroy_serialized_execution_context` with a null instance, so a plugin exports this
   * hook only together with the three plan-serialization hooks (the host ignores it
   * otherwise). `NOT_SUPPORTED` means the plugin does not describe its payloads; damaged bytes
   * are `INVALID_VALUE` and a payload the plugin cannot read (a newer format) `NOT_APPLICABLE`,
   * as at restore. `payload` is valid only during the call.
   */
  KilnPluginStatus (*describe_serialized_execution_context)(uint64_t engine_id,
                                                            struct KilnBytes payload,
                                                            struct KilnBytes *out);
  /**
   * Where engine `engine_id` runs, for people (`kiln plugins`): NUL-terminated UTF-8 text
   * owned by the plugin and valid while it is loaded, e.g. "compute capability 9.0 only
   * (sm_90a)"; null when the plugin does not say (or knows no such engine). Informative
   * only: the host never decides anything on it (applicability is
   * `get_applicable_engine_ids`'s).
   */
  const char *(*get_engine_targets)(uint64_t engine_id);
} KilnPluginTable;

#endif  /* KILN_PLUGIN_H */
