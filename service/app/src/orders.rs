//! What deposits and withdrawals share as a merchant's orders: finding one
//! by either number, and telling an identical resend from a conflict on
//! the merchant's order number. Each kind says how its rows are read; the
//! rules live here once.

use crate::domain::error::ApiError;
use crate::store::{OrderKey, Store, StoreResult};
use crate::App;
use futures::future::BoxFuture;

/// An order kind as these rules need it.
pub trait Order: Sized + Send + 'static {
    type Row: Send + 'static;
    /// As "not found" errors name it (`deposit`, `withdrawal`).
    const KIND: &'static str;

    fn from_row(row: Self::Row) -> Result<Self, ApiError>;
    /// The fingerprint of the signed fields that created the row.
    fn fingerprint(row: &Self::Row) -> &str;

    fn by_key<'c>(
        s: &'c mut dyn Store,
        key: OrderKey<'c>,
    ) -> BoxFuture<'c, StoreResult<Option<Self::Row>>>;
}

/// Reads the row of `key`, if there is one.
async fn row<O: Order>(app: &App, key: OrderKey<'_>) -> Result<Option<O::Row>, ApiError> {
    let owned = Owned::of(key);
    Ok(app
        .db
        .run(move |s| Box::pin(async move { O::by_key(s, owned.key()).await }))
        .await?)
}

/// An `OrderKey` that owns its strings, to travel into a unit of work.
enum Owned {
    Merchants(String, String),
    Any(String),
    MerchantsOwn(String, String),
}

impl Owned {
    fn of(key: OrderKey<'_>) -> Owned {
        match key {
            OrderKey::OrderNo {
                merchant_id,
                order_no,
            } => Owned::Merchants(merchant_id.into(), order_no.into()),
            OrderKey::AnyOrderNo(order_no) => Owned::Any(order_no.into()),
            OrderKey::MerchantOrderNo {
                merchant_id,
                merchant_order_no,
            } => Owned::MerchantsOwn(merchant_id.into(), merchant_order_no.into()),
        }
    }

    fn key(&self) -> OrderKey<'_> {
        match self {
            Owned::Merchants(merchant_id, order_no) => OrderKey::OrderNo {
                merchant_id,
                order_no,
            },
            Owned::Any(order_no) => OrderKey::AnyOrderNo(order_no),
            Owned::MerchantsOwn(merchant_id, merchant_order_no) => OrderKey::MerchantOrderNo {
                merchant_id,
                merchant_order_no,
            },
        }
    }
}

fn found<O: Order>(row: Option<O::Row>, reference: &str) -> Result<O, ApiError> {
    O::from_row(found_row::<O>(row, reference)?)
}

/// The row read, or the order's not-found error.
fn found_row<O: Order>(row: Option<O::Row>, reference: &str) -> Result<O::Row, ApiError> {
    row.ok_or_else(|| ApiError::OrderNotFound {
        kind: O::KIND,
        reference: reference.to_string(),
    })
}

/// The row of a merchant's order number, if there is one.
pub async fn row_by_merchant_order_no<O: Order>(
    app: &App,
    merchant_id: &str,
    merchant_order_no: &str,
) -> Result<Option<O::Row>, ApiError> {
    let key = OrderKey::MerchantOrderNo {
        merchant_id,
        merchant_order_no,
    };
    row::<O>(app, key).await
}

pub async fn by_merchant_order_no<O: Order>(
    app: &App,
    merchant_id: &str,
    merchant_order_no: &str,
) -> Result<O, ApiError> {
    let row = row_by_merchant_order_no::<O>(app, merchant_id, merchant_order_no).await?;
    found(row, merchant_order_no)
}

pub async fn by_order_no<O: Order>(
    app: &App,
    merchant_id: &str,
    order_no: &str,
) -> Result<O, ApiError> {
    let key = OrderKey::OrderNo {
        merchant_id,
        order_no,
    };
    found(row::<O>(app, key).await?, order_no)
}

/// Any merchant's order, for operators, channels and simulators.
pub async fn any<O: Order>(app: &App, order_no: &str) -> Result<O, ApiError> {
    O::from_row(any_row::<O>(app, order_no).await?)
}

/// Any merchant's order as read, for a move that writes from what it read
/// (a channel's completion: `deposits::complete_read`).
pub async fn any_row<O: Order>(app: &App, order_no: &str) -> Result<O::Row, ApiError> {
    found_row::<O>(
        row::<O>(app, OrderKey::AnyOrderNo(order_no)).await?,
        order_no,
    )
}

/// A create whose merchant order number exists already: the original
/// order when the signed fields are the same (a resend), a conflict
/// otherwise.
pub fn resent_or_conflict<O: Order>(
    existing: O::Row,
    fingerprint: &str,
    merchant_order_no: &str,
) -> Result<O, ApiError> {
    if crate::keys::constant_time_eq(O::fingerprint(&existing), fingerprint) {
        O::from_row(existing)
    } else {
        Err(ApiError::DuplicateMerchantOrderNo(
            merchant_order_no.to_string(),
        ))
    }
}

/// The finders each kind's module offers for its own type, so that
/// callers keep saying `deposits::find_any`.
macro_rules! finders {
    ($order:ty) => {
        /// One of a merchant's orders by the service's order number.
        pub async fn find_by_order_no(
            app: &App,
            merchant_id: &str,
            order_no: &str,
        ) -> Result<$order, ApiError> {
            $crate::orders::by_order_no(app, merchant_id, order_no).await
        }

        /// One of a merchant's orders by its own order number.
        pub async fn find_by_merchant_order_no(
            app: &App,
            merchant_id: &str,
            merchant_order_no: &str,
        ) -> Result<$order, ApiError> {
            $crate::orders::by_merchant_order_no(app, merchant_id, merchant_order_no).await
        }

        /// Any merchant's order, for operators, channels and simulators.
        pub async fn find_any(app: &App, order_no: &str) -> Result<$order, ApiError> {
            $crate::orders::any(app, order_no).await
        }
    };
}
pub(crate) use finders;
