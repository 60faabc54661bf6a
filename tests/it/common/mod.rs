//! Shared by the command-line tests: run the `bidtb` binary, the 8x8 tables (generated once
//! per build of the binary and shared by every test that needs them), and a `bidtb serve`
//! process on a free port.
#![allow(dead_code)] // Each test binary uses some of these.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

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

/// Run `command` (a `bidtb` subprocess) with each of `envs` set where it is `Some` and
/// removed where it is `None` (so that the caller's environment does not leak in): its
/// exit code and stderr.
pub fn run_with_env(mut command: Command, envs: &[(&str, Option<&str>)]) -> (i32, String) {
    for &(name, value) in envs {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let o = command.output().expect("runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The 8x8 tables made by `bidtb generate --out ROOT --json -q` with this build of the
/// binary: ROOT and the summary it printed. The first test to ask runs the generator (about
/// two minutes in release mode); later ones, in this or another test binary, reuse its
/// output. A new build of the binary makes new tables.
pub fn tables_8x8() -> (PathBuf, serde_json::Value) {
    let bin = Path::new(env!("CARGO_BIN_EXE_bidtb"));
    let meta = std::fs::metadata(bin).expect("the binary");
    let built = meta
        .modified()
        .expect("mtime")
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos();
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let name = format!("tables-8x8-{built:x}-{:x}", meta.len());
    let root = base.join(&name);
    std::fs::create_dir_all(&base).unwrap();
    // One generator at a time, even across test binaries run in parallel.
    let lock = std::fs::File::create(base.join("tables-8x8.lock")).unwrap();
    lock.lock().unwrap();
    let printed = root.join("generate.json");
    if !printed.exists() {
        for old in std::fs::read_dir(&base).unwrap().flatten() {
            let n = old.file_name().to_string_lossy().into_owned();
            if n.starts_with("tables-8x8-") && n != name && old.path().is_dir() {
                let _ = std::fs::remove_dir_all(old.path());
            }
        }
        let (code, stdout, stderr) =
            bidtb(&["generate", "--out", root.to_str().unwrap(), "--json", "-q"]);
        assert_eq!(code, 0, "{stderr}");
        let tmp = root.join("generate.json.tmp");
        std::fs::write(&tmp, &stdout).unwrap();
        std::fs::rename(&tmp, &printed).unwrap();
    }
    let summary = serde_json::from_str(&std::fs::read_to_string(&printed).unwrap()).unwrap();
    (root, summary)
}

/// A `bidtb serve` process on a free port of 127.0.0.1, stopped with SIGTERM when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
}

impl Server {
    /// Serve the tables under `root`.
    pub fn start(root: &Path) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bidtb"));
        command
            .args(["serve", "--addr", "127.0.0.1:0", "--tables"])
            .arg(root);
        Server::spawn(command)
    }

    /// Serve the tables under `root` with more arguments, under a `ulimit -n` if given.
    pub fn start_with(root: &Path, args: &[&str], open_files: Option<u32>) -> Server {
        let limit = open_files.map_or(String::new(), |n| format!("ulimit -n {n} && "));
        let mut command = Command::new("sh");
        command
            .args([
                "-c",
                &format!("{limit}exec \"$0\" \"$@\""),
                env!("CARGO_BIN_EXE_bidtb"),
            ])
            .args(["serve", "--addr", "127.0.0.1:0", "--tables"])
            .arg(root)
            .args(args);
        Server::spawn(command)
    }

    /// Start `command` (a `bidtb serve`) and read the address it prints.
    fn spawn(mut command: Command) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line: {line:?}"))
            .to_string();
        Server { child, url }
    }

    /// The server's `host:port`.
    pub fn host(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string()
    }

    /// The server's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether the server has exited (its exit code then).
    pub fn exited(&mut self) -> Option<Option<i32>> {
        self.child.try_wait().unwrap().map(|s| s.code())
    }

    /// Stop with SIGTERM and return the exit code.
    pub fn stop(mut self) -> Option<i32> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().ok().and_then(|s| s.code())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The browser tests' driver: a `tests/e2e/SCRIPT.mjs` run by Node.js against Debian's
/// Chromium (`BIDTB_CHROMIUM` overrides its path) through playwright-core, with a fresh
/// output directory `target/tmp/OUT` for its screenshots. A missing Chromium or
/// playwright-core fails with the command that installs it.
pub struct Browser {
    /// `tests/e2e/`.
    e2e: PathBuf,
    /// The Chromium binary.
    chromium: String,
    /// The script's output directory (emptied first).
    pub out: PathBuf,
}

impl Browser {
    /// Check that Chromium and playwright-core are there; make `target/tmp/out` afresh.
    pub fn new(out: &str) -> Browser {
        let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
        let chromium = std::env::var("BIDTB_CHROMIUM").unwrap_or("/usr/bin/chromium".into());
        let require = |path: &Path, how: &str| {
            assert!(path.exists(), "{} is missing: {how}", path.display());
        };
        require(
            Path::new(&chromium),
            "install Debian's chromium (apt-get install chromium), or run bash .ci/run",
        );
        require(
            &e2e.join("node_modules/playwright-core"),
            "run `npm ci --prefix tests/e2e` (bash .ci/run does)",
        );
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(out);
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        Browser { e2e, chromium, out }
    }

    /// Run `tests/e2e/SCRIPT` with `args`; what it printed on standard output (a failure of
    /// the script fails the test with both its outputs).
    pub fn run(&self, script: &str, args: &[&std::ffi::OsStr]) -> String {
        let node = Command::new("node")
            .arg(self.e2e.join(script))
            .args(args)
            .env("BIDTB_CHROMIUM", &self.chromium)
            .output()
            .expect("node runs");
        let stdout = String::from_utf8_lossy(&node.stdout).into_owned();
        assert!(
            node.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&node.stderr)
        );
        stdout
    }
}
