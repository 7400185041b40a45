//! A routing table: for one currency and direction, the channels an order
//! may go to, in the order they are tried, each with the amounts it takes,
//! its share of the traffic and its limits. Choosing is arithmetic on what
//! the caller knows (today's use, which channels are resting); nothing here
//! calls a channel or reads a row.

use crate::fees::Direction;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// The heaviest weight a candidate may carry.
pub const MAX_WEIGHT: u32 = 10_000;
/// The most candidates one table lists.
pub const MAX_CANDIDATES: usize = 16;

/// One channel an order may go to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// The channel's code.
    pub channel: String,
    /// The smallest amount it takes (none: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_amount: Option<Decimal>,
    /// The largest amount it takes (none: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_amount: Option<Decimal>,
    /// Its share of the orders it can take, against the other candidates'
    /// (0 to `MAX_WEIGHT`); 0: tried only when one before it cannot take
    /// the order.
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// The channel's own limit on one order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_order_limit: Option<Decimal>,
    /// The most it is sent in one day (UTC), counted as orders are sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_limit: Option<Decimal>,
    #[serde(default = "enabled")]
    pub enabled: bool,
}

fn default_weight() -> u32 {
    100
}

fn enabled() -> bool {
    true
}

impl Candidate {
    /// A candidate for every amount, with `weight`.
    pub fn plain(channel: &str, weight: u32) -> Candidate {
        Candidate {
            channel: channel.to_string(),
            min_amount: None,
            max_amount: None,
            weight,
            per_order_limit: None,
            daily_limit: None,
            enabled: true,
        }
    }

    /// Why this candidate cannot take `amount` on its own terms, if it
    /// cannot (what the table says, before health and today's use).
    pub fn refuses(&self, amount: Decimal) -> Option<Skip> {
        if !self.enabled {
            return Some(Skip::Disabled);
        }
        if self.min_amount.is_some_and(|min| amount < min)
            || self.max_amount.is_some_and(|max| amount > max)
        {
            return Some(Skip::OutsideBand);
        }
        if self.per_order_limit.is_some_and(|limit| amount > limit) {
            return Some(Skip::OverOrderLimit);
        }
        None
    }

    /// What is wrong with this candidate as written, for the message that
    /// refuses a table.
    pub fn problem(&self) -> Option<String> {
        let positive = |name: &str, v: Option<Decimal>| match v {
            Some(v) if v <= Decimal::ZERO => Some(format!("{name} must be greater than zero")),
            _ => None,
        };
        if self.channel.trim().is_empty() {
            return Some("channel is empty".into());
        }
        if self.weight > MAX_WEIGHT {
            return Some(format!("weight is {}; at most {MAX_WEIGHT}", self.weight));
        }
        if let Some(p) = positive("max_amount", self.max_amount)
            .or_else(|| positive("per_order_limit", self.per_order_limit))
            .or_else(|| positive("daily_limit", self.daily_limit))
        {
            return Some(p);
        }
        if self.min_amount.is_some_and(|m| m < Decimal::ZERO) {
            return Some("min_amount must not be negative".into());
        }
        match (self.min_amount, self.max_amount) {
            (Some(min), Some(max)) if min > max => {
                Some(format!("min_amount {min} is above max_amount {max}"))
            }
            _ => None,
        }
    }
}

/// Checks a table as a whole: a size the service bounds, each candidate
/// sound, no channel twice. The caller checks that each channel exists and
/// takes the currency.
pub fn check(candidates: &[Candidate]) -> Result<(), String> {
    if candidates.is_empty() {
        return Err("a table lists at least one candidate".into());
    }
    if candidates.len() > MAX_CANDIDATES {
        return Err(format!(
            "a table lists at most {MAX_CANDIDATES} candidates; this one {}",
            candidates.len()
        ));
    }
    for (i, c) in candidates.iter().enumerate() {
        if let Some(p) = c.problem() {
            return Err(format!("candidate {} ({}): {p}", i + 1, c.channel));
        }
        if candidates[..i].iter().any(|o| o.channel == c.channel) {
            return Err(format!("channel {} is listed twice", c.channel));
        }
    }
    Ok(())
}

/// Why a candidate was passed over for an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    Disabled,
    OutsideBand,
    OverOrderLimit,
    OverDailyLimit,
    /// Its circuit is open: it failed too often lately and rests.
    Resting,
    /// Already tried for this order.
    Tried,
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Disabled => "disabled",
            Skip::OutsideBand => "outside_band",
            Skip::OverOrderLimit => "over_order_limit",
            Skip::OverDailyLimit => "over_daily_limit",
            Skip::Resting => "resting",
            Skip::Tried => "tried",
        }
    }
}

/// How a candidate came to be asked first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The only candidate that could take the order.
    Only,
    /// Drawn by weight among those that could.
    Weighted { weight: u32, of: u32 },
    /// None that could take it carried weight: the first in the table's order.
    First,
}

impl Pick {
    /// In words, for the order's record.
    pub fn describe(&self) -> String {
        match self {
            Pick::Only => "the only candidate for this amount".into(),
            Pick::Weighted { weight, of } => format!("drawn by weight, {weight} of {of}"),
            Pick::First => "first in the table's order".into(),
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Pick::Only => "only",
            Pick::Weighted { .. } => "weight",
            Pick::First => "order",
        }
    }
}

/// The channels to try for one order, in order: the first picked, the
/// rest the table's order after it, and last those resting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub pick: Pick,
    pub order: Vec<String>,
    /// Each candidate passed over, and why.
    pub skipped: Vec<(String, Skip)>,
    /// Candidates resting (their circuit open), at the end of `order`: asked
    /// only once every one in service refused or did not answer, so that a
    /// currency whose every channel rests is still served.
    pub resting: Vec<String>,
}

/// What the caller knows of a candidate beyond the table.
pub trait Standing {
    /// Whether the channel rests (its circuit is open).
    fn resting(&self, channel: &str) -> bool;
    /// Whether `amount` more would pass its daily limit.
    fn over_daily(&self, candidate: &Candidate, amount: Decimal) -> bool;
    /// Already tried for this order.
    fn tried(&self, channel: &str) -> bool;
}

/// The channels to try for `amount`, `draw` being a number the caller drew
/// uniformly from `0..u32::MAX` (the weighted pick takes it modulo the
/// total weight). `None` when no candidate can take the order.
pub fn plan(
    candidates: &[Candidate],
    amount: Decimal,
    draw: u32,
    standing: &dyn Standing,
) -> Option<Plan> {
    let mut skipped = Vec::new();
    let mut able: Vec<&Candidate> = Vec::new();
    let mut resting: Vec<&Candidate> = Vec::new();
    for c in candidates {
        let skip = if standing.tried(&c.channel) {
            Some(Skip::Tried)
        } else {
            c.refuses(amount).or_else(|| {
                standing
                    .over_daily(c, amount)
                    .then_some(Skip::OverDailyLimit)
            })
        };
        match skip {
            Some(why) => skipped.push((c.channel.clone(), why)),
            None if standing.resting(&c.channel) => resting.push(c),
            None => able.push(c),
        }
    }
    if able.is_empty() {
        if resting.is_empty() {
            return None;
        }
        // Every one that could take it rests: asked all the same, in the
        // table's order, rather than refusing the order.
        return Some(Plan {
            pick: Pick::First,
            order: resting.iter().map(|c| c.channel.clone()).collect(),
            skipped,
            resting: resting.iter().map(|c| c.channel.clone()).collect(),
        });
    }
    let total: u32 = able.iter().map(|c| c.weight).sum();
    let (first, pick) = if able.len() == 1 {
        (0, Pick::Only)
    } else if total == 0 {
        (0, Pick::First)
    } else {
        let mut point = draw % total;
        let mut chosen = 0;
        for (i, c) in able.iter().enumerate() {
            if point < c.weight {
                chosen = i;
                break;
            }
            point -= c.weight;
        }
        (
            chosen,
            Pick::Weighted {
                weight: able[chosen].weight,
                of: total,
            },
        )
    };
    let mut order = vec![able[first].channel.clone()];
    order.extend(
        able.iter()
            .enumerate()
            .filter(|(i, _)| *i != first)
            .map(|(_, c)| c.channel.clone()),
    );
    order.extend(resting.iter().map(|c| c.channel.clone()));
    Some(Plan {
        pick,
        order,
        skipped,
        resting: resting.iter().map(|c| c.channel.clone()).collect(),
    })
}

/// Where a table applies: a currency, a direction, and every merchant or
/// one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Scope {
    pub currency: String,
    pub direction: RoutedDirection,
    /// A merchant's id: its own table, in place of everyone's.
    pub merchant_id: Option<String>,
}

/// The two directions money is routed: a channel deposit's payment, a
/// withdrawal's payout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoutedDirection {
    Deposit,
    Withdrawal,
}

impl RoutedDirection {
    pub fn as_str(self) -> &'static str {
        match self {
            RoutedDirection::Deposit => "deposit",
            RoutedDirection::Withdrawal => "withdrawal",
        }
    }

    pub fn parse(s: &str) -> Option<RoutedDirection> {
        match s {
            "deposit" => Some(RoutedDirection::Deposit),
            "withdrawal" => Some(RoutedDirection::Withdrawal),
            _ => None,
        }
    }
}

impl From<RoutedDirection> for Direction {
    fn from(d: RoutedDirection) -> Direction {
        match d {
            RoutedDirection::Deposit => Direction::Deposit,
            RoutedDirection::Withdrawal => Direction::Withdrawal,
        }
    }
}

/// The day (UTC) a Unix time falls in, as days since 1970: the key of a
/// daily limit's count.
pub fn day_of(unix: i64) -> i64 {
    unix.div_euclid(86_400)
}

/// Why an order went where it went, kept on the order: the channel, how
/// it was picked, which channels it fell through from and why, and which
/// the table passed over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub channel: String,
    /// Which table: `"BDT deposit, every merchant"` and the like.
    pub table: String,
    pub rule: String,
    /// Channels asked before this one, each with what it answered.
    pub fell_from: Vec<(String, String)>,
    pub skipped: Vec<(String, Skip)>,
}

/// The keys a decision is kept under, in an order's `payment_snapshot` and
/// a withdrawal's routing record.
pub const KEY_CHANNEL: &str = "routing_channel";
pub const KEY_TABLE: &str = "routing_table";
pub const KEY_RULE: &str = "routing_rule";
pub const KEY_FELL_FROM: &str = "routing_fallback_from";
pub const KEY_SKIPPED: &str = "routing_skipped";
pub const KEY_TRIED: &str = "routing_tried";

impl Decision {
    /// As strings, under the `routing_` keys.
    pub fn to_map(&self) -> std::collections::BTreeMap<String, String> {
        let mut m = std::collections::BTreeMap::new();
        m.insert(KEY_CHANNEL.into(), self.channel.clone());
        m.insert(KEY_TABLE.into(), self.table.clone());
        m.insert(KEY_RULE.into(), self.rule.clone());
        if !self.fell_from.is_empty() {
            let words: Vec<String> = self
                .fell_from
                .iter()
                .map(|(c, why)| format!("{c}: {why}"))
                .collect();
            m.insert(KEY_FELL_FROM.into(), words.join("; "));
        }
        if !self.skipped.is_empty() {
            let words: Vec<String> = self
                .skipped
                .iter()
                .map(|(c, why)| format!("{c}: {}", why.as_str()))
                .collect();
            m.insert(KEY_SKIPPED.into(), words.join("; "));
        }
        let mut tried: Vec<&str> = self.fell_from.iter().map(|(c, _)| c.as_str()).collect();
        tried.push(&self.channel);
        m.insert(KEY_TRIED.into(), tried.join(","));
        m
    }
}

/// The channels a record says were tried, the current one last.
pub fn tried_in(record: &std::collections::BTreeMap<String, String>) -> Vec<String> {
    record
        .get(KEY_TRIED)
        .map(|t| {
            t.split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    struct Known {
        resting: BTreeSet<&'static str>,
        tried: BTreeSet<&'static str>,
        over: BTreeSet<&'static str>,
    }

    impl Standing for Known {
        fn resting(&self, c: &str) -> bool {
            self.resting.contains(c)
        }
        fn over_daily(&self, c: &Candidate, _: Decimal) -> bool {
            self.over.contains(c.channel.as_str())
        }
        fn tried(&self, c: &str) -> bool {
            self.tried.contains(c)
        }
    }

    fn nothing() -> Known {
        Known {
            resting: BTreeSet::new(),
            tried: BTreeSet::new(),
            over: BTreeSet::new(),
        }
    }

    fn d(n: i64) -> Decimal {
        Decimal::from(n)
    }

    fn banded(channel: &str, min: i64, max: i64) -> Candidate {
        Candidate {
            min_amount: Some(d(min)),
            max_amount: Some(d(max)),
            ..Candidate::plain(channel, 100)
        }
    }

    #[test]
    fn the_band_chooses_and_the_rest_follow_in_order() {
        let table = [
            banded("SMALL", 1, 999),
            banded("LARGE", 1000, 50_000),
            Candidate::plain("ANY", 0),
        ];
        let p = plan(&table, d(500), 0, &nothing()).unwrap();
        assert_eq!(p.order, ["SMALL", "ANY"]);
        assert_eq!(
            p.pick,
            Pick::Weighted {
                weight: 100,
                of: 100
            }
        );
        assert_eq!(p.skipped, [("LARGE".to_string(), Skip::OutsideBand)]);
        let p = plan(&table, d(60_000), 0, &nothing()).unwrap();
        assert_eq!(
            (p.order.as_slice(), &p.pick),
            (&["ANY".to_string()][..], &Pick::Only)
        );
    }

    #[test]
    fn disabled_resting_tried_and_full_are_passed_over() {
        let mut off = Candidate::plain("OFF", 100);
        off.enabled = false;
        let table = [
            off,
            Candidate::plain("REST", 100),
            Candidate::plain("FULL", 100),
            Candidate::plain("DONE", 100),
            Candidate::plain("OK", 0),
        ];
        let known = Known {
            resting: ["REST"].into(),
            tried: ["DONE"].into(),
            over: ["FULL"].into(),
        };
        let p = plan(&table, d(10), 7, &known).unwrap();
        assert_eq!(p.order, ["OK", "REST"], "the resting one last");
        assert_eq!(p.resting, ["REST"]);
        let why: Vec<Skip> = p.skipped.iter().map(|(_, s)| *s).collect();
        assert_eq!(why, [Skip::Disabled, Skip::OverDailyLimit, Skip::Tried]);
        let only_resting = Known {
            resting: ["REST"].into(),
            tried: BTreeSet::new(),
            over: BTreeSet::new(),
        };
        let p = plan(&[Candidate::plain("REST", 100)], d(10), 0, &only_resting).unwrap();
        assert_eq!(
            (p.order, p.pick),
            (vec!["REST".to_string()], Pick::First),
            "asked all the same"
        );
        let mut limited = Candidate::plain("OK", 100);
        limited.per_order_limit = Some(d(5));
        assert_eq!(plan(&[limited], d(10), 0, &nothing()), None);
    }

    #[test]
    fn weights_split_by_the_draw() {
        let table = [Candidate::plain("A", 70), Candidate::plain("B", 30)];
        let firsts: Vec<String> = (0..100u32)
            .map(|draw| plan(&table, d(1), draw, &nothing()).unwrap().order[0].clone())
            .collect();
        assert_eq!(firsts.iter().filter(|c| *c == "A").count(), 70);
        let p = plan(&table, d(1), 85, &nothing()).unwrap();
        assert_eq!(p.order, ["B", "A"], "the other follows as the fallback");
        assert_eq!(
            p.pick,
            Pick::Weighted {
                weight: 30,
                of: 100
            }
        );
    }

    #[test]
    fn a_table_is_checked_whole() {
        assert!(check(&[]).is_err());
        assert!(check(&[Candidate::plain("A", 1), Candidate::plain("A", 1)]).is_err());
        assert!(check(&[Candidate::plain("A", MAX_WEIGHT + 1)]).is_err());
        assert!(check(&[banded("A", 10, 5)])
            .unwrap_err()
            .contains("above max_amount"));
        let mut zero = Candidate::plain("A", 1);
        zero.daily_limit = Some(Decimal::ZERO);
        assert!(check(&[zero]).unwrap_err().contains("daily_limit"));
        assert!(check(&[banded("A", 0, 5), Candidate::plain("B", 0)]).is_ok());
    }
}
