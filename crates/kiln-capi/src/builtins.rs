//! The engines the C library links, declared as its built-in plugins: the embedded CPU engine
//! always, the CUDA kernel provider with the `cuda` feature. The backend links no engine; these
//! declarations are what `kiln_handle_create(.., "cpu")` finds with no setup.

use kiln_backend::BuiltinPlugin;

kiln_backend::builtin_plugins! {
    KILN_CPU_ENGINE = (BuiltinPlugin::ORDER_CPU, kiln_engine_cpu::plugin_table);
}

#[cfg(feature = "cuda")]
kiln_backend::builtin_plugins! {
    KILN_CUDA_ENGINE = (BuiltinPlugin::ORDER_CUDA, kiln_engine_cuda::plugin_table);
}
