//! The cashier page's languages: English, Thai and Bangla. Every word comes
//! from one Project Fluent catalogue per language (`assets/i18n/*.ftl`),
//! amounts and digits from CLDR's data through ICU4X: Bangla writes
//! Bengali digits and groups by lakh, Thai writes Western digits and
//! Buddhist-era years.

use chrono::{DateTime, Datelike, Timelike, Utc};
use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use icu_decimal::input::Decimal as IcuDecimal;
use icu_decimal::DecimalFormatter;
use rust_decimal::Decimal;
use std::sync::LazyLock;
use unic_langid::LanguageIdentifier;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    En,
    Th,
    Bn,
}

/// What the Buddhist era adds to a Gregorian year (Thailand's official
/// calendar, what a Thai payer reads on every receipt).
const BUDDHIST_ERA_OFFSET: i32 = 543;

impl Language {
    pub const ALL: [Language; 3] = [Language::En, Language::Th, Language::Bn];

    /// The BCP 47 tag, for `lang`, `hreflang` and `Content-Language`.
    pub fn tag(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Th => "th",
            Language::Bn => "bn",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Language::En => include_str!("../../assets/i18n/en.ftl"),
            Language::Th => include_str!("../../assets/i18n/th.ftl"),
            Language::Bn => include_str!("../../assets/i18n/bn.ftl"),
        }
    }

    fn catalogue(self) -> &'static Catalogue {
        match self {
            Language::En => &CATALOGUES[0],
            Language::Th => &CATALOGUES[1],
            Language::Bn => &CATALOGUES[2],
        }
    }

    /// The payer's language: the page's `lang` parameter when it names one
    /// of ours, else the best of `Accept-Language`, else English. A
    /// malformed or unknown tag is passed over, never refused.
    pub fn negotiate(chosen: Option<&str>, accept_language: Option<&str>) -> Language {
        let ours: Vec<LanguageIdentifier> = Language::ALL
            .iter()
            .filter_map(|l| l.tag().parse().ok())
            .collect();
        let best = |requested: Vec<LanguageIdentifier>| {
            fluent_langneg::negotiate_languages(
                &requested,
                &ours,
                None,
                fluent_langneg::NegotiationStrategy::Lookup,
            )
            .first()
            .and_then(|id| {
                Language::ALL
                    .into_iter()
                    .find(|l| l.tag() == id.language.as_str())
            })
        };
        let chosen = chosen
            .and_then(|tag| tag.parse::<LanguageIdentifier>().ok())
            .and_then(|id| best(vec![id]));
        chosen
            .or_else(|| {
                accept_language
                    .map(fluent_langneg::accepted_languages::parse)
                    .and_then(best)
            })
            .unwrap_or(Language::En)
    }

    /// A message without arguments.
    pub fn text(self, id: &str) -> String {
        self.format(id, &[])
    }

    /// A message with its arguments, each already formatted as shown.
    pub fn format(self, id: &str, args: &[(&str, &str)]) -> String {
        let mut fluent = FluentArgs::new();
        for (name, value) in args {
            fluent.set(*name, FluentValue::from(*value));
        }
        self.catalogue().format(id, &fluent)
    }

    /// `1234.5` in a two-digit currency: `1,234.50` in English and Thai,
    /// `১,২৩৪.৫০` in Bangla (CLDR's grouping, the language's digits).
    pub fn amount(self, amount: Decimal, digits: u32) -> String {
        let mut fixed = amount.round_dp(digits);
        fixed.rescale(digits);
        let mut icu = IcuDecimal::from(fixed.mantissa());
        icu.multiply_pow10(-(i16::try_from(digits).unwrap_or(0)));
        match &self.catalogue().numbers {
            Some(formatter) => formatter.format_to_string(&icu),
            None => icu.to_string(),
        }
    }

    /// ASCII digits in `text` as the language writes them.
    pub fn digits(self, text: &str) -> String {
        let set = self.digit_set();
        text.chars()
            .map(|c| match c.to_digit(10) {
                Some(d) if c.is_ascii_digit() => set[d as usize],
                _ => c,
            })
            .collect()
    }

    /// The language's ten digits, zero first (CLDR's, through ICU4X).
    pub fn digit_set(self) -> [char; 10] {
        self.catalogue().digits
    }

    /// A moment as the payer reads it, in the payer's time: day, month
    /// name, year (Buddhist era in Thai), 24-hour time, the zone and its
    /// offset named.
    pub fn date_time(self, at: DateTime<Utc>, zone: PayerZone) -> String {
        let at = at.with_timezone(&zone.offset());
        let mut args = FluentArgs::new();
        args.set("zone", FluentValue::from(self.text(zone.message())));
        let two = |n: u32| self.digits(&format!("{n:02}"));
        args.set("day", FluentValue::from(self.digits(&at.day().to_string())));
        args.set("month", FluentValue::from(at.month()));
        args.set(
            "year",
            FluentValue::from(self.digits(&at.year().to_string())),
        );
        let be = at.year() + BUDDHIST_ERA_OFFSET;
        args.set("year_be", FluentValue::from(self.digits(&be.to_string())));
        args.set(
            "time",
            FluentValue::from(format!("{}:{}", two(at.hour()), two(at.minute()))),
        );
        self.catalogue().format("date-time", &args)
    }

    /// Seconds left as a clock: `29:05`, `1:02:09` past an hour.
    pub fn time_left(self, seconds: i64) -> String {
        let s = seconds.max(0);
        let clock = if s >= 3600 {
            format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        } else {
            format!("{:02}:{:02}", s / 60, s % 60)
        };
        self.digits(&clock)
    }
}

struct Catalogue {
    bundle: FluentBundle<FluentResource>,
    numbers: Option<DecimalFormatter>,
    digits: [char; 10],
}

static CATALOGUES: LazyLock<[Catalogue; 3]> = LazyLock::new(|| Language::ALL.map(Catalogue::build));

impl Catalogue {
    /// The catalogues are compiled in and a unit test parses each whole;
    /// should one still fail here, what parsed is used and the rest logged,
    /// so a page shows a message's id rather than failing.
    fn build(language: Language) -> Catalogue {
        let id: LanguageIdentifier = language.tag().parse().unwrap_or_default();
        let resource = FluentResource::try_new(language.source().to_string()).unwrap_or_else(
            |(partial, errors)| {
                tracing::error!(
                    language = language.tag(),
                    ?errors,
                    "a catalogue did not parse"
                );
                partial
            },
        );
        let mut bundle = FluentBundle::new_concurrent(vec![id]);
        // Unicode isolation marks are for mixing directions; all three are
        // left to right, and the marks would land in copied text.
        bundle.set_use_isolating(false);
        if let Err(errors) = bundle.add_resource(resource) {
            tracing::error!(language = language.tag(), ?errors, "a catalogue has errors");
        }
        let numbers = icu_locale_core::Locale::try_from_str(language.tag())
            .ok()
            .and_then(|locale| {
                DecimalFormatter::try_new((&locale).into(), Default::default()).ok()
            });
        let mut digits = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];
        if let Some(formatter) = &numbers {
            for (d, slot) in (0u8..).zip(digits.iter_mut()) {
                if let Some(c) = formatter
                    .format_to_string(&IcuDecimal::from(d))
                    .chars()
                    .next()
                {
                    *slot = c;
                }
            }
        }
        Catalogue {
            bundle,
            numbers,
            digits,
        }
    }

    fn format(&self, id: &str, args: &FluentArgs) -> String {
        let Some(pattern) = self.bundle.get_message(id).and_then(|m| m.value()) else {
            tracing::error!(message = id, "a catalogue has no such message");
            return id.to_string();
        };
        let mut errors = Vec::new();
        let text = self.bundle.format_pattern(pattern, Some(args), &mut errors);
        if !errors.is_empty() {
            tracing::error!(message = id, ?errors, "a message did not format");
        }
        text.into_owned()
    }
}

/// Where the payer of a currency is, for the deadlines the cashier page
/// prints: a payer in Bangkok read "16:39 UTC" as seven hours off. Thailand
/// and Bangladesh each keep one offset all year (no daylight saving), so a
/// fixed offset is exact and no time-zone database is needed; any other
/// currency is shown in UTC, named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayerZone {
    Bangkok,
    Dhaka,
    Utc,
}

impl PayerZone {
    pub fn of_currency(code: &str) -> PayerZone {
        match code {
            "THB" => PayerZone::Bangkok,
            "BDT" => PayerZone::Dhaka,
            _ => PayerZone::Utc,
        }
    }

    fn offset(self) -> chrono::FixedOffset {
        let hours = match self {
            PayerZone::Bangkok => 7,
            PayerZone::Dhaka => 6,
            PayerZone::Utc => 0,
        };
        chrono::FixedOffset::east_opt(hours * 3600).unwrap_or(chrono::Offset::fix(&Utc))
    }

    /// The catalogue's name for the zone, its offset included.
    fn message(self) -> &'static str {
        match self {
            PayerZone::Bangkok => "zone-bangkok",
            PayerZone::Dhaka => "zone-dhaka",
            PayerZone::Utc => "zone-utc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::str::FromStr;

    fn ids(language: Language) -> BTreeSet<String> {
        let resource = FluentResource::try_new(language.source().to_string())
            .unwrap_or_else(|(_, errors)| panic!("{} does not parse: {errors:?}", language.tag()));
        resource
            .entries()
            .filter_map(|entry| match entry {
                fluent_syntax::ast::Entry::Message(m) => Some(m.id.name.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_catalogue_parses_and_has_every_message() {
        let english = ids(Language::En);
        for language in [Language::Th, Language::Bn] {
            assert_eq!(ids(language), english, "{}", language.tag());
        }
    }

    #[test]
    fn the_language_comes_from_the_choice_then_the_header_then_english() {
        let n = Language::negotiate;
        assert_eq!(n(None, None), Language::En);
        assert_eq!(n(None, Some("th-TH,th;q=0.9,en;q=0.8")), Language::Th);
        assert_eq!(n(None, Some("bn-BD")), Language::Bn);
        assert_eq!(n(None, Some("fr-FR, de;q=0.5")), Language::En);
        assert_eq!(n(None, Some("@@@, ;;q=x")), Language::En);
        assert_eq!(n(Some("bn"), Some("th")), Language::Bn);
        assert_eq!(n(Some("not a tag!"), Some("th")), Language::Th);
        assert_eq!(n(Some("zz"), None), Language::En);
    }

    #[test]
    fn amounts_use_each_language_s_digits_and_grouping() {
        let d = |s: &str| Decimal::from_str(s).unwrap();
        assert_eq!(Language::En.amount(d("1234.5"), 2), "1,234.50");
        assert_eq!(Language::Th.amount(d("1234.5"), 2), "1,234.50");
        assert_eq!(Language::Bn.amount(d("1234567.5"), 2), "১২,৩৪,৫৬৭.৫০");
        assert_eq!(Language::En.amount(d("999.999"), 2), "1,000.00");
        assert_eq!(Language::En.amount(d("1000000"), 0), "1,000,000");
        assert_eq!(Language::Bn.time_left(65), "০১:০৫");
        assert_eq!(Language::En.time_left(3725), "1:02:05");
        assert_eq!(Language::Th.time_left(-3), "00:00");
    }

    #[test]
    fn dates_are_written_the_language_s_way() {
        let at = DateTime::parse_from_rfc3339("2026-11-25T09:05:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let utc = PayerZone::Utc;
        assert_eq!(Language::En.date_time(at, utc), "09:05 UTC, 25 Nov 2026");
        assert_eq!(
            Language::Th.date_time(at, utc),
            "25 พ.ย. 2569 เวลา 09:05 น. (UTC)"
        );
        assert_eq!(Language::Bn.date_time(at, utc), "২৫ নভেম্বর ২০২৬, ০৯:০৫ UTC");
    }

    #[test]
    fn a_deadline_is_in_the_payers_time_with_its_offset() {
        // 20:30 UTC is 03:30 the next day in Bangkok, 02:30 in Dhaka.
        let at = DateTime::parse_from_rfc3339("2026-11-25T20:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let (bangkok, dhaka) = (PayerZone::of_currency("THB"), PayerZone::of_currency("BDT"));
        assert_eq!(
            Language::Th.date_time(at, bangkok),
            "26 พ.ย. 2569 เวลา 03:30 น. (เวลาประเทศไทย UTC+07:00)"
        );
        assert_eq!(
            Language::En.date_time(at, bangkok),
            "03:30 Bangkok time (UTC+07:00), 26 Nov 2026"
        );
        assert_eq!(
            Language::Bn.date_time(at, dhaka),
            "২৬ নভেম্বর ২০২৬, ০২:৩০ বাংলাদেশ সময় (UTC+০৬:০০)"
        );
        assert_eq!(
            Language::En.date_time(at, dhaka),
            "02:30 Dhaka time (UTC+06:00), 26 Nov 2026"
        );
        assert_eq!(PayerZone::of_currency("USD"), PayerZone::Utc);
    }
}
