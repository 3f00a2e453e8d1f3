//! The integer codes that cross the plugin boundary, pinned as literals: a plugin built against
//! an older header must keep meaning the same thing.

use kiln_plugin_abi::*;

#[test]
fn plugin_status_codes_are_pinned() {
    let pinned = [
        (KilnPluginStatus::SUCCESS, 0, "SUCCESS"),
        (KilnPluginStatus::BAD_PARAM, 1, "BAD_PARAM"),
        (KilnPluginStatus::INVALID_VALUE, 2, "INVALID_VALUE"),
        (KilnPluginStatus::NOT_APPLICABLE, 3, "NOT_APPLICABLE"),
        (KilnPluginStatus::NOT_SUPPORTED, 4, "NOT_SUPPORTED"),
        (KilnPluginStatus::ALLOC_FAILED, 5, "ALLOC_FAILED"),
        (KilnPluginStatus::EXECUTION_FAILED, 6, "EXECUTION_FAILED"),
        (KilnPluginStatus::INTERNAL_ERROR, 7, "INTERNAL_ERROR"),
    ];
    for (status, code, name) in pinned {
        assert_eq!(status.0, code, "{name}");
        assert_eq!(status.name(), name);
    }
    assert_eq!(KilnPluginStatus(8).name(), "UNKNOWN_STATUS");
}

#[test]
fn device_kinds_behaviour_bits_and_the_abi_version_are_pinned() {
    assert_eq!(
        (KILN_DEVICE_CPU, KILN_DEVICE_CUDA, KILN_DEVICE_CUDA_TARGET),
        (0, 1, 2)
    );
    assert_eq!(KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION, 1);
    assert_eq!(KILN_BEHAVIOR_DETERMINISTIC, 2);
    assert_eq!(KILN_BEHAVIOR_REFERENCE, 4);
    assert_eq!(KILN_PLUGIN_ABI_MAJOR, 1);
    assert_eq!(ENTRY_POINT_SYMBOL, b"kiln_engine_plugin_v1\0");
}
