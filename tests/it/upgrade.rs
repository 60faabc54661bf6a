//! `bidtb upgrade` on tables written by earlier builds (`tests/fixtures/v3` to `v5`,
//! format versions 3 to 5): the values, β and levels read from the upgraded files are
//! those of the old ones, position by position (`bidtb dump`), the upgraded files are byte
//! for byte what this build generates, a second run leaves them alone, and a damaged file
//! is refused by name and left as it was.

use std::path::{Path, PathBuf};

use crate::common::bidtb;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The version this build writes.
const CURRENT: u32 = bidtb::internal::table::VERSION;

/// The tables of format version `version`'s fixtures, copied to `to`: (board, material)
/// of each.
fn copy_fixtures(to: &Path, version: u32) -> Vec<(String, String)> {
    let from = Path::new(FIXTURES).join(format!("v{version}"));
    let mut tables = Vec::new();
    for board in ["3x3", "3x4"] {
        std::fs::create_dir_all(to.join(board)).unwrap();
        let mut names: Vec<PathBuf> = std::fs::read_dir(from.join(board))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for p in names {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            std::fs::copy(&p, to.join(board).join(&name)).unwrap();
            tables.push((
                board.to_string(),
                name.trim_end_matches(".bidtb").to_string(),
            ));
        }
    }
    tables
}

fn dump(dir: &Path, board: &str, material: &str) -> String {
    let args = ["dump", "--tables", dir.to_str().unwrap(), "--board", board];
    let (code, out, err) = bidtb(&[&args[..], &[material]].concat());
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn upgraded_tables_answer_alike_and_are_what_this_build_writes() {
    for from in [3, 4, 5] {
        upgraded_from(from);
    }
}

fn upgraded_from(from: u32) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tables");
    let tables = copy_fixtures(&root, from);
    assert_eq!(tables.len(), 9);
    let version =
        |p: &Path| u32::from_le_bytes(std::fs::read(p).unwrap()[8..12].try_into().unwrap());
    let before: Vec<String> = tables.iter().map(|(b, m)| dump(&root, b, m)).collect();
    // KPvKP on 3x4 has positions with α < β: the dump shows β apart there.
    let kpvkp = &before[tables.iter().position(|(_, m)| m == "KPvKP").unwrap()];
    assert!(kpvkp.lines().skip(1).any(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        f[f.len() - 4] != f[f.len() - 3]
    }));

    let (code, out, err) = bidtb(&["upgrade", "--tables", root.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 9, "{out}");
    if from >= 5 {
        // Only the checksums changed: every section, from the header's end to the blocks'
        // checksums, is the same bytes.
        for (b, m) in &tables {
            let name = format!("{m}.bidtb");
            let old = Path::new(FIXTURES)
                .join(format!("v{from}"))
                .join(b)
                .join(&name);
            let old = std::fs::read(old).unwrap();
            let new = std::fs::read(root.join(b).join(&name)).unwrap();
            let sums = |f: &[u8]| u64::from_le_bytes(f[168..176].try_into().unwrap()) as usize;
            assert_eq!(sums(&old), sums(&new), "{b} {m}");
            assert!(old[192..sums(&old)] == new[192..sums(&new)], "{b} {m}");
        }
    }
    let said = format!("version {from} -> {CURRENT}");
    assert!(out.lines().all(|l| l.contains(&said)), "{out}");
    for ((b, m), old) in tables.iter().zip(&before) {
        let path = root.join(b).join(format!("{m}.bidtb"));
        assert_eq!(version(&path), CURRENT, "{b} {m}");
        assert_eq!(&dump(&root, b, m), old, "{b} {m}");
    }

    // What this build generates for the same boards, byte for byte.
    let fresh = dir.path().join("fresh");
    for args in [
        &["--board", "3x3", "--pieces", "4"][..],
        &["--board", "3x4", "--material", "KPvKP"][..],
    ] {
        let out = fresh.to_str().unwrap();
        let common = ["generate", "--method", "solve", "--out", out, "-q"];
        let (code, _, err) = bidtb(&[&common[..], args].concat());
        assert_eq!(code, 0, "{err}");
    }
    for (b, m) in &tables {
        let name = format!("{b}/{m}.bidtb");
        let (a, g) = (root.join(&name), fresh.join(&name));
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(g).unwrap(),
            "{name}"
        );
    }

    // A second run leaves every file alone, and says so as JSON too.
    let (code, out, err) = bidtb(&["upgrade", "--tables", root.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 9);
    for r in &rows {
        assert_eq!(r["from"], CURRENT, "{r}");
        assert_eq!(r["bytes_before"], r["bytes_after"], "{r}");
        assert!(r["error"].is_null(), "{r}");
    }
}

#[test]
fn a_damaged_table_is_refused_by_name_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tables");
    copy_fixtures(&root, 3);
    let path = root.join("3x3/KRvKN.bidtb");
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let (code, out, err) = bidtb(&[
        "upgrade",
        "--tables",
        root.to_str().unwrap(),
        "--board",
        "3x3",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("KRvKN.bidtb: FAILED") && out.contains("checksum"),
        "{out}"
    );
    assert!(err.contains("1 of 8 table files not upgraded"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // The others were upgraded.
    let said = format!("version 3 -> {CURRENT}");
    assert_eq!(out.matches(said.as_str()).count(), 7, "{out}");
    // No board directory, or none of that board: exit 1 with a message.
    let (code, _, err) = bidtb(&["upgrade", "--tables", dir.path().to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("no board directories"), "{err}");
    let (code, _, err) = bidtb(&[
        "upgrade",
        "--tables",
        root.to_str().unwrap(),
        "--board",
        "5x5",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no tables for 5x5"), "{err}");
}
