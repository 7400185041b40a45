//! Least privilege on PostgreSQL: the tables belong to the role that
//! migrates them, and the service runs as another role that may read and
//! write what its work needs but may never rewrite its own history.
//!
//! Ownership is what the service must not have: an owner may `ALTER` a
//! table, drop the audit trail's append-only trigger or disable it, and a
//! trigger is no defence against the role that owns it. So the service's
//! role gets grants only, reapplied after every migration (new tables get
//! theirs at once), and the append-only tables get `SELECT` and `INSERT`
//! and nothing else: no `UPDATE`, `DELETE` or `TRUNCATE`, and no `ALTER`
//! since it owns nothing.

use anyhow::{Context, Result};
use diesel::sql_types::Text;
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

/// Written once and never changed: the audit trail, the journal (its
/// entries and their postings), the approvals of withdrawals, and the
/// balance history derived from the journal.
pub const APPEND_ONLY: &[&str] = &[
    "audit_events",
    "journal_entries",
    "postings",
    "withdrawal_approvals",
    "balance_transactions",
];

/// Where migrations record themselves: readable (the service checks
/// nothing there, but a person reading as it may), never writable.
const MIGRATIONS_TABLE: &str = "__diesel_schema_migrations";

/// Instances starting together would otherwise rewrite the same
/// catalogue rows at once ("tuple concurrently updated"): one grants at a
/// time. An arbitrary constant, the same on every instance.
const GRANTS_LOCK: i64 = 0x7061_7973_6772_6e74;

#[derive(diesel::QueryableByName)]
struct Role {
    #[diesel(sql_type = Text)]
    name: String,
}

/// The role `conn` acts as.
pub async fn current_role(conn: &mut AsyncPgConnection) -> Result<String> {
    let role: Role = diesel::sql_query("SELECT current_user::text AS name")
        .get_result(conn)
        .await
        .context("asking the database which role this connection is")?;
    Ok(role.name)
}

/// Grants `role` what the service needs on every table of the current
/// schema, as the owner (`owner` is connected as it), in one transaction.
pub async fn grant_service_role(owner: &mut AsyncPgConnection, role: &str) -> Result<()> {
    owner
        .batch_execute(&grants(role))
        .await
        .with_context(|| format!("granting the service's role {role} its privileges"))
}

/// The statements, for `role` quoted as an identifier. Revoking first
/// makes the result the same whatever was granted before by hand.
fn grants(role: &str) -> String {
    let r = quote_ident(role);
    let append_only = APPEND_ONLY.join(", ");
    format!(
        "BEGIN;\
         SELECT pg_advisory_xact_lock({GRANTS_LOCK});\
         GRANT USAGE ON SCHEMA public TO {r};\
         REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {r};\
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {r};\
         REVOKE UPDATE, DELETE ON {append_only} FROM {r};\
         REVOKE INSERT, UPDATE, DELETE ON {MIGRATIONS_TABLE} FROM {r};\
         GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {r};\
         COMMIT;"
    )
}

/// `name` as a PostgreSQL identifier: in double quotes, with any double
/// quote doubled, so a role name can never end the statement.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_name_is_quoted_so_it_cannot_end_the_statement() {
        assert_eq!(quote_ident("payments_app"), "\"payments_app\"");
        assert_eq!(quote_ident("a\";DROP"), "\"a\"\";DROP\"");
    }

    #[test]
    fn the_append_only_tables_are_granted_no_update_or_delete() {
        let sql = grants("svc");
        assert!(sql.contains(
            "REVOKE UPDATE, DELETE ON audit_events, journal_entries, postings, \
             withdrawal_approvals, balance_transactions FROM \"svc\""
        ));
        assert!(!sql.contains("TRUNCATE"), "TRUNCATE is never granted");
    }
}
