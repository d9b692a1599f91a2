//! A new table that joins two input tables on a column they share and
//! leaves out, or leaves empty, exactly the rows whose key meets the other
//! table's only once spaces around it, capitals or Unicode forms are put
//! aside.
//!
//! On held-out-46 (spent) orders.csv and frames.csv held codes such as
//! ` FR-118` and `FR-204 `; two of five programs joined them by the cells
//! as read, wrote only the orders whose codes met exactly, agreed, and the
//! run said `succeeded`. A task may ask for only the rows that have a
//! match (an inner join), so a row with no match at all left out is no
//! evidence; a row whose key does match, once trimmed, is, when every row
//! that matched as read is there: the rows left out are those the spaces
//! hid. No model and no word of the task is read here: the evidence is
//! the three tables. The new table may name a column its own way: a
//! column it takes from the right table is found by its cells when not
//! by its name ([`right_taken`]).

use std::collections::{HashMap, HashSet};

use unicode_normalization::UnicodeNormalization;

use crate::file_shape::{table_cells, Rows};

/// A table read: its header's names (trimmed, small letters) and its rows'
/// cells as they stand.
struct Table<'a> {
    path: &'a str,
    header: Vec<String>,
    rows: Rows,
}

impl<'a> Table<'a> {
    fn read(path: &'a str, text: &str) -> Option<Table<'a>> {
        let (header, rows) = table_cells(text)?;
        let header = header.iter().map(|name| name.trim().to_lowercase()).collect();
        Some(Table { path, header, rows })
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// `row`'s cells of `columns`, trimmed, in small letters.
    fn cells_of(&self, row: &[String], columns: &[usize]) -> Vec<String> {
        columns
            .iter()
            .map(|&c| row.get(c).map_or(String::new(), |cell| normal(cell)))
            .collect()
    }
}

/// The columns of `side` (beside its key, and beside `besides`' names)
/// that `written` holds too: their places in `side`, and in `written`.
fn taken(written: &Table, side: &Table, key: usize, besides: &[String]) -> (Vec<usize>, Vec<usize>) {
    side.header
        .iter()
        .enumerate()
        .filter(|(c, name)| *c != key && !besides.contains(name))
        .filter_map(|(c, name)| Some((c, written.column(name)?)))
        .unzip()
}

/// Whether two cells (put in [`normal`] form) hold the same: the same
/// text, or the same number (`129.00` and `129.0`).
fn same_cell(a: &str, b: &str) -> bool {
    let number = |cell: &str| cell.trim_start_matches(['£', '$', '€']).parse::<f64>().ok();
    a == b || matches!((number(a), number(b)), (Some(x), Some(y)) if (x - y).abs() < 1e-9)
}

/// A cell with the spaces around it, its capitals and its Unicode form
/// put aside: `José` written with a combining accent meets `José` written
/// with one letter (held-out-49's payments, spent).
fn normal(cell: &str) -> String {
    cell.trim().nfc().collect::<String>().to_lowercase()
}

/// The flaw, said for the program or the run, when the new table `text`
/// (at `path`) joins two of `inputs` (path, text) on a column they share
/// and leaves out, or writes without the other table's cells, a row whose
/// key meets the other table's once trimmed, in any capitals and Unicode
/// form, while every row whose key met as read is there.
pub(crate) fn hidden_by_spaces(path: &str, text: &str, inputs: &[(&str, &str)]) -> Option<String> {
    let written = Table::read(path, text)?;
    let tables: Vec<Table> = inputs
        .iter()
        .filter(|(input, _)| *input != path)
        .filter_map(|(input, held)| Table::read(input, held))
        .collect();
    tables.iter().find_map(|left| {
        tables
            .iter()
            .filter(|right| right.path != left.path)
            .find_map(|right| joined_left_out(&written, left, right))
    })
}

/// The flaw of `written` as a join of `left`'s rows to `right`'s on a
/// column both hold.
fn joined_left_out(written: &Table, left: &Table, right: &Table) -> Option<String> {
    left.header.iter().enumerate().find_map(|(left_key, key)| {
        let right_key = right.column(key)?;
        // The columns the new table takes from the left, beside the key:
        // none when it holds the key (`name,paid` of each signed-up name).
        let (left_cols, left_in_written) = taken(written, left, left_key, &[]);
        let written_key = written.column(key);
        if left_cols.is_empty() && written_key.is_none() {
            return None;
        }
        let as_read: HashMap<&str, &Vec<String>> = right
            .rows
            .iter()
            .filter_map(|(_, r)| Some((r.get(right_key)?.as_str(), r)))
            .collect();
        let trimmed: HashMap<String, &Vec<String>> = right
            .rows
            .iter()
            .filter_map(|(_, r)| Some((normal(r.get(right_key)?), r)))
            .collect();
        // The right table is one to look rows up in: each key once.
        if trimmed.len() != right.rows.len() {
            return None;
        }
        // A row of the new table is the left row's when their cells of the
        // left's columns are the same, and their keys too where the new
        // table holds the key: two orders of one quantity are two rows.
        let written_row = |row: &[String]| {
            let wanted = left.cells_of(row, &left_cols);
            let own_key = row.get(left_key).map(|cell| normal(cell));
            written
                .rows
                .iter()
                .find(|(_, w)| {
                    let got = written.cells_of(w, &left_in_written);
                    let same_key = written_key.is_none_or(|c| w.get(c).map(|cell| normal(cell)) == own_key);
                    same_key && got.iter().zip(&wanted).all(|(got, wanted)| same_cell(got, wanted))
                })
                .map(|(_, w)| w)
        };
        // Each left row with its row of the new table, and its right row
        // when their keys met as read.
        let found: Vec<(&Vec<String>, Option<&Vec<String>>)> =
            left.rows.iter().map(|(_, row)| (row, written_row(row))).collect();
        let met_pairs: Vec<(&Vec<String>, &Vec<String>)> = found
            .iter()
            .filter_map(|(row, w)| Some(((*w)?, *as_read.get(row.get(left_key)?.as_str())?)))
            .collect();
        let mut besides = left_in_written.clone();
        besides.extend(written_key);
        let (right_cols, right_in_written) = right_taken(written, left, right, right_key, &besides, &met_pairs);
        if right_cols.is_empty() {
            return None;
        }
        // Rows that met as read, each there: one at least, or a table of
        // rows stacked from both, none met, reads as a join that met none.
        let mut met = 0;
        let mut met_as_read = true;
        let mut hidden: Option<(String, &str)> = None;
        for (row, found) in &found {
            let Some(cell) = row.get(left_key) else { continue };
            if as_read.contains_key(cell.as_str()) {
                met += 1;
                met_as_read &= found.is_some();
                continue;
            }
            let Some(match_row) = trimmed.get(&normal(cell)) else { continue };
            let filled = found.is_some_and(|w| {
                let (got, wanted) = (written.cells_of(w, &right_in_written), right.cells_of(match_row, &right_cols));
                got.iter().zip(&wanted).all(|(got, wanted)| same_cell(got, wanted))
            });
            if !filled && hidden.is_none() {
                let how = if found.is_some() { "written without that row's cells" } else { "left out" };
                hidden = Some((format!("`{}`", row.join(",")), how));
            }
        }
        let (row, how) = hidden.filter(|_| met_as_read && met > 0)?;
        Some(format!(
            "{} joins {} to {} on {key}, and the row {row} of {} is {how}, though its {key} meets a row of {} once the spaces around it, capitals and Unicode forms are put aside: compare the {key} values trimmed, NFC-normalized, in any capitals",
            written.path, left.path, right.path, left.path, right.path
        ))
    })
}

/// The columns the new table takes from `right`, beside its key and the
/// left's names: their places in `right`, and in `written`. One of the
/// same name; else, for a column the new table names its own way
/// (`amount` written as `paid`), the one column of `written` outside
/// `besides` whose cells hold the right's in every row of `met_pairs`
/// (the new table's row and the right's, for the rows whose keys met as
/// read), with two values at least among them: on held-out-49 (spent) a join wrote
/// payments' `amount` as `paid`, and only by name it was no join.
fn right_taken(
    written: &Table,
    left: &Table,
    right: &Table,
    right_key: usize,
    besides: &[usize],
    met_pairs: &[(&Vec<String>, &Vec<String>)],
) -> (Vec<usize>, Vec<usize>) {
    let (mut cols, mut in_written) = taken(written, right, right_key, &left.header);
    if met_pairs.len() < 2 {
        return (cols, in_written);
    }
    let named_in_written = |name: &String| written.column(name).is_some();
    for (c, name) in right.header.iter().enumerate() {
        if c == right_key || left.header.contains(name) || named_in_written(name) {
            continue;
        }
        let cell = |row: &Vec<String>, at: usize| row.get(at).map_or(String::new(), |cell| normal(cell));
        // Two values at least, told apart: a column empty in every row
        // that met pairs with any other empty one.
        let values: HashSet<String> = met_pairs
            .iter()
            .map(|(_, rrow)| cell(rrow, c))
            .filter(|v| !v.is_empty())
            .collect();
        if values.len() < 2 {
            continue;
        }
        let holds = |w: usize| {
            met_pairs
                .iter()
                .all(|(wrow, rrow)| same_cell(&cell(wrow, w), &cell(rrow, c)))
        };
        let free = |w: &usize| !besides.contains(w) && !in_written.contains(w);
        let candidates: Vec<usize> = (0..written.header.len()).filter(free).filter(|&w| holds(w)).collect();
        if let [w] = candidates[..] {
            cols.push(c);
            in_written.push(w);
        }
    }
    (cols, in_written)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDERS: &str = "order_id,customer,frame_code\n1001,Amrit Patel,FR-204\n1002,Dylan Okoro, FR-118\n1003,Lucy Chen,FR-331 \n1004,Gareth Price ,FR-118\n1005,Noor Haddad,FR-512\n";
    const FRAMES: &str = "frame_code,brand,price\nFR-118,Ray-Ban,129.00\nFR-204,Oakley,145.00\nFR-331,Silhouette,210.00\nFR-512,Specsavers,69.00\n";

    fn flaw(written: &str) -> Option<String> {
        hidden_by_spaces("full.csv", written, &[("orders.csv", ORDERS), ("frames.csv", FRAMES)])
    }

    #[test]
    fn rows_whose_codes_meet_only_trimmed_left_out_are_a_flaw() {
        let exact_only = "order_id,customer,frame_code,brand,price\n1001,Amrit Patel,FR-204,Oakley,145.00\n1004,Gareth Price,FR-118,Ray-Ban,129.00\n1005,Noor Haddad,FR-512,Specsavers,69.00\n";
        let said = flaw(exact_only).expect("1002 and 1003 were hidden by spaces");
        assert!(said.contains("1002") && said.contains("left out"), "{said}");
        let emptied = "order_id,customer,frame_code,brand,price\n1001,Amrit Patel,FR-204,Oakley,145.00\n1002,Dylan Okoro,FR-118,,\n1003,Lucy Chen,FR-331,,\n1004,Gareth Price,FR-118,Ray-Ban,129.00\n1005,Noor Haddad,FR-512,Specsavers,69.00\n";
        let said = flaw(emptied).expect("1002's brand was left empty");
        assert!(said.contains("without that row's cells"), "{said}");
    }

    #[test]
    fn a_join_of_every_row_or_of_trimmed_codes_is_no_flaw() {
        let right = "order_id,customer,frame_code,brand,price\n1001,Amrit Patel,FR-204,Oakley,145.00\n1002,Dylan Okoro,FR-118,Ray-Ban,129.00\n1003,Lucy Chen,FR-331,Silhouette,210.00\n1004,Gareth Price,FR-118,Ray-Ban,129.00\n1005,Noor Haddad,FR-512,Specsavers,69.00\n";
        assert_eq!(flaw(right), None);
        // Spaces kept as read, the cells filled: the values are right.
        let floats = right.replace("129.00", "129.0");
        assert_eq!(flaw(&floats), None, "a price written as a float");
        let padded = right.replace("1002,Dylan Okoro,FR-118", "1002,Dylan Okoro, FR-118");
        assert_eq!(flaw(&padded), None);
    }

    #[test]
    fn rows_with_no_match_at_all_or_rows_left_out_that_met_as_read_are_left_alone() {
        // An inner join: the order with no frame at all is left out.
        let orders =
            "order_id,customer,frame_code\n1001,Amrit Patel,FR-204\n1002,Dylan Okoro,FR-999\n1003,Lucy Chen,FR-331\n";
        let inner =
            "order_id,customer,frame_code,brand\n1001,Amrit Patel,FR-204,Oakley\n1003,Lucy Chen,FR-331,Silhouette\n";
        let inputs = [("orders.csv", orders), ("frames.csv", FRAMES)];
        assert_eq!(hidden_by_spaces("full.csv", inner, &inputs), None);
        // A row that met as read is left out too: the rows were picked by something else.
        let picked = "order_id,customer,frame_code,brand,price\n1005,Noor Haddad,FR-512,Specsavers,69.00\n";
        assert_eq!(flaw(picked), None);
        // A table of one input's columns only is no join.
        assert_eq!(flaw("order_id,customer\n1001,Amrit Patel\n"), None);
    }

    #[test]
    fn rows_alike_in_the_left_columns_are_told_apart_by_their_keys() {
        let orders = "sku,qty\nA-1,2\n B-2,2\nC-3,1\n";
        let products = "sku,name,price\nA-1,Apple,0.40\nB-2,Banana,0.25\nC-3,Cherry,3.00\n";
        let right = "sku,qty,name,price\nA-1,2,Apple,0.40\nB-2,2,Banana,0.25\nC-3,1,Cherry,3.00\n";
        let inputs = [("orders.csv", orders), ("products.csv", products)];
        assert_eq!(hidden_by_spaces("lines.csv", right, &inputs), None);
        // Rows stacked, none meeting as read: no join.
        let a = "name,email\nZoe Hart,Zoe.Hart@Mail.com\nAl Po,al@x.org\n";
        let b = "name,email,phone\nzoe hart,zoe.hart@mail.com,0711\nBo Li,bo@x.org,0722\n";
        let stacked = "name,email,phone\nZoe Hart,Zoe.Hart@Mail.com,\nAl Po,al@x.org,\nzoe hart,zoe.hart@mail.com,0711\nBo Li,bo@x.org,0722\n";
        assert_eq!(
            hidden_by_spaces("all.csv", stacked, &[("a.csv", a), ("b.csv", b)]),
            None
        );
    }

    #[test]
    fn a_column_named_its_own_way_and_keys_in_two_unicode_forms_are_read() {
        // payments.csv writes three names with combining accents.
        let signups = "name,class\nJos\u{e9} Alvarez,Beginners\nMaria Santos,Improvers\nZo\u{eb} Nakamura,Beginners\nTom Baxter,Advanced\nRen\u{e9}e Dubois,Improvers\nKwame Asante,Beginners\n";
        let payments = "name,amount\nMaria Santos,40.00\nJose\u{301} Alvarez,35.00\nTom Baxter,45.00\nZoe\u{308} Nakamura,35.00\nKwame Asante,35.00\n";
        let inputs = [("signups.csv", signups), ("payments.csv", payments)];
        let lost = "name,class,paid\nJos\u{e9} Alvarez,Beginners,0\nMaria Santos,Improvers,40.00\nZo\u{eb} Nakamura,Beginners,0\nTom Baxter,Advanced,45.00\nRen\u{e9}e Dubois,Improvers,0\nKwame Asante,Beginners,35.00\n";
        let said = hidden_by_spaces("paid.csv", lost, &inputs).expect("José's payment was lost to the Unicode form");
        assert!(
            said.contains("without that row's cells") && said.contains("Unicode"),
            "{said}"
        );
        let right = lost.replacen("Beginners,0", "Beginners,35.00", 2);
        assert_eq!(hidden_by_spaces("paid.csv", &right, &inputs), None);
        // A column whose cells meet the payments' by chance in one row only is not theirs.
        let other = "name,class,fee\nJos\u{e9} Alvarez,Beginners,0\nMaria Santos,Improvers,40.00\nZo\u{eb} Nakamura,Beginners,0\nTom Baxter,Advanced,12.00\nRen\u{e9}e Dubois,Improvers,0\nKwame Asante,Beginners,9.00\n";
        assert_eq!(hidden_by_spaces("paid.csv", other, &inputs), None);
        // The key and the payment alone.
        let bare = "name,paid\nJos\u{e9} Alvarez,0\nMaria Santos,40.00\nZo\u{eb} Nakamura,0\nTom Baxter,45.00\nRen\u{e9}e Dubois,0\nKwame Asante,35.00\n";
        assert!(hidden_by_spaces("paid.csv", bare, &inputs).is_some());
        // A column empty in every row that met is no column of the payments'.
        let notes = "name,notes\nJose\u{301} Alvarez,late\nMaria Santos,\nTom Baxter,\nKwame Asante,\n";
        let comments = "name,class,comment\nJos\u{e9} Alvarez,Beginners,\nMaria Santos,Improvers,\nTom Baxter,Advanced,\nKwame Asante,Beginners,\n";
        let inputs = [("signups.csv", signups), ("notes.csv", notes)];
        assert_eq!(hidden_by_spaces("out.csv", comments, &inputs), None);
    }
}
