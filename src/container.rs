//! The container every file of bidtb is framed in (tables, and both methods' checkpoints):
//! one codec instead of a hand-written header per file.
//!
//! A file starts with a fixed-size little-endian header: 8 magic bytes naming the kind of
//! file, the format version (u32), the header's own length (u32), the kind's fields, zero
//! padding, and a CRC-32 (IEEE) of every header byte before it in the header's last four
//! bytes. The body follows; its length and its CRC-32 are fields of the header, which the
//! reader checks before trusting anything in it.
//!
//! Reading never trusts the file: [`open_regular`] refuses anything that is not a regular
//! file (a FIFO, a device, a directory would hang or never end), [`read_header`] reads the
//! header's fixed length only and checks magic, length, checksum and version before a
//! single field is used, and [`read_body`] reads exactly the length the header states.
//! Every field is read through a [`Fields`] cursor that fails instead of reading past the
//! header.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Checksum, Corruption, Error};

/// Bytes before the kind's fields: magic, version, header length.
pub const PREFIX_LEN: usize = 16;

/// Builds a header: the prefix, then fields in order, then padding and the checksum.
pub struct HeaderWriter {
    bytes: Vec<u8>,
    len: usize,
}

impl HeaderWriter {
    /// A header of `len` bytes (checksum included) for a file of kind `magic`, version
    /// `version`.
    pub fn new(magic: [u8; 8], version: u32, len: usize) -> HeaderWriter {
        let mut bytes = Vec::with_capacity(len);
        bytes.extend_from_slice(&magic);
        bytes.extend_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(&(len as u32).to_le_bytes());
        HeaderWriter { bytes, len }
    }

    /// Append a byte.
    pub fn u8(&mut self, x: u8) -> &mut Self {
        self.bytes.push(x);
        self
    }

    /// Append a u32.
    pub fn u32(&mut self, x: u32) -> &mut Self {
        self.bytes.extend_from_slice(&x.to_le_bytes());
        self
    }

    /// Append a u64.
    pub fn u64(&mut self, x: u64) -> &mut Self {
        self.bytes.extend_from_slice(&x.to_le_bytes());
        self
    }

    /// Append raw bytes (a fixed-width text field, zero-padded by the caller).
    pub fn bytes(&mut self, x: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(x);
        self
    }

    /// The finished header: padded with zeros, its checksum in the last four bytes.
    pub fn finish(mut self) -> Vec<u8> {
        assert!(
            self.bytes.len() <= self.len - 4,
            "the fields overflow the header"
        );
        self.bytes.resize(self.len - 4, 0);
        let crc = crc32fast::hash(&self.bytes);
        self.bytes.extend_from_slice(&crc.to_le_bytes());
        self.bytes
    }
}

/// A checked header's fields, read in order.
pub struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The format version (already checked against the accepted ones).
    pub version: u32,
}

impl<'a> Fields<'a> {
    /// Check a header: at least the prefix, the right magic, the stated length equal to its
    /// length, the checksum, and a version among `versions`. `kind` names the file kind in
    /// errors (`table`, `checkpoint`): a [`Corruption`] of the header, which files whose
    /// errors are text take as its message.
    pub fn check(
        header: &'a [u8],
        magic: [u8; 8],
        versions: &[u32],
        kind: &'static str,
    ) -> Result<Fields<'a>, Corruption> {
        if header.len() < PREFIX_LEN + 4 {
            return Err(Corruption::ShorterThanPrefix {
                len: header.len() as u64,
                kind,
            });
        }
        if header[..8] != magic {
            return Err(Corruption::Magic { kind });
        }
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4"));
        let len = header.len();
        if word(len - 4) != crc32fast::hash(&header[..len - 4]) {
            return Err(Corruption::Checksum(Checksum::Header));
        }
        if word(12) as usize != len {
            return Err(Corruption::HeaderLength {
                stated: word(12),
                expected: len,
            });
        }
        let version = word(8);
        if !versions.contains(&version) {
            return Err(Corruption::Version {
                kind,
                version,
                readable: versions.to_vec(),
            });
        }
        Ok(Fields {
            bytes: &header[..len - 4],
            at: PREFIX_LEN,
            version,
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Corruption> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(Corruption::FieldPastHeader)?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    /// The next byte.
    pub fn u8(&mut self) -> Result<u8, Corruption> {
        Ok(self.take(1)?[0])
    }

    /// The next u32.
    pub fn u32(&mut self) -> Result<u32, Corruption> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }

    /// The next u64.
    pub fn u64(&mut self) -> Result<u64, Corruption> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }

    /// The next `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Corruption> {
        self.take(n)
    }

    /// Whether the padding after the fields read so far is all zeros (a forger's or a
    /// newer writer's bytes there are refused).
    pub fn padding_is_zero(&self) -> bool {
        self.bytes[self.at..].iter().all(|&b| b == 0)
    }
}

/// Open `path` for reading if it is a regular file; anything else (a FIFO, a device, a
/// directory) is refused by name instead of hanging or reading forever.
pub fn open_regular(path: &Path) -> Result<(File, u64), Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::Io {
            path: path.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
        });
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    // The length of the file opened (the path might have been replaced in between).
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    Ok((file, len))
}

/// Where `path` points if it is a symbolic link whose target does not exist (a dangling
/// link is not an absent file: it says where the file was meant to be).
pub fn dangling(path: &Path) -> Option<std::path::PathBuf> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_symlink() || path.exists() {
        return None;
    }
    std::fs::read_link(path).ok()
}

/// Read a header of the kind whose headers are `len` bytes long from the start of `file`
/// (of `file_len` bytes): exactly that many bytes, or an error if the file is shorter.
pub fn read_header(file: &mut File, file_len: u64, len: usize) -> Result<Vec<u8>, String> {
    if file_len < len as u64 {
        return Err(format!(
            "truncated: {file_len} bytes, shorter than the {len}-byte header"
        ));
    }
    let mut header = vec![0u8; len];
    file.read_exact(&mut header).map_err(|e| e.to_string())?;
    Ok(header)
}

/// The header length a file's prefix states (to choose among versions of different
/// header lengths before reading the rest), if the file holds a prefix.
pub fn stated_header_len(prefix: &[u8]) -> Option<usize> {
    let word = prefix.get(12..16)?;
    Some(u32::from_le_bytes(word.try_into().ok()?) as usize)
}

/// Check the body that follows a header without holding it: exactly `len` bytes (as the
/// header states), the file ending there, its CRC-32 equal to `crc`, read in pieces. The
/// file is left at the start of the body, for a decoder that reads it as a stream.
pub fn check_body_streamed(
    file: &mut File,
    file_len: u64,
    header_len: usize,
    len: u64,
    crc: u32,
) -> Result<(), String> {
    use std::io::{Seek, SeekFrom};
    let expected = (header_len as u64).checked_add(len);
    if expected != Some(file_len) {
        return Err(format!(
            "truncated or extended: the header says {} bytes, the file has {file_len}",
            expected.map_or("too many".to_string(), |e| e.to_string())
        ));
    }
    let mut hasher = crc32fast::Hasher::new();
    let mut piece = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = piece.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        file.read_exact(&mut piece[..n])
            .map_err(|e| e.to_string())?;
        hasher.update(&piece[..n]);
        left -= n as u64;
    }
    if hasher.finalize() != crc {
        return Err("corrupted: the body checksum does not match".into());
    }
    file.seek(SeekFrom::Start(header_len as u64))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Read the body that follows a header: exactly `len` bytes (as the header states), its
/// CRC-32 checked against `crc`; the file must end there.
pub fn read_body(
    file: &mut File,
    file_len: u64,
    header_len: usize,
    len: u64,
    crc: u32,
) -> Result<Vec<u8>, String> {
    let expected = (header_len as u64).checked_add(len);
    if expected != Some(file_len) {
        return Err(format!(
            "truncated or extended: the header says {} bytes, the file has {file_len}",
            expected.map_or("too many".to_string(), |e| e.to_string())
        ));
    }
    let len = usize::try_from(len).map_err(|_| "the body is too large for memory")?;
    let mut body = vec![0u8; len];
    file.read_exact(&mut body).map_err(|e| e.to_string())?;
    if crc32fast::hash(&body) != crc {
        return Err("corrupted: the body checksum does not match".into());
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAGIC: [u8; 8] = *b"TESTFILE";

    fn sample() -> Vec<u8> {
        let mut w = HeaderWriter::new(MAGIC, 2, 48);
        w.u8(7).u32(1234).u64(1 << 40).bytes(b"KRvKN");
        w.finish()
    }

    #[test]
    fn headers_round_trip() {
        let h = sample();
        assert_eq!(h.len(), 48);
        let mut f = Fields::check(&h, MAGIC, &[1, 2], "test").unwrap();
        assert_eq!(f.version, 2);
        assert_eq!(f.u8().unwrap(), 7);
        assert_eq!(f.u32().unwrap(), 1234);
        assert_eq!(f.u64().unwrap(), 1 << 40);
        assert_eq!(f.bytes(5).unwrap(), b"KRvKN");
        assert!(f.padding_is_zero());
        assert!(f.bytes(100).is_err());
        assert_eq!(stated_header_len(&h), Some(48));
    }

    #[test]
    fn every_damage_is_refused_by_name() {
        let h = sample();
        for at in 0..h.len() {
            let mut b = h.clone();
            b[at] ^= 0x04;
            assert!(
                Fields::check(&b, MAGIC, &[2], "test").is_err(),
                "flip at {at}"
            );
        }
        for len in 0..h.len() {
            assert!(Fields::check(&h[..len], MAGIC, &[2], "test").is_err());
        }
        let err = Fields::check(&h, MAGIC, &[3], "test").err().unwrap();
        assert!(matches!(err, Corruption::Version { version: 2, .. }));
        assert!(err.to_string().contains("test format version 2"), "{err}");
        let err = Fields::check(&h, *b"OTHERONE", &[2], "test").err().unwrap();
        assert_eq!(err, Corruption::Magic { kind: "test" });
        assert!(err.to_string().contains("magic"), "{err}");
    }

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let err = open_regular(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        let path = dir.path().join("f");
        std::fs::write(&path, sample()).unwrap();
        let (mut file, len) = open_regular(&path).unwrap();
        let header = read_header(&mut file, len, 48).unwrap();
        assert_eq!(header, sample());
        assert!(read_header(&mut file, 10, 48).is_err());
    }
}
