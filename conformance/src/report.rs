//! The report a QA lead or an auditor reads: one self-contained HTML page
//! (no script, no external asset) made from the run's cucumber JSON. It
//! shows the run's configuration (never a token or a key), a summary per
//! feature, every failure with the rule it checks, and each scenario with
//! its steps.

use crate::rules::Rules;
use serde_json::Value;

/// A scenario as the report shows it.
struct Scenario {
    feature: String,
    name: String,
    tags: Vec<String>,
    status: Status,
    steps: Vec<Step>,
}

struct Step {
    text: String,
    status: Status,
    error: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Passed,
    Failed,
    Skipped,
}

impl Status {
    fn of(text: &str) -> Status {
        match text {
            "passed" => Status::Passed,
            "failed" => Status::Failed,
            _ => Status::Skipped,
        }
    }

    fn class(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
        }
    }
}

fn scenarios(report: &Value) -> Vec<Scenario> {
    let mut out = Vec::new();
    for feature in report.as_array().into_iter().flatten() {
        let feature_name = feature["name"].as_str().unwrap_or("?").to_string();
        let mut background: Vec<Step> = Vec::new();
        for element in feature["elements"].as_array().into_iter().flatten() {
            let steps: Vec<Step> = element["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| Step {
                    text: format!(
                        "{} {}",
                        s["keyword"].as_str().unwrap_or("").trim(),
                        s["name"].as_str().unwrap_or("")
                    ),
                    status: Status::of(s["result"]["status"].as_str().unwrap_or("skipped")),
                    error: s["result"]["error_message"].as_str().map(String::from),
                })
                .collect();
            if element["type"].as_str() == Some("background") {
                background = steps;
                continue;
            }
            let mut all: Vec<Step> = background
                .iter()
                .map(|b| Step {
                    text: b.text.clone(),
                    status: b.status,
                    error: b.error.clone(),
                })
                .collect();
            all.extend(steps);
            let status = if all.iter().any(|s| s.status == Status::Failed) {
                Status::Failed
            } else if all.iter().all(|s| s.status == Status::Passed) {
                Status::Passed
            } else {
                Status::Skipped
            };
            out.push(Scenario {
                feature: feature_name.clone(),
                name: element["name"].as_str().unwrap_or("?").to_string(),
                tags: element["tags"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["name"].as_str())
                    .map(|t| format!("@{}", t.trim_start_matches('@')))
                    .collect(),
                status,
                steps: all,
            });
        }
    }
    out
}

/// Every failed scenario and its failing step with the error, as plain
/// text: printed after the per-feature table, so that the tail of a long
/// log (all a CI page may keep) names what failed and why. Empty when
/// nothing failed.
pub fn failures_text(report: &Value) -> String {
    let mut out = String::new();
    for s in scenarios(report)
        .iter()
        .filter(|s| s.status == Status::Failed)
    {
        out.push_str(&format!("FAILED {} / {}\n", s.feature, s.name));
        for step in s.steps.iter().filter(|step| step.status == Status::Failed) {
            out.push_str(&format!("  step: {}\n", step.text));
            let error = step.error.as_deref().unwrap_or("(no message)");
            // The error's head: a step's panic message, not a page of it.
            for line in error.lines().take(12) {
                out.push_str(&format!("    {line}\n"));
            }
        }
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d2330}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{font-size:1.2rem;margin-top:2rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #dde1e8;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-size:1.1rem;font-weight:600;padding:.6rem 1rem;border-radius:.4rem;display:inline-block}
.verdict.passed{background:#e3f5e8;color:#11622e} .verdict.failed{background:#fde7e7;color:#8f1d1d}
.passed .mark{color:#11622e} .failed .mark{color:#b42323} .skipped .mark{color:#8a6d00}
li.passed .mark{color:#11622e} li.failed .mark{color:#b42323} li.skipped .mark{color:#8a6d00}
tr.failed td{background:#fff5f5}
details{border:1px solid #dde1e8;border-radius:.4rem;margin:.4rem 0;padding:.2rem .8rem}
details.failed{border-color:#e5a3a3}
summary{cursor:pointer;padding:.3rem 0}
ol{margin:.3rem 0 .6rem 1.2rem;padding:0} li{margin:.1rem 0}
pre{white-space:pre-wrap;background:#f6f7f9;border-left:3px solid #b42323;padding:.5rem;margin:.3rem 0;font-size:13px}
.rule{background:#fff8e1;border-left:3px solid #c99700;padding:.3rem .6rem;margin:.3rem 0}
.tags{color:#667085;font-size:.85em} .muted{color:#667085}
";

/// The HTML page for `report` (cucumber JSON). `config` is shown as it is;
/// the caller leaves secrets out.
pub fn html(report: &Value, rules: &Rules, title: &str, config: &[(String, String)]) -> String {
    let all = scenarios(report);
    let count = |s: Status| all.iter().filter(|x| x.status == s).count();
    let (passed, failed, skipped) = (
        count(Status::Passed),
        count(Status::Failed),
        count(Status::Skipped),
    );
    let verdict = if failed == 0 && skipped == 0 && passed > 0 {
        Status::Passed
    } else {
        Status::Failed
    };
    let mut page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>\
         <p class=\"verdict {v}\">{verdict_text}: {passed} passed, {failed} failed, {skipped} skipped</p>",
        t = escape(title),
        v = verdict.class(),
        verdict_text = if verdict == Status::Passed {
            "Conforms"
        } else {
            "Does not conform"
        },
    );

    page.push_str("<h2>Run</h2><table>");
    for (k, v) in config {
        page.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(k),
            escape(v)
        ));
    }
    page.push_str("</table>");

    // Features in the order they ran, with their counts.
    let mut features: Vec<&str> = Vec::new();
    for s in &all {
        if !features.contains(&s.feature.as_str()) {
            features.push(&s.feature);
        }
    }
    page.push_str(
        "<h2>Features</h2><table><tr><th>Feature</th><th class=n>Passed</th>\
         <th class=n>Failed</th><th class=n>Skipped</th></tr>",
    );
    for f in &features {
        let of = |st: Status| {
            all.iter()
                .filter(|s| s.feature == *f && s.status == st)
                .count()
        };
        let (p, x, k) = (of(Status::Passed), of(Status::Failed), of(Status::Skipped));
        page.push_str(&format!(
            "<tr class=\"{}\"><td><a href=\"#{}\">{}</a></td><td class=n>{p}</td><td class=n>{x}</td><td class=n>{k}</td></tr>",
            if x > 0 { "failed" } else { "passed" },
            anchor(f),
            escape(f)
        ));
    }
    page.push_str("</table>");

    let failures: Vec<&Scenario> = all.iter().filter(|s| s.status != Status::Passed).collect();
    if !failures.is_empty() {
        page.push_str("<h2>Failures, with the rule each checks</h2>");
        for s in &failures {
            page.push_str(&scenario_html(s, rules, true));
        }
    }

    for f in &features {
        page.push_str(&format!("<h2 id=\"{}\">{}</h2>", anchor(f), escape(f)));
        for s in all.iter().filter(|s| s.feature == *f) {
            page.push_str(&scenario_html(s, rules, false));
        }
    }
    page.push_str("</body></html>\n");
    page
}

fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn scenario_html(s: &Scenario, rules: &Rules, open: bool) -> String {
    let mark = match s.status {
        Status::Passed => "✔",
        Status::Failed => "✘",
        Status::Skipped => "–",
    };
    let mut out = format!(
        "<details class=\"{c}\"{open}><summary><span class=mark>{mark}</span> {name}{feature} <span class=tags>{tags}</span></summary>",
        c = s.status.class(),
        open = if open { " open" } else { "" },
        name = escape(&s.name),
        feature = if open {
            format!(" <span class=muted>({})</span>", escape(&s.feature))
        } else {
            String::new()
        },
        tags = escape(&s.tags.join(" ")),
    );
    for rule in rules.of(&s.name) {
        out.push_str(&format!(
            "<div class=rule><b>{}</b> {}</div>",
            if rule.id.is_empty() {
                "Decided:".to_string()
            } else {
                format!("Rule {}:", escape(&rule.id))
            },
            escape(&rule.text)
        ));
    }
    out.push_str("<ol>");
    for step in &s.steps {
        out.push_str(&format!(
            "<li class=\"{}\"><span class=mark>{}</span> {}",
            step.status.class(),
            match step.status {
                Status::Passed => "✔",
                Status::Failed => "✘",
                Status::Skipped => "–",
            },
            escape(&step.text)
        ));
        if let Some(e) = &step.error {
            out.push_str(&format!("<pre>{}</pre>", escape(e)));
        }
        out.push_str("</li>");
    }
    out.push_str("</ol></details>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failure_shows_its_rule_and_the_page_loads_nothing_from_elsewhere() {
        let report = json!([{
            "name": "Callbacks",
            "elements": [
                {"type": "background", "name": "", "steps": [
                    {"keyword": "Given ", "name": "a fresh merchant", "result": {"status": "passed"}}]},
                {"type": "scenario", "name": "Five 5xx answers fail", "tags": [{"name": "@sandbox"}], "steps": [
                    {"keyword": "Then ", "name": "30 s apart", "result": {"status": "failed", "error_message": "31 != 30 <b>"}}]},
                {"type": "scenario", "name": "A 2xx ends it", "steps": [
                    {"keyword": "Then ", "name": "SUCCESS", "result": {"status": "passed"}}]}
            ]
        }]);
        let rules = Rules::parse(
            "| D9 | Rule 9: 30 s apart. | `callbacks.feature` — \"Five 5xx answers fail\" | both |",
        );
        let page = html(
            &report,
            &rules,
            "Conformance",
            &[("profile".into(), "sandbox".into())],
        );
        assert!(
            page.contains("Does not conform: 1 passed, 1 failed, 0 skipped"),
            "{page}"
        );
        assert!(page.contains("<b>Rule D9:</b> Rule 9: 30 s apart."));
        assert!(page.contains("31 != 30 &lt;b&gt;"));
        assert!(page.contains("a fresh merchant"));
        for outside in ["<script", "src=", "href=\"http", "@import", "url("] {
            assert!(!page.contains(outside), "{outside}");
        }
    }

    #[test]
    fn the_text_names_each_failed_scenario_its_step_and_the_head_of_its_error() {
        let long: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let report = json!([{
            "name": "Callbacks",
            "elements": [
                {"type": "scenario", "name": "Five 5xx answers fail", "steps": [
                    {"keyword": "Given ", "name": "a receiver", "result": {"status": "passed"}},
                    {"keyword": "Then ", "name": "30 s apart", "result": {"status": "failed", "error_message": long}}]},
                {"type": "scenario", "name": "A 2xx ends it", "steps": [
                    {"keyword": "Then ", "name": "SUCCESS", "result": {"status": "passed"}}]}
            ]
        }]);
        let text = failures_text(&report);
        assert!(
            text.starts_with(
                "FAILED Callbacks / Five 5xx answers fail\n  step: Then 30 s apart\n    line 1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("    line 12\n") && !text.contains("line 13"),
            "{text}"
        );
        assert!(
            !text.contains("A 2xx ends it") && !text.contains("a receiver"),
            "{text}"
        );
        let passed = json!([{"name": "Callbacks", "elements": [
            {"type": "scenario", "name": "A 2xx ends it", "steps": [
                {"keyword": "Then ", "name": "SUCCESS", "result": {"status": "passed"}}]}]}]);
        assert_eq!(failures_text(&passed), "");
    }
}
