//! Shared by the command-line tests: run the `bidtb` binary.

use std::process::Command;

/// Run `bidtb` with `args`; its exit code, stdout and stderr.
pub fn bidtb(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
