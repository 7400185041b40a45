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
