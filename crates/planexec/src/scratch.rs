//! Scratch folders: a fresh temporary folder that is removed when dropped,
//! optionally holding a bounded copy of another folder.
//!
//! Used where work must happen beside a workspace, never in it: the bench
//! copies a task's fixture so a run cannot change it, and the second
//! derivation (`recompute`) runs its program on a copy of the run's workspace.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How much a copy may hold before it is refused.
#[derive(Debug, Clone, Copy)]
pub struct CopyLimit {
    pub files: usize,
    pub bytes: u64,
}

impl CopyLimit {
    /// No bound: for fixtures that are known to be small.
    pub const NONE: CopyLimit = CopyLimit {
        files: usize::MAX,
        bytes: u64::MAX,
    };
}

/// A fresh temporary folder, removed with everything in it when dropped.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// An empty folder named `planexec-{purpose}-…` under the system's temporary folder.
    pub fn new(purpose: &str) -> io::Result<ScratchDir> {
        // A counter beside the process id and the clock keeps two folders made in
        // the same nanosecond (parallel bench tasks, tests) apart.
        static MADE: AtomicU64 = AtomicU64::new(0);
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("planexec-{purpose}-{}-{stamp}-{n}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(ScratchDir(path))
    }

    /// A new scratch folder holding a copy of the files under `root`, within `limit`.
    ///
    /// `.git` folders and symbolic links are left out: a copy is for reading and
    /// writing files, and a link could lead out of the copy into the original.
    pub fn copy_of(root: &Path, purpose: &str, limit: CopyLimit) -> io::Result<ScratchDir> {
        let dir = ScratchDir::new(purpose)?;
        let mut left = limit;
        copy_tree(root, &dir.0, &mut left)?;
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copy `from` into `to`, taking what is copied off `left`.
fn copy_tree(from: &Path, to: &Path, left: &mut CopyLimit) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if kind.is_dir() && entry.file_name() != ".git" {
            copy_tree(&source, &target, left)?;
        } else if kind.is_file() {
            let size = entry.metadata()?.len();
            if left.files == 0 || size > left.bytes {
                return Err(io::Error::other(format!(
                    "{} holds more than the copy may take: at {}",
                    from.display(),
                    source.display()
                )));
            }
            left.files -= 1;
            left.bytes -= size;
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_holds_the_files_and_goes_away() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/.git")).unwrap();
        std::fs::write(dir.path().join("src/a.py"), "# TODO\n").unwrap();
        std::fs::write(dir.path().join(".env.example"), "A=1\n").unwrap();
        std::fs::write(dir.path().join("src/.git/HEAD"), "x").unwrap();
        let copy = ScratchDir::copy_of(dir.path(), "test", CopyLimit::NONE).unwrap();
        let at = copy.path().to_path_buf();
        assert_eq!(std::fs::read_to_string(at.join("src/a.py")).unwrap(), "# TODO\n");
        assert!(at.join(".env.example").is_file());
        assert!(!at.join("src/.git").exists());
        drop(copy);
        assert!(!at.exists());
    }

    #[test]
    fn a_copy_over_its_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.txt", "b.txt", "c.txt"] {
            std::fs::write(dir.path().join(name), "12345").unwrap();
        }
        let few = CopyLimit { files: 2, bytes: 1000 };
        assert!(ScratchDir::copy_of(dir.path(), "test", few).is_err());
        let small = CopyLimit { files: 10, bytes: 12 };
        assert!(ScratchDir::copy_of(dir.path(), "test", small).is_err());
        let enough = CopyLimit { files: 3, bytes: 15 };
        assert!(ScratchDir::copy_of(dir.path(), "test", enough).is_ok());
    }

    #[test]
    fn two_folders_made_at_once_are_apart() {
        let (a, b) = (ScratchDir::new("test").unwrap(), ScratchDir::new("test").unwrap());
        assert_ne!(a.path(), b.path());
    }
}
