//! How the status enums of `domain::status` are stored: as the text each
//! names, on both backends. A stored value no enum names is an error on
//! reading, never a silent default.

use crate::domain::status::{
    BankTransactionStatus, CallbackStatus, DeliveryStatus, DepositStatus, MerchantStatus,
    WithdrawalStatus,
};
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;
use diesel::sqlite::Sqlite;

macro_rules! stored_as_text {
    ($($status:ty),+) => {$(
        impl ToSql<Text, Pg> for $status {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
                <str as ToSql<Text, Pg>>::to_sql(self.as_str(), &mut out.reborrow())
            }
        }

        impl ToSql<Text, Sqlite> for $status {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
                out.set_value(self.as_str());
                Ok(IsNull::No)
            }
        }

        impl<DB: Backend> FromSql<Text, DB> for $status
        where
            String: FromSql<Text, DB>,
        {
            fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
                let text = String::from_sql(bytes)?;
                <$status>::parse(&text).ok_or_else(|| {
                    format!("`{text}` is no {}", stringify!($status)).into()
                })
            }
        }
    )+};
}

stored_as_text!(
    DepositStatus,
    WithdrawalStatus,
    CallbackStatus,
    DeliveryStatus,
    BankTransactionStatus,
    MerchantStatus
);
