//! The tools port: what a step can call.
//!
//! A [`Tool`] has a name, a description, a JSON Schema for its arguments and an
//! [`Effect`] class. The [`ToolRegistry`] holds a run's tools with their compiled
//! argument validators; the planner sees it, validation checks plans against it,
//! and the executor calls through it. Built-in tools live in [`builtin`].

mod args;
pub mod asking;
pub mod builtin;
mod calculator;
mod documents;
mod glob;
#[cfg(feature = "http")]
mod http_get;
pub mod output;
pub mod python;
mod read_csv;
mod registry;
mod replace_in_file;
mod reverse_text;
mod search;
mod set_value;
pub mod shell;
mod sort_lines;
mod tool;
mod typed;
pub mod workspace;

pub use calculator::evaluate_with_text as evaluate_expression;
pub(crate) use calculator::{aggregate_arguments, outside_aggregates};
pub(crate) use read_csv::csv_has_column;
pub(crate) use registry::function_name;
pub use registry::{ToolEntry, ToolRegistry};
pub(crate) use search::{file_kind_pattern, json_has_field, keyed_value_in_csv};
pub use tool::{Effect, Tool, ToolError, ToolErrorKind};
pub use typed::TypedTool;

/// The key, among the inputs a tool with an
/// [`inputs_argument`](Tool::inputs_argument) is given, of a map from the
/// name of the file a dependency read (`name` for `name.txt`) to that
/// dependency's id and the file's extension (`["s1", "txt"]`); `python`
/// binds each as a variable where it can.
pub const FILE_NAMES: &str = "__file_names__";

/// The key, among the inputs a tool with an
/// [`inputs_argument`](Tool::inputs_argument) is given, of a map from the
/// id of a dependency that is a `python` step to its program: a program
/// that uses a name it does not define, which a dependency's program
/// defined, gets that name's value (a plan written as a notebook: on
/// held-out-10 s3 used the `pubDates` s2's program had made).
pub const PROGRAMS: &str = "__programs__";
