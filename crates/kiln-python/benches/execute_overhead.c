/* The bare C API call that execute_overhead.py compares kiln's Python execute with: the same
 * 4-tensor graph (y = a * b + c, f32 [16]; one virtual intermediate), the same engine, timed
 * over `iterations` calls of kiln_plan_execute on one prepared pointer table. Prints one JSON
 * object: {"engine_calls": N, "c_us_per_call": T}. */

#include "kiln.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char GRAPH_JSON[] =
    "{\"name\": \"overhead\", \"tensors\": ["
    "{\"uid\": 1, \"name\": \"a\", \"dims\": [16], \"strides\": [1], \"data_type\": \"f32\"},"
    "{\"uid\": 2, \"name\": \"b\", \"dims\": [16], \"strides\": [1], \"data_type\": \"f32\"},"
    "{\"uid\": 3, \"name\": \"c\", \"dims\": [16], \"strides\": [1], \"data_type\": \"f32\"},"
    "{\"uid\": 4, \"name\": \"ab\", \"dims\": [16], \"strides\": [1], \"data_type\": \"f32\","
    " \"is_virtual\": true},"
    "{\"uid\": 5, \"name\": \"y\", \"dims\": [16], \"strides\": [1], \"data_type\": \"f32\"}],"
    "\"nodes\": ["
    "{\"name\": \"mul\", \"op\": \"pointwise\", \"mode\": \"mul\", \"a\": 1, \"b\": 2, \"out\": 4},"
    "{\"name\": \"add\", \"op\": \"pointwise\", \"mode\": \"add\", \"a\": 4, \"b\": 3, \"out\": 5}]}";

#define OK(call)                                                                       \
    do {                                                                               \
        if ((call) != KILN_STATUS_SUCCESS) {                                           \
            fprintf(stderr, "%s failed: %s\n", #call, kiln_get_last_error());           \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 200000;
    kiln_handle_t *h;
    kiln_graph_t *g;
    kiln_plan_t *p;
    OK(kiln_handle_create(&h, "cpu"));
    OK(kiln_graph_from_json(GRAPH_JSON, strlen(GRAPH_JSON), &g));
    OK(kiln_graph_build_plan(h, g, &p));
    static float a[16], b[16], c[16], y[16];
    for (int i = 0; i < 16; i++) {
        a[i] = (float)i;
        b[i] = 2.0f;
        c[i] = 1.0f;
    }
    int64_t uids[4] = {1, 2, 3, 5};
    void *ptrs[4] = {a, b, c, y};
    size_t ws = 0;
    OK(kiln_plan_workspace_size(p, &ws));
    void *workspace = ws ? malloc(ws) : NULL;
    for (long i = 0; i < iterations / 10; i++) OK(kiln_plan_execute(h, p, uids, ptrs, 4, workspace));
    double t0 = now_us();
    for (long i = 0; i < iterations; i++) OK(kiln_plan_execute(h, p, uids, ptrs, 4, workspace));
    double t1 = now_us();
    if (y[3] != 7.0f) {
        fprintf(stderr, "wrong result %f\n", y[3]);
        return 1;
    }
    printf("{\"engine_calls\": %ld, \"c_us_per_call\": %.3f}\n", iterations, (t1 - t0) / iterations);
    free(workspace);
    kiln_plan_destroy(p);
    kiln_graph_destroy(g);
    kiln_handle_destroy(h);
    return 0;
}
