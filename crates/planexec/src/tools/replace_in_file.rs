//! `replace_in_file`: replace every occurrence of a text in a file, in place.
//!
//! The edit coding agents are asked for most after changing a setting
//! ([`super::set_value`]): "replace colour with color in letter.txt". With
//! only `write_file`, the text goes through a model, and the 1.5B model
//! changed the wrong word ("The colour of the door is color."). As a tool the
//! edit is exact and leaves every other byte of the file as it was.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::{io_error, str_arg, string_args};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

pub(crate) struct ReplaceInFile(pub Arc<Workspace>);

#[async_trait]
impl Tool for ReplaceInFile {
    fn name(&self) -> &str {
        "replace_in_file"
    }
    fn description(&self) -> &str {
        "Replace every occurrence of a text in a file with another text, in place, keeping the rest of the file as it is. Fails if the file does not contain the text. Returns how many were replaced."
    }
    fn summary(&self) -> &str {
        "Replace every occurrence of old with new in a file."
    }
    fn parameters(&self) -> Value {
        string_args(&[
            ("path", "file path relative to the workspace root"),
            ("old", "the exact text to replace"),
            ("new", "the text to put in its place"),
        ])
    }
    fn effect(&self) -> Effect {
        Effect::WritesWorkspace
    }
    fn plan_check(&self, args: &Value) -> Option<String> {
        let old = args.get("old").and_then(Value::as_str)?;
        old.is_empty().then(|| {
            "replace_in_file needs the exact text to replace, and `old` is empty: to add a line at the end of a file, read it and write it back with write_file, content \"{{s1}}\\n<the new line>\"".to_string()
        })
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let old = str_arg(&args, "old")?;
        let new = str_arg(&args, "new")?;
        if old.is_empty() {
            return Err(ToolError::invalid_args(
                "`old` is empty: give the exact text to replace",
            ));
        }
        let full = self.0.resolve(path)?;
        let text = tokio::fs::read_to_string(&full).await.map_err(|e| io_error(path, e))?;
        let replaced = text.matches(old).count();
        if replaced == 0 {
            return Err(ToolError::invalid_args(format!(
                "`{path}` does not contain `{}`: read the file to see its text, and give the text exactly as it is written there",
                crate::text::one_line(old, 60)
            )));
        }
        tokio::fs::write(&full, text.replace(old, new))
            .await
            .map_err(|e| io_error(path, e))?;
        Ok(json!({"path": self.0.display(&full), "replaced": replaced}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> (tempfile::TempDir, ReplaceInFile) {
        let dir = tempfile::tempdir().unwrap();
        let tool = ReplaceInFile(Arc::new(Workspace::new(dir.path()).unwrap()));
        (dir, tool)
    }

    #[tokio::test]
    async fn every_occurrence_is_replaced_and_the_rest_kept() {
        let (dir, tool) = tool();
        let letter = "The colour of the door is blue.\nI like the colour green.\n";
        std::fs::write(dir.path().join("letter.txt"), letter).unwrap();
        let out = tool
            .call(json!({"path": "letter.txt", "old": "colour", "new": "color"}))
            .await
            .unwrap();
        assert_eq!(out["replaced"], 2);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("letter.txt")).unwrap(),
            "The color of the door is blue.\nI like the color green.\n"
        );
    }

    #[tokio::test]
    async fn a_text_the_file_does_not_hold_is_an_error_and_the_file_is_unchanged() {
        let (dir, tool) = tool();
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        let err = tool
            .call(json!({"path": "a.txt", "old": "Hello", "new": "Bye"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not contain `Hello`"), "{err}");
        assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "hello\n");
        let err = tool
            .call(json!({"path": "b.txt", "old": "x", "new": "y"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("b.txt"), "{err}");
    }
}
