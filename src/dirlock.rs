//! One run per board directory: an advisory lock on `DIR/FxR/.bidtb.lock`, held for the
//! whole of a `generate` run (the operating system's file lock, `flock` on Linux, released
//! when the process ends however it ends). A second run in the same directory is refused
//! with the holder's process id instead of deleting the first run's checkpoints and
//! temporary files, and a run holding the lock knows that every temporary file it finds
//! there is another, dead, process's leftover. Also: making an output directory, with a
//! plain error where a file stands in the way ([`ensure_dir`]).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The lock file's name inside a board directory.
pub const LOCK_FILE: &str = ".bidtb.lock";

/// A held lock on a board directory; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

/// Make the output directory `dir` (and its parents), or say plainly why not: a path that
/// exists but is not a directory is named as such (not "File exists").
pub fn ensure_dir(dir: &Path) -> Result<(), Error> {
    let mut up = Some(dir);
    while let Some(p) = up {
        if let Ok(meta) = std::fs::metadata(p) {
            if !meta.is_dir() {
                let why = if p == dir {
                    "not a directory (output goes into a directory)"
                } else {
                    "not a directory (output goes into a directory below it)"
                };
                let source = std::io::Error::new(std::io::ErrorKind::NotADirectory, why);
                return Err(Error::io(p, source));
            }
            break;
        }
        up = p.parent();
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

impl DirLock {
    /// Take the lock on `dir` (which must exist), or say which process holds it. Creating the
    /// lock file also shows that the directory is writable.
    pub fn acquire(dir: &Path) -> Result<DirLock, Error> {
        let path = dir.join(LOCK_FILE);
        if let Ok(meta) = std::fs::symlink_metadata(&path)
            && !meta.is_file()
        {
            return Err(Error::Usage(format!(
                "{} is not a regular file; remove it (it is bidtb's lock on the directory)",
                path.display()
            )));
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(dir, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let holder = match text.trim().parse::<u32>() {
                    Ok(pid) => format!("process {pid}"),
                    Err(_) => "another process".to_string(),
                };
                return Err(Error::Busy(format!(
                    "{} is in use: {holder} holds its lock (a run of generate, chips, upgrade, \
                     verify or atlas there; one at a time per directory: wait for it to \
                     finish, stop it, or use another directory)",
                    dir.display()
                )));
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        let id = format!("{}\n", std::process::id());
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(id.as_bytes()));
        written.map_err(|e| Error::io(&path, e))?;
        Ok(DirLock { file, path })
    }

    /// [`DirLock::acquire`] for a run that only reads `dir` (`verify`): a directory it may
    /// not write in (read-only tables) is read without the lock (no run of ours can write
    /// there either), but one that a run holds is refused as by [`DirLock::acquire`].
    pub fn acquire_to_read(dir: &Path) -> Result<Option<DirLock>, Error> {
        match DirLock::acquire(dir) {
            Ok(lock) => Ok(Some(lock)),
            Err(Error::Io { source, .. })
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("process {}", std::process::id())),
            "{err}"
        );
        assert!(err.contains("in use"), "{err}");
        drop(first);
        let again = DirLock::acquire(dir.path()).unwrap();
        assert!(again.path().ends_with(LOCK_FILE));
    }

    #[test]
    fn a_lock_path_that_is_not_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(LOCK_FILE)).unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
