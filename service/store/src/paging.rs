//! Newest-first keyset paging, shared by every operator listing: a page
//! resumes strictly after the last item it gave, `(created_at, key)`
//! descending, so rows written meanwhile neither repeat nor vanish.

/// Where a newest-first listing resumes: the last item's creation time and
/// order number (or id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: i64,
    pub key: String,
}

/// Filters of an operator listing.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub merchant_id: Option<String>,
    pub status: Option<String>,
    pub account_id: Option<String>,
    pub order_no: Option<String>,
    pub channel_id: Option<String>,
    /// Created at or after (orders only).
    pub created_from: Option<i64>,
    /// Created before (orders only).
    pub created_to: Option<i64>,
    /// Only these actions (change requests only).
    pub actions: Option<Vec<String>>,
    /// Only these kinds of order (callback deliveries only).
    pub order_kinds: Option<Vec<String>>,
    /// Only this currency (orders only).
    pub currency: Option<String>,
    /// Only amounts of at least this many stored units (orders only).
    pub min_amount: Option<i64>,
    /// Oldest first, resuming after the cursor (orders only): a work
    /// queue is served in the order it arrived.
    pub oldest_first: bool,
    pub after: Option<Cursor>,
    pub limit: i64,
}

/// Orders a boxed query newest first, resumes it after `filter.after` and
/// limits it to `filter.limit`. `$key` is the table's tie-breaking column
/// (unique, compared as text): the order number or the id.
macro_rules! newest_after {
    ($query:expr, $table:ident, $key:ident, $filter:expr) => {
        $crate::paging::newest_after!($query, $table, created_at, $key, $filter)
    };
    // Newest by `$at`, a table whose time column has another name.
    ($query:expr, $table:ident, $at:ident, $key:ident, $filter:expr) => {{
        let mut query = $query;
        if let Some(c) = &$filter.after {
            query = query.filter(
                $table::$at.lt(c.created_at).or($table::$at
                    .eq(c.created_at)
                    .and($table::$key.lt(c.key.clone()))),
            );
        }
        query
            .order(($table::$at.desc(), $table::$key.desc()))
            .limit($filter.limit)
    }};
}
pub(crate) use newest_after;

/// `newest_after`'s mirror: oldest first, resumed after `filter.after`.
macro_rules! oldest_after {
    ($query:expr, $table:ident, $key:ident, $filter:expr) => {{
        let mut query = $query;
        if let Some(c) = &$filter.after {
            query = query.filter(
                $table::created_at.gt(c.created_at).or($table::created_at
                    .eq(c.created_at)
                    .and($table::$key.gt(c.key.clone()))),
            );
        }
        query
            .order(($table::created_at.asc(), $table::$key.asc()))
            .limit($filter.limit)
    }};
}
pub(crate) use oldest_after;
