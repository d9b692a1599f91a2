//! Which workspace config files the user trusts.
//!
//! A workspace's `planexec.toml` comes with the folder: a cloned repository
//! can ship one. The keys that act with the user's authority (commands to
//! start as MCP servers, the shell allowlist, a tool's effect class or
//! auto-approval, the mode) are inert in a file the user has not trusted.
//! `planexec trust` records the file's path and the SHA-256 of its content in
//! the user's config folder; a changed file is untrusted again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `trusted.json` in the user's config folder: canonical path → content digest.
pub fn store_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("planexec").join("trusted.json"))
}

fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn key(path: &Path) -> String {
    path.canonicalize()
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

fn load() -> BTreeMap<String, String> {
    store_path()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn save(trusted: &BTreeMap<String, String>) -> Result<(), String> {
    let path = store_path().ok_or("there is no user config folder to remember trusted files in")?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let text = serde_json::to_string_pretty(trusted).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Whether the file at `path`, whose content is `text`, is trusted as it is now.
pub fn is_trusted(path: &Path, text: &str) -> bool {
    load().get(&key(path)) == Some(&digest(text))
}

/// Trust the file at `path` as it is now. Returns what was recorded, for the user.
pub fn trust(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut trusted = load();
    let digest = digest(&text);
    let message = format!(
        "trusted {} (sha256 {}…); if it changes, it must be trusted again",
        key(path),
        &digest[..12]
    );
    trusted.insert(key(path), digest);
    save(&trusted)?;
    Ok(message)
}

/// Stop trusting the file at `path`. Returns whether it was trusted.
pub fn forget(path: &Path) -> Result<bool, String> {
    let mut trusted = load();
    let was = trusted.remove(&key(path)).is_some();
    if was {
        save(&trusted)?;
    }
    Ok(was)
}
