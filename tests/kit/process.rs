//! Tests that need a process of their own (they set up something process-wide: the
//! compute task pool, a global `tracing` subscriber, or they count the process's
//! threads) while sharing a test binary with others: the test runs its binary again,
//! filtered to itself alone, and the body runs in that child.

use std::process::Command;

/// Set in the child run to the test's full name.
const ALONE: &str = "BEVY_AABB_TREE_TEST_ALONE";

/// The harness name of the test `name` in the module `module` (`module_path!()`, whose
/// first segment is the test binary's crate).
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, rest)) => format!("{rest}::{name}"),
        None => name.to_string(),
    }
}

/// Runs `body` in a child run of this test binary that runs the test `name` (a
/// [`test_name`]) alone, with `env` set there too; in that child, runs `body`. Fails
/// when the child fails or did not run exactly that one test.
pub fn alone(name: &str, env: &[(&str, &str)], body: impl FnOnce()) {
    if std::env::var(ALONE).as_deref() == Ok(name) {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(ALONE, name)
        .envs(env.iter().copied())
        .output()
        .expect("the child run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{name} in a process of its own failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{name} did not run alone in its child:\n{stdout}"
    );
}
