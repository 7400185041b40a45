//! Money actions as the service takes them: filed by one operator, approved
//! by a second. A bench makes its two people once, with the operator token
//! it was given, and completes deposits through them.

use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};

#[derive(Clone)]
pub struct TwoPeople {
    http: reqwest::Client,
    base: String,
    maker: String,
    checker: String,
}

async fn post(http: &reqwest::Client, url: String, token: &str, body: Value) -> Result<Value> {
    let answer = http
        .post(&url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await?;
    let status = answer.status();
    let body: Value = answer.json().await.context("a JSON answer")?;
    if !status.is_success() {
        return Err(anyhow!("{url} answered {status}: {body}"));
    }
    Ok(body)
}

impl TwoPeople {
    pub async fn make(base: &str, admin_token: &str) -> Result<TwoPeople> {
        let http = reqwest::Client::new();
        let mut tokens = Vec::new();
        for name in ["bench maker", "bench checker"] {
            let tag = format!("{:x}{:x}", std::process::id(), tokens.len());
            let made = post(
                &http,
                format!("{base}/api/v1/operator/operators"),
                admin_token,
                json!({"name": name, "email": format!("{}-{tag}-{}@example.test", name.replace(' ', "-"), super::unix_ms() as u64), "role": "approver"}),
            )
            .await?;
            let id = made["operator_id"].as_str().context("operator_id")?;
            let issued = post(
                &http,
                format!("{base}/api/v1/operator/operators/{id}/tokens"),
                admin_token,
                json!({"label": "bench"}),
            )
            .await?;
            tokens.push(issued["token"].as_str().context("token")?.to_string());
        }
        Ok(TwoPeople {
            http,
            base: base.trim_end_matches('/').to_string(),
            checker: tokens.pop().context("checker")?,
            maker: tokens.pop().context("maker")?,
        })
    }

    /// Completes the deposit as paid in full: filed, then approved.
    pub async fn complete(&self, order_no: &str) -> Result<()> {
        let filed = post(
            &self.http,
            format!("{}/api/v1/operator/change-requests", self.base),
            &self.maker,
            json!({"action": "complete_deposit", "target": order_no, "parameters": {}}),
        )
        .await?;
        let id = filed["change_request_id"]
            .as_str()
            .context("change_request_id")?;
        post(
            &self.http,
            format!("{}/api/v1/operator/change-requests/{id}/approve", self.base),
            &self.checker,
            json!({}),
        )
        .await?;
        Ok(())
    }
}
