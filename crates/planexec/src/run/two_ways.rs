//! A fact of a file a run wrote that a task may ask otherwise, put as a
//! choice: the way the file is, and the other way it could be. Which of the
//! two a task asks for is asked of the model as a choice, both ways round
//! ([`crate::synthesizer::which_asked`]), where a quote of the task's words
//! about the fact is beyond a small model; only a fact the choice leaves
//! open is then put to those words ([`crate::synthesizer::against`]), as
//! the other facts are.

/// A fact of a written file and the two ways the file could be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TwoWays {
    /// The fact, in words, ending in a blank line.
    pub text: String,
    /// The question the task answers in choosing one of `ways`.
    pub question: String,
    /// The way the file is (`sorted A to Z`), and the other.
    pub ways: [String; 2],
}
