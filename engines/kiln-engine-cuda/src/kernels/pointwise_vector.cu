    // Wide path: every bound tensor is dense with the iteration shape; taken when every
    // pointer is aligned for {{VEC}}-element accesses.
    if ({{ALIGNED}}) {
        const kiln_i64 nv = n / {{VEC}};
        for (kiln_i64 j = first; j < nv; j += step) {
{{VEC_LOADS}}
#pragma unroll
            for (int e = 0; e < {{VEC}}; ++e) {
{{VEC_BODY}}
            }
{{VEC_STORES}}
        }
        first = nv * {{VEC}} + first;
    }
