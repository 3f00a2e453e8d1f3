/* kiln's C API exercised from C: build a graph from JSON, build its plan, save it, load it on a
 * fresh handle, re-save and compare bytes, save and load a graph-and-plan container, execute the
 * loaded plan on the CPU and check the result, and check the error paths (null pointers, too
 * small buffers, a plan given to the graph loader, objects of the wrong kind, zeroed, foreign or
 * destroyed, double destroys), that the CUDA provider is built in, and setting a stream.
 *
 * Compiled and run by tests/c_api.rs; exits 0 when every check passes. */

#include "kiln.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, \
                    #cond, kiln_get_last_error());                                             \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

#define CHECK_STATUS(call, want)                                                               \
    do {                                                                                       \
        kiln_status_t st_ = (call);                                                            \
        if (st_ != (want)) {                                                                   \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n", __FILE__, \
                    __LINE__, #call, kiln_status_name(st_), kiln_status_name(want),            \
                    kiln_get_last_error());                                                    \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

#define OK(call) CHECK_STATUS(call, KILN_STATUS_SUCCESS)

/* y = relu(x + b), x [2, 3], b [1, 3] broadcast over rows. */
static const char GRAPH_JSON[] =
    "{\"name\": \"c roundtrip\", \"tensors\": ["
    "{\"uid\": 1, \"name\": \"x\", \"dims\": [2, 3], \"strides\": [3, 1], \"data_type\": \"f32\"},"
    "{\"uid\": 2, \"name\": \"b\", \"dims\": [1, 3], \"strides\": [3, 1], \"data_type\": \"f32\"},"
    "{\"uid\": 3, \"name\": \"sum\", \"dims\": [2, 3], \"strides\": [3, 1], \"data_type\": \"f32\","
    " \"is_virtual\": true},"
    "{\"uid\": 4, \"name\": \"y\", \"dims\": [2, 3], \"strides\": [3, 1], \"data_type\": \"f32\"}],"
    "\"nodes\": ["
    "{\"name\": \"add\", \"op\": \"pointwise\", \"mode\": \"add\", \"a\": 1, \"b\": 2, \"out\": 3},"
    "{\"name\": \"relu\", \"op\": \"pointwise\", \"mode\": \"relu\", \"a\": 3, \"out\": 4}]}";

/* Saves with the two-call pattern and checks that a too small buffer is refused untouched.
 * Returns a malloc'd buffer of *size bytes, or NULL. */
static uint8_t *save_plan(const kiln_plan_t *plan, size_t *size) {
    OK(kiln_plan_serialize(plan, 0, size, NULL));
    CHECK(*size > 32);
    uint8_t *small = malloc(*size);
    if (small == NULL) return NULL;
    memset(small, 0xAB, *size);
    size_t reported = 0;
    CHECK_STATUS(kiln_plan_serialize(plan, *size - 1, &reported, small),
                 KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
    CHECK(reported == *size);
    for (size_t i = 0; i < *size; i++) {
        if (small[i] != 0xAB) {
            CHECK(!"a too small buffer was written to");
            break;
        }
    }
    OK(kiln_plan_serialize(plan, *size, &reported, small));
    CHECK(reported == *size);
    return small;
}

/* The library as built by `cargo build -p kiln-capi` registers the CUDA kernel provider: on a
 * machine with a CUDA GPU "cuda:0" gets a handle; without one, the provider itself answers (no
 * driver, no such GPU), never "no CUDA engine is available". */
static void check_cuda_provider_is_built_in(void) {
    kiln_handle_t *gpu = NULL;
    kiln_status_t st = kiln_handle_create(&gpu, "cuda:0");
    if (st == KILN_STATUS_SUCCESS) {
        CHECK(gpu != NULL);
        OK(kiln_handle_set_stream(gpu, NULL));
        OK(kiln_handle_destroy(gpu));
        printf("cuda:0: a handle was made\n");
        return;
    }
    const char *why = kiln_get_last_error();
    printf("cuda:0: %s\n", why);
    CHECK(st == KILN_STATUS_NOT_SUPPORTED);
    CHECK(gpu == NULL);
    CHECK(strstr(why, "the CUDA engine plugin kiln-cuda cannot run on it here") != NULL);
    /* The provider's own reason (no driver, here) follows, after the plugin's name again. */
    const char *again = strstr(why, "kiln-cuda");
    CHECK(again != NULL && strstr(again + 1, "kiln-cuda") != NULL);
    CHECK(strstr(why, "no CUDA engine is available") == NULL);
}

/* Bytes that are no kiln object: long and aligned enough for the check to read their start. */
typedef struct {
    uint64_t words[8];
} foreign_memory;

/* Whether the last error names the expected type and says what was found. */
static int refusal_says(const char *expected, const char *found) {
    const char *e = kiln_get_last_error();
    return strstr(e, expected) != NULL && strstr(e, found) != NULL;
}

#define REFUSED(call, expected, found)                                                           \
    do {                                                                                          \
        CHECK_STATUS(call, KILN_STATUS_BAD_PARAM);                                                \
        if (!refusal_says(expected, found)) {                                                     \
            fprintf(stderr, "%s:%d: %s: the message does not name '%s' and '%s': %s\n", __FILE__, \
                    __LINE__, #call, expected, found, kiln_get_last_error());                     \
            failures++;                                                                           \
        }                                                                                         \
    } while (0)

/* Calls every entry point that takes an object with a bad pointer in each object position in
 * turn (`bad_h` where a handle is expected, and so on; good objects elsewhere) and checks that
 * each call is BAD_PARAM naming the expected type and `found_*`, and that nothing is written. */
static void check_refusals(kiln_handle_t *h, kiln_graph_t *g, kiln_plan_t *p, void *bad_h,
                           const char *found_h, void *bad_g, const char *found_g, void *bad_p,
                           const char *found_p) {
    kiln_handle_t *bh = (kiln_handle_t *)bad_h;
    kiln_graph_t *bg = (kiln_graph_t *)bad_g;
    kiln_plan_t *bp = (kiln_plan_t *)bad_p;
    const char *H = "kiln_handle_t", *G = "kiln_graph_t", *P = "kiln_plan_t";
    size_t size = 12345;
    uint8_t buf[16];
    int64_t uids[4] = {0};
    void *pointers[4] = {buf, buf, buf, buf};
    const uint8_t bytes[8] = {0};

    REFUSED(kiln_handle_set_stream(bh, NULL), H, found_h);
    REFUSED(kiln_handle_destroy(bh), H, found_h);

    REFUSED(kiln_graph_serialize(bg, sizeof buf, &size, buf), G, found_g);
    CHECK(size == 12345);
    REFUSED(kiln_graph_destroy(bg), G, found_g);

    kiln_plan_t *out = p;
    REFUSED(kiln_graph_build_plan(bh, g, &out), H, found_h);
    CHECK(out == NULL);
    out = p;
    REFUSED(kiln_graph_build_plan(h, bg, &out), G, found_g);
    CHECK(out == NULL);
    out = p;
    REFUSED(kiln_plan_deserialize(bh, bytes, sizeof bytes, &out), H, found_h);
    CHECK(out == NULL);

    REFUSED(kiln_plan_serialize(bp, sizeof buf, &size, buf), P, found_p);
    REFUSED(kiln_graph_and_plan_serialize(bg, p, sizeof buf, &size, buf), G, found_g);
    REFUSED(kiln_graph_and_plan_serialize(g, bp, sizeof buf, &size, buf), P, found_p);
    CHECK(size == 12345);
    size_t ws = 12345;
    REFUSED(kiln_plan_workspace_size(bp, &ws), P, found_p);
    CHECK(ws == 12345);
    size_t count = 12345;
    REFUSED(kiln_plan_tensor_uids(bp, uids, 4, &count), P, found_p);
    CHECK(count == 12345);
    REFUSED(kiln_plan_execute(bh, p, uids, pointers, 0, NULL), H, found_h);
    REFUSED(kiln_plan_execute(h, bp, uids, pointers, 0, NULL), P, found_p);
    REFUSED(kiln_plan_destroy(bp), P, found_p);
}

/* Objects know what they are: a wrong kind, zeroed or foreign memory, a destroyed object and a
 * double destroy are BAD_PARAM at every entry point, and the good objects stay usable. */
static void check_objects(kiln_handle_t *h, kiln_graph_t *g, kiln_plan_t *p) {
    /* Each kind where each other kind is expected (a graph given as a plan used to hang). */
    check_refusals(h, g, p, g, "found a kiln_graph_t", p, "found a kiln_plan_t", h,
                   "found a kiln_handle_t");
    check_refusals(h, g, p, p, "found a kiln_plan_t", h, "found a kiln_handle_t", g,
                   "found a kiln_graph_t");

    foreign_memory *zeroed = calloc(1, sizeof(foreign_memory));
    CHECK(zeroed != NULL);
    if (zeroed == NULL) return;
    check_refusals(h, g, p, zeroed, "zeroed memory", zeroed, "zeroed memory", zeroed,
                   "zeroed memory");
    foreign_memory other;
    memset(&other, 0x5A, sizeof other);
    check_refusals(h, g, p, &other, "not a kiln object", &other, "not a kiln object", &other,
                   "not a kiln object");
    char *misaligned = (char *)zeroed + 1;
    check_refusals(h, g, p, misaligned, "misaligned", misaligned, "misaligned", misaligned,
                   "misaligned");
    free(zeroed);

    /* Destroyed objects: every call with them is refused, destroy included (a double destroy). */
    kiln_handle_t *dead_h = NULL;
    kiln_graph_t *dead_g = NULL;
    kiln_plan_t *dead_p = NULL;
    OK(kiln_handle_create(&dead_h, "cpu"));
    OK(kiln_graph_from_json(GRAPH_JSON, strlen(GRAPH_JSON), &dead_g));
    OK(kiln_graph_build_plan(dead_h, dead_g, &dead_p));
    OK(kiln_plan_destroy(dead_p));
    OK(kiln_graph_destroy(dead_g));
    OK(kiln_handle_destroy(dead_h));
    REFUSED(kiln_plan_destroy(dead_p), "kiln_plan_t", "destroyed before (a double destroy)");
    REFUSED(kiln_graph_destroy(dead_g), "kiln_graph_t", "destroyed before (a double destroy)");
    REFUSED(kiln_handle_destroy(dead_h), "kiln_handle_t", "destroyed before (a double destroy)");
    check_refusals(h, g, p, dead_h, "destroyed", dead_g, "destroyed", dead_p, "destroyed");
    REFUSED(kiln_plan_workspace_size(dead_p, &(size_t){0}), "kiln_plan_t",
            "found a destroyed kiln_plan_t (it was passed to kiln_plan_destroy before)");

    /* None of the refused destroys touched the good objects. */
    size_t n = 0;
    OK(kiln_graph_serialize(g, 0, &n, NULL));
    OK(kiln_plan_workspace_size(p, &n));
    OK(kiln_handle_set_stream(h, NULL));
}

int main(void) {
    CHECK(strcmp(kiln_get_last_error(), "") == 0);

    /* Null pointers are refused with a message. */
    kiln_graph_t *graph = NULL;
    CHECK_STATUS(kiln_graph_from_json(NULL, 3, &graph), KILN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK(strstr(kiln_get_last_error(), "json") != NULL);
    CHECK_STATUS(kiln_handle_create(NULL, "cpu"), KILN_STATUS_BAD_PARAM_NULL_POINTER);

    kiln_handle_t *handle = NULL;
    OK(kiln_handle_create(&handle, "cpu"));
    CHECK(handle != NULL);

    check_cuda_provider_is_built_in();
    kiln_handle_t *gpu = NULL;
    CHECK_STATUS(kiln_handle_create(&gpu, "tpu"), KILN_STATUS_BAD_PARAM);
    CHECK(gpu == NULL);

    /* A CPU handle takes any stream and ignores it; a null handle is refused. */
    OK(kiln_handle_set_stream(handle, NULL));
    int not_a_stream = 0;
    OK(kiln_handle_set_stream(handle, &not_a_stream));
    CHECK_STATUS(kiln_handle_set_stream(NULL, NULL), KILN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK(strstr(kiln_get_last_error(), "kiln_handle_set_stream") != NULL);

    /* Bad JSON is BAD_PARAM naming the place. */
    CHECK_STATUS(kiln_graph_from_json("{\"name\": ", 9, &graph), KILN_STATUS_BAD_PARAM);
    CHECK(graph == NULL);
    CHECK(strstr(kiln_get_last_error(), "line") != NULL);

    OK(kiln_graph_from_json(GRAPH_JSON, strlen(GRAPH_JSON), &graph));
    kiln_plan_t *plan = NULL;
    OK(kiln_graph_build_plan(handle, graph, &plan));
    CHECK(plan != NULL);

    size_t plan_size = 0;
    uint8_t *plan_bytes = save_plan(plan, &plan_size);
    CHECK(plan_bytes != NULL);
    if (plan_bytes == NULL) return 1;

    kiln_blob_info_t info;
    OK(kiln_probe(plan_bytes, plan_size, &info));
    CHECK(info.kind == KILN_BLOB_KIND_PLAN);
    CHECK(info.format_version == 1);
    CHECK(info.envelope_version == 2);
    CHECK(info.loadable == 1 && info.checksum_ok == 1);
    CHECK(info.total_bytes == plan_size);
    CHECK(info.tensor_uid_count == 3);
    CHECK(strncmp(info.engine_name, "KILN_CPU_", 9) == 0);
    CHECK(info.plugin_name[0] != '\0' && info.plugin_version[0] != '\0');
    CHECK(info.problem[0] == '\0');

    /* The graph loader refuses a bare plan and says which loader to use. */
    kiln_graph_t *wrong = NULL;
    CHECK_STATUS(kiln_graph_deserialize(plan_bytes, plan_size, &wrong), KILN_STATUS_BAD_PARAM);
    CHECK(wrong == NULL);
    CHECK(strstr(kiln_get_last_error(), "plan") != NULL);

    /* Load on a fresh handle, re-save: byte-identical. */
    kiln_handle_t *fresh = NULL;
    OK(kiln_handle_create(&fresh, "cpu"));
    kiln_plan_t *loaded = NULL;
    OK(kiln_plan_deserialize(fresh, plan_bytes, plan_size, &loaded));
    size_t resaved_size = 0;
    uint8_t *resaved = save_plan(loaded, &resaved_size);
    CHECK(resaved != NULL && resaved_size == plan_size);
    CHECK(resaved != NULL && memcmp(resaved, plan_bytes, plan_size) == 0);

    /* A damaged plan is refused, and nothing is made. */
    plan_bytes[plan_size - 1] ^= 0x5A;
    kiln_plan_t *damaged = NULL;
    CHECK_STATUS(kiln_plan_deserialize(fresh, plan_bytes, plan_size, &damaged), KILN_STATUS_BAD_PARAM);
    CHECK(damaged == NULL);
    CHECK(strstr(kiln_get_last_error(), "checksum") != NULL);
    plan_bytes[plan_size - 1] ^= 0x5A;

    /* Graph and plan in one container: the graph loader keeps the graph, the plan loader the
     * plan, whose re-save is the original plan bytes. */
    size_t both_size = 0;
    OK(kiln_graph_and_plan_serialize(graph, loaded, 0, &both_size, NULL));
    uint8_t *both = malloc(both_size);
    CHECK(both != NULL);
    if (both == NULL) return 1;
    OK(kiln_graph_and_plan_serialize(graph, loaded, both_size, &both_size, both));
    OK(kiln_probe(both, both_size, &info));
    CHECK(info.kind == KILN_BLOB_KIND_GRAPH_AND_PLAN);
    CHECK(info.graph_tensors == 4 && info.graph_nodes == 2);
    CHECK(strcmp(info.graph_name, "c roundtrip") == 0);
    kiln_graph_t *graph2 = NULL;
    OK(kiln_graph_deserialize(both, both_size, &graph2));
    size_t g1 = 0, g2 = 0;
    OK(kiln_graph_serialize(graph, 0, &g1, NULL));
    OK(kiln_graph_serialize(graph2, 0, &g2, NULL));
    CHECK(g1 == g2);
    kiln_plan_t *from_container = NULL;
    OK(kiln_plan_deserialize(fresh, both, both_size, &from_container));
    size_t fc_size = 0;
    uint8_t *fc_bytes = save_plan(from_container, &fc_size);
    CHECK(fc_bytes != NULL && fc_size == plan_size && memcmp(fc_bytes, plan_bytes, plan_size) == 0);

    /* The tensors to bind, with the two-call pattern. */
    size_t count = 0;
    OK(kiln_plan_tensor_uids(loaded, NULL, 0, &count));
    CHECK(count == 3);
    int64_t uids[8] = {0};
    CHECK_STATUS(kiln_plan_tensor_uids(loaded, uids, 1, &count), KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
    CHECK(uids[0] == 0);
    OK(kiln_plan_tensor_uids(loaded, uids, 8, &count));
    int seen = 0;
    for (size_t i = 0; i < count; i++) {
        if (uids[i] == 1 || uids[i] == 2 || uids[i] == 4) seen++;
    }
    CHECK(seen == 3);

    /* Execute the loaded plan on the fresh handle. */
    float x[6] = {-1.0f, 2.0f, -3.0f, 4.0f, -5.0f, 6.0f};
    float b[3] = {0.5f, -2.5f, 1.0f};
    float y[6] = {0};
    size_t ws_size = 0;
    OK(kiln_plan_workspace_size(loaded, &ws_size));
    void *workspace = ws_size ? malloc(ws_size) : NULL;
    int64_t bind_uids[3] = {1, 2, 4};
    void *const pointers[3] = {x, b, y};
    OK(kiln_plan_execute(fresh, loaded, bind_uids, pointers, 3, workspace));
    for (int i = 0; i < 6; i++) {
        float want = x[i] + b[i % 3];
        if (want < 0.0f) want = 0.0f;
        if (fabsf(y[i] - want) > 1e-6f) {
            fprintf(stderr, "y[%d] = %g, expected %g\n", i, y[i], want);
            failures++;
        }
    }

    /* Execute checks what it can: a missing binding, an unknown uid, a null pointer. */
    CHECK_STATUS(kiln_plan_execute(fresh, loaded, bind_uids, pointers, 2, workspace), KILN_STATUS_BAD_PARAM);
    CHECK(strstr(kiln_get_last_error(), "uid 4") != NULL);
    int64_t unknown[3] = {1, 2, 99};
    CHECK_STATUS(kiln_plan_execute(fresh, loaded, unknown, pointers, 3, workspace), KILN_STATUS_BAD_PARAM);
    CHECK(strstr(kiln_get_last_error(), "99") != NULL);
    void *const with_null[3] = {x, NULL, y};
    CHECK_STATUS(kiln_plan_execute(fresh, loaded, bind_uids, with_null, 3, workspace),
                 KILN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(kiln_plan_execute(fresh, NULL, bind_uids, pointers, 3, workspace),
                 KILN_STATUS_BAD_PARAM_NULL_POINTER);

    check_objects(fresh, graph, loaded);
    /* The objects that check_objects tried to destroy as other kinds still execute. */
    OK(kiln_plan_execute(fresh, loaded, bind_uids, pointers, 3, workspace));

    /* Destroying null is allowed. */
    OK(kiln_plan_destroy(NULL));
    OK(kiln_graph_destroy(NULL));
    OK(kiln_handle_destroy(NULL));

    free(workspace);
    free(fc_bytes);
    free(both);
    free(resaved);
    free(plan_bytes);
    OK(kiln_plan_destroy(from_container));
    OK(kiln_plan_destroy(loaded));
    OK(kiln_plan_destroy(plan));
    OK(kiln_graph_destroy(graph2));
    OK(kiln_graph_destroy(graph));
    OK(kiln_handle_destroy(fresh));
    OK(kiln_handle_destroy(handle));

    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("kiln C API round trip: ok\n");
    return 0;
}
