//! Rows written as one array a column: `INSERT INTO t (columns) SELECT
//! columns FROM unnest($1, $2, …)`. Its text depends on the table, not on
//! how many rows go in, so PostgreSQL prepares and plans it once a
//! connection; a `VALUES` list's text changes with its length, and each
//! length was parsed, analysed and planned again (issue 56). What writes
//! many rows of a table at once on PostgreSQL uses it: a deferring
//! transaction's held rows (`deferred`) and a batch of callback attempts
//! (`callbacks`).

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
use diesel::QueryResult;

/// One column of the rows, as the array `unnest` takes.
pub(crate) enum Column<'a> {
    Text(Vec<&'a str>),
    MaybeText(Vec<Option<&'a str>>),
    Int8(Vec<i64>),
    MaybeInt8(Vec<Option<i64>>),
    Int4(Vec<i32>),
    MaybeInt4(Vec<Option<i32>>),
}

/// One table's rows: `INSERT INTO name (columns) SELECT … FROM
/// unnest(one array a column)`.
pub(crate) struct Table<'a> {
    pub(crate) name: &'static str,
    pub(crate) columns: &'static str,
    /// Inserted in the order given: the table numbers its rows as they
    /// come (`merchant_events.seq`, which orders a merchant's feed).
    pub(crate) in_order: bool,
    pub(crate) values: Vec<Column<'a>>,
}

impl Column<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Column::Text(v) => v.is_empty(),
            Column::MaybeText(v) => v.is_empty(),
            Column::Int8(v) => v.is_empty(),
            Column::MaybeInt8(v) => v.is_empty(),
            Column::Int4(v) => v.is_empty(),
            Column::MaybeInt4(v) => v.is_empty(),
        }
    }
}

impl Table<'_> {
    /// Whether it holds no rows (its columns are as long as each other).
    pub(crate) fn is_empty(&self) -> bool {
        self.values.as_slice().first().is_none_or(Column::is_empty)
    }
}

impl QueryFragment<Pg> for Table<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(&format!(
            "INSERT INTO {} ({}) SELECT {} FROM unnest(",
            self.name, self.columns, self.columns
        ));
        for (i, column) in self.values.iter().enumerate() {
            if i > 0 {
                out.push_sql(", ");
            }
            match column {
                Column::Text(v) => out.push_bind_param::<Array<Text>, _>(v)?,
                Column::MaybeText(v) => out.push_bind_param::<Array<Nullable<Text>>, _>(v)?,
                Column::Int8(v) => out.push_bind_param::<Array<BigInt>, _>(v)?,
                Column::MaybeInt8(v) => out.push_bind_param::<Array<Nullable<BigInt>>, _>(v)?,
                Column::Int4(v) => out.push_bind_param::<Array<Integer>, _>(v)?,
                Column::MaybeInt4(v) => out.push_bind_param::<Array<Nullable<Integer>>, _>(v)?,
            }
        }
        if self.in_order {
            out.push_sql(&format!(
                ") WITH ORDINALITY AS held ({}, held_n) ORDER BY held_n",
                self.columns
            ));
        } else {
            out.push_sql(&format!(") AS held ({})", self.columns));
        }
        Ok(())
    }
}

/// Its text depends on the table and its columns, not on its rows:
/// diesel keeps it prepared by the text.
impl QueryId for Table<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

/// One column of `rows`, for a `Column`.
pub(crate) fn column<'a, R, T>(rows: &'a [R], f: impl Fn(&'a R) -> T) -> Vec<T> {
    rows.iter().map(f).collect()
}

/// The columns `query` selects, as its text names them: what a test holds
/// a `Table`'s `columns` to (the table's `all_columns`).
#[cfg(test)]
pub(crate) fn selected<Q: QueryFragment<Pg>>(query: Q) -> String {
    let sql = diesel::debug_query::<Pg, _>(&query).to_string();
    let list = sql["SELECT ".len()..sql.find(" FROM").unwrap()].to_string();
    list.split(", ")
        .map(|c| c.rsplit('.').next().unwrap().trim_matches('"').to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
