//! `.ci/scale-out` runs the load generator from the tests' own build (this
//! test is what makes `cargo test --workspace` link it), so its usage line
//! is part of what that script relies on.

use std::process::Command;

#[test]
fn without_arguments_it_names_its_commands_and_fails() {
    let out = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .output()
        .expect("loadgen starts");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    for word in [
        "loadgen setup",
        "loadgen run",
        "create|create-generated|query|query-seeded|balance",
    ] {
        assert!(said.contains(word), "{word} missing from: {said}");
    }
}

#[test]
fn a_client_count_that_is_not_a_number_is_refused_before_any_request() {
    let out = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["run", "http://127.0.0.1:9", "key", "create", "many", "5"])
        .output()
        .expect("loadgen starts");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid digit"));
}
