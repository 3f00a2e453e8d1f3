#ifndef KILN_H
#define KILN_H

/* Generated from crates/kiln-capi by cbindgen; do not edit. Regenerate with
   KILN_REGEN_HEADERS=1 cargo test -p kiln-capi --test header */

#include <stddef.h>
#include <stdint.h>

/**
 * `kiln_blob_info_t.kind` of a graph blob.
 */
#define KILN_BLOB_KIND_GRAPH 1

/**
 * `kiln_blob_info_t.kind` of a bare plan blob.
 */
#define KILN_BLOB_KIND_PLAN 2

/**
 * `kiln_blob_info_t.kind` of a graph-and-plan container.
 */
#define KILN_BLOB_KIND_GRAPH_AND_PLAN 3

/**
 * Room for a name in `kiln_blob_info_t`, the terminating NUL included.
 */
#define KILN_NAME_CAPACITY 128

/**
 * Room for the first problem in `kiln_blob_info_t`, the terminating NUL included.
 */
#define KILN_PROBLEM_CAPACITY 512

/**
 * A validated operation graph and its saved form (a graph blob). Made by `kiln_graph_from_json`
 * or `kiln_graph_deserialize`, released by `kiln_graph_destroy`. Immutable: it may be read from
 * several threads at once. Opaque; every function checks that it is given a live graph
 * (docs/c-api.md, "Objects").
 */
typedef struct kiln_graph_t kiln_graph_t;

/**
 * A handle bound to one device, with one instance of every engine plugin that accepts it.
 * Created by `kiln_handle_create`, released by `kiln_handle_destroy`. A handle may be used from
 * several threads at once. Opaque; every function checks that it is given a live handle
 * (docs/c-api.md, "Objects").
 */
typedef struct kiln_handle_t kiln_handle_t;

/**
 * A compiled plan bound to the device of the handle it was built or loaded with. Immutable: it
 * may be executed from several threads at once, each with its own workspace and outputs.
 * Released by `kiln_plan_destroy`. Opaque; every function checks that it is given a live plan
 * (docs/c-api.md, "Objects").
 */
typedef struct kiln_plan_t kiln_plan_t;

/**
 * A status code returned by every `kiln_*` function: `KILN_STATUS_SUCCESS` (0) or one of the
 * error codes below. The numbering is stable and equals `kiln_core::Status`.
 */
typedef int32_t kiln_status_t;

/**
 * What `kiln_probe` found out about a blob. Numbers that the blob's kind does not have are 0;
 * strings it does not have are empty. Strings are NUL-terminated and cut (at a character
 * boundary) when longer than their array.
 */
typedef struct kiln_blob_info_t {
  /**
   * `KILN_BLOB_KIND_GRAPH`, `KILN_BLOB_KIND_PLAN` or `KILN_BLOB_KIND_GRAPH_AND_PLAN`.
   */
  int32_t kind;
  /**
   * The preamble's format version.
   */
  uint32_t format_version;
  /**
   * The plan envelope's version (1 or 2); 0 when the blob holds no plan.
   */
  uint32_t envelope_version;
  /**
   * 1 when the matching loader accepts the bytes, else 0 (`problem` says why).
   */
  int32_t loadable;
  /**
   * 1 when every body has the CRC-32 its preamble stores, else 0.
   */
  int32_t checksum_ok;
  /**
   * The body CRC-32 stored in the preamble.
   */
  uint32_t checksum;
  /**
   * The plan's engine ID.
   */
  uint64_t engine_id;
  /**
   * Workspace bytes the plan needs.
   */
  uint64_t workspace_size;
  /**
   * Number of tensor UIDs the plan binds.
   */
  uint64_t tensor_uid_count;
  /**
   * Size of the plugin payload.
   */
  uint64_t payload_bytes;
  /**
   * Number of tensors of the graph.
   */
  uint64_t graph_tensors;
  /**
   * Number of nodes of the graph.
   */
  uint64_t graph_nodes;
  /**
   * Size of the nested plan blob of a container.
   */
  uint64_t plan_blob_bytes;
  /**
   * Length of the bytes probed.
   */
  uint64_t total_bytes;
  /**
   * The plan's engine name.
   */
  char engine_name[KILN_NAME_CAPACITY];
  /**
   * The plugin's name (diagnostic).
   */
  char plugin_name[KILN_NAME_CAPACITY];
  /**
   * The plugin's version (diagnostic).
   */
  char plugin_version[KILN_NAME_CAPACITY];
  /**
   * The graph's name.
   */
  char graph_name[KILN_NAME_CAPACITY];
  /**
   * The first problem that keeps the blob from loading; empty when `loadable` is 1.
   */
  char problem[KILN_PROBLEM_CAPACITY];
} kiln_blob_info_t;

/**
 * The call succeeded.
 */
#define KILN_STATUS_SUCCESS 0

/**
 * An argument is wrong: bad JSON, damaged or foreign bytes, a plan where a graph is expected,
 * an unknown tensor UID, a misaligned pointer.
 */
#define KILN_STATUS_BAD_PARAM 1

/**
 * A required pointer argument is null.
 */
#define KILN_STATUS_BAD_PARAM_NULL_POINTER 2

/**
 * The caller's buffer is smaller than the size the call reports; nothing was written.
 */
#define KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT 3

/**
 * Valid, but not possible here: no engine for the graph or device, a newer format version, an
 * engine that cannot save its plans.
 */
#define KILN_STATUS_NOT_SUPPORTED 4

/**
 * Something needed first was not done.
 */
#define KILN_STATUS_NOT_INITIALIZED 5

/**
 * Memory could not be allocated.
 */
#define KILN_STATUS_ALLOC_FAILED 6

/**
 * An engine plugin refused or failed; its message is in `kiln_get_last_error()`.
 */
#define KILN_STATUS_PLUGIN_ERROR 7

/**
 * Execution started but failed.
 */
#define KILN_STATUS_EXECUTION_FAILED 8

/**
 * A bug in kiln (a caught panic included); please report it with the last error message.
 */
#define KILN_STATUS_INTERNAL_ERROR 9

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * The calling thread's last error message: that of the most recent call on this thread that
 * returned an error, prefixed with the function's name; `""` when no call has failed on this
 * thread. Successful calls leave it unchanged. The string is owned by kiln and valid until the
 * next failing call on the same thread; copy it to keep it. Never returns null.
 */
const char *kiln_get_last_error(void);

/**
 * The name of status `status` as a static NUL-terminated string (`"KILN_STATUS_BAD_PARAM"`),
 * or `"KILN_STATUS_UNKNOWN"` for a code kiln does not define. Never returns null.
 */
const char *kiln_status_name(kiln_status_t status);

/**
 * Reads a graph from `len` bytes of JSON text (the JSON mirror of the graph blob, described in
 * docs/format.md; need not be NUL-terminated) and validates it.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `json` or `out` is null;
 * `KILN_STATUS_BAD_PARAM` for text that is not UTF-8, not JSON of a graph (the message gives
 * line and column) or a graph that does not validate (the message names the tensor or node).
 * On failure `*out` is set to null.
 *
 * # Safety
 * `json` must address `len` readable bytes; `out` must be writable.
 */
kiln_status_t kiln_graph_from_json(const char *json, size_t len, struct kiln_graph_t **out);

/**
 * Loads a graph from saved bytes: a graph blob, or a graph-and-plan container of which only the
 * graph is kept (load its plan with `kiln_plan_deserialize`).
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `bytes` or `out` is null;
 * `KILN_STATUS_BAD_PARAM` for a bare plan blob (the message says to use the plan loader) and for
 * damaged, truncated or foreign bytes (the message names the field or offset);
 * `KILN_STATUS_NOT_SUPPORTED` for a newer format version. On failure `*out` is set to null.
 *
 * # Safety
 * `bytes` must address `len` readable bytes; `out` must be writable.
 */
kiln_status_t kiln_graph_deserialize(const uint8_t *bytes, size_t len, struct kiln_graph_t **out);

/**
 * Saves the graph (a graph blob), with the two-call pattern: with `buf` null, stores the size in
 * `*size` and returns `KILN_STATUS_SUCCESS`; with a `buf` of `requested` bytes, stores the size
 * and copies the blob, or returns `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` and writes nothing
 * to `buf` when `requested` is smaller than the size. The bytes are the same on every call.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `graph` or `size` is null.
 *
 * # Safety
 * `graph` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked); `size` writable; a non-null `buf` must address `requested` writable bytes.
 */
kiln_status_t kiln_graph_serialize(const struct kiln_graph_t *graph,
                                   size_t requested,
                                   size_t *size,
                                   uint8_t *buf);

/**
 * Destroys a graph. Plans built from it do not depend on it and stay usable. Null is accepted
 * and does nothing; a graph destroyed before (a double destroy), or another kind of object, is
 * `KILN_STATUS_BAD_PARAM`. The pointer stays recognisable as a destroyed graph: every later call
 * with it is `KILN_STATUS_BAD_PARAM`.
 *
 * # Safety
 * `graph` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked).
 */
kiln_status_t kiln_graph_destroy(struct kiln_graph_t *graph);

/**
 * Creates a handle on `device`: `"cpu"`, or `"cuda:N"` for CUDA GPU number N (`"cuda"` is
 * `"cuda:0"`). Engine plugins are discovered on first use: the built-in CPU engines, then the
 * libraries named by `KILN_PLUGIN_PATH`, then `kiln-plugins/` next to the executable.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `out` or `device` is null,
 * `KILN_STATUS_BAD_PARAM` for a device string of another form or not UTF-8, and
 * `KILN_STATUS_NOT_SUPPORTED` when no engine runs on the device (a CUDA device without a CUDA
 * engine plugin). On failure `*out` is set to null.
 *
 * # Safety
 * `out` must be writable; `device` must be a NUL-terminated string.
 */
kiln_status_t kiln_handle_create(struct kiln_handle_t **out, const char *device);

/**
 * Sets the stream that work queued through `handle` runs on, for every engine plugin of the
 * handle: a `CUstream` for a CUDA handle, or null for the device's default stream (the initial
 * state). CPU handles accept any value and ignore it. The stream applies to calls made after
 * this one returns (`kiln_plan_execute` with this handle), from any thread; plans are not bound
 * to a stream.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `handle` is null, `KILN_STATUS_BAD_PARAM`
 * when it is not a live handle, and `KILN_STATUS_PLUGIN_ERROR` when a plugin refuses the stream.
 *
 * # Safety
 * `handle` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked). On a CUDA handle, a non-null
 * `stream` must be a live stream of the handle's device, in the CUDA context kiln uses for it
 * (the device's primary context), that outlives the work queued on it.
 */
kiln_status_t kiln_handle_set_stream(struct kiln_handle_t *handle, void *stream);

/**
 * Destroys a handle made by `kiln_handle_create`. Plans loaded or built with it keep their own
 * reference to its plugins and stay usable. Null is accepted and does nothing; a handle
 * destroyed before (a double destroy), or another kind of object, is `KILN_STATUS_BAD_PARAM`.
 * The pointer stays recognisable as a destroyed handle: every later call with it is
 * `KILN_STATUS_BAD_PARAM`.
 *
 * # Safety
 * `handle` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked).
 */
kiln_status_t kiln_handle_destroy(struct kiln_handle_t *handle);

/**
 * Builds a plan for `graph` on `handle`'s device with the default heuristics: engines in their
 * heuristic order (optimized first, the reference engine last); the first that builds is kept.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when an argument is null,
 * `KILN_STATUS_NOT_SUPPORTED` when no engine on the device supports the graph (each engine's
 * reason is in the message). On failure `*out` is set to null.
 *
 * # Safety
 * `handle` and `graph` must be null or objects of this API (any kind, live or destroyed: the
 * kind and state are checked); `out` must be writable.
 */
kiln_status_t kiln_graph_build_plan(struct kiln_handle_t *handle,
                                    struct kiln_graph_t *graph,
                                    struct kiln_plan_t **out);

/**
 * Saves the plan alone (a bare plan blob), with the two-call pattern of `kiln_graph_serialize`.
 * A plan loaded from bytes saves to exactly the plan bytes it was loaded from, without calling
 * its engine (so the re-save holds the original kernel; build again from the graph for a newer
 * one); a built plan asks its engine once, on the first save, and returns the same bytes
 * afterwards.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `plan` or `size` is null,
 * `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` when `requested` is too small (nothing written),
 * `KILN_STATUS_NOT_SUPPORTED` when the plan's engine cannot save plans, and
 * `KILN_STATUS_PLUGIN_ERROR` when its save fails.
 *
 * # Safety
 * `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked); `size` writable; a non-null `buf` must address `requested` writable bytes.
 */
kiln_status_t kiln_plan_serialize(const struct kiln_plan_t *plan,
                                  size_t requested,
                                  size_t *size,
                                  uint8_t *buf);

/**
 * Restores a plan on `handle`'s device from saved bytes, without rebuilding: a bare plan blob,
 * or a graph-and-plan container of which the plan part is kept. Its re-save returns exactly the
 * plan bytes it was loaded from: the original kernel, provider version and format versions. The
 * plan keeps one copy of those bytes (code objects included) for its lifetime. To run a newer
 * kernel after upgrading a provider, build the plan again from its graph.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when an argument is null; `KILN_STATUS_BAD_PARAM`
 * for a graph-only blob (the message says to use the graph loader) and for damaged, truncated
 * or foreign bytes; `KILN_STATUS_NOT_SUPPORTED` when the plan's engine is not available on the
 * handle or the format version is newer; `KILN_STATUS_PLUGIN_ERROR` when the engine refuses
 * the payload (its message is kept). On failure `*out` is set to null and nothing is kept.
 *
 * # Safety
 * `handle` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked); `bytes` must address `len` readable bytes; `out` writable.
 */
kiln_status_t kiln_plan_deserialize(struct kiln_handle_t *handle,
                                    const uint8_t *bytes,
                                    size_t len,
                                    struct kiln_plan_t **out);

/**
 * Saves `graph` together with `plan` (a graph-and-plan container), with the two-call pattern of
 * `kiln_graph_serialize`. The plan part is the plan's saved bytes (see `kiln_plan_serialize`).
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `graph`, `plan` or `size` is null;
 * `KILN_STATUS_BAD_PARAM` when the plan binds other tensor UIDs than the graph's (it was built
 * for another graph); `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` when `requested` is too small
 * (nothing written); `KILN_STATUS_NOT_SUPPORTED` when the plan's engine cannot save plans.
 *
 * # Safety
 * `graph` and `plan` must be null or objects of this API (any kind, live or destroyed: the
 * kind and state are checked); `size` writable; a non-null `buf` must address `requested`
 * writable bytes.
 */
kiln_status_t kiln_graph_and_plan_serialize(const struct kiln_graph_t *graph,
                                            const struct kiln_plan_t *plan,
                                            size_t requested,
                                            size_t *size,
                                            uint8_t *buf);

/**
 * Stores in `*out` the workspace bytes `kiln_plan_execute` needs (0: none, the workspace may be
 * null).
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when an argument is null.
 *
 * # Safety
 * `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked); `out` writable.
 */
kiln_status_t kiln_plan_workspace_size(const struct kiln_plan_t *plan, size_t *out);

/**
 * The UIDs of the tensors `kiln_plan_execute` must bind, with the two-call pattern: stores their
 * number in `*count`; with `uids` null that is all; with `capacity` smaller than the number,
 * returns `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` and writes nothing to `uids`; otherwise
 * copies them.
 *
 * Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `plan` or `count` is null.
 *
 * # Safety
 * `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked); `count` writable; a non-null `uids` must address `capacity` writable
 * `int64_t`.
 */
kiln_status_t kiln_plan_tensor_uids(const struct kiln_plan_t *plan,
                                    int64_t *uids,
                                    size_t capacity,
                                    size_t *count);

/**
 * Runs `plan` on `handle` with `count` (UID, pointer) bindings and `workspace`.
 *
 * Checked, each with an error naming the UID: `count` is at most the number of UIDs of
 * `kiln_plan_tensor_uids` (checked first, before anything is read or allocated); `handle` is on
 * the plan's device; every UID of
 * `kiln_plan_tensor_uids` is bound exactly once and no other; no pointer is null; each pointer
 * meets its tensor's alignment (version-2 plans); the workspace is non-null when
 * `kiln_plan_workspace_size` is not 0. These give `KILN_STATUS_BAD_PARAM` or
 * `KILN_STATUS_BAD_PARAM_NULL_POINTER`; an engine failure gives `KILN_STATUS_PLUGIN_ERROR` or
 * `KILN_STATUS_EXECUTION_FAILED`.
 *
 * Not checkable here, and so the caller's duty: each pointer addresses memory of the plan's
 * device large enough for its tensor's layout (dims, strides, data type of the graph), valid for
 * the call; outputs do not overlap other bound memory; the workspace holds at least
 * `kiln_plan_workspace_size` bytes and is not used by another call at the same time.
 *
 * # Safety
 * As above; `handle` and `plan` must be null or objects of this API (any kind, live or
 * destroyed: the kind and state are checked); `uids` and `pointers` must address `count`
 * readable elements (they may be null when `count` is 0).
 */
kiln_status_t kiln_plan_execute(struct kiln_handle_t *handle,
                                const struct kiln_plan_t *plan,
                                const int64_t *uids,
                                void *const *pointers,
                                size_t count,
                                void *workspace);

/**
 * Destroys a plan. Null is accepted and does nothing; a plan destroyed before (a double
 * destroy), or another kind of object, is `KILN_STATUS_BAD_PARAM`. The pointer stays
 * recognisable as a destroyed plan: every later call with it is `KILN_STATUS_BAD_PARAM`. A call
 * still running with the plan on another thread keeps it alive until it returns.
 *
 * # Safety
 * `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
 * state are checked).
 */
kiln_status_t kiln_plan_destroy(struct kiln_plan_t *plan);

/**
 * Says what `len` bytes are without a handle or plugin: kind, format and envelope versions,
 * engine and plugin names, sizes, graph counts and checksum state, and whether the matching
 * loader would accept them (`loadable`, with the first `problem`).
 *
 * Damaged bytes with a readable preamble are `KILN_STATUS_SUCCESS` with `loadable` 0. Returns
 * `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `bytes` or `out` is null; `KILN_STATUS_BAD_PARAM`
 * for bytes that are not a kiln blob (too short, wrong magic, unknown kind), and
 * `KILN_STATUS_NOT_SUPPORTED` for a newer format version; `*out` is then left unchanged.
 *
 * # Safety
 * `bytes` must address `len` readable bytes; `out` must be writable.
 */
kiln_status_t kiln_probe(const uint8_t *bytes, size_t len, struct kiln_blob_info_t *out);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* KILN_H */
