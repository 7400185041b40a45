//! The administration commands work on the service's own database. Run in
//! another directory, `payments operator create` used to make a new, empty
//! sandbox there and say nothing: the operator it printed could never sign
//! in to the service the person meant (issue 53). Now a command refuses a
//! SQLite database that does not exist unless told `--init`, and every one
//! says which database it used.

use std::path::Path;
use std::process::{Command, Output};

fn payments(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payments"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PAYMENTS_DATA_DIR", data_dir)
        .env("PAYMENTS_LOG_LEVEL", "warn")
        .output()
        .expect("payments starts")
}

fn create(data_dir: &Path, email: &str, init: bool) -> Output {
    let mut args = vec!["operator", "create", "--name", "Ann", "--email", email];
    if init {
        args.push("--init");
    }
    payments(data_dir, &args)
}

#[test]
fn a_command_refuses_a_database_that_is_not_there_unless_told_to_make_it() {
    let dir = std::env::temp_dir().join(format!("payments-cli-{}", uuid::Uuid::new_v4()));
    let db = dir.join("payments.db");

    let refused = create(&dir, "ann@example.test", false);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains(&db.display().to_string()) && said.contains("--init"),
        "names the database it looked for and how to make one: {said}"
    );
    assert!(!db.exists(), "nothing was made");
    assert!(
        String::from_utf8_lossy(&refused.stdout).is_empty(),
        "no operator is printed"
    );

    let made = create(&dir, "ann@example.test", true);
    let said = String::from_utf8_lossy(&made.stderr);
    assert!(made.status.success(), "{said}");
    assert!(
        said.contains(&format!("database: sqlite://{}", db.display())),
        "{said}"
    );
    assert!(String::from_utf8_lossy(&made.stdout).contains("operator_id: "));

    // The database is there now: no flag needed, and it says which.
    let again = create(&dir, "bob@example.test", false);
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{said}");
    assert!(said.contains("database: sqlite://"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lost_authenticator_is_forgotten_by_the_command_line_for_an_operator_who_exists() {
    let dir = std::env::temp_dir().join(format!("payments-cli-{}", uuid::Uuid::new_v4()));
    assert!(create(&dir, "ann@example.test", true).status.success());

    let reset = payments(
        &dir,
        &[
            "operator",
            "second-factor-reset",
            "--email",
            "ann@example.test",
        ],
    );
    let said = String::from_utf8_lossy(&reset.stdout);
    assert!(
        reset.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&reset.stderr)
    );
    assert!(
        said.contains("operator_id: ") && said.contains("next sign-in sets up a new authenticator"),
        "{said}"
    );

    let nobody = payments(
        &dir,
        &[
            "operator",
            "second-factor-reset",
            "--email",
            "nobody@example.test",
        ],
    );
    let said = String::from_utf8_lossy(&nobody.stderr);
    assert!(!nobody.status.success(), "{said}");
    assert!(
        said.contains("nobody@example.test"),
        "names whom it did not find: {said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
