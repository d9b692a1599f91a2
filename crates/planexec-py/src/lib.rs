//! planexec for Python: the native half of the `planexec` package.
//!
//! A thin shell over the library, as the CLI is: agents are built from the
//! same configuration, environment variables and `provider/model` references
//! (`planexec_cli::setup`), and everything that crosses into Python is JSON
//! text or a plain callable, so the Python half (`python/planexec`) owns
//! the types a Python user sees (dataclasses, the `@tool` decorator, asyncio).
//!
//! | file | what it holds |
//! |---|---|
//! | `agent.rs` | [`agent::NativeAgent`]: plan, run, execute a given plan, resume |
//! | `tool.rs` | a Python function as a [`planexec::Tool`] (sync on a thread pool, async on an event loop) |
//! | `approver.rs` | Python callbacks as a [`planexec::Approver`] |
//! | `ledger.rs` | decisions on recorded runs from any process, and `pull_model` |
//! | `threads.rs` | the threads that call Python, each keeping its thread state |
//! | `blocking.rs` | the runtime, and waiting for it with the GIL released and Ctrl-C honoured |
//! | `errors.rs` | the exception classes, with planexec's messages |

mod agent;
mod approver;
mod blocking;
mod errors;
mod ledger;
mod threads;
mod tool;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<agent::NativeAgent>()?;
    m.add_class::<agent::Cancel>()?;
    ledger::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
