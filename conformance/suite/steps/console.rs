//! Steps for the pages people use: `/` as a browser and as an API client
//! see it, the console's and the portal's doors (sign-in, refusals of
//! another site's posts), and an owner's portal scoped to its merchant.
//! They fetch HTML as a browser would, without running it.

use super::common::PaymentsWorld;
use conformance::{harness, witness_secret, Reply};
use cucumber::{then, when};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client")
}

async fn keep_page(world: &mut PaymentsWorld, response: reqwest::Response) {
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let text = response.text().await.unwrap_or_default();
    if let Some(previous) = world.page.take() {
        world.earlier_pages.push(previous);
    }
    // A redirect is kept as its target, so steps can name where it went.
    world.page = Some((status, location.map_or(text, |l| format!("Location: {l}"))));
}

fn page(world: &PaymentsWorld) -> (u16, &str) {
    let (status, text) = world.page.as_ref().expect("a page was fetched");
    (*status, text.as_str())
}

#[when(expr = "a browser opens {string}")]
async fn browser_opens(world: &mut PaymentsWorld, path: String) {
    let url = format!("{}{path}", harness().await.base_url());
    let mut request = client()
        .get(url)
        .header("accept", "text/html,application/xhtml+xml");
    if let Some(cookie) = &world.web_cookie {
        request = request.header("cookie", cookie);
    }
    let response = request.send().await.expect("an answer");
    keep_page(world, response).await;
}

#[when(expr = "an API client reads {string}")]
async fn api_client_reads(world: &mut PaymentsWorld, path: String) {
    let url = format!("{}{path}", harness().await.base_url());
    let response = client()
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .expect("an answer");
    world.reply = Some(Reply::from_response(response).await.expect("a reply"));
}

#[then(expr = "the page links to {string}")]
async fn page_links(world: &mut PaymentsWorld, paths: String) {
    let (_, text) = page(world);
    for path in paths.split(", ") {
        assert!(
            text.contains(&format!("href=\"{path}\"")),
            "no link to {path}: {text}"
        );
    }
}

#[then(expr = "the browser is sent to {string}")]
async fn sent_to(world: &mut PaymentsWorld, path: String) {
    let (status, text) = page(world);
    assert_eq!(status, 303, "{text}");
    assert_eq!(text, format!("Location: {path}"));
}

async fn sign_in(world: &mut PaymentsWorld, realm: &str, email: &str, password: &str) {
    let url = format!("{}/{realm}/login", harness().await.base_url());
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("email", email)
        .append_pair("password", password)
        .finish();
    let response = client()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("an answer");
    if let Some(cookie) = response
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
    {
        let pair = cookie.split(';').next().unwrap_or_default().to_string();
        if let Some((_, value)) = pair.split_once('=') {
            witness_secret(value);
        }
        world.web_cookie = Some(pair);
    }
    keep_page(world, response).await;
}

#[when(expr = "someone signs in to the {word} as {string} with the password {string}")]
async fn someone_signs_in(
    world: &mut PaymentsWorld,
    realm: String,
    email: String,
    password: String,
) {
    let tag = world.tag();
    let email = email.replace("{tag}", &tag);
    sign_in(world, &realm, &email, &password).await;
}

#[when(expr = "the invitee signs in to the portal with the password {string}")]
async fn invitee_signs_in(world: &mut PaymentsWorld, password: String) {
    let email = world.invitee.clone().expect("an invitee");
    sign_in(world, "portal", &email, &password).await;
}

#[then("the last two pages are the same but for the email")]
async fn same_pages(world: &mut PaymentsWorld) {
    let (status, text) = world.page.clone().expect("a page");
    let (earlier_status, earlier) = world
        .earlier_pages
        .last()
        .cloned()
        .expect("an earlier page");
    let strip = |t: &str| {
        let start = t.find("name=\"email\"").unwrap_or(0);
        let value = t[start..].find("value=\"").map(|v| start + v + 7);
        match value {
            Some(v) => format!("{}{}", &t[..v], &t[v + t[v..].find('"').unwrap_or(0)..]),
            None => t.to_string(),
        }
    };
    assert_eq!(status, earlier_status);
    assert_eq!(strip(&text), strip(&earlier));
}

#[when(expr = "another site's page posts a form to {string}")]
async fn cross_site_post(world: &mut PaymentsWorld, path: String) {
    let url = format!("{}{path}", harness().await.base_url());
    let mut request = client()
        .post(url)
        .header("origin", "https://attacker.example")
        .header("sec-fetch-site", "cross-site")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("csrf=guessed&decision=approve");
    if let Some(cookie) = &world.web_cookie {
        request = request.header("cookie", cookie);
    }
    let response = request.send().await.expect("an answer");
    keep_page(world, response).await;
}

#[when("the invitee opens the last created order in the portal")]
async fn opens_order(world: &mut PaymentsWorld) {
    let order_no = world.reply().body["order_no"]
        .as_str()
        .expect("an order number")
        .to_string();
    browser_opens(world, format!("/portal/orders/{order_no}")).await;
}

/// A form post of the invitee's portal session, as its own page makes it:
/// the page's form token, the service's own origin.
async fn portal_post(
    world: &mut PaymentsWorld,
    page_path: &str,
    path: &str,
    fields: &[(&str, &str)],
) {
    browser_opens(world, page_path.to_string()).await;
    let (_, text) = page(world);
    let csrf = text
        .split_once("name=\"csrf\" value=\"")
        .and_then(|(_, rest)| rest.split('"').next())
        .expect("a form token on the page")
        .to_string();
    let base = harness().await.base_url();
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("csrf", &csrf);
    for (k, v) in fields {
        form.append_pair(k, v);
    }
    let response = client()
        .post(format!("{base}{path}"))
        .header("origin", &base)
        .header("content-type", "application/x-www-form-urlencoded")
        .header(
            "cookie",
            world.web_cookie.clone().expect("a portal session"),
        )
        .body(form.finish())
        .send()
        .await
        .expect("an answer");
    keep_page(world, response).await;
}

#[when(expr = "the invitee restricts the merchant's key to {string} in the portal")]
async fn owner_restricts(world: &mut PaymentsWorld, list: String) {
    browser_opens(world, "/portal/keys".into()).await;
    let (_, text) = page(world);
    let key_id = text
        .split_once("action=\"/portal/keys/restrict/")
        .and_then(|(_, rest)| rest.split('"').next())
        .expect("a key's form on the page")
        .to_string();
    let path = format!("/portal/keys/restrict/{key_id}");
    portal_post(
        world,
        "/portal/keys",
        &path,
        &[("allowed_addresses", &list), ("scope", "full")],
    )
    .await;
}

#[when(expr = "the invitee sets the callback timeout to {int} seconds in the portal")]
async fn owner_sets_timeout(world: &mut PaymentsWorld, seconds: i64) {
    let seconds = seconds.to_string();
    portal_post(
        world,
        "/portal/settings",
        "/portal/settings",
        &[("callback_timeout_seconds", &seconds)],
    )
    .await;
}

/// The merchant's rows of the whole trail (`audit-trail`, operator 0.16.0).
async fn whole_trail(world: &mut PaymentsWorld) -> Vec<serde_json::Value> {
    let merchant_id = world.merchant().id.clone();
    let token = harness()
        .await
        .operator_token
        .clone()
        .expect("the suite's operator token");
    let reply = super::people::send_as(
        world,
        &token,
        "GET",
        &format!("/api/v1/operator/audit-trail?target_id={merchant_id}&limit=200"),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["items"].as_array().cloned().unwrap_or_default()
}

#[then(
    expr = "the whole audit trail of the merchant holds {int} {string} by the invitee as its owner"
)]
async fn owner_in_trail(world: &mut PaymentsWorld, count: usize, action: String) {
    let email = world.invitee.clone().expect("an invitee");
    let rows = whole_trail(world).await;
    let found: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["action"] == action.as_str())
        .collect();
    assert_eq!(found.len(), count, "{rows:#?}");
    for row in found {
        assert_eq!(row["actor_kind"], "owner", "{row}");
        assert_eq!(row["role"], "owner", "{row}");
        assert_eq!(row["actor_name"], email.as_str(), "{row}");
        assert!(
            row["actor_id"].as_str().is_some_and(|id| !id.is_empty()),
            "{row}"
        );
        assert_eq!(row["target_type"], "merchant", "{row}");
        assert!(!row.to_string().contains("token="), "no link in the trail");
    }
}

#[then(expr = "the browser is sent back to {string}")]
async fn sent_back(world: &mut PaymentsWorld, path: String) {
    let (status, text) = page(world);
    assert_eq!(status, 303, "{text}");
    assert!(text.starts_with(&format!("Location: {path}")), "{text}");
}

#[then(expr = "the whole audit trail of the merchant holds {string} by an operator")]
async fn operator_in_trail(world: &mut PaymentsWorld, action: String) {
    let rows = whole_trail(world).await;
    let row = rows
        .iter()
        .find(|r| r["action"] == action.as_str())
        .unwrap_or_else(|| panic!("no {action} in {rows:#?}"));
    assert_eq!(row["actor_kind"], "operator", "{row}");
    assert_ne!(row["role"], "owner", "{row}");
}
