// KILN_CUDA_NORM_V1, per-sample backward, second kernel: one thread per parameter element j,
// summing dy * x_hat (dscale) and dy (dbias) over the rows; neighbouring threads read
// neighbouring elements of each row.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
    const kiln_i64 j = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= {{INNER}}LL) { return; }
    float ds = 0.0f, db = 0.0f;
    for (kiln_i64 row = 0; row < {{ROWS}}LL; ++row) {
{{COORDS}}
        const float d = {{LOAD_DY}};
        ds += d * ({{LOAD_X}} - {{LOAD_MEAN}}) * {{LOAD_INV}};
        db += d;
    }
    const kiln_i64 row = 0;
{{COORDS}}
{{STORE_PARAMS}}
}
