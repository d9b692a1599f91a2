//! Whether an edit of a configuration file changed what its task names and
//! kept the rest of the file as it was: the settings it does not name in
//! their places, and its comments.
//!
//! A configuration file's lines are settings a person keeps in an order of
//! their own, with comments that say why. A program that edits one through
//! a parser's dump (`yaml.safe_dump`, `configparser.write`) sorts its keys
//! and drops its comments: the value asked for is right, and the file is
//! not the one the person had. Both the run's check of its work
//! ([`crate::run::outputs`]) and the vote over programs
//! ([`crate::sandbox`]) hold an edit to this.

/// The extensions of configuration files (a list of names or a CSV may well
/// be sorted by a task).
const CONFIG_EXTENSIONS: [&str; 8] = ["yaml", "yml", "toml", "ini", "cfg", "conf", "env", "properties"];

/// What to do instead of a rewrite ([`rewritten`]).
const KEEP: &str = "keep every line the task does not change as it was (a parser's dump reorders keys and drops comments; change the lines themselves)";

/// How an edit of the configuration file at `path` from `was` to `now`
/// rewrote it for `task` (a line saying so, with what to do instead):
/// a line it kept whose setting the task does not name is in another
/// place, or a comment line is gone and none of the `programs` that made
/// the edit works on comment lines ([`works_on_comments`]). `None` for a
/// file of another kind, or an edit that changed only what it was to. A
/// task that names the setting (`move timezone under storage`) may move it.
pub(crate) fn rewritten(path: &str, was: &str, now: &str, task: &str, programs: &[&str]) -> Option<String> {
    rewrite_found(path, was, now, task, programs).map(|found| format!("{found}: {KEEP}"))
}

/// What [`rewritten`] found, without what to do instead.
pub(crate) fn rewrite_found(path: &str, was: &str, now: &str, task: &str, programs: &[&str]) -> Option<String> {
    if !is_config(path) {
        return None;
    }
    let task = task.to_lowercase();
    let moved = moved(was, now);
    if let Some(first) = moved
        .iter()
        .find(|line| !task.contains(&setting_of(line).to_lowercase()))
    {
        return Some(format!(
            "{path} was edited in place and settings the task does not name moved (`{first}` is in another place than before)"
        ));
    }
    if speaks_of_comments(&task) && programs.iter().any(|code| works_on_comments(code)) {
        return None;
    }
    let kept: Vec<&str> = now.lines().map(str::trim).collect();
    let dropped = was
        .lines()
        .map(str::trim)
        .find(|line| is_comment(line) && !kept.contains(line))?;
    Some(format!(
        "{path} was edited in place and its comment `{dropped}` is gone"
    ))
}

/// Whether `task` (lower case) asks to take comment lines out: only then
/// may a program's work on them be the task's (a task that says to keep
/// them, or names a `#` colour, asks no such thing). A program for "change
/// REFRESH_SECONDS from 60 to 15 … the rest of the file must stay exactly
/// as it is" skipped `#` lines as it read `KEY=value` pairs, wrote the
/// pairs back without the file's comment, and the run said `succeeded`
/// (held-out-51, spent): its string `'#'` was taken for work on comments.
fn speaks_of_comments(task: &str) -> bool {
    let takes_out = ["remove", "strip", "delete", "drop", "take out", "uncomment", "clean"];
    task.contains("comment") && takes_out.iter().any(|verb| task.contains(verb))
}

/// Whether a program works on a file's comment lines itself: one of its
/// strings starts with a comment mark (`'#'`, `";"`, `r'^\s*#'`,
/// `'[#;]'`), as a program that takes comments out, or keeps them, must.
/// A parser's dump (`configparser.write`, `yaml.safe_dump`) drops them
/// with no such string: the comments it lost were no part of its work. A
/// check that asked whether the task "speaks of comments" took "leave
/// everything else as it is - comments, order, spacing" for a task that
/// changes them, and passed a `configparser` dump (held-out-30).
pub(crate) fn works_on_comments(code: &str) -> bool {
    static MARK: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r#"['"](\^|\\s\*|\[)*[#;]"#).expect("comment mark pattern"));
    MARK.is_match(code)
}

/// Whether the file at `path` is a configuration file, by its extension.
/// A dotfile such as `.env` has no extension: its name says.
pub(crate) fn is_config(path: &str) -> bool {
    let name = std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    has_extension(path, &CONFIG_EXTENSIONS) || name == ".env" || name.starts_with(".env.")
}

/// Whether the file at `path` has one of `extensions` (lowercase), in any case.
pub(crate) fn has_extension(path: &str, extensions: &[&str]) -> bool {
    let extension = std::path::Path::new(path).extension().and_then(|e| e.to_str());
    extension.is_some_and(|e| extensions.contains(&e.to_ascii_lowercase().as_str()))
}

/// Whether a configuration line is a comment (`# …`, or `; …` in an INI file).
fn is_comment(line: &str) -> bool {
    line.len() > 1 && (line.starts_with('#') || line.starts_with(';'))
}

/// The lines (trimmed, not blank) an edit from `before` to `now` kept as
/// they were and moved: taken out in one place and put back in another.
/// The 1.5B model renamed a YAML key through `yaml.safe_dump`, which sorts
/// the keys, and two programs and the checker passed it (held-out-18).
pub(crate) fn moved(before: &str, now: &str) -> Vec<String> {
    let changed = crate::text::changed_lines(before, now, 400);
    let put: Vec<&str> = changed.iter().filter_map(|line| line.strip_prefix("+ ")).collect();
    changed
        .iter()
        .filter_map(|line| line.strip_prefix("- "))
        .filter(|line| !line.trim().is_empty() && put.contains(line))
        .map(|line| line.trim().to_string())
        .collect()
}

/// The name of the setting a configuration line sets: what comes before
/// its `:` or `=`, or the whole line.
fn setting_of(line: &str) -> &str {
    line.split([':', '='])
        .next()
        .unwrap_or(line)
        .trim()
        .trim_matches(['"', '\'', '[', ']'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_is_what_a_config_line_sets() {
        assert_eq!(setting_of("keep_days: 90"), "keep_days");
        assert_eq!(setting_of("port = 8080"), "port");
        assert_eq!(setting_of("[server]"), "server");
        assert_eq!(setting_of("\"name\": \"x\""), "name");
    }

    /// An edit through a dump moves settings or drops comments; an edit of
    /// the one line asked for does neither; a task that names what moves
    /// may move it, and a program that works on comment lines may drop them.
    #[test]
    fn an_edit_that_moved_settings_or_dropped_comments_rewrote_the_file() {
        let was = "# the booking site\napp: booking\nservices:\n  worker:\n    image: w:2.8\n    replicas: 1\n# keep one worker\n";
        let line_edit = was.replace("replicas: 1", "replicas: 3");
        let task = "In deploy.yaml, change the worker's replicas to 3.";
        assert_eq!(rewritten("deploy.yaml", was, &line_edit, task, &[]), None);
        let dumped = "app: booking\nservices:\n  worker:\n    image: w:2.8\n    replicas: 3\n";
        let dump = "import yaml\nd['replicas'] = '3'  # the new count\nyaml.safe_dump(d, open('deploy.yaml', 'w'))";
        let told = rewritten("deploy.yaml", was, dumped, task, &[dump]).unwrap_or_default();
        assert!(told.contains("its comment `# the booking site` is gone"), "{told}");
        let sorted = "# the booking site\nservices:\n  worker:\n    image: w:2.8\n    replicas: 3\napp: booking\n# keep one worker\n";
        let told = rewritten("deploy.yaml", was, sorted, task, &[]).unwrap_or_default();
        assert!(
            told.contains("settings the task does not name moved (`app: booking`"),
            "{told}"
        );
        // Said to keep its comments, the task does not make a dump's loss
        // of them its work; a program that takes comment lines out did it.
        let keep = "In deploy.yaml, set replicas to 3; leave the comments and order as they are.";
        assert!(rewritten("deploy.yaml", was, dumped, keep, &[dump]).is_some());
        let uncomment = "In deploy.yaml, change the worker's replicas to 3 and take out the comment lines.";
        for filter in [
            "lines = [l for l in text.splitlines() if not l.strip().startswith('#')]",
            "text = re.sub(r'^\\s*#.*\\n', '', text, flags=re.M)",
            "keep = [l for l in lines if l.lstrip()[:1] not in \"#;\"]",
        ] {
            assert_eq!(
                rewritten("deploy.yaml", was, dumped, uncomment, &[filter]),
                None,
                "{filter}"
            );
            // A task that speaks of no comment: the program skipped them as it read.
            assert!(
                rewritten("deploy.yaml", was, dumped, task, &[filter]).is_some(),
                "{filter}"
            );
        }
        assert_eq!(
            rewritten("names.txt", "# b\na\n", "a\n", task, &[]),
            None,
            "no configuration file"
        );
    }
}
