//! Accounts and addresses past their sign-in failure limit, remembered on
//! this instance until the earliest moment they could be under it again.
//!
//! Why: the failures live in the database, and every sign-in reads them.
//! A crowd of wrong passwords from one address then costs the database a
//! read per attempt long after the address was refused, and those reads
//! compete with the payment API's for its connections and cores (issue 55:
//! the steady merchant's p99 beside 2,000 sign-ins). Remembered here, the
//! attempts past the limit are refused from memory, before a place to
//! check a password is taken.
//!
//! Exact, not a guess: an entry lasts until the oldest failure counted
//! against it ages out of the window, which is the first moment the count
//! can fall. Then the database is asked again. A sign-in that succeeds
//! takes its failure back (`web_sessions::forgive`) and ends the entries
//! it touched here. Another instance only refuses what its own reads said.
//!
//! Bounded: at most `CAPACITY` entries; past it, entries that have ended
//! are dropped, and if none has, nothing more is remembered and sign-ins
//! read the database as before. Hand-written rather than a cache crate
//! because each entry's end is a time on the injected clock, which the
//! cache crates' expiries do not read.

use std::collections::HashMap;
use std::sync::Mutex;

/// Entries held at most: addresses and accounts locked out at once.
pub const CAPACITY: usize = 10_000;

/// Who is locked out, and until when (unix seconds, injected clock).
#[derive(Default)]
pub struct Lockouts {
    until: Mutex<HashMap<String, i64>>,
}

impl Lockouts {
    /// Whether any of `keys` is locked out at `now`.
    pub fn holds(&self, keys: &[&str], now: i64) -> bool {
        let Ok(until) = self.until.lock() else {
            return false;
        };
        keys.iter()
            .any(|k| until.get(*k).is_some_and(|&end| now < end))
    }

    /// Remembers `key` locked out until `end`, if it is still ahead of
    /// `now` and there is room.
    pub fn lock(&self, key: &str, end: i64, now: i64) {
        if end <= now {
            return;
        }
        let Ok(mut until) = self.until.lock() else {
            return;
        };
        if until.len() >= CAPACITY && !until.contains_key(key) {
            until.retain(|_, &mut e| now < e);
            if until.len() >= CAPACITY {
                return;
            }
        }
        let entry = until.entry(key.to_string()).or_insert(end);
        *entry = (*entry).max(end);
    }

    /// Forgets `keys`: a failure counted against them was taken back.
    pub fn release(&self, keys: &[&str]) {
        if let Ok(mut until) = self.until.lock() {
            for k in keys {
                until.remove(*k);
            }
        }
    }

    /// Entries held now, ended or not.
    pub fn len(&self) -> usize {
        self.until.lock().map_or(0, |u| u.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_holds_until_its_end_and_not_after() {
        let l = Lockouts::default();
        l.lock("address:1", 100, 10);
        assert!(l.holds(&["account:x", "address:1"], 99));
        assert!(!l.holds(&["address:1"], 100));
        assert!(!l.holds(&["address:2"], 50));
    }

    #[test]
    fn an_end_already_past_is_not_remembered_and_a_later_one_wins() {
        let l = Lockouts::default();
        l.lock("a", 10, 10);
        assert!(l.is_empty());
        l.lock("a", 50, 10);
        l.lock("a", 30, 10);
        assert!(l.holds(&["a"], 40));
    }

    #[test]
    fn released_keys_are_read_again() {
        let l = Lockouts::default();
        l.lock("a", 50, 10);
        l.release(&["a"]);
        assert!(!l.holds(&["a"], 20));
    }

    #[test]
    fn full_it_drops_what_has_ended_and_past_that_remembers_nothing_more() {
        let l = Lockouts::default();
        for i in 0..CAPACITY {
            l.lock(&format!("k{i}"), if i == 0 { 20 } else { 100 }, 10);
        }
        l.lock("late", 100, 30);
        assert!(l.holds(&["late"], 30), "k0 had ended and made room");
        l.lock("later", 100, 30);
        assert!(!l.holds(&["later"], 30));
        assert_eq!(l.len(), CAPACITY);
    }
}
