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
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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
    running_per_merchant: usize,
    /// How long a merchant's request waits for one of its running places.
    running_wait: Duration,
    /// One count per merchant that signed a request: as many as there are
    /// merchants, which only an operator creates.
    merchants: Mutex<HashMap<String, Merchant>>,
}

/// One merchant's requests: in flight, and running of those.
struct Merchant {
    in_flight: Bounded,
    running: Arc<Semaphore>,
}

/// A merchant's request's places: counted in flight, and running. Held
/// until the request is answered.
pub struct MerchantPlace {
    _in_flight: Admitted,
    _running: OwnedSemaphorePermit,
}

/// Why a merchant's request was not let in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotAdmitted {
    /// The merchant has `per_merchant` requests in flight.
    InFlight,
    /// Its turn to run did not come within the wait.
    Running,
}

impl Admission {
    /// `running_per_merchant` of one merchant's requests run at once; one
    /// that waits `running_wait` for its turn is refused.
    pub fn new(
        bounds: crate::config::InFlightConfig,
        running_per_merchant: usize,
        running_wait: Duration,
    ) -> Admission {
        Admission {
            payments: Bounded::new(bounds.payments),
            operators: Bounded::new(bounds.operators),
            pages: Bounded::new(bounds.pages),
            per_merchant: bounds.per_merchant,
            running_per_merchant: running_per_merchant.max(1),
            running_wait,
            merchants: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a request of `merchant_id` in, once its signature is
    /// checked, and waits for its turn among the merchant's requests
    /// running: `InFlight` at once when the merchant has `per_merchant` in
    /// flight, `Running` when its turn did not come within the wait. The
    /// waiting is the merchant's own: other merchants' requests run beside
    /// it, with the database connections its share leaves.
    pub async fn admit_merchant(&self, merchant_id: &str) -> Result<MerchantPlace, NotAdmitted> {
        let (in_flight, running) = {
            // The map holds counts only; a panic cannot leave one half-made.
            let mut merchants = self
                .merchants
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let merchant = merchants
                .entry(merchant_id.to_string())
                .or_insert_with(|| Merchant {
                    in_flight: Bounded::new(self.per_merchant),
                    running: Arc::new(Semaphore::new(self.running_per_merchant)),
                });
            (merchant.in_flight.admit(), merchant.running.clone())
        };
        let in_flight = in_flight.ok_or(NotAdmitted::InFlight)?;
        let running = tokio::time::timeout(self.running_wait, running.acquire_owned())
            .await
            .map_err(|_| NotAdmitted::Running)?
            .map_err(|_| NotAdmitted::Running)?;
        Ok(MerchantPlace {
            _in_flight: in_flight,
            _running: running,
        })
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
        let admission = Admission::new(
            crate::config::InFlightConfig {
                payments: 2,
                operators: 1,
                pages: 1,
                per_merchant: 1,
                running_per_merchant: None,
            },
            1,
            Duration::from_secs(1),
        );
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

    #[tokio::test]
    async fn one_merchant_at_its_bound_leaves_the_others_their_places() {
        let admission = Admission::new(
            crate::config::InFlightConfig {
                per_merchant: 2,
                ..Default::default()
            },
            2,
            Duration::from_secs(1),
        );
        let a = admission.admit_merchant("m1").await.unwrap();
        let _b = admission.admit_merchant("m1").await.unwrap();
        assert_eq!(
            admission.admit_merchant("m1").await.err(),
            Some(NotAdmitted::InFlight)
        );
        assert!(
            admission.admit_merchant("m2").await.is_ok(),
            "its own count"
        );
        drop(a);
        assert!(
            admission.admit_merchant("m1").await.is_ok(),
            "a place freed"
        );
    }

    /// Paused time: the wait is tokio's timer, which the test advances.
    #[tokio::test(start_paused = true)]
    async fn past_its_running_share_a_merchant_waits_its_turn_and_others_run() {
        let admission = Arc::new(Admission::new(
            crate::config::InFlightConfig {
                per_merchant: 4,
                ..Default::default()
            },
            1,
            Duration::from_secs(5),
        ));
        let running = admission.admit_merchant("crowd").await.unwrap();
        // The crowd's next request waits for its turn…
        let waiting = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit_merchant("crowd").await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "it waits while the first runs");
        // …while another merchant's runs at once.
        let other = admission.admit_merchant("other").await;
        assert!(
            other.is_ok(),
            "another merchant's request is not queued behind it"
        );
        drop(running);
        assert_eq!(waiting.await.unwrap(), Ok(()), "its turn came");
        // A turn that does not come within the wait is a refusal.
        let _held = admission.admit_merchant("crowd").await.unwrap();
        assert_eq!(
            admission.admit_merchant("crowd").await.err(),
            Some(NotAdmitted::Running)
        );
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
