//! What the unit tests of the table's files share: small contents, their images in each
//! version (the legacy versions 1 and 2 made by hand), and opening an image as a file.

use std::path::{Path, PathBuf};

use num_bigint::BigUint;

use crate::container::HeaderWriter;
use crate::error::Error;
use crate::geometry::Board;
use crate::material::Material;
use crate::value::Value;

pub(super) use super::UNREACHED;
pub(super) use super::blocks::{BLOCK_LEN, BlockSums};
pub(super) use super::header::*;
pub(super) use super::read::*;
pub(super) use super::write::*;
pub(crate) use super::write::{Contents, encode, encode_v7};

pub(super) fn v(n: u64, d: u64) -> Value {
    Value::small(n, d)
}

pub(crate) fn contents<'a>(values: &'a [Value], betas: Option<&'a [Value]>) -> Contents<'a> {
    let p = values.len();
    Contents {
        board: Board::new(3, 3).unwrap(),
        material: "KRvK".parse().unwrap(),
        raw_positions: 100,
        first_richman_iteration: Some(7),
        stable_at: Some(5),
        converged: true,
        certified_alpha: true,
        certified_beta: true,
        keys: (0..p as u64).map(|k| 3 * k + 1).collect(),
        values: values.iter().collect(),
        values_beta: betas.map(|b| b.iter().collect()),
        levels_white: (0..p as u32).collect(),
        levels_black: vec![UNREACHED; p],
        means: Vec::new(),
    }
}

pub(super) fn sample(values: &[Value]) -> Vec<u8> {
    encode(&contents(values, None))
}

pub(super) fn sample_with_beta(values: &[Value], betas: Option<&[Value]>) -> Vec<u8> {
    encode(&contents(values, betas))
}

/// The layout of versions 1 and 2 as earlier builds wrote it (128-byte header, a class
/// number, 32-bit keys), to check that this build still reads them.
pub(super) fn encode_legacy(c: &Contents<'_>) -> Vec<u8> {
    let v3 = encode_v3(c);
    let t = {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bidtb");
        std::fs::write(&path, &v3).unwrap();
        Table::open(&path).unwrap()
    };
    let beta = c.values_beta.is_some();
    let p = c.keys.len();
    let layout = Layout::new(HEADER_LEN_V1, 4, p, t.info().dictionary_len, beta, None).unwrap();
    let mut bytes = vec![0u8; HEADER_LEN_V1];
    for k in &c.keys {
        bytes.extend_from_slice(&(*k as u32).to_le_bytes());
    }
    // Everything after the keys is laid out alike in both versions.
    bytes.extend_from_slice(&v3[t.layout.ranks.start..]);
    let class = Material::three_piece()
        .iter()
        .position(|m| *m == c.material)
        .unwrap() as u8;
    let version = if beta { 2 } else { 1 };
    let mut h = HeaderWriter::new(MAGIC, version, HEADER_LEN_V1);
    h.u8(3)
        .u8(3)
        .u8(class)
        .u8(v3[19])
        .u32(7)
        .u64(p as u64)
        .u64(100)
        .u32(5)
        .u32(t.info().max_level_white)
        .u32(t.info().max_level_black)
        .u32(t.info().dictionary_len as u32);
    for o in [
        layout.keys.start,
        layout.ranks.start,
        layout.levels_white.start,
        layout.levels_black.start,
        layout.dictionary_index.start,
        layout.dictionary_bytes,
    ] {
        h.u64(o as u64);
    }
    h.u64(bytes.len() as u64)
        .u32(crc32fast::hash(&bytes[HEADER_LEN_V1..]))
        .u64(layout.ranks_beta.map_or(0, |r| r.start as u64));
    bytes[..HEADER_LEN_V1].copy_from_slice(&h.finish());
    bytes
}

pub(crate) fn open_bytes(bytes: &[u8]) -> Result<Table, Error> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("KRvK.bidtb");
    std::fs::write(&path, bytes).unwrap();
    Table::open(&path)
}

/// `values` written (streamed) as an 8x8 KRvK table in `dir` (it has room for 4,105
/// positions and more); its path and the image [`encode`] makes of the same contents.
pub(super) fn write_8x8_krvk(dir: &Path, values: &[Value]) -> (PathBuf, Vec<u8>) {
    let c = Contents {
        board: Board::new(8, 8).unwrap(),
        raw_positions: 200_000,
        ..contents(values, None)
    };
    let path = dir.join("KRvK.bidtb");
    write(&path, &c).unwrap();
    (path, encode(&c))
}

/// Every value of `values` read back from `t` at its position.
pub(super) fn read_back(t: &Table, values: &[Value]) {
    for (i, want) in values.iter().enumerate() {
        assert_eq!(
            &t.value(t.find(3 * i as u64 + 1).unwrap().unwrap()).unwrap(),
            want
        );
    }
}

/// `count` values k/41 of one long denominator (3^400 + 2, 80 bytes; k = 1..=count),
/// then `short`: the long denominator and the values.
pub(super) fn long_and_short(count: u32, short: &[Value]) -> (BigUint, Vec<Value>) {
    let den = BigUint::from(3u8).pow(400) + 2u8;
    let mut values: Vec<Value> = (1..=count)
        .map(|k| Value::new(&den * k / 41u8, den.clone()))
        .collect();
    values.extend_from_slice(short);
    (den, values)
}

/// Rewrite header byte `at` and fix the header checksum, as a forger would.
pub(super) fn forged(mut bytes: Vec<u8>, header_len: usize, at: usize, byte: u8) -> Vec<u8> {
    bytes[at] = byte;
    let crc = crc32fast::hash(&bytes[..header_len - 4]);
    bytes[header_len - 4..header_len].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// `count` values over one long denominator D = 3^200 (40 bytes): each after the first two
/// the mean of the two before it, but the last, the mean of the one before it and a value
/// no position takes (`outside`, D/11). Returns the values, `outside` and the means as
/// triples of indices into the values (`values.len()` standing for `outside`).
pub(crate) fn chained(count: usize) -> (Vec<Value>, Value, Vec<[usize; 3]>) {
    let den = BigUint::from(3u8).pow(200);
    let mut values = vec![
        Value::new(&den / 7u8, den.clone()),
        Value::new(&den / 5u8 * 3u8, den.clone()),
    ];
    let mut triples = Vec::new();
    for k in 2..count - 1 {
        values.push(crate::value::arith::mean(&values[k - 2], &values[k - 1]));
        triples.push([k, k - 2, k - 1]);
    }
    // The last value is the mean of the one before it and a value from outside.
    let outside = Value::new(&den / 11u8, den.clone());
    values.push(crate::value::arith::mean(&values[count - 2], &outside));
    triples.push([count - 1, count - 2, count]);
    (values, outside, triples)
}
