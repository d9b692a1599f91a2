//! Lines of a written file that are an input's lines put in sorted order,
//! said as a fact for the check to weigh.
//!
//! Asked to write each badge name once "in the order they first appear",
//! two of the 1.5B model's six programs wrote `sorted(set(names))`, agreed,
//! and the vote chose them; the checker, shown the file, passed it
//! (held-out-28, spent). Whether sorted is what the task asks for is the
//! task's to say (a list "sorted A to Z" is sorted too), so this is a fact,
//! not a finding: [`crate::synthesizer::against`] asks whether the task's
//! own words ask otherwise.

/// Fewest lines a sorted file has for its order to be a fact: two lines
/// are in one order or the other by chance.
const FEWEST_LINES: usize = 3;

/// When the lines of `now` (the file at `path`, trimmed, not blank) are
/// each a whole line of one of `inputs` (path and text), in sorted order
/// (A to Z or Z to A), and that input has them in another order (by where
/// each first appears): a line saying so, with two lines the input has the
/// other way round. What the fact claims, in the words a quote of the task
/// about it must share ([`crate::synthesizer::against`]), is the order
/// the items are not in: a task that says "sorted alphabetically" does not
/// ask otherwise than `sorted A to Z`.
pub(crate) fn sorted_from(path: &str, now: &str, inputs: &[(String, String)]) -> Option<String> {
    let written = super::line_parts::lines_written(now);
    if written.len() < FEWEST_LINES {
        return None;
    }
    let way = sorted_way(&written)?;
    inputs
        .iter()
        .filter(|(input, _)| input != path)
        .find_map(|(input, text)| {
            let lines = super::line_parts::input_lines(text);
            let first_at = |line: &str| lines.iter().position(|l| *l == line);
            let at: Vec<usize> = written.iter().map(|line| first_at(line)).collect::<Option<_>>()?;
            let turned = (1..at.len()).find(|&i| at[i] < at[i - 1])?;
            let (earlier, later) = (written[turned], written[turned - 1]);
            Some(format!(
                "The items of {path} are `sorted {way}`, not in the order in which they first appear in {input} (there `{earlier}` is before `{later}`).\n\n"
            ))
        })
}

/// How `lines` are sorted, when they are: `A to Z` or `Z to A`, case aside.
fn sorted_way(lines: &[&str]) -> Option<&'static str> {
    let keys: Vec<String> = lines.iter().map(|line| line.to_lowercase()).collect();
    let rising = keys.windows(2).all(|pair| pair[0] <= pair[1]);
    let falling = keys.windows(2).all(|pair| pair[0] >= pair[1]);
    match (rising, falling) {
        (true, false) => Some("A to Z"),
        (false, true) => Some("Z to A"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn badges() -> Vec<(String, String)> {
        let text = "Zoe Park\nAdam Li\nZoe Park\nMina Ortiz\nAdam Li\n";
        vec![("badge_names.txt".to_string(), text.to_string())]
    }

    #[test]
    fn an_inputs_lines_written_sorted_are_a_fact() {
        let fact = sorted_from("unique.txt", "Adam Li\nMina Ortiz\nZoe Park\n", &badges()).unwrap();
        assert!(fact.contains("sorted A to Z"), "{fact}");
        assert!(fact.contains("there `Zoe Park` is before `Mina Ortiz`"), "{fact}");
        let down = sorted_from("unique.txt", "Zoe Park\nMina Ortiz\nAdam Li\n", &badges()).unwrap();
        assert!(down.contains("sorted Z to A"), "{down}");
    }

    #[test]
    fn lines_in_the_inputs_order_or_not_its_lines_are_no_fact() {
        let first_seen = "Zoe Park\nAdam Li\nMina Ortiz\n";
        assert_eq!(
            sorted_from("unique.txt", first_seen, &badges()),
            None,
            "the input's order"
        );
        let other = "Ann\nBo\nCy\n";
        assert_eq!(
            sorted_from("unique.txt", other, &badges()),
            None,
            "not the input's lines"
        );
        assert_eq!(
            sorted_from("unique.txt", "Adam Li\nZoe Park\n", &badges()),
            None,
            "two lines"
        );
        let already = vec![("names.txt".to_string(), "Adam Li\nMina Ortiz\nZoe Park\n".to_string())];
        assert_eq!(
            sorted_from("copy.txt", "Adam Li\nMina Ortiz\nZoe Park\n", &already),
            None,
            "an input in that order already"
        );
    }
}
