//! Format 8's means (the default), end to end, where values are long (5x5 KNvKN, values of
//! up to 97 digits): most dictionary entries are stored as the mean of two others, with
//! hints, every position reads back the value of the same table written with every value
//! whole (format 6, `generate --whole`), `bidtb verify` re-proves every value read through
//! the means from the files alone, and a query answers as from values stored whole.

use crate::common::bidtb;
use bidtb::internal::probe::Tablebase;
use bidtb::internal::table;

/// `generate` of 5x5 KNvKN into a new directory, with `extra` arguments.
fn generated(extra: &[&str]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().to_str().unwrap();
    let args = [
        "generate", "--board", "5x5", "--method", "solve", "-q", "--out", out,
    ];
    let (code, _, err) = bidtb(&[&args[..], &["--material", "KNvKN"], extra].concat());
    assert_eq!(code, 0, "{err}");
    root
}

#[test]
fn long_values_are_stored_as_means_and_read_back_exactly() {
    let (whole, means) = (generated(&["--whole"]), generated(&[]));
    let path = |d: &tempfile::TempDir, m: &str| d.path().join("5x5").join(format!("{m}.bidtb"));
    let open = |d: &tempfile::TempDir| {
        Tablebase::open(d.path())
            .unwrap()
            .table("5x5".parse().unwrap(), "KNvKN".parse().unwrap())
            .unwrap()
            .info()
            .clone()
    };
    assert_eq!(open(&whole).version, table::VERSION);
    assert_eq!(open(&means).version, table::MEANS);
    let size = |d: &tempfile::TempDir| std::fs::metadata(path(d, "KNvKN")).unwrap().len();
    assert!(
        size(&means) * 2 < size(&whole),
        "{} {}",
        size(&means),
        size(&whole)
    );
    let tb = Tablebase::open(means.path()).unwrap();
    let t = tb
        .table("5x5".parse().unwrap(), "KNvKN".parse().unwrap())
        .unwrap();
    t.check_all().unwrap();
    let (entries, stored) = (t.info().dictionary_len, t.means_len().unwrap());
    assert!(stored * 10 > entries * 7, "{stored} of {entries}");
    // Every position, value by value: the same as the file of whole values.
    let dump = |d: &tempfile::TempDir, extra: &[&str]| {
        let dir = d.path().to_str().unwrap();
        let args = ["dump", "--tables", dir, "--board", "5x5", "KNvKN"];
        let (code, out, err) = bidtb(&[&args[..], extra].concat());
        assert_eq!(code, 0, "{err}");
        out
    };
    let fractions = dump(&means, &[]);
    assert!(fractions == dump(&whole, &[]));
    // The digests too, and they tell apart the values the fractions tell apart.
    let digests = dump(&means, &["--digest"]);
    assert!(digests == dump(&whole, &["--digest"]));
    let distinct = |out: &str, column: usize| {
        let lines = out.lines().skip(1);
        let column: std::collections::BTreeSet<&str> =
            lines.map(|l| l.split(' ').nth(column).unwrap()).collect();
        column.len()
    };
    assert_eq!(digests.lines().count(), fractions.lines().count());
    for column in [0, 1, 2, 3, 4] {
        assert_eq!(distinct(&digests, column), distinct(&fractions, column));
    }
    assert!(distinct(&digests, 1) > 1000, "{}", distinct(&digests, 1));
    let out = means.path().to_str().unwrap();
    let (code, stdout, err) = bidtb(&["verify", "--tables", out, "--board", "5x5", "--json"]);
    assert_eq!(code, 0, "{stdout}{err}");
    // A third of the equations hold by the way the means store them, without arithmetic
    // (11,813 of 38,010).
    let check: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let class = &check[0]["classes"]["KNvKN"];
    let by_means = class["equations_by_means"].as_u64().unwrap();
    let positions = class["positions"].as_u64().unwrap();
    assert!(by_means * 4 > positions, "{by_means} of {positions}");
    // A query reads its value and every move's through the means.
    let fen = "4k/5/5/1n1N1/K4";
    let query = |d: &tempfile::TempDir| {
        let dir = d.path().to_str().unwrap();
        let (code, out, err) = bidtb(&["query", "--tables", dir, "--json", fen]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let answer = query(&means);
    assert_eq!(answer, query(&whole));
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let long = answer["black"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["value"].as_str().unwrap().len() > 100);
    assert!(long, "{answer}");
    // `--means` states the default; with `--whole` it is a usage error.
    let stated = generated(&["--means"]);
    assert_eq!(
        std::fs::read(path(&stated, "KNvKN")).unwrap(),
        std::fs::read(path(&means, "KNvKN")).unwrap()
    );
    let (code, _, err) = bidtb(&["generate", "--means", "--whole", "--board", "3x3"]);
    assert_eq!(code, 2, "{err}");
}
