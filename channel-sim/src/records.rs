//! What the simulator knows of every payment and payout, kept in memory and
//! appended to a journal (one JSON line per change) so that a restart, even
//! a `kill -9`, loses nothing it answered: the journal line is written
//! before the answer is sent. Its record of payouts paid is what a fault
//! test compares with the service's completed withdrawals.

use anyhow::Context;
use merchant_api::channel::types as api;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// One line of the journal.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum Entry {
    Payment {
        request: api::PaymentRequest,
        payment: api::Payment,
    },
    PaymentChanged {
        payment: api::Payment,
    },
    Payout {
        request: api::PayoutRequest,
        payout: api::Payout,
    },
    PayoutChanged {
        payout: api::Payout,
    },
    /// The service acknowledged (2xx) every notification about this order
    /// so far, or the ones not sent were dropped on purpose.
    Notified {
        order_no: String,
    },
}

pub struct PaymentRecord {
    pub request: api::PaymentRequest,
    pub payment: api::Payment,
    /// Whether the service has the notification of its last change.
    pub notified: bool,
}

pub struct PayoutRecord {
    pub request: api::PayoutRequest,
    pub payout: api::Payout,
    pub notified: bool,
}

#[derive(Default)]
pub struct Records {
    pub payments: BTreeMap<String, PaymentRecord>,
    /// By channel order number (the payment page's address).
    pub by_channel_no: BTreeMap<String, String>,
    pub payouts: BTreeMap<String, PayoutRecord>,
    journal: Option<File>,
}

impl Records {
    /// Reads the journal in `dir` (if any) and keeps appending to it.
    pub fn open(dir: Option<&Path>) -> anyhow::Result<Records> {
        let mut records = Records::default();
        let Some(dir) = dir else {
            return Ok(records);
        };
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the data directory {}", dir.display()))?;
        let path = dir.join("journal.jsonl");
        if path.exists() {
            let file = File::open(&path).with_context(|| format!("reading {}", path.display()))?;
            for (n, line) in BufReader::new(file).lines().enumerate() {
                let line = line.with_context(|| format!("reading {}", path.display()))?;
                match serde_json::from_str::<Entry>(&line) {
                    Ok(entry) => records.apply(entry),
                    // Only the last line can be torn (a kill mid-write);
                    // an answer was never sent for it.
                    Err(e) => tracing::warn!(line = n + 1, "journal line skipped: {e}"),
                }
            }
        }
        let mut journal = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        // A torn last line is ended, so the next entry starts a line of its own.
        let torn = std::fs::read(&path)
            .map(|bytes| bytes.last().is_some_and(|b| *b != b'\n'))
            .unwrap_or(false);
        if torn {
            journal
                .write_all(b"\n")
                .context("ending the journal's torn line")?;
        }
        records.journal = Some(journal);
        Ok(records)
    }

    /// Applies a change and journals it; an error means it is not durable
    /// and must not be answered as done.
    pub fn record(&mut self, entry: Entry) -> anyhow::Result<()> {
        if let Some(journal) = &mut self.journal {
            let mut line = serde_json::to_vec(&entry)?;
            line.push(b'\n');
            journal
                .write_all(&line)
                .context("appending to the journal")?;
        }
        self.apply(entry);
        Ok(())
    }

    fn apply(&mut self, entry: Entry) {
        match entry {
            Entry::Payment { request, payment } => {
                self.by_channel_no.insert(
                    payment.channel_order_no.clone(),
                    request.order_no.to_string(),
                );
                self.payments.insert(
                    request.order_no.to_string(),
                    PaymentRecord {
                        request,
                        payment,
                        notified: true,
                    },
                );
            }
            Entry::PaymentChanged { payment } => {
                if let Some(r) = self.payments.get_mut(payment.order_no.as_str()) {
                    r.payment = payment;
                    r.notified = false;
                }
            }
            Entry::Payout { request, payout } => {
                self.payouts.insert(
                    request.order_no.to_string(),
                    PayoutRecord {
                        request,
                        payout,
                        notified: true,
                    },
                );
            }
            Entry::PayoutChanged { payout } => {
                if let Some(r) = self.payouts.get_mut(payout.order_no.as_str()) {
                    r.payout = payout;
                    r.notified = false;
                }
            }
            Entry::Notified { order_no } => {
                if let Some(r) = self.payments.get_mut(&order_no) {
                    r.notified = true;
                }
                if let Some(r) = self.payouts.get_mut(&order_no) {
                    r.notified = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payout(order_no: &str, status: api::PayoutStatus) -> api::Payout {
        api::Payout {
            order_no: order_no.parse().unwrap(),
            payout_reference: format!("SIMPO-{order_no}"),
            status,
            failure_reason: None,
            channel_cost: None,
            updated_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_reopened_journal_has_every_change_and_skips_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let request: api::PayoutRequest = serde_json::from_value(serde_json::json!({
            "order_no": "W1", "amount": "10.0000", "currency_code": "BDT",
            "bank_code": "DBBL", "account_no": "1234567890", "account_holder": "A",
            "notify_url": "http://127.0.0.1:1/n"
        }))
        .unwrap();
        {
            let mut records = Records::open(Some(dir.path())).unwrap();
            let accepted = payout("W1", api::PayoutStatus::Accepted);
            records
                .record(Entry::Payout {
                    request,
                    payout: accepted,
                })
                .unwrap();
            records
                .record(Entry::PayoutChanged {
                    payout: payout("W1", api::PayoutStatus::Completed),
                })
                .unwrap();
        }
        let path = dir.path().join("journal.jsonl");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(br#"{"entry":"payout_cha"#).unwrap();
        let mut records = Records::open(Some(dir.path())).unwrap();
        let w1 = &records.payouts["W1"];
        assert_eq!(w1.payout.status, api::PayoutStatus::Completed);
        assert!(!w1.notified, "the completion's notification is still owed");
        records
            .record(Entry::Notified {
                order_no: "W1".into(),
            })
            .unwrap();
        let records = Records::open(Some(dir.path())).unwrap();
        assert!(
            records.payouts["W1"].notified,
            "written after the torn line"
        );
    }
}
