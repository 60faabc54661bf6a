//! `bidtb serve`: open the tables once and serve the API and the explorer page.

use std::io::Write;
use std::path::Path;

use crate::server;
use bidtb::Error;
use bidtb::Tablebase;

pub(super) fn run(
    dir: &Path,
    addr: super::Addrs,
    header_timeout: u64,
    limits: server::GameLimits,
) -> Result<(), (u8, Error)> {
    let tables = Tablebase::open(dir).map_err(|e| (1, e))?;
    let boards: Vec<String> = tables.boards().map(|b| b.to_string()).collect();
    if boards.is_empty() {
        note!(
            "bidtb: warning: no tables under {} (make them with `bidtb generate --out {}`)",
            dir.display(),
            dir.display()
        );
    }
    let timeout = std::time::Duration::from_secs(header_timeout);
    server::serve(tables, &addr.0, timeout, limits, |bound| {
        // The first line on stdout is the address, for scripts and tests to read.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on http://{bound}/");
        let _ = out.flush();
        note!(
            "serving {} ({}); stop with Ctrl-C",
            dir.display(),
            if boards.is_empty() {
                "no boards".to_string()
            } else {
                boards.join(", ")
            }
        );
    })
    .map_err(|e| (1, e))
}
