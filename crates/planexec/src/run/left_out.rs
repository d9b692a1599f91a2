//! Values of one kind a list a run made holds (email addresses, web
//! addresses), where an input holds more of that kind than the list does:
//! said as a fact with its other way, every one the input holds.
//!
//! Asked for "every email address that appears" in desk notes, the 1.5B
//! model's programs took only the addresses written in `<…>` (one of six),
//! a checking program did the same, and the run said `succeeded`
//! (held-out-35, spent). Whether a list is to hold all of an input's values
//! or only some (the addresses of members who paid) is the task's to say,
//! so the fact is a choice the task is asked about, not a finding. The
//! kinds are known by their form, which any task's data may hold.

use super::two_ways::TwoWays;

/// Values of the input the fact names, at most.
const NAMED: usize = 3;

/// A kind of value known by its form alone.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Email,
    WebAddress,
}

impl Kind {
    const ALL: [Kind; 2] = [Kind::Email, Kind::WebAddress];

    fn pattern(self) -> &'static regex::Regex {
        static EMAIL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        static WEB: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        match self {
            Kind::Email => EMAIL.get_or_init(|| {
                regex::Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
                    .expect("a valid pattern")
            }),
            Kind::WebAddress => {
                WEB.get_or_init(|| regex::Regex::new(r#"https?://[^\s<>"'`()\[\]{}]+"#).expect("a valid pattern"))
            }
        }
    }

    fn plural(self) -> &'static str {
        match self {
            Kind::Email => "email addresses",
            Kind::WebAddress => "web addresses",
        }
    }

    fn singular(self) -> &'static str {
        match self {
            Kind::Email => "email address",
            Kind::WebAddress => "web address",
        }
    }

    /// The values of this kind in `text`, each as compared: an email
    /// address in any capitals is one address; a web address ends before
    /// the punctuation of the sentence around it.
    fn values_in(self, text: &str) -> Vec<String> {
        self.pattern()
            .find_iter(text)
            .map(|found| self.key(found.as_str()))
            .collect()
    }

    fn key(self, value: &str) -> String {
        match self {
            Kind::Email => value.to_lowercase(),
            Kind::WebAddress => value.trim_end_matches(['.', ',', ';', ':', '!', '?']).to_string(),
        }
    }

    /// Whether `line` is one value of this kind and nothing else.
    fn whole(self, line: &str) -> bool {
        self.pattern()
            .find(line)
            .is_some_and(|found| found.start() == 0 && found.end() == line.len())
    }
}

/// When every line of `now`, the list the run made at `path` (a plain
/// list, [`crate::list_test::holds_a_list`]), is one value of a kind, and
/// one of `inputs` (path and text) holds values of that kind the list does
/// not: that, and the two ways the list could be.
pub(crate) fn left_out_from(path: &str, now: &str, inputs: &[(String, String)]) -> Option<TwoWays> {
    let written = super::line_parts::lines_written(now);
    if !crate::list_test::holds_a_list(path) || written.is_empty() {
        return None;
    }
    let kind = Kind::ALL
        .into_iter()
        .find(|kind| written.iter().all(|line| kind.whole(line)))?;
    let held: Vec<String> = written.iter().map(|line| kind.key(line)).collect();
    inputs
        .iter()
        .filter(|(input, _)| input != path)
        .find_map(|(input, text)| {
            let mut found = kind.values_in(text);
            dedup_in_order(&mut found);
            let missing: Vec<&String> = found.iter().filter(|value| !held.contains(value)).collect();
            if missing.is_empty() {
                return None;
            }
            let named: Vec<String> = missing.iter().take(NAMED).map(|value| format!("`{value}`")).collect();
            let more = match missing.len().saturating_sub(NAMED) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let (plural, one) = (kind.plural(), kind.singular());
            let holds = format!(
                "{path} holds {} of the {} different {plural} in {input}",
                found.len() - missing.len(),
                found.len()
            );
            Some(TwoWays {
                text: format!("{holds}: it leaves out {}{more}.\n\n", named.join(", ")),
                question: format!("which {plural} of {input} is {path} to hold?"),
                ways: [
                    format!("only some of them, leaving out {}{more}", named.join(", ")),
                    format!("every {one} that appears in {input}"),
                ],
            })
        })
}

/// `values` with each after its first left out.
fn dedup_in_order(values: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    values.retain(|value| seen.insert(value.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes() -> Vec<(String, String)> {
        let text = "Rosa <Rosa.Ilic@cragmail.com> renewed.\nTom: tom.b@boulderbox.io, wants lessons\nrosa.ilic@cragmail.com again; see https://gym.example/rota.\n";
        vec![("notes.txt".to_string(), text.to_string())]
    }

    #[test]
    fn a_list_of_addresses_that_leaves_one_of_the_inputs_out_is_a_fact() {
        let fact = left_out_from("emails.txt", "rosa.ilic@cragmail.com\n", &notes()).unwrap();
        assert!(
            fact.text
                .starts_with("emails.txt holds 1 of the 2 different email addresses in notes.txt: it leaves out `tom.b@boulderbox.io`."),
            "{}",
            fact.text
        );
        assert_eq!(fact.ways[1], "every email address that appears in notes.txt");
    }

    #[test]
    fn a_list_with_every_address_in_any_capitals_is_no_fact() {
        let all = "Rosa.Ilic@cragmail.com\ntom.b@boulderbox.io\n";
        assert_eq!(left_out_from("emails.txt", all, &notes()), None);
    }

    #[test]
    fn web_addresses_end_before_the_sentence_goes_on() {
        assert_eq!(left_out_from("links.txt", "https://gym.example/rota\n", &notes()), None);
        let other = left_out_from("links.txt", "https://gym.example/\n", &notes()).unwrap();
        assert!(
            other.text.contains("leaves out `https://gym.example/rota`"),
            "{}",
            other.text
        );
    }

    #[test]
    fn a_list_of_other_values_or_another_form_is_no_fact() {
        assert_eq!(left_out_from("emails.txt", "Rosa Ilic\n", &notes()), None);
        assert_eq!(
            left_out_from("emails.json", "[\"rosa.ilic@cragmail.com\"]", &notes()),
            None
        );
        let with_name = "Rosa rosa.ilic@cragmail.com\n";
        assert_eq!(left_out_from("emails.txt", with_name, &notes()), None);
    }
}
