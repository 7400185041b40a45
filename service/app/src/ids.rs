//! Ids that sort in the order they were made, for the rows listed by when
//! they happened: operators, their tokens, the audit trail, approvals,
//! owners, invitations and API keys. Those listings order by the second
//! the row was made and then by id; with random ids, rows of the same
//! second came back in any order (a token listed as issued before its
//! operator existed, issue 51).
//!
//! A UUID version 7: the system clock's milliseconds, then a counter the
//! `uuid` crate keeps so that ids made by one process sort in the order
//! they were made, even within a millisecond, and then random bits. The
//! system clock here only orders; the times a row states come from the
//! injected clock. Across instances the order is the clocks' to the
//! millisecond.

/// A new id, later than every one this process made before.
pub fn ordered() -> String {
    uuid::Uuid::now_v7().to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thousand_ids_made_in_turn_sort_in_that_order() {
        let made: Vec<String> = (0..1000).map(|_| super::ordered()).collect();
        let mut sorted = made.clone();
        sorted.sort();
        assert_eq!(made, sorted);
        sorted.dedup();
        assert_eq!(sorted.len(), 1000);
    }
}
