//! What the backend says when it cannot do what was asked: each engine's reason for declining a
//! graph (`heuristics::declined_engines`), and a plugin's description of a saved payload
//! (`Plugin::describe_payload`, the ABI-minor-2 hook), both through the C table.

mod common;

use common::{build_plan, conv_graph, cpu_handle, pointwise_graph};
use kiln_backend::{heuristics, HeurMode};
use kiln_core::Status;
use kiln_test_plugin::{FaultPlugin, Faults};

#[test]
fn every_declining_engine_is_listed_with_its_plugins_reason() {
    let handle = cpu_handle();
    let tg = pointwise_graph();
    let declined = heuristics::declined_engines(&handle, &tg.blob);
    let names: Vec<&str> = declined.iter().map(|d| d.engine_name.as_str()).collect();
    // The engines that run a pointwise chain are not listed; every other one is.
    assert!(!names.contains(&"KILN_CPU_POINTWISE_V1"), "{names:?}");
    assert!(!names.contains(&"KILN_CPU_REFERENCE"), "{names:?}");
    let applicable = heuristics::engine_configs(&handle, &tg.blob, &[HeurMode::A])
        .expect("configs")
        .len();
    let all: usize = handle.plugins().map(|p| p.engines().len()).sum();
    assert_eq!(declined.len(), all - applicable, "{declined:?}");
    let matmul = declined
        .iter()
        .find(|d| d.engine_name == "KILN_CPU_MATMUL_GEMM_V1")
        .expect("the matmul engine declines");
    assert_eq!(matmul.plugin_name, "kiln-cpu");
    assert!(matmul.reason.contains("matmul"), "{matmul}");
    // The plugin's message loses its repeated engine-name prefix; Display puts it back once.
    assert!(
        !matmul.reason.starts_with("KILN_CPU_MATMUL_GEMM_V1"),
        "{matmul}"
    );
    assert!(
        matmul
            .to_string()
            .starts_with("KILN_CPU_MATMUL_GEMM_V1 (kiln-cpu): "),
        "{matmul}"
    );
    for d in &declined {
        assert!(!d.reason.is_empty(), "{d}");
    }
}

#[test]
fn asking_for_reasons_builds_nothing_that_stays() {
    let fp = FaultPlugin::new(Faults::all_hooks());
    let handle = fp.handle();
    let declined = heuristics::declined_engines(&handle, &conv_graph().blob);
    assert!(!declined.is_empty());
    assert_eq!(fp.live_contexts(), 0, "a probe left a context alive");
}

#[test]
fn the_cpu_plugin_describes_its_payload_through_the_table() {
    let handle = cpu_handle();
    let tg = conv_graph();
    let plan = build_plan(&handle, &tg, HeurMode::A);
    let bytes = plan.serialize().expect("saves");
    let env = kiln_format::decode_plan(&bytes).expect("envelope");
    let plugin = handle.plugins().next().expect("the CPU plugin");
    assert!(plugin.can_describe_payloads());
    let text = plugin
        .describe_payload(env.engine_id, env.payload)
        .expect("described")
        .expect("the CPU plugin describes its payloads");
    assert!(text.contains("kiln-cpu payload 1.1"), "{text}");
    assert!(text.contains(plan.engine_name()), "{text}");
    assert!(text.contains("conv_bias_relu"), "{text}");
    // Damaged bytes are the plugin's error, as at restore.
    let mut damaged = env.payload.to_vec();
    *damaged.last_mut().expect("bytes") ^= 1;
    let err = plugin
        .describe_payload(env.engine_id, &damaged)
        .expect_err("damaged");
    assert_eq!(err.status(), Status::PluginError, "{err}");
    assert!(err.to_string().contains("damaged"), "{err}");
}

#[test]
fn a_plugin_without_the_describe_hook_gives_no_description() {
    let fp = FaultPlugin::new(Faults::all_hooks());
    let handle = fp.handle();
    let plan = build_plan(&handle, &pointwise_graph(), HeurMode::A);
    let bytes = plan.serialize().expect("saves");
    let env = kiln_format::decode_plan(&bytes).expect("envelope");
    let plugin = handle.plugins().next().expect("the fault plugin");
    assert!(!plugin.can_describe_payloads());
    assert_eq!(
        plugin
            .describe_payload(env.engine_id, env.payload)
            .expect("no error"),
        None
    );
}
