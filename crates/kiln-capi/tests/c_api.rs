//! Compiles `tests/c/roundtrip.c` with the system C compiler (`cc`, or `$CC`) against the
//! committed `include/kiln.h` and the cdylib cargo built for this test, then runs it.
//!
//! The cdylib (`libkiln_capi.so`) sits in the `deps` folder next to this test's executable; the
//! program is linked with an rpath to that folder, and `LD_LIBRARY_PATH` is set too.

use std::path::{Path, PathBuf};
use std::process::Command;

fn cdylib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    exe.parent().expect("the deps folder").to_path_buf()
}

fn library_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "libkiln_capi.dylib"
    } else if cfg!(windows) {
        "kiln_capi.dll"
    } else {
        "libkiln_capi.so"
    }
}

#[test]
fn c_program_round_trips_a_plan_and_executes_it() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = crate_dir.join("../../include");
    let source = crate_dir.join("tests/c/roundtrip.c");
    let lib_dir = cdylib_dir();
    assert!(
        lib_dir.join(library_name()).is_file(),
        "{} not found in {}: cargo builds the cdylib with the tests",
        library_name(),
        lib_dir.display()
    );
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kiln-capi-c");
    std::fs::create_dir_all(&out_dir).expect("create the output folder");
    let program = out_dir.join("roundtrip");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let compiled = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .arg("-L")
        .arg(&lib_dir)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-lkiln_capi", "-lm"])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run the C compiler '{cc}' (set CC to choose another): {e}")
        });
    assert!(
        compiled.status.success(),
        "{cc} failed:\n{}{}",
        String::from_utf8_lossy(&compiled.stdout),
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&program)
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env_remove("KILN_PLUGIN_PATH")
        .output()
        .expect("run the C program");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the C program failed ({}):\n{stdout}{stderr}",
        run.status
    );
    assert!(
        stdout.contains("kiln C API round trip: ok"),
        "unexpected output:\n{stdout}{stderr}"
    );
}
