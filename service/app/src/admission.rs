//! How much work the service takes on at once: requests in flight are
//! counted against one budget per surface (the payment API merchants and
//! channels call, the operator API, the pages people and payers open), so
//! that a flood on one cannot starve another, and a request past its
//! budget is refused at once (503 with `Retry-After`) instead of waiting
//! in a queue that only grows. Hand-written: a counter per budget is all it
//! is, and the handlers are not a `tower` stack a layer could wrap.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The surfaces, each with its own budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// `/api/v1/merchant/…`, the sandbox's API and channel notifications.
    Payments,
    /// `/api/v1/operator/…` and the owner's invitation API.
    Operators,
    /// The cashier, the console, the portal and the documents.
    Pages,
}

impl Budget {
    /// The budget a request path is counted against.
    pub fn of_path(path: &str) -> Budget {
        if path.starts_with("/api/v1/operator") || path.starts_with("/api/v1/owner") {
            Budget::Operators
        } else if path.starts_with("/api/") {
            Budget::Payments
        } else {
            Budget::Pages
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Budget::Payments => "payment API",
            Budget::Operators => "operator API",
            Budget::Pages => "pages",
        }
    }
}

/// A count of work under way against its bound: what the request budgets
/// and the password checks' gate (`passwords::Checks`) both keep.
pub struct Bounded {
    in_flight: Arc<AtomicUsize>,
    most: usize,
}

/// Work counted in flight until it is dropped.
pub struct Admitted(Arc<AtomicUsize>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Bounded {
    pub fn new(most: usize) -> Bounded {
        Bounded {
            in_flight: Arc::new(AtomicUsize::new(0)),
            most: most.max(1),
        }
    }

    /// Counts one in, or `None` when the bound is reached (a refusal is
    /// not counted).
    pub fn admit(&self) -> Option<Admitted> {
        let before = self.in_flight.fetch_add(1, Ordering::SeqCst);
        let admitted = Admitted(self.in_flight.clone());
        (before < self.most).then_some(admitted)
    }

    /// How many are counted in now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }
}

/// Requests in flight per budget, against each budget's bound; and of the
/// payment API's, per merchant.
pub struct Admission {
    payments: Bounded,
    operators: Bounded,
    pages: Bounded,
    per_merchant: usize,
    /// One count per merchant that signed a request: as many as there are
    /// merchants, which only an operator creates.
    merchants: Mutex<HashMap<String, Bounded>>,
}

impl Admission {
    pub fn new(bounds: crate::config::InFlightConfig) -> Admission {
        Admission {
            payments: Bounded::new(bounds.payments),
            operators: Bounded::new(bounds.operators),
            pages: Bounded::new(bounds.pages),
            per_merchant: bounds.per_merchant,
            merchants: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a request of `merchant_id` in, once its signature is
    /// checked, or `None` when that merchant has `per_merchant` in flight.
    pub fn admit_merchant(&self, merchant_id: &str) -> Option<Admitted> {
        // The map holds counts only; a panic cannot leave one half-made.
        let mut merchants = self
            .merchants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let most = self.per_merchant;
        merchants
            .entry(merchant_id.to_string())
            .or_insert_with(|| Bounded::new(most))
            .admit()
    }

    fn of(&self, budget: Budget) -> &Bounded {
        match budget {
            Budget::Payments => &self.payments,
            Budget::Operators => &self.operators,
            Budget::Pages => &self.pages,
        }
    }

    /// Counts a request in, or `None` when its budget is spent.
    pub fn admit(&self, budget: Budget) -> Option<Admitted> {
        self.of(budget).admit()
    }

    /// Requests of `budget` in flight now.
    pub fn in_flight(&self, budget: Budget) -> usize {
        self.of(budget).in_flight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_refuses_at_once_and_leaves_the_others_alone() {
        let admission = Admission::new(crate::config::InFlightConfig {
            payments: 2,
            operators: 1,
            pages: 1,
            per_merchant: 1,
        });
        let a = admission.admit(Budget::Payments).unwrap();
        let _b = admission.admit(Budget::Payments).unwrap();
        assert!(admission.admit(Budget::Payments).is_none());
        assert_eq!(
            admission.in_flight(Budget::Payments),
            2,
            "a refusal is not counted"
        );
        let _op = admission.admit(Budget::Operators).expect("its own budget");
        let _page = admission.admit(Budget::Pages).expect("its own budget");
        drop(a);
        assert!(admission.admit(Budget::Payments).is_some(), "a place freed");
    }

    #[test]
    fn one_merchant_at_its_bound_leaves_the_others_their_places() {
        let admission = Admission::new(crate::config::InFlightConfig {
            per_merchant: 2,
            ..Default::default()
        });
        let a = admission.admit_merchant("m1").unwrap();
        let _b = admission.admit_merchant("m1").unwrap();
        assert!(admission.admit_merchant("m1").is_none());
        assert!(admission.admit_merchant("m2").is_some(), "its own count");
        drop(a);
        assert!(admission.admit_merchant("m1").is_some(), "a place freed");
    }

    #[test]
    fn paths_are_counted_by_surface() {
        assert_eq!(
            Budget::of_path("/api/v1/merchant/orders/deposit"),
            Budget::Payments
        );
        assert_eq!(
            Budget::of_path("/api/v1/channels/BKASH/notifications"),
            Budget::Payments
        );
        assert_eq!(Budget::of_path("/api/v1/sandbox/clock"), Budget::Payments);
        assert_eq!(
            Budget::of_path("/api/v1/operator/deposits"),
            Budget::Operators
        );
        assert_eq!(
            Budget::of_path("/api/v1/owner/invitations/accept"),
            Budget::Operators
        );
        assert_eq!(Budget::of_path("/console/login"), Budget::Pages);
        assert_eq!(Budget::of_path("/cashier/abc"), Budget::Pages);
    }
}
