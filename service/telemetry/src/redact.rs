//! Masks what must never reach a log line. A cashier token travels in the
//! cashier page's path (`/cashier/{token}`), so request paths are masked
//! before they are logged; a callback URL may carry a receiver's own secret
//! in its path or query, so only its scheme, host and port are logged.

use std::borrow::Cow;

const MASK: &str = "{token}";

/// `path` (with its query, if any) with the cashier token and any `token`
/// query parameter (an owner invitation's link) replaced.
pub fn path(path: &str) -> Cow<'_, str> {
    let path = cashier(path);
    match query_token(&path) {
        Some(masked) => Cow::Owned(masked),
        None => path,
    }
}

/// The value of every `token=` parameter of the query, masked; `None`
/// when there is none.
fn query_token(path: &str) -> Option<String> {
    let (head, query) = path.split_once('?')?;
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let mut masked = false;
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("token") => {
                masked = true;
                format!("{k}={MASK}")
            }
            _ => p.to_string(),
        })
        .collect();
    masked.then(|| {
        let mut out = format!("{head}?{}", params.join("&"));
        if let Some(f) = fragment {
            out.push('#');
            out.push_str(f);
        }
        out
    })
}

fn cashier(path: &str) -> Cow<'_, str> {
    let Some(start) = path.find("/cashier/").map(|i| i + "/cashier/".len()) else {
        return Cow::Borrowed(path);
    };
    let rest = &path[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if end == 0 {
        return Cow::Borrowed(path);
    }
    Cow::Owned(format!("{}{MASK}{}", &path[..start], &rest[end..]))
}

/// Scheme, host and port of `url`, nothing after them; `(unparsable)` when
/// it is not a URL.
pub fn url_origin(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port()) {
            (Some(host), Some(port)) => format!("{}://{host}:{port}", u.scheme()),
            (Some(host), None) => format!("{}://{host}", u.scheme()),
            _ => u.scheme().to_string(),
        },
        Err(_) => "(unparsable)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invitation_token_in_a_query_is_masked() {
        assert_eq!(
            path("/portal/invitations/accept?token=inv_secret&x=1"),
            "/portal/invitations/accept?token={token}&x=1"
        );
        assert_eq!(path("/a?b=1&TOKEN=s#f"), "/a?b=1&TOKEN={token}#f");
        assert_eq!(path("/a?tokens=1"), "/a?tokens=1");
    }

    #[test]
    fn the_cashier_token_is_masked_wherever_it_sits() {
        assert_eq!(path("/cashier/abc123"), "/cashier/{token}");
        assert_eq!(path("/cashier/abc123/status"), "/cashier/{token}/status");
        assert_eq!(path("/cashier/abc123?x=1"), "/cashier/{token}?x=1");
        assert_eq!(path("/cashier-assets/page.js"), "/cashier-assets/page.js");
        assert_eq!(
            path("/api/v1/merchant/query/deposit?merchant_order_no=A-1"),
            "/api/v1/merchant/query/deposit?merchant_order_no=A-1"
        );
        assert_eq!(path("/cashier/"), "/cashier/");
    }

    #[test]
    fn a_callback_url_is_logged_as_its_origin_only() {
        assert_eq!(
            url_origin("https://shop.example:8443/cb/s3cret?token=x"),
            "https://shop.example:8443"
        );
        assert_eq!(url_origin("http://127.0.0.1/cb"), "http://127.0.0.1");
        assert_eq!(url_origin("not a url"), "(unparsable)");
    }
}
