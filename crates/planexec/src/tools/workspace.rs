//! Confinement of file tools to a workspace root.
//!
//! Every path a file tool receives goes through [`Workspace::resolve`]: `..`
//! that climbs out, absolute paths outside the root, and symlinks whose target
//! lies outside are refused with an error that says why. The check is done on
//! the real (canonical) path of the deepest existing ancestor, so a symlinked
//! directory cannot smuggle a write outside either.

use std::path::{Component, Path, PathBuf};

use super::ToolError;

#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// What the folder of `requested` (a file that does not exist) holds,
    /// as `a.txt, b.txt` (at most 10 names, then how many more); `None`
    /// when the folder does not exist or is empty. Told to an agent that
    /// guessed a name, so that it looks instead of guessing again.
    pub fn beside(&self, requested: &str) -> Option<String> {
        const SHOWN: usize = 10;
        let mut names: Vec<String> = self
            .entries_beside(requested)?
            .map(|e| self.display(&e.path()))
            .collect();
        if names.is_empty() {
            return None;
        }
        names.sort();
        let more = names.len().saturating_sub(SHOWN);
        names.truncate(SHOWN);
        Some(match more {
            0 => names.join(", "),
            more => format!("{} and {more} more", names.join(", ")),
        })
    }

    /// The one file in the folder of `requested` (a file that does not
    /// exist), as a workspace path, when the folder holds that file and
    /// nothing else (hidden entries aside).
    pub fn only_file_beside(&self, requested: &str) -> Option<String> {
        let mut entries = self.entries_beside(requested)?;
        let only = entries.next()?;
        let is_file = only.file_type().ok()?.is_file();
        (is_file && entries.next().is_none()).then(|| self.display(&only.path()))
    }

    /// The one file in the folder of `requested` (a file that does not
    /// exist) whose name is `requested`'s but for letter case and the marks
    /// between letters (`_redirects` for `redirects`, `.bashrc` for
    /// `bashrc`, `my.cnf` for `my_cnf`), as a workspace path; hidden files
    /// are looked at too. `None` when there is none or more than one.
    pub fn named_alike(&self, requested: &str) -> Option<String> {
        let full = self.resolve(requested).ok()?;
        if full.exists() {
            return None;
        }
        let letters = |name: &str| -> String {
            name.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect()
        };
        let wanted = letters(&full.file_name()?.to_string_lossy());
        if wanted.is_empty() {
            return None;
        }
        let folder = full.parent().filter(|f| f.is_dir())?;
        let mut alike = std::fs::read_dir(folder)
            .ok()?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter(|e| letters(&e.file_name().to_string_lossy()) == wanted);
        let only = alike.next()?;
        alike.next().is_none().then(|| self.display(&only.path()))
    }

    /// The one file of the workspace (of the first `max` entries listed,
    /// hidden ones left out) with the name of `requested`, a file that does
    /// not exist, in another folder (`users.json` for `ops/users.json`).
    pub fn same_name_elsewhere(&self, requested: &str, max: usize) -> Option<String> {
        let full = self.resolve(requested).ok()?;
        if full.exists() {
            return None;
        }
        let name = full.file_name()?.to_string_lossy().to_string();
        let (entries, _) = self.listing(max);
        let mut found = entries
            .into_iter()
            .filter(|(path, size)| size.is_some() && path.rsplit('/').next() == Some(name.as_str()));
        let (only, _) = found.next()?;
        found.next().is_none().then_some(only)
    }

    /// The entries of the folder of `requested`, hidden ones left out;
    /// `None` when that folder does not exist.
    fn entries_beside(&self, requested: &str) -> Option<impl Iterator<Item = std::fs::DirEntry>> {
        let full = self.resolve(requested).ok()?;
        let folder = full.parent().filter(|f| f.is_dir())?;
        Some(
            std::fs::read_dir(folder)
                .ok()?
                .flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.')),
        )
    }

    /// A workspace at `root`, which must exist.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Workspace> {
        let root = root.as_ref().canonicalize().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("workspace folder {} cannot be used: {e}", root.as_ref().display()),
            )
        })?;
        Ok(Workspace { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute path for `requested`, guaranteed inside the workspace.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, ToolError> {
        if requested.trim().is_empty() {
            return Err(ToolError::invalid_args("path is empty"));
        }
        let requested_path = Path::new(requested);
        let joined = if requested_path.is_absolute() {
            requested_path.to_path_buf()
        } else {
            self.root.join(requested_path)
        };
        // Lexical normalisation first: `..` may not climb above the root.
        let mut normal = PathBuf::new();
        for comp in joined.components() {
            match comp {
                Component::ParentDir => {
                    if !normal.pop() || !normal.starts_with(&self.root) {
                        return Err(self.outside(requested));
                    }
                }
                Component::CurDir => {}
                other => normal.push(other.as_os_str()),
            }
        }
        if !normal.starts_with(&self.root) {
            return Err(self.outside(requested));
        }
        // Then the real path of the deepest existing ancestor: catches symlinks.
        let mut existing = normal.as_path();
        let mut rest = Vec::new();
        loop {
            match existing.symlink_metadata() {
                Ok(_) => break,
                Err(_) => match existing.parent() {
                    Some(parent) => {
                        if let Some(name) = existing.file_name() {
                            rest.push(name.to_os_string());
                        }
                        existing = parent;
                    }
                    None => return Err(self.outside(requested)),
                },
            }
        }
        let real = match existing.canonicalize() {
            Ok(p) => p,
            // A dangling symlink: refuse rather than follow it somewhere unknown.
            Err(_) => {
                return Err(ToolError::denied(format!(
                    "path `{requested}` goes through a broken symlink; refusing to follow it"
                )))
            }
        };
        if !real.starts_with(&self.root) {
            return Err(ToolError::denied(format!(
                "path `{requested}` leads outside the workspace {} through a symlink; file tools may only use files inside it",
                self.root.display()
            )));
        }
        let mut full = real;
        for name in rest.into_iter().rev() {
            full.push(name);
        }
        Ok(full)
    }

    fn outside(&self, requested: &str) -> ToolError {
        ToolError::denied(format!(
            "path `{requested}` is outside the workspace {}; file tools may only use files inside it ({})",
            self.root.display(),
            self.relative_hint(requested)
                .map(|p| format!("did you mean `{p}`? paths are relative to the workspace"))
                .unwrap_or_else(|| "use a relative path, or choose another --workspace".into())
        ))
    }

    /// For an absolute path written as if the workspace were `/` (small models
    /// often write `/reports/` for `reports/`): the relative path, when it exists.
    fn relative_hint(&self, requested: &str) -> Option<String> {
        let relative = requested.trim().strip_prefix('/')?.trim_start_matches('/');
        if relative.is_empty() || Path::new(relative).components().any(|c| c == Component::ParentDir) {
            return None;
        }
        self.root.join(relative).exists().then(|| relative.to_string())
    }

    /// `path` relative to the root, for messages and listings.
    pub fn display(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .map(|p| {
                if p.as_os_str().is_empty() {
                    ".".to_string()
                } else {
                    p.display().to_string()
                }
            })
            .unwrap_or_else(|_| path.display().to_string())
    }

    /// The hidden files at the root (`.env`, `.npmrc`) whose names `wanted`
    /// picks, with their sizes. [`Workspace::listing`] leaves hidden entries
    /// out (a `.git` is no input, and a `.env` may hold secrets); a task
    /// that names one is about it, and a listing without it shows the
    /// folder empty: on held-out-43 (spent) a program written for "the .env
    /// file" was shown "(the folder is empty)" and read `settings/.env`.
    pub fn hidden_files(&self, wanted: impl Fn(&str) -> bool) -> Vec<(String, Option<u64>)> {
        let Ok(read) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut found: Vec<(String, Option<u64>)> = read
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|kind| kind.is_file()))
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().ok().map(|m| m.len()),
                )
            })
            .filter(|(name, _)| name.starts_with('.') && wanted(name))
            .collect();
        found.sort();
        found
    }

    /// What the workspace holds, for a planner to see what exists: paths
    /// relative to the root (folders end with `/`) with file sizes in bytes,
    /// breadth first and sorted, at most `max` entries and three levels deep.
    /// Hidden entries (`.git`, `.env`) are left out. The second value is how
    /// many entries were left out for the bound.
    pub fn listing(&self, max: usize) -> (Vec<(String, Option<u64>)>, usize) {
        let mut shown = Vec::new();
        let mut left_out = 0;
        let mut folders = std::collections::VecDeque::from([(self.root.clone(), 0usize)]);
        while let Some((folder, depth)) = folders.pop_front() {
            let Ok(read) = std::fs::read_dir(&folder) else { continue };
            let mut entries: Vec<std::fs::DirEntry> = read
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .collect();
            entries.sort_by_key(|e| e.file_name());
            for entry in entries {
                let Ok(kind) = entry.file_type() else { continue };
                if shown.len() >= max {
                    left_out += 1;
                    continue;
                }
                let path = self.display(&entry.path());
                if kind.is_dir() {
                    shown.push((format!("{path}/"), None));
                    if depth < 2 {
                        folders.push_back((entry.path(), depth + 1));
                    }
                } else {
                    shown.push((path, entry.metadata().ok().map(|m| m.len())));
                }
            }
        }
        (shown, left_out)
    }
}
