//! `Graph::autotune` on the CPU: every knob setting of the candidate engines is built and timed,
//! the fastest is selected, and its plan saves and loads like any other (the choice is in it).

use kiln::{DataType, Graph, Handle, HeurMode, MatmulAttributes, TensorAttributes};

fn matmul() -> Graph {
    let mut g = Graph::new();
    let t = |name: &str, dims: &[i64]| {
        TensorAttributes::new()
            .name(name)
            .dim(dims)
            .data_type(DataType::F32)
    };
    let a = g.tensor(t("a", &[1, 48, 40]));
    let b = g.tensor(t("b", &[1, 40, 56]));
    let c = g.matmul(&a, &b, MatmulAttributes::new());
    c.set_output(true).set_name("c");
    g
}

#[test]
fn autotune_times_every_candidate_and_selects_the_fastest() {
    let h = Handle::cpu().expect("cpu handle");
    let mut g = matmul();
    g.validate().expect("valid");
    g.build_operation_graph(&h).expect("lower");
    g.create_execution_plans(&[HeurMode::A])
        .expect("heuristics");
    let candidates = g.candidate_configs().len();
    let report = g.autotune(3).expect("autotune");
    // Every candidate was tried at least once, and every trial that ran has a time.
    assert!(report.trials.len() >= candidates, "{report:?}");
    let ran: Vec<f64> = report
        .trials
        .iter()
        .filter_map(|t| t.result.as_ref().ok().copied())
        .collect();
    assert!(!ran.is_empty());
    assert!(ran.iter().all(|ms| ms.is_finite() && *ms >= 0.0));
    // Fastest first; the selected plan is the winner's engine.
    assert!(ran.windows(2).all(|w| w[0] <= w[1]), "{ran:?}");
    let best = report.best().expect("a winner");
    assert_eq!(g.plan().expect("plan").engine_name(), best.engine);
    assert_eq!(g.plans().len(), ran.len());
    // The tuned plan saves and loads on a fresh handle, byte-identically.
    let saved = g.serialize().expect("save");
    let loaded = Graph::deserialize(Some(&Handle::cpu().expect("cpu")), &saved).expect("load");
    assert_eq!(loaded.serialize().expect("re-save"), saved);
}

#[test]
fn autotune_before_the_heuristics_is_refused_with_a_reason() {
    let mut g = matmul();
    g.validate().expect("valid");
    let e = g.autotune(3).unwrap_err();
    assert!(e.to_string().contains("build_operation_graph"), "{e}");
}
