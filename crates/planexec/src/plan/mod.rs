//! The plan: the typed contract between planner and executor.
//!
//! A [`Plan`] is a goal and a list of [`Step`]s forming a DAG. This module owns
//! the public plan format (users edit these files) and, one concern a file:
//! its types ([`Plan`], [`Step`]), how steps name each other (`links`),
//! validation with precise errors ([`validate`]), reading a plan from a model's
//! reply or a file, whole or while it streams in ([`parse`]), its JSON Schema
//! ([`schema`]) and its waves ([`waves`]). It knows nothing of models, HTTP or
//! terminals.

mod dedupe;
pub(crate) mod findings;
mod hazards;
mod inputs;
mod links;
mod outputs;
pub(crate) mod parse;
pub(crate) mod schema;
mod types;
mod unused;
pub(crate) mod validate;
mod waves;

pub use crate::json::{extract_json_object, repair_json};
pub use crate::refs::{
    find_references, resolve_args, resolve_args_as_text, value_as_text, OutputLookup, Reference, ResolveError,
};
pub use dedupe::merge_same_calls;
pub use findings::findings;
pub use inputs::{
    invented_inputs, missing_inputs, names_a_kind_of_file, names_file, names_input, texts_used_as_numbers,
    values_read_as_files,
};
pub use links::{rename_step, step_references};
pub(crate) use outputs::word_itself;
pub use outputs::{
    absent_worked_in, edited_in, ends_a_sentence, existing_outputs, mentions, new_outputs, outputs_named_by,
    outputs_named_in, outputs_read, paths_named_by, sentences_of, unwritten_outputs,
};
pub use parse::{parse_plan_file, parse_plan_reply, ParseError, PlanStream};
pub use schema::{is_strict_compatible, plan_schema, plan_schema_for, plan_schema_for_tools};
pub use types::{Plan, Step, StepKind};
pub use unused::unused_results;
pub use validate::{
    find_cycle, validate, validate_leaving_args, validate_with_done, PlanError, PlanErrors, PlanLimits, MAX_QUESTIONS,
};
pub use waves::waves;
