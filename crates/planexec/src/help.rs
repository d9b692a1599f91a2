//! The port through which a run gets model-specific help with its plans,
//! and the record of that help.
//!
//! The core plans, checks and sends a planner its findings; it knows no rule
//! of its own. A [`PlanHelp`] may show the planner a worked plan and rewrite
//! a plan the planner could not fix itself. planexec's own is
//! [`crate::mends::SmallModelHelp`], for small local models; whether a run
//! gets it is its [`MendMode`]. Every act of help, and every pair of steps
//! the runtime merged because they made the same call, is a [`Mend`]:
//! recorded with the plan version, told as an event, shown in plan review.

use serde::{Deserialize, Serialize};

use crate::llm::Message;
use crate::plan::{Plan, PlanError, Step};
use crate::tools::ToolRegistry;

/// The rule name of a worked plan shown.
pub const WORKED_PLAN: &str = "worked-plan";

/// The rule name of two steps merged because they made the same call.
pub const SAME_CALL: &str = "same-call";

/// The rule name of a first plan that is one program the model wrote
/// seeing the task's files ([`PlanHelp::program_prompt`]).
pub const PROGRAM_PLAN: &str = "program-plan";

/// What a planner model is asked for a first plan of one program: the
/// system and user messages, and the tool that runs the program.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramPrompt {
    pub system: String,
    pub user: String,
    /// The tool the plan's one step calls, with the program as its `code`.
    pub tool: String,
}

impl ProgramPrompt {
    /// The messages that ask for the program.
    pub fn messages(&self) -> Vec<Message> {
        vec![Message::system(self.system.clone()), Message::user(self.user.clone())]
    }

    /// The messages that ask for `code` written again: what it did is
    /// `what` (`failed:` and the error, or what a check found).
    pub fn messages_again(&self, code: &str, what: &str) -> Vec<Message> {
        let mut messages = self.messages();
        messages.push(Message::assistant(format!("```python\n{code}\n```")));
        messages.push(Message::user(format!(
            "The program {what}\n\nWrite the whole program again with that fixed, in one ```python block."
        )));
        messages
    }

    /// The messages that ask for a new program, told only what went wrong
    /// with one before (`what`, whose error names the failing lines), not
    /// shown the program: a small model shown its own program writes it
    /// again as it was, at any temperature (held-out-38's episode list:
    /// eight copies of a program that failed on `KeyError: 'season'`).
    pub fn messages_anew(&self, what: &str) -> Vec<Message> {
        let user = format!(
            "{}\n\nA program written for this task before {what}\n\nWrite a new program that does not go wrong so.",
            self.user
        );
        vec![Message::system(self.system.clone()), Message::user(user)]
    }
}

/// Whether a run gets the small-model help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MendMode {
    /// Only for a planner model that asks for it (the embedded model).
    #[default]
    Auto,
    /// For every model.
    On,
    /// Never: every finding goes back to the planner.
    Off,
}

impl MendMode {
    pub fn as_str(self) -> &'static str {
        match self {
            MendMode::Auto => "auto",
            MendMode::On => "on",
            MendMode::Off => "off",
        }
    }

    pub fn parse(text: &str) -> Result<MendMode, String> {
        match text.trim() {
            "auto" => Ok(MendMode::Auto),
            "on" => Ok(MendMode::On),
            "off" => Ok(MendMode::Off),
            other => Err(format!("unknown mend setting `{other}`: use auto, on or off")),
        }
    }

    /// Whether a run whose planner model says `wants_help` gets the help.
    pub fn applies(self, wants_help: bool) -> bool {
        match self {
            MendMode::Auto => wants_help,
            MendMode::On => true,
            MendMode::Off => false,
        }
    }
}

/// One change the runtime made to a plan: which rule, at which step, and the
/// steps as they were (`before`: changed or removed) and as they are
/// (`after`: changed or added).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mend {
    pub rule: String,
    /// The step it acted at (empty for a worked plan, shown to the whole plan).
    pub step: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<Step>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Step>,
    /// What else there is to say: the task of a worked plan shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For a program plan chosen by a vote: how many programs written apart
    /// ran, and how many of them did the work of the one planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
    /// For a program plan chosen by a vote: the other programs that ran
    /// without failing and did other work than the one planned (the first
    /// of each such group, the biggest first): a revision that writes the
    /// program found wrong again takes the first of them not yet run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Step>,
    /// For a program plan chosen by a vote where no program ran without a
    /// flaw ([`crate::sandbox`]): the flaw of the one planned, which its
    /// run must not pass as done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_flaw: Option<String>,
    /// For a program plan chosen by a vote: what the task states of the
    /// lines of the one file it writes ([`crate::task_test`]), which each
    /// program's file was held to, and the file the run ends with is too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_test: Option<crate::ListTest>,
}

/// How a vote among programs written apart for one task went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agreement {
    pub programs: usize,
    pub agreeing: usize,
}

impl Agreement {
    /// `agreeing` of `programs` did the same work.
    pub fn new(programs: usize, agreeing: usize) -> Agreement {
        Agreement { programs, agreeing }
    }

    /// Whether another program did the same work as the one planned: one
    /// program alone, or one that no other agreed with, is the model's
    /// guess (on held-out-15 no program without agreement was right). A
    /// pair found only among [`WEAK_PAIR_AMONG`] programs or more is no
    /// confirmation either: where four programs or more each did work of
    /// their own, two that meet are as likely to share the model's mistake
    /// as the task's answer. Of the held-out-41 to -45 runs (spent) that
    /// said `succeeded` on a pair, the work was right in 64 of 70 where the
    /// pair was the first two programs, 16 of 19 among three, and 10 of 17
    /// among six or seven.
    pub fn confirmed(&self) -> bool {
        self.agreeing >= 3 || (self.agreeing == 2 && self.programs < WEAK_PAIR_AMONG)
    }
}

/// How many programs a vote took for a pair among them to be a weak one
/// ([`Agreement::confirmed`]).
pub const WEAK_PAIR_AMONG: usize = 6;

impl Mend {
    /// The change from `old` to `new` by `rule` at `step`, found by comparing the plans.
    pub fn between(rule: &str, step: &str, old: &Plan, new: &Plan) -> Mend {
        let before = old
            .steps
            .iter()
            .filter(|s| new.step(&s.id) != Some(*s))
            .cloned()
            .collect();
        let after = new
            .steps
            .iter()
            .filter(|s| old.step(&s.id) != Some(*s))
            .cloned()
            .collect();
        Mend {
            rule: rule.to_string(),
            step: step.to_string(),
            before,
            after,
            ..Mend::default()
        }
    }

    /// The record of a first plan that is the program `step` runs, written
    /// by the model for [`PlanHelp::program_prompt`] (`note`: why).
    pub fn program_plan(step: &Step, vote: Option<(String, Agreement)>) -> Mend {
        let written = "one program written with the task's files shown";
        Mend {
            rule: PROGRAM_PLAN.to_string(),
            step: step.id.clone(),
            after: vec![step.clone()],
            note: Some(match &vote {
                Some((said, _)) => format!("{written}; {said}"),
                None => written.to_string(),
            }),
            agreement: vote.map(|(_, agreement)| agreement),
            ..Mend::default()
        }
    }

    /// This record, with the vote's `others` ([`Mend::others`]).
    pub fn with_others(self, others: Vec<Step>) -> Mend {
        Mend { others, ..self }
    }

    /// This record, with the flaw of the program kept ([`Mend::kept_flaw`]).
    pub fn with_kept_flaw(self, kept_flaw: Option<String>) -> Mend {
        Mend { kept_flaw, ..self }
    }

    /// This record, with the test of the file the task writes
    /// ([`Mend::list_test`]).
    pub fn with_list_test(self, list_test: Option<crate::ListTest>) -> Mend {
        Mend { list_test, ..self }
    }

    /// The record of a worked plan shown to the planner: the example's task.
    pub fn worked_plan(task: &str) -> Mend {
        Mend {
            rule: WORKED_PLAN.to_string(),
            step: String::new(),
            note: Some(task.to_string()),
            ..Mend::default()
        }
    }

    /// One line for people: `rule at s3: added s4; changed s3`.
    pub fn describe(&self) -> String {
        if self.rule == WORKED_PLAN {
            return format!("{WORKED_PLAN} shown: \"{}\"", self.note.as_deref().unwrap_or_default());
        }
        let ids = |steps: &[Step]| steps.iter().map(|s| s.id.clone()).collect::<Vec<_>>().join(", ");
        let added: Vec<&Step> = self
            .after
            .iter()
            .filter(|a| !self.before.iter().any(|b| b.id == a.id))
            .collect();
        let removed: Vec<&Step> = self
            .before
            .iter()
            .filter(|b| !self.after.iter().any(|a| a.id == b.id))
            .collect();
        let mut parts = Vec::new();
        if !added.is_empty() {
            parts.push(format!(
                "added {}",
                added.iter().map(|s| s.id.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        if !removed.is_empty() {
            parts.push(format!(
                "removed {}",
                removed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        let changed = ids(&self
            .after
            .iter()
            .filter(|a| self.before.iter().any(|b| b.id == a.id))
            .cloned()
            .collect::<Vec<_>>());
        if !changed.is_empty() {
            parts.push(format!("changed {changed}"));
        }
        format!("{} at {}: {}", self.rule, self.step, parts.join("; "))
    }
}

/// A worked plan shown to the planner: the example's task, and the text
/// put beside the task.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkedPlan {
    pub task: String,
    pub text: String,
}

/// The help a run's planner and replanner call: worked plans for the
/// prompt, and mends for a plan's findings. Implement it to bring rules of
/// your own (`AgentBuilder::plan_help`).
pub trait PlanHelp: Send + Sync {
    /// A worked plan to show beside `task`, if one fits it.
    fn worked_plan(&self, task: &str, tools: &ToolRegistry) -> Option<WorkedPlan>;

    /// `plan` with the edits its `findings` call for, as many as the rules
    /// can make, and what was done; `None` when no finding could be mended.
    /// The runtime checks the result again: what is left goes back to the
    /// planner, or is met when its step runs.
    fn mend(&self, plan: &Plan, findings: &[PlanError], task: &str, tools: &ToolRegistry) -> Option<(Plan, Vec<Mend>)>;

    /// The prompt for a first plan that is one program, when `task` over
    /// the workspace of `tools` is better done so than by a plan of steps.
    /// The planner asks for it first; the plan it makes is checked like
    /// any other, and one with findings is dropped for a plan of steps.
    fn program_prompt(&self, _task: &str, _tools: &ToolRegistry) -> Option<ProgramPrompt> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_helps_the_embedded_model_only_unless_told() {
        assert!(MendMode::Auto.applies(true) && !MendMode::Auto.applies(false));
        assert!(MendMode::On.applies(false) && !MendMode::Off.applies(true));
        assert_eq!(MendMode::parse(" on "), Ok(MendMode::On));
        assert!(MendMode::parse("always").unwrap_err().contains("auto, on or off"));
    }
}
