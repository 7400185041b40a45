//! The frame every console and portal page sits in: the language, the
//! title, a skip link, the sections' navigation, who is signed in and the
//! sign-out button.

use crate::app::web_sessions::{Session, Who};
use crate::domain::status::SessionRealm;
use crate::pages::web::{csrf_field, root};
use maud::{html, Markup, DOCTYPE};

/// The sections of a realm's navigation: (path, label, who may see it).
pub struct Nav {
    pub sections: &'static [(&'static str, &'static str)],
    pub current: &'static str,
}

/// The product a realm's pages belong to, as their header names it.
fn product(realm: SessionRealm) -> &'static str {
    match realm {
        SessionRealm::Console => "Operations console",
        SessionRealm::Portal => "Merchant portal",
    }
}

pub fn frame(
    realm: SessionRealm,
    nav: Option<(&Nav, &Session)>,
    title: &str,
    body: Markup,
) -> Markup {
    framed(realm, product(realm), nav, title, body)
}

/// `frame` under another product's name (the service's own home page).
pub fn framed(
    realm: SessionRealm,
    product: &str,
    nav: Option<(&Nav, &Session)>,
    title: &str,
    body: Markup,
) -> Markup {
    let css = match realm {
        SessionRealm::Console => "/console/style.css",
        SessionRealm::Portal => "/portal/style.css",
    };
    let window = match product == self::product(realm) {
        true => format!("{title} · {product}"),
        false => title.to_string(),
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                (crate::pages::head(&window))
                link rel="stylesheet" href=(css);
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header {
                    p.product { a href=(root(realm)) { (product) } }
                    @if let Some((nav, session)) = nav {
                        nav aria-label="Sections" {
                            ul {
                                @for (path, label) in nav.sections {
                                    li { a href=(path) aria-current=[(*path == nav.current).then_some("page")] { (label) } }
                                }
                            }
                        }
                        form.signout method="post" action={ (root(realm)) "/logout" } {
                            (csrf_field(session))
                            span { (signed_in(session)) }
                            " "
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main #main {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// Who the header says is signed in.
fn signed_in(session: &Session) -> String {
    match &session.who {
        Who::Operator(op) => format!("{} ({})", op.name, op.role.as_str()),
        Who::Owner(owner) => owner.email.clone(),
    }
}
