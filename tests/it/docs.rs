//! The examples of README.md and of the book (docs/src) run as tests, so that a changed
//! output fails CI instead of going stale.
//!
//! A fenced block marked `console` is a session: each line `$ bidtb ARGS…` is a command,
//! run with the binary this crate builds, and the lines after it, up to the next `$ ` line
//! or the end of the block, are its standard output. They are compared with snapbox: `[..]`
//! on a line stands for any text (a time, a path), and a line `...` for any number of
//! lines. A command may read standard input from a `printf '…' |` before it (`\n` for
//! newlines), and a first output line `? N` expects exit status N (0 otherwise). Trailing
//! spaces are ignored. Blocks marked `text`, `sh` or anything else are shown, not run.
//!
//! All the blocks of one Markdown file run in order in one fresh temporary directory, so a
//! page can generate tables (`tables/FxR/`, the default) and then query them.

use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_bidtb");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One command of a console block and what it should print.
struct Example {
    file: String,
    line: usize,
    args: Vec<String>,
    stdin: Option<String>,
    code: i32,
    stdout: String,
}

/// The console sessions of one Markdown file, in order.
fn examples(path: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path
        .strip_prefix(ROOT)
        .unwrap_or(path)
        .display()
        .to_string();
    let mut out: Vec<Example> = Vec::new();
    let mut fence: Option<(String, bool)> = None; // the fence's marker, whether a console block
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some((marker, console)) = &fence {
            if trimmed.starts_with(marker.as_str()) && trimmed.trim_start_matches('`').is_empty() {
                fence = None;
                continue;
            }
            if !console {
                continue;
            }
            if let Some(command) = line.strip_prefix("$ ") {
                out.push(parse(&file, number + 1, command));
            } else {
                let example = out.last_mut().unwrap_or_else(|| {
                    panic!("{file}:{}: output before any `$ ` line", number + 1)
                });
                match line.strip_prefix("? ") {
                    Some(code) if example.stdout.is_empty() => {
                        example.code = code.trim().parse().unwrap_or_else(|_| {
                            panic!("{file}:{}: `? N` wants an exit status", number + 1)
                        })
                    }
                    _ => {
                        example.stdout.push_str(line.trim_end());
                        example.stdout.push('\n');
                    }
                }
            }
        } else if let Some(info) = trimmed.strip_prefix("```") {
            fence = Some(("```".into(), info.trim() == "console"));
        }
    }
    assert!(fence.is_none(), "{file}: a fenced block is not closed");
    out
}

/// `[printf 'INPUT' |] bidtb ARGS…`, split as a POSIX shell would for quoted words.
fn parse(file: &str, line: usize, command: &str) -> Example {
    let words = split(command).unwrap_or_else(|e| panic!("{file}:{line}: {e}"));
    let (stdin, words) = match words.iter().position(|w| w == "|") {
        Some(bar) => {
            assert!(
                bar == 2 && words[0] == "printf",
                "{file}:{line}: only `printf '…' | bidtb …` may pipe"
            );
            (
                Some(words[1].replace("\\n", "\n")),
                words[bar + 1..].to_vec(),
            )
        }
        None => (None, words),
    };
    assert!(
        words.first().map(String::as_str) == Some("bidtb"),
        "{file}:{line}: a console example runs `bidtb`; show other commands in a `sh` block"
    );
    Example {
        file: file.to_string(),
        line,
        args: words[1..].to_vec(),
        stdin,
        code: 0,
        stdout: String::new(),
    }
}

fn split(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some(x) => w.push(x),
                        None => return Err(format!("unclosed quote in `{command}`")),
                    }
                }
            }
            '|' if word.is_none() => words.push("|".into()),
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// Runs every example of the files in order, each file in a fresh temporary directory.
fn run(files: &[PathBuf]) {
    let mut count = 0;
    for path in files {
        let dir = tempfile::tempdir().unwrap();
        for example in examples(path) {
            count += 1;
            eprintln!(
                "{}:{}: $ bidtb {}",
                example.file,
                example.line,
                example.args.join(" ")
            );
            let mut command = snapbox::cmd::Command::new(BIN)
                .args(&example.args)
                .current_dir(dir.path())
                .env("NO_COLOR", "1");
            if let Some(input) = &example.stdin {
                command = command.stdin(input.as_str());
            }
            let output = command.output().unwrap();
            let actual: String = String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(|l| format!("{}\n", l.trim_end()))
                .collect();
            assert_eq!(
                output.status.code(),
                Some(example.code),
                "{}:{}: exit status; stderr:\n{}",
                example.file,
                example.line,
                String::from_utf8_lossy(&output.stderr)
            );
            snapbox::assert_data_eq!(actual, example.stdout);
        }
    }
    assert!(count > 0, "no console examples found in {files:?}");
}

/// The chapters of the book in the order of docs/src/SUMMARY.md.
fn chapters() -> Vec<PathBuf> {
    let src = Path::new(ROOT).join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    summary
        .lines()
        .filter_map(|l| l.split("](").nth(1)?.split(')').next())
        .map(|p| src.join(p))
        .collect()
}

#[test]
fn readme_examples() {
    run(&[Path::new(ROOT).join("README.md")]);
}

#[test]
fn book_examples() {
    run(&chapters());
}

#[test]
fn the_harness_reads_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(
        &page,
        "```console\n$ printf 'a\\nb' | bidtb play 'x y'\n? 2\nout  \n...\n```\n\n```sh\n$ ls\n```\n",
    )
    .unwrap();
    let found = examples(&page);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].args, ["play", "x y"]);
    assert_eq!(found[0].stdin.as_deref(), Some("a\nb"));
    assert_eq!((found[0].code, found[0].stdout.as_str()), (2, "out\n...\n"));
}
