//! A plan's waves: the steps that can run together.

use std::collections::BTreeMap;

use super::{Plan, Step};

/// Steps grouped into waves: every step of a wave depends only on earlier waves,
/// so the steps of one wave can run in parallel. Steps in a cycle are left out.
pub fn waves(plan: &Plan) -> Vec<Vec<&Step>> {
    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    let mut remaining: Vec<&Step> = plan.steps.iter().collect();
    let mut progressed = true;
    while !remaining.is_empty() && progressed {
        progressed = false;
        remaining.retain(|s| {
            let deps: Option<Vec<usize>> = s
                .depends_on
                .iter()
                .filter(|d| plan.step(d).is_some())
                .map(|d| level.get(d.as_str()).copied())
                .collect();
            match deps {
                Some(levels) => {
                    level.insert(s.id.as_str(), levels.into_iter().max().map_or(0, |m| m + 1));
                    progressed = true;
                    false
                }
                None => true,
            }
        });
    }
    let depth = level.values().copied().max().map_or(0, |m| m + 1);
    let mut out = vec![Vec::new(); depth];
    for s in &plan.steps {
        if let Some(&l) = level.get(s.id.as_str()) {
            out[l].push(s);
        }
    }
    out
}
