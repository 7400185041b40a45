//! `features/role_matrix.feature` takes every operator action with every
//! role. This holds its table to the service's own: a row for each action
//! and role and no other, refused (403 `ROLE_FORBIDDEN`) exactly where the
//! role may not take the action. An action added to the service without a
//! row, or a row that disagrees with the role table, fails here.

use payments_service::domain::four_eyes::{self, Rule};
use payments_service::domain::people::Action;
use payments_service::domain::status::Role;
use std::collections::BTreeMap;

/// (action, role) → (status, code), from every Examples table.
fn rows() -> BTreeMap<(String, String), (String, String)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../features/role_matrix.feature"
    );
    let text = std::fs::read_to_string(path).expect("the feature is readable");
    let mut header: Option<Vec<String>> = None;
    let mut rows = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let Some(names) = &header else {
            header = Some(cells);
            continue;
        };
        let cell = |name: &str| {
            let at = names.iter().position(|n| n == name);
            cells[at.unwrap_or_else(|| panic!("a column {name}"))].clone()
        };
        let key = (cell("action"), cell("role"));
        let answer = (cell("status"), cell("code"));
        assert!(rows.insert(key.clone(), answer).is_none(), "{key:?} twice");
    }
    rows
}

#[test]
fn every_action_and_role_has_its_row_and_is_refused_exactly_below_its_role() {
    let mut rows = rows();
    for action in Action::ALL {
        for role in Role::ALL {
            let key = (action.name().to_string(), role.as_str().to_string());
            let (status, code) = rows
                .remove(&key)
                .unwrap_or_else(|| panic!("no row for {key:?}"));
            let alone = four_eyes::rule(*action).0 != Rule::SecondPerson;
            if role.may(*action) && alone {
                assert_ne!(status, "403", "{key:?} may, yet its row is refused");
            } else {
                assert_eq!(
                    (status.as_str(), code.as_str()),
                    ("403", "ROLE_FORBIDDEN"),
                    "{key:?} may not, or not alone"
                );
            }
        }
    }
    assert!(rows.is_empty(), "rows for no action: {:?}", rows.keys());
}
