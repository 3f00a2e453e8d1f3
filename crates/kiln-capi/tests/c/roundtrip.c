/* kiln's C API exercised from C: build a graph from JSON, build its plan, save it, load it on a
 * fresh handle, re-save and compare bytes, save and load a graph-and-plan container, execute the
 * loaded plan on the CPU and check the result, and check the error paths (null pointers, too
 * small buffers, a plan given to the graph loader) and that the CUDA provider is built in.
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
