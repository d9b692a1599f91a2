//! Evaluated prompt prefixes kept on disk between processes.
//!
//! Every call of a run starts with the same system message (what the agent
//! is, the tools, the plan format), and so does every run with the same tools.
//! Evaluating it is most of a local planner call's time on a small CPU, so
//! the engine saves the KV state right after the system message
//! (llama.cpp's state file of one sequence) and loads it in the next process instead of
//! evaluating the message again.
//!
//! A state is named by a hash of everything it depends on: the model file
//! (path, size, modification time), the context size, this crate's version and
//! the prefix's tokens. Beside it a `.sha256` file holds the state's checksum,
//! because llama.cpp checks only a state file's header: a state whose checksum,
//! tokens or load fails is deleted and evaluated again ("rebuilt").
//!
//! Each role's system message (and each tool set, model and setting) has its
//! own state of tens of MB, so the folder keeps the [`KEPT`] most recently
//! used ones: a load marks its state used, and a save deletes the oldest.
//!
//! The system message is not the only part calls share: the planner's
//! instructions open its user message, and a task run twice shares almost all
//! of its prompt. So the store also remembers the tokens of the last
//! [`REMEMBERED`] prompts (a few KB each), and a prompt that shares a longer
//! prefix with one of them than any saved state holds gets a state at that
//! boundary too, as automatic prompt caching does on a hosted provider. Each
//! state's tokens are kept beside it (`.tokens`), so a prompt loads the
//! longest saved state it starts with, wherever that boundary lies.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::token::LlamaToken;
use sha2::{Digest, Sha256};

/// How many states the folder keeps.
pub const KEPT: usize = 16;

/// How many recent prompts the store remembers, to find the prefixes calls share.
pub const REMEMBERED: usize = 32;

/// Where prefix states live, and what they are keyed on besides their tokens.
#[derive(Debug, Clone)]
pub struct PrefixStore {
    dir: PathBuf,
    /// The model and context the states belong to.
    identity: String,
    /// A short hash of `identity`, naming the prompts remembered for it
    /// (token ids mean nothing under another model).
    identity_key: String,
}

/// What became of a prefix the engine asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Loaded into the context: the KV cache holds the prefix.
    Loaded,
    /// No state yet: evaluate the prefix, then [`PrefixStore::save`] it.
    Missing,
    /// A state was there but unusable (the reason); it was deleted.
    Broken(String),
}

impl PrefixStore {
    /// States for the model at `model_path` under a context of `n_ctx` tokens,
    /// kept in `dir`.
    pub fn new(dir: PathBuf, model_path: &Path, n_ctx: u32) -> PrefixStore {
        let meta = fs::metadata(model_path).ok();
        let modified = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let canonical = fs::canonicalize(model_path).unwrap_or_else(|_| model_path.to_path_buf());
        let identity = format!(
            "{}|{}|{modified}|{n_ctx}|planexec-local {}|sequence state on a {}-token grid",
            canonical.display(),
            meta.map_or(0, |m| m.len()),
            env!("CARGO_PKG_VERSION"),
            crate::engine::GRID
        );
        let identity_key = hex(&Sha256::digest(identity.as_bytes()))[..16].to_string();
        PrefixStore {
            dir,
            identity,
            identity_key,
        }
    }

    fn prompts_dir(&self) -> PathBuf {
        self.dir.join("prompts")
    }

    /// The longest prefix `tokens` shares with a remembered prompt (0 if none).
    pub fn shared_prefix(&self, tokens: &[LlamaToken]) -> usize {
        let Ok(entries) = fs::read_dir(self.prompts_dir()) else {
            return 0;
        };
        let mine = format!("{}-", self.identity_key);
        entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
            .filter_map(|e| fs::read(e.path()).ok())
            .map(|bytes| decode_tokens(&bytes).zip(tokens).take_while(|(a, b)| *a == b.0).count())
            .max()
            .unwrap_or(0)
    }

    /// The length of the longest saved state that `tokens` starts with (0 if none).
    pub fn longest_saved(&self, tokens: &[LlamaToken]) -> usize {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return 0;
        };
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "tokens"))
            .filter_map(|p| Some((fs::read(&p).ok()?, p)))
            .filter_map(|(bytes, sidecar)| {
                let n = bytes.len() / 4;
                let prefix = n <= tokens.len() && decode_tokens(&bytes).zip(tokens).all(|(a, b)| a == b.0);
                // The same tokens under another model name another file.
                (prefix && self.path_of(&tokens[..n]) == sidecar.with_extension("state")).then_some(n)
            })
            .max()
            .unwrap_or(0)
    }

    /// Remember `tokens` as a prompt later ones may share a prefix with.
    /// Failing costs only a later call's time, so it is logged, not returned.
    pub fn remember(&self, tokens: &[LlamaToken]) {
        let dir = self.prompts_dir();
        let bytes = encode_tokens(tokens);
        let name = format!("{}-{}.tokens", self.identity_key, &hex(&Sha256::digest(&bytes))[..16]);
        let path = dir.join(name);
        if let Err(e) = fs::create_dir_all(&dir).and_then(|()| fs::write(&path, &bytes)) {
            tracing::warn!(path = %path.display(), "cannot remember the prompt: {e}");
        }
        prune(&dir, "tokens", REMEMBERED);
    }

    /// The state file of `tokens`.
    pub fn path_of(&self, tokens: &[LlamaToken]) -> PathBuf {
        let mut hash = Sha256::new();
        hash.update(self.identity.as_bytes());
        for t in tokens {
            hash.update(t.0.to_le_bytes());
        }
        let key = hex(&hash.finalize());
        self.dir.join(format!("{}.state", &key[..32]))
    }

    /// Load the state of `tokens` into sequence `seq` of `ctx`, replacing what it held.
    pub fn load(&self, ctx: &mut LlamaContext<'_>, seq: i32, tokens: &[LlamaToken]) -> Lookup {
        let path = self.path_of(tokens);
        if !path.is_file() {
            return Lookup::Missing;
        }
        match self.try_load(ctx, seq, &path, tokens) {
            Ok(()) => {
                mark_used(&path);
                Lookup::Loaded
            }
            Err(why) => {
                let _ = ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
                remove(&path);
                tracing::warn!(path = %path.display(), "the saved prompt state is unusable ({why}); evaluating it again");
                Lookup::Broken(why)
            }
        }
    }

    fn try_load(&self, ctx: &mut LlamaContext<'_>, seq: i32, path: &Path, tokens: &[LlamaToken]) -> Result<(), String> {
        let expected =
            fs::read_to_string(checksum_path(path)).map_err(|_| "its checksum file is missing".to_string())?;
        let actual = file_sha256(path).map_err(|e| format!("cannot read it: {e}"))?;
        if expected.trim() != actual {
            return Err("its checksum does not match (the file is corrupted)".to_string());
        }
        let (loaded, _) = ctx
            .state_seq_load_file(path, seq, tokens.len())
            .map_err(|e| format!("llama.cpp cannot load it: {e}"))?;
        if loaded != tokens {
            return Err("it holds other tokens than its name says (a stale state)".to_string());
        }
        Ok(())
    }

    /// Save the state of sequence `seq`, which must hold exactly `tokens`.
    /// Written to a temporary name first, so a crash leaves no half state.
    /// Failing to save costs only the next process's time, so it is logged, not returned.
    pub fn save(&self, ctx: &LlamaContext<'_>, seq: i32, tokens: &[LlamaToken]) {
        let path = self.path_of(tokens);
        if let Err(e) = self.try_save(ctx, seq, &path, tokens) {
            tracing::warn!(path = %path.display(), "cannot save the prompt state: {e}");
        }
        prune(&self.dir, "state", KEPT);
    }

    fn try_save(&self, ctx: &LlamaContext<'_>, seq: i32, path: &Path, tokens: &[LlamaToken]) -> Result<(), String> {
        fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let partial = path.with_extension(format!("partial-{}", std::process::id()));
        ctx.state_seq_save_file(&partial, seq, tokens)
            .map_err(|e| e.to_string())?;
        let sum = file_sha256(&partial).map_err(|e| e.to_string())?;
        fs::write(checksum_path(path), sum).map_err(|e| e.to_string())?;
        fs::rename(&partial, path).map_err(|e| {
            remove(&partial);
            e.to_string()
        })?;
        // Which tokens the state holds, for [`PrefixStore::longest_saved`].
        fs::write(tokens_path(path), encode_tokens(tokens)).map_err(|e| e.to_string())
    }
}

/// A state's modification time is when it was last used.
fn mark_used(state: &Path) {
    if let Ok(file) = fs::File::options().write(true).open(state) {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
}

/// Delete all but the `keep` most recently used files of `extension` in `dir`
/// (with a state, its checksum).
fn prune(dir: &Path, extension: &str, keep: usize) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut states: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    states.sort_by_key(|s| std::cmp::Reverse(s.0));
    for (_, old) in states.into_iter().skip(keep) {
        remove(&old);
    }
}

fn checksum_path(state: &Path) -> PathBuf {
    state.with_extension("sha256")
}

fn tokens_path(state: &Path) -> PathBuf {
    state.with_extension("tokens")
}

fn remove(state: &Path) {
    let _ = fs::remove_file(state);
    let _ = fs::remove_file(checksum_path(state));
    let _ = fs::remove_file(tokens_path(state));
}

fn encode_tokens(tokens: &[LlamaToken]) -> Vec<u8> {
    tokens.iter().flat_map(|t| t.0.to_le_bytes()).collect()
}

fn decode_tokens(bytes: &[u8]) -> impl Iterator<Item = i32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    Ok(hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_keeps_the_most_recently_used_states_with_their_checksums() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..5u64 {
            let state = dir.path().join(format!("{i}.state"));
            fs::write(&state, b"state").unwrap();
            fs::write(checksum_path(&state), b"sum").unwrap();
            let file = fs::File::options().write(true).open(&state).unwrap();
            file.set_modified(base + std::time::Duration::from_secs(i * 60))
                .unwrap();
        }
        fs::write(dir.path().join("notes.txt"), b"not a state").unwrap();
        // State 0 is the oldest until it is used.
        mark_used(&dir.path().join("0.state"));
        prune(dir.path(), "state", 3);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "0.sha256",
                "0.state",
                "3.sha256",
                "3.state",
                "4.sha256",
                "4.state",
                "notes.txt"
            ]
        );
    }

    #[test]
    fn a_remembered_prompt_gives_the_prefix_a_later_one_shares_under_the_same_model_only() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("model.gguf");
        fs::write(&model, b"weights").unwrap();
        let store = PrefixStore::new(dir.path().join("states"), &model, 4096);
        let tokens = |ids: &[i32]| ids.iter().map(|&t| LlamaToken(t)).collect::<Vec<_>>();
        assert_eq!(store.shared_prefix(&tokens(&[1, 2, 3])), 0, "nothing remembered yet");
        store.remember(&tokens(&[1, 2, 3, 4, 5]));
        store.remember(&tokens(&[1, 2, 9]));
        assert_eq!(store.shared_prefix(&tokens(&[1, 2, 3, 4, 7, 8])), 4);
        assert_eq!(store.shared_prefix(&tokens(&[5, 1, 2])), 0);
        // Another context size is another identity: its token states do not apply.
        let other = PrefixStore::new(dir.path().join("states"), &model, 8192);
        assert_eq!(other.shared_prefix(&tokens(&[1, 2, 3, 4])), 0);
        for i in 0..(REMEMBERED as i32 + 5) {
            store.remember(&tokens(&[100 + i, 1]));
        }
        let kept = fs::read_dir(dir.path().join("states/prompts")).unwrap().count();
        assert_eq!(kept, REMEMBERED, "only the most recent prompts are kept");
    }
}
