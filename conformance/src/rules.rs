//! Which rule each scenario checks, read from the mapping in
//! `features/README.md`: every table row that cites a scenario as
//! `` `file.feature` — "Scenario name" `` maps that scenario to the row's
//! rule (its id, such as `D9`, and its words).

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `D9`, or empty for a row without an id (a point the seed leaves
    /// open).
    pub id: String,
    pub text: String,
}

/// Scenario name → the rules it checks, in the order the mapping lists
/// them.
#[derive(Clone, Debug, Default)]
pub struct Rules(BTreeMap<String, Vec<Rule>>);

impl Rules {
    pub fn parse(markdown: &str) -> Rules {
        let mut map: BTreeMap<String, Vec<Rule>> = BTreeMap::new();
        for line in markdown.lines().filter(|l| l.starts_with('|')) {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            if cells.len() < 2 || !line.contains(".feature`") {
                continue;
            }
            let has_id = is_id(cells[0]);
            let rule = Rule {
                id: if has_id {
                    cells[0].to_string()
                } else {
                    String::new()
                },
                text: clean(if has_id { cells[1] } else { cells[0] }),
            };
            let cited = &cells[if has_id { 2 } else { 1 }..].join(" | ");
            for name in quoted_after_feature(cited) {
                let rules = map.entry(name).or_default();
                if !rules.contains(&rule) {
                    rules.push(rule.clone());
                }
            }
        }
        Rules(map)
    }

    pub fn of(&self, scenario: &str) -> &[Rule] {
        self.0.get(scenario).map_or(&[], Vec::as_slice)
    }
}

fn is_id(cell: &str) -> bool {
    let letters = cell.chars().take_while(char::is_ascii_uppercase).count();
    letters > 0 && letters < cell.len() && cell[letters..].chars().all(|c| c.is_ascii_digit())
}

/// Markdown code ticks and bold marks dropped, for plain display.
fn clean(text: &str) -> String {
    text.replace("**", "").replace('`', "")
}

/// Scenario names cited as `` `x.feature` — "Name"; "Other" ``.
fn quoted_after_feature(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, _) in text.match_indices(".feature`") {
        // The quoted names that follow, up to the next file or line break.
        let rest = &text[i + ".feature`".len()..];
        let end = rest
            .find(".feature`")
            .or_else(|| rest.find("<br>"))
            .unwrap_or(rest.len());
        let mut part = &rest[..end];
        while let Some(open) = part.find('"') {
            let Some(close) = part[open + 1..].find('"') else {
                break;
            };
            names.push(part[open + 1..open + 1 + close].to_string());
            part = &part[open + close + 2..];
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_map_each_cited_scenario_to_its_rule() {
        let md = "| D9 | Rule 9: at most 5 attempts, `30 s` apart. | `callbacks.feature` — \"Five 5xx answers fail\" (detail \"not a name\"? no)<br>`callbacks.feature` — \"On the system clock\" | both |\n\
                  | Rate limits | `rate_limit.feature` — \"Requests beyond the limit\"; \"The default limit\" | both |\n\
                  | Tag | Meaning |";
        let rules = Rules::parse(md);
        assert_eq!(rules.of("Five 5xx answers fail")[0].id, "D9");
        assert_eq!(
            rules.of("Five 5xx answers fail")[0].text,
            "Rule 9: at most 5 attempts, 30 s apart."
        );
        assert_eq!(rules.of("On the system clock")[0].id, "D9");
        assert_eq!(rules.of("The default limit")[0].text, "Rate limits");
        assert!(rules.of("Meaning").is_empty());
    }

    #[test]
    fn the_embedded_mapping_names_rules_for_the_scenarios() {
        let rules = Rules::parse(crate::features::rule_map());
        let of = rules.of("Five 5xx answers fail the delivery, 30 seconds apart on the schedule");
        assert!(of.iter().any(|r| r.id == "D9"), "{of:?}");
    }
}
