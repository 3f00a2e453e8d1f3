//! Every enum whose integer code reaches saved bytes or the C boundary, pinned to its code. The
//! codes are written as literals here on purpose: reordering, inserting or renaming a Rust
//! variant must fail this test instead of silently changing what saved files mean. A new variant
//! takes the next free code and is appended to its table.

use kiln_core::{DataType, PointwiseMode, ReductionMode, Status};

#[test]
fn data_type_codes_are_pinned() {
    let pinned: [(&str, u8); 9] = [
        ("f32", 0),
        ("f16", 1),
        ("bf16", 2),
        ("f64", 3),
        ("bool", 4),
        ("i8", 5),
        ("i32", 6),
        ("fp8_e4m3", 7),
        ("fp8_e5m2", 8),
    ];
    assert_eq!(
        DataType::ALL.len(),
        pinned.len(),
        "a data type without a pinned code"
    );
    for (name, code) in pinned {
        let dt = DataType::from_name(name).unwrap_or_else(|| panic!("no data type {name}"));
        assert_eq!(dt.code(), code, "{name}");
        assert_eq!(DataType::from_code(code), Some(dt), "{name}");
    }
}

#[test]
fn pointwise_mode_codes_are_pinned() {
    let pinned: [(&str, u8); 51] = [
        ("add", 0),
        ("sub", 1),
        ("mul", 2),
        ("div", 3),
        ("max", 4),
        ("min", 5),
        ("pow", 6),
        ("cmp_eq", 7),
        ("cmp_ne", 8),
        ("cmp_lt", 9),
        ("cmp_le", 10),
        ("cmp_gt", 11),
        ("cmp_ge", 12),
        ("identity", 13),
        ("relu", 14),
        ("sigmoid", 15),
        ("tanh", 16),
        ("gelu", 17),
        ("gelu_approx_tanh", 18),
        ("swish", 19),
        ("elu", 20),
        ("softplus", 21),
        ("exp", 22),
        ("log", 23),
        ("abs", 24),
        ("neg", 25),
        ("sqrt", 26),
        ("rsqrt", 27),
        ("reciprocal", 28),
        ("add_square", 29),
        ("mod", 30),
        ("atan2", 31),
        ("ceil", 32),
        ("floor", 33),
        ("sin", 34),
        ("cos", 35),
        ("tan", 36),
        ("erf", 37),
        ("relu_bwd", 38),
        ("tanh_bwd", 39),
        ("sigmoid_bwd", 40),
        ("elu_bwd", 41),
        ("gelu_bwd", 42),
        ("gelu_approx_tanh_bwd", 43),
        ("softplus_bwd", 44),
        ("swish_bwd", 45),
        ("logical_and", 46),
        ("logical_or", 47),
        ("logical_not", 48),
        ("gen_index", 49),
        ("binary_select", 50),
    ];
    assert_eq!(
        PointwiseMode::ALL.len(),
        pinned.len(),
        "a pointwise mode without a pinned code"
    );
    for (name, code) in pinned {
        let m = PointwiseMode::from_name(name).unwrap_or_else(|| panic!("no mode {name}"));
        assert_eq!(m.code(), code, "{name}");
        assert_eq!(PointwiseMode::from_code(code), Some(m), "{name}");
    }
}

#[test]
fn reduction_mode_codes_are_pinned() {
    let pinned: [(&str, u8); 7] = [
        ("sum", 0),
        ("mean", 1),
        ("max", 2),
        ("min", 3),
        ("amax", 4),
        ("norm1", 5),
        ("norm2", 6),
    ];
    assert_eq!(ReductionMode::ALL.len(), pinned.len());
    for (name, code) in pinned {
        let m = ReductionMode::from_name(name).unwrap_or_else(|| panic!("no mode {name}"));
        assert_eq!(m.code(), code, "{name}");
        assert_eq!(ReductionMode::from_code(code), Some(m), "{name}");
    }
}

#[test]
fn status_codes_are_pinned() {
    let pinned: [(&str, i32); 10] = [
        ("KILN_STATUS_SUCCESS", 0),
        ("KILN_STATUS_BAD_PARAM", 1),
        ("KILN_STATUS_BAD_PARAM_NULL_POINTER", 2),
        ("KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT", 3),
        ("KILN_STATUS_NOT_SUPPORTED", 4),
        ("KILN_STATUS_NOT_INITIALIZED", 5),
        ("KILN_STATUS_ALLOC_FAILED", 6),
        ("KILN_STATUS_PLUGIN_ERROR", 7),
        ("KILN_STATUS_EXECUTION_FAILED", 8),
        ("KILN_STATUS_INTERNAL_ERROR", 9),
    ];
    for (name, code) in pinned {
        let s = Status::from_code(code).unwrap_or_else(|| panic!("no status {code}"));
        assert_eq!(s.name(), name);
        assert_eq!(s as i32, code, "{name}");
    }
    assert_eq!(
        Status::from_code(10),
        None,
        "a status without a pinned code"
    );
}
