//! Atomic file replacement: every file bidtb writes appears complete or not at all.
//!
//! The bytes go to a hidden temporary file in the target's directory (`.NAME.tmpPID`), which
//! is flushed and synced, then renamed over the target, and the directory is synced. A crash
//! or a kill at any point leaves either the old file or the new one; at worst a hidden
//! temporary file remains, which [`remove_stale_temporaries`] clears on the next run.

use std::io::Write;
use std::path::Path;

use crate::error::Error;

/// The marker in the names of temporary files.
const TMP_MARK: &str = ".tmp";

/// Write `bytes` to `path` atomically (see the module comment).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Write `path` atomically with `write`, which fills the new file (it may seek in it):
/// for files too large to assemble in memory first.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = temporary(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        write(&mut f)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable; not every platform can sync a directory.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e: std::io::Error| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Write several files so that either all of them are replaced or none is: every file is
/// first written and synced as a temporary; only when all succeeded are they renamed into
/// place (renames need no space). On an error every temporary is removed and the previous
/// files stay as they were.
pub fn write_all_atomic(files: &[(std::path::PathBuf, Vec<u8>)]) -> Result<(), Error> {
    let writers: Vec<(&Path, Filler<'_>)> = files
        .iter()
        .map(|(path, bytes)| {
            let fill: Filler<'_> = Box::new(move |f: &mut std::fs::File| f.write_all(bytes));
            (path.as_path(), fill)
        })
        .collect();
    write_all_atomic_with(writers)
}

/// What fills one new file (it may seek in it).
pub type Filler<'a> = Box<dyn FnOnce(&mut std::fs::File) -> std::io::Result<()> + 'a>;

/// [`write_all_atomic`] with each file filled by its own [`Filler`], one after the other:
/// for files too large to assemble in memory first (a table of several gigabytes).
pub fn write_all_atomic_with(files: Vec<(&Path, Filler<'_>)>) -> Result<(), Error> {
    let mut staged: Vec<(std::path::PathBuf, &Path)> = Vec::new();
    let cleanup = |staged: &[(std::path::PathBuf, &Path)]| {
        for (tmp, _) in staged {
            let _ = std::fs::remove_file(tmp);
        }
    };
    for (path, fill) in files {
        let tmp = temporary(path);
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            fill(&mut f)?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            cleanup(&staged);
            return Err(Error::io(path, e));
        }
        staged.push((tmp, path));
    }
    for (i, (tmp, path)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            cleanup(&staged[i..]);
            return Err(Error::io(path, e));
        }
    }
    if let Some((_, path)) = staged.first()
        && let Some(dir) = path.parent()
        && let Ok(d) = std::fs::File::open(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Where an output file named by the user really goes ([`write_output`]).
#[derive(Debug, PartialEq, Eq)]
enum Destination {
    /// Standard output (`-`).
    Stdout,
    /// A regular file, existing or not, at this path (a symlink's final target): replaced
    /// atomically.
    Regular(std::path::PathBuf),
    /// A device, a FIFO, or a file descriptor of this process (`/dev/stdout`): written
    /// straight into, through the path as given.
    Straight,
}

/// At most this many symbolic links are followed from an output path (as the kernel's
/// `ELOOP` limit).
const MAX_LINKS: usize = 40;

/// Where `path` leads: `-` is standard output; symbolic links are followed to their final
/// target (a dangling one to the file it names, which is created); a link into `/proc`
/// (`/dev/stdout`, `/dev/fd/N`) names an open file of this process, written straight into.
/// Directories, sockets and anything else that is neither a regular file, a device nor a
/// FIFO are refused, named.
fn destination(path: &Path) -> Result<Destination, Error> {
    use std::os::unix::fs::FileTypeExt;
    if path.as_os_str() == "-" {
        return Ok(Destination::Stdout);
    }
    let mut at = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Destination::Regular(at));
            }
            Err(e) => return Err(Error::io(&at, e)),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let parent = match at.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            // A link kept by the kernel for an open file (`/proc/self/fd/1`) names no
            // path that could be replaced: write into what it opens.
            if std::fs::canonicalize(&parent).is_ok_and(|d| d.starts_with("/proc")) {
                return Ok(Destination::Straight);
            }
            let target = std::fs::read_link(&at).map_err(|e| Error::io(&at, e))?;
            at = parent.join(target);
            continue;
        }
        if kind.is_file() {
            return Ok(Destination::Regular(at));
        }
        if kind.is_fifo() || kind.is_char_device() || kind.is_block_device() {
            return Ok(Destination::Straight);
        }
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(Error::Report {
            path: display(path, &at),
            reason: format!(
                "{what}: an output goes to a regular file (replaced whole), a device or a                  FIFO (written into), or `-` (standard output)"
            ),
        });
    }
    Err(Error::Report {
        path: path.display().to_string(),
        reason: format!("more than {MAX_LINKS} symbolic links in a row"),
    })
}

/// `path` as given, and where its links led if elsewhere.
fn display(path: &Path, at: &Path) -> String {
    if path == at {
        path.display().to_string()
    } else {
        format!("{} (-> {})", path.display(), at.display())
    }
}

/// Write an output file that the user named (an SVG, an atlas): a regular file (or a new
/// one) is replaced atomically as by [`write_atomic`], through symbolic links in the
/// directory of their final target (the link stays a link); devices, FIFOs and
/// `/dev/stdout` are written straight into, never replaced; `-` is standard output.
/// Anything else (a directory, a socket) is refused with its name. Returns what to call
/// the place written in messages (`standard output` for `-`).
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<String, Error> {
    match destination(path)? {
        Destination::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| Error::io("standard output", e))?;
            Ok("standard output".into())
        }
        Destination::Regular(target) => {
            write_atomic(&target, bytes)?;
            Ok(path.display().to_string())
        }
        Destination::Straight => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            f.write_all(bytes)
                .and_then(|()| f.flush())
                .map_err(|e| Error::io(path, e))?;
            Ok(path.display().to_string())
        }
    }
}

/// The temporary name for `path`: hidden, in the same directory.
fn temporary(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}{TMP_MARK}{}", std::process::id()))
}

/// Remove temporary files left in `dir` by a writer that was killed mid-write. Returns how
/// many were removed. Only provably stale ones go: the writer's process id is in the name
/// (`.NAME.tmpPID`), and a file whose writer is still running (another process, on a
/// system with `/proc`) is left alone. Call it holding the directory's lock
/// ([`crate::dirlock`]), so that no live writer of ours shares the directory.
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some((_, pid)) = name.rsplit_once(TMP_MARK) else {
                return false;
            };
            name.starts_with('.')
                && e.file_type().is_ok_and(|t| t.is_file())
                && pid.parse::<u32>().is_ok_and(|pid| !writer_alive(pid))
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// Whether process `pid` (another than this one) is still running, as far as can be told:
/// on a system without `/proc` every other process counts as gone (the lock vouches).
fn writer_alive(pid: u32) -> bool {
    pid != std::process::id()
        && Path::new("/proc/self").exists()
        && Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_and_leave_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("sub").join("b");
        std::fs::write(&a, b"old").unwrap();
        // The second file cannot be written (no such directory): the first stays old.
        let err = write_all_atomic(&[(a.clone(), b"new".to_vec()), (b, b"x".to_vec())]);
        assert!(err.is_err());
        assert_eq!(std::fs::read(&a).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_all_atomic(&[(a.clone(), b"new".to_vec())]).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"new");
    }

    #[test]
    fn stale_temporaries_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        // A dead writer's file (no such process id), and a live one's (process 1).
        std::fs::write(dir.path().join(".KQvK.bidtb.tmp4294967295"), b"half").unwrap();
        std::fs::write(dir.path().join(".KRvK.bidtb.tmp1"), b"live").unwrap();
        std::fs::write(dir.path().join("KQvK.bidtb"), b"whole").unwrap();
        assert_eq!(remove_stale_temporaries(dir.path()), 1);
        assert!(dir.path().join("KQvK.bidtb").exists());
        assert!(dir.path().join(".KRvK.bidtb.tmp1").exists());
        assert!(!dir.path().join(".KQvK.bidtb.tmp4294967295").exists());
    }

    #[test]
    fn outputs_follow_links_write_into_fifos_and_refuse_directories() {
        let dir = tempfile::tempdir().unwrap();
        // Through a symbolic link (relative, into another directory): the target is
        // replaced, the link stays a link.
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real").join("out.svg");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.svg");
        std::os::unix::fs::symlink("real/out.svg", &link).unwrap();
        write_output(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(
            std::fs::read_dir(dir.path().join("real")).unwrap().count(),
            1
        );
        // A dangling link: its target is created.
        let dangling = dir.path().join("dangling.svg");
        std::os::unix::fs::symlink("real/made.svg", &dangling).unwrap();
        write_output(&dangling, b"made").unwrap();
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read(dir.path().join("real/made.svg")).unwrap(),
            b"made"
        );
        // A FIFO is written into and stays a FIFO.
        use std::os::unix::fs::FileTypeExt;
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_output(&fifo, b"through the fifo").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the fifo");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        // A directory (or a link to one) is refused, named, and left alone.
        let sub = dir.path().join("real");
        let err = write_output(&sub, b"x").unwrap_err().to_string();
        assert!(err.contains("real: a directory"), "{err}");
        assert!(sub.is_dir());
        // A loop of links is refused.
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let err = write_output(&a, b"x").unwrap_err().to_string();
        assert!(err.contains("symbolic links"), "{err}");
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("a.txt");
        let err = write_atomic(&path, b"x").unwrap_err().to_string();
        assert!(err.contains("a.txt"), "{err}");
    }
}
