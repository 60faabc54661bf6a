//! Format 7's means, end to end, where values are long (5x5 KNvKN, values of up to 97
//! digits): most dictionary entries are stored as the mean of two others, `bidtb verify`
//! re-proves every value read through them from the files alone, and a query answers
//! from them as from values stored whole.

use crate::common::bidtb;
use bidtb::internal::probe::Tablebase;

#[test]
fn long_values_are_stored_as_means_and_verify() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().to_str().unwrap();
    let generate = ["generate", "--board", "5x5", "--method", "solve", "-q"];
    let (code, _, err) = bidtb(&[&generate[..], &["--material", "KNvKN", "--out", out]].concat());
    assert_eq!(code, 0, "{err}");
    let tb = Tablebase::open(root.path()).unwrap();
    let table = tb
        .table("5x5".parse().unwrap(), "KNvKN".parse().unwrap())
        .unwrap();
    table.check_all().unwrap();
    let (entries, means) = (table.info().dictionary_len, table.means_len().unwrap());
    assert!(means * 10 > entries * 7, "{means} of {entries}");
    // Every value the positions take reads back in lowest terms and in order.
    let values = table.dictionary_values().unwrap();
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    assert!(values.iter().any(|v| v.denominator_digits() > 60));
    let (code, stdout, err) = bidtb(&["verify", "--tables", out, "--board", "5x5"]);
    assert_eq!(code, 0, "{stdout}{err}");
    // A query reads its value and every move's through the means.
    let fen = "4k/5/5/1n1N1/K4";
    let (code, stdout, err) = bidtb(&["query", "--tables", out, "--json", fen]);
    assert_eq!(code, 0, "{err}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(answer["value"].is_string(), "{answer}");
    let long = |side: &str| {
        answer[side]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["value"].as_str().unwrap().len() > 100)
    };
    assert!(long("black"), "{answer}");
}
