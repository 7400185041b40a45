//! Secrets given where they live rather than in the configuration file:
//! orchestrators mount them as files (Kubernetes and Docker secrets) or
//! pass them in the environment, and a file checked into a deployment
//! repository should hold neither a token nor a key.
//!
//! In the file, a secret is a string, or `{ file = "/run/secrets/x" }`, or
//! `{ env = "NAME" }`. In the environment, `PAYMENTS_X_FILE` names a file
//! holding what `PAYMENTS_X` would. A file's trailing newline is not part
//! of the secret. No error names a secret's value, only where it was
//! looked for.

use serde::{Deserialize, Deserializer};
use std::path::PathBuf;

#[derive(Deserialize)]
#[serde(untagged)]
enum Source {
    Inline(String),
    File(FromFile),
    Env(FromEnv),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FromFile {
    file: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FromEnv {
    env: String,
}

/// For a required secret field (`#[serde(deserialize_with = …)]`).
pub(crate) fn required<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    resolve(Source::deserialize(d).map_err(|_| not_a_secret())?).map_err(serde::de::Error::custom)
}

/// For an optional one (with `#[serde(default)]`).
pub(crate) fn optional<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    required(d).map(Some)
}

fn not_a_secret<E: serde::de::Error>() -> E {
    E::custom("a secret is a string, { file = \"PATH\" } or { env = \"NAME\" }")
}

fn resolve(source: Source) -> Result<String, String> {
    match source {
        Source::Inline(value) => Ok(value),
        Source::File(FromFile { file }) => read_file(&file),
        Source::Env(FromEnv { env }) => match std::env::var(&env) {
            Ok(v) if !v.is_empty() => Ok(v),
            _ => Err(format!("the environment variable {env} is not set")),
        },
    }
}

fn read_file(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("reading the secret file {}: {e}", path.display()))?;
    let value = text.trim_end_matches(['\n', '\r']);
    if value.is_empty() {
        return Err(format!("the secret file {} is empty", path.display()));
    }
    Ok(value.to_string())
}

/// `PAYMENTS_{name}`, or else the contents of the file
/// `PAYMENTS_{name}_FILE` names; both set is a mistake worth refusing.
pub(super) fn from_env(name: &str) -> anyhow::Result<Option<String>> {
    let set = |name: &str| {
        std::env::var(format!("{}{name}", super::ENV_PREFIX))
            .ok()
            .filter(|v| !v.is_empty())
    };
    let direct = set(name);
    let file = set(&format!("{name}_FILE"));
    match (direct, file) {
        (Some(_), Some(_)) => Err(anyhow::anyhow!(
            "both {p}{name} and {p}{name}_FILE are set: give one",
            p = super::ENV_PREFIX
        )),
        (Some(v), None) => Ok(Some(v)),
        (None, Some(path)) => read_file(std::path::Path::new(&path))
            .map(Some)
            .map_err(|e| anyhow::anyhow!("{}{name}_FILE: {e}", super::ENV_PREFIX)),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        #[serde(deserialize_with = "required")]
        token: String,
        #[serde(default, deserialize_with = "optional")]
        secret: Option<String>,
    }

    fn scratch(contents: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("secret-{}", uuid::Uuid::new_v4()));
        std::fs::write(&path, contents).unwrap();
        path
    }

    #[test]
    fn a_secret_is_read_inline_from_a_file_or_from_the_environment() {
        let path = scratch("op_from_a_file\n");
        let var = format!("PAYMENTS_TEST_SECRET_{}", uuid::Uuid::new_v4().simple());
        std::env::set_var(&var, "whsec_from_the_environment");
        let text = format!(
            "token = {{ file = \"{}\" }}\nsecret = {{ env = \"{var}\" }}\n",
            path.display()
        );
        let h: Holder = toml::from_str(&text).unwrap();
        assert_eq!(h.token, "op_from_a_file");
        assert_eq!(h.secret.as_deref(), Some("whsec_from_the_environment"));
        let h: Holder = toml::from_str("token = \"inline\"").unwrap();
        assert_eq!((h.token.as_str(), h.secret), ("inline", None));
    }

    #[test]
    fn a_missing_or_empty_source_is_refused_naming_where_it_looked() {
        let empty = scratch("\n");
        let why =
            toml::from_str::<Holder>(&format!("token = {{ file = \"{}\" }}", empty.display()))
                .err()
                .unwrap()
                .to_string();
        assert!(why.contains("is empty"), "{why}");
        let why = toml::from_str::<Holder>("token = { file = \"/nonexistent/x\" }")
            .err()
            .unwrap()
            .to_string();
        assert!(why.contains("/nonexistent/x"), "{why}");
        let why = toml::from_str::<Holder>("token = { env = \"PAYMENTS_TEST_NEVER_SET\" }")
            .err()
            .unwrap()
            .to_string();
        assert!(why.contains("PAYMENTS_TEST_NEVER_SET is not set"), "{why}");
        let why = toml::from_str::<Holder>("token = { path = \"x\" }")
            .err()
            .unwrap()
            .to_string();
        assert!(why.contains("a secret is a string"), "{why}");
    }

    #[test]
    fn a_secret_file_named_in_the_environment_is_read_and_both_at_once_refused() {
        let name = format!(
            "TEST_KEY_{}",
            uuid::Uuid::new_v4().simple().to_string().to_uppercase()
        );
        let path = scratch("c2VjcmV0\r\n");
        std::env::set_var(format!("PAYMENTS_{name}_FILE"), &path);
        assert_eq!(from_env(&name).unwrap().as_deref(), Some("c2VjcmV0"));
        std::env::set_var(format!("PAYMENTS_{name}"), "c2VjcmV0");
        let why = from_env(&name).unwrap_err().to_string();
        assert!(
            why.contains("give one") && !why.contains("c2VjcmV0"),
            "{why}"
        );
    }
}
