//! The frame every console and portal page sits in: the language, the
//! title, a skip link, the sections' navigation, who is signed in and the
//! sign-out button.

use crate::app::web_sessions::Session;
use crate::domain::status::SessionRealm;
use crate::pages::escape;
use crate::pages::web::{csrf_field, root};

/// The sections of a realm's navigation: (path, label, who may see it).
pub struct Nav {
    pub sections: &'static [(&'static str, &'static str)],
    pub current: &'static str,
}

pub fn frame(
    realm: SessionRealm,
    nav: Option<(&Nav, &Session)>,
    title: &str,
    body: &str,
) -> String {
    let (product, css) = match realm {
        SessionRealm::Console => ("Operations console", "/console/style.css"),
        SessionRealm::Portal => ("Merchant portal", "/portal/style.css"),
    };
    let mut header = format!(
        "<header><p class=\"product\"><a href=\"{}\">{product}</a></p>",
        root(realm)
    );
    if let Some((nav, session)) = nav {
        header.push_str("<nav aria-label=\"Sections\"><ul>");
        for (path, label) in nav.sections {
            let current = if *path == nav.current {
                " aria-current=\"page\""
            } else {
                ""
            };
            header.push_str(&format!(
                "<li><a href=\"{path}\"{current}>{}</a></li>",
                escape(label)
            ));
        }
        header.push_str("</ul></nav>");
        let name = match &session.who {
            crate::app::web_sessions::Who::Operator(op) => {
                format!("{} ({})", op.name, op.role.as_str())
            }
            crate::app::web_sessions::Who::Owner(owner) => owner.email.clone(),
        };
        header.push_str(&format!(
            "<form class=\"signout\" method=\"post\" action=\"{}/logout\">{}<span>{}</span> <button type=\"submit\">Sign out</button></form>",
            root(realm),
            csrf_field(session),
            escape(&name)
        ));
    }
    header.push_str("</header>");
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · {product}</title><link rel=\"stylesheet\" href=\"{css}\"></head>\
         <body><a class=\"skip\" href=\"#main\">Skip to content</a>{header}\
         <main id=\"main\"><h1>{}</h1>{body}</main></body></html>",
        escape(title),
        escape(title)
    )
}
