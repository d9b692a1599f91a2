//! The `planexec` binary: everything is in the library (`src/lib.rs`).

fn main() -> std::process::ExitCode {
    planexec_cli::main()
}
