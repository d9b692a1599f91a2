//! Lines of a written file that are an input's lines, or items found in
//! its text, put in sorted order, said as a fact for the check to weigh.
//!
//! Asked to write each badge name once "in the order they first appear",
//! two of the 1.5B model's six programs wrote `sorted(set(names))`, agreed,
//! and the vote chose them; the checker, shown the file, passed it
//! (held-out-28, spent). Whether sorted is what the task asks for is the
//! task's to say (a list "sorted A to Z" is sorted too), so this is a fact,
//! not a finding: [`crate::synthesizer::against`] asks whether the task's
//! own words ask otherwise. Dates and addresses found inside a log's
//! sentences were written `sorted(set(found))` the same way (held-out-29,
//! spent), so an item is placed where it first stands in the input's text.

use super::two_ways::TwoWays;

/// Fewest lines a sorted file has for its order to be a fact: two lines
/// are in one order or the other by chance.
const FEWEST_LINES: usize = 3;

/// When the lines of `now` (the file at `path`, trimmed, not blank) are
/// each in one of `inputs` (path and text), as a whole line or a word of
/// its own inside one ([`first_places`]), in sorted order
/// (A to Z or Z to A), and that input has them in another order (by where
/// each first appears): a line saying so, with two lines the input has the
/// other way round. What the fact claims, in the words a quote of the task
/// about it must share ([`crate::synthesizer::against`]), is the order
/// the items are not in: a task that says "sorted alphabetically" does not
/// ask otherwise than `sorted A to Z`.
pub(crate) fn sorted_from(path: &str, now: &str, inputs: &[(String, String)]) -> Option<TwoWays> {
    let written = super::line_parts::lines_written(now);
    if written.len() < FEWEST_LINES {
        return None;
    }
    let way = sorted_way(&written)?;
    inputs
        .iter()
        .filter(|(input, _)| input != path)
        .find_map(|(input, text)| {
            let at = first_places(&written, text)?;
            let turned = (1..at.len()).find(|&i| at[i] < at[i - 1])?;
            let (earlier, later) = (written[turned], written[turned - 1]);
            let first_seen = format!("in the order in which they first appear in {input}");
            Some(TwoWays {
                text: format!(
                    "The items of {path} are `sorted {way}`, not {first_seen} (there `{earlier}` is before `{later}`).\n\n"
                ),
                question: format!("in what order are the items of {path} to be written?"),
                ways: [format!("sorted {way}"), first_seen],
            })
        })
}

/// Where each of `items` first appears in `text`: as a whole line of it
/// when each is one, else as a word of its own inside it (an address or a
/// date in a sentence); none when one of them is in neither.
pub(crate) fn first_places(items: &[&str], text: &str) -> Option<Vec<usize>> {
    let lines = super::line_parts::input_lines(text);
    let as_lines: Option<Vec<usize>> = items
        .iter()
        .map(|item| lines.iter().position(|line| line == item))
        .collect();
    as_lines.or_else(|| items.iter().map(|item| first_word_at(text, item)).collect())
}

/// The first place in `text` where `item` stands as a word of its own:
/// neither a letter nor a digit just before or just after it, so that
/// `ann@x.org` is not found inside `joann@x.org`.
fn first_word_at(text: &str, item: &str) -> Option<usize> {
    let joined = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    text.match_indices(item).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + item.len()..].chars().next();
        !joined(before) && !joined(after)
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
        let fact = sorted_from("unique.txt", "Adam Li\nMina Ortiz\nZoe Park\n", &badges())
            .unwrap()
            .text;
        assert!(fact.contains("sorted A to Z"), "{fact}");
        assert!(fact.contains("there `Zoe Park` is before `Mina Ortiz`"), "{fact}");
        let down = sorted_from("unique.txt", "Zoe Park\nMina Ortiz\nAdam Li\n", &badges()).unwrap();
        assert_eq!(
            down.ways,
            [
                "sorted Z to A",
                "in the order in which they first appear in badge_names.txt"
            ]
        );
        let down = down.text;
        assert!(down.contains("sorted Z to A"), "{down}");
    }

    #[test]
    fn items_inside_an_inputs_lines_written_sorted_are_a_fact() {
        let log = "2024-03-16 launched, next on 2024-04-27\n2024-04-13 scrubbed\n2024-04-27 launched\n";
        let inputs = vec![("launches.log".to_string(), log.to_string())];
        let sorted = "2024-03-16\n2024-04-13\n2024-04-27\n";
        let fact = sorted_from("dates.txt", sorted, &inputs).unwrap().text;
        assert!(fact.contains("there `2024-04-27` is before `2024-04-13`"), "{fact}");
        let first_seen = "2024-03-16\n2024-04-27\n2024-04-13\n";
        assert_eq!(sorted_from("dates.txt", first_seen, &inputs), None);
    }

    #[test]
    fn an_item_is_found_only_as_a_word_of_its_own() {
        let text = "from joann@x.org, then ann@x.org.";
        assert_eq!(first_word_at(text, "ann@x.org"), Some(23));
        assert_eq!(first_word_at("annex", "ann"), None);
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
