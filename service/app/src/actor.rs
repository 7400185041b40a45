//! Who acts. Every use case that acts is handed an `Actor`, so that what it
//! records (the approver on an order, the row of the audit trail, the
//! person a merchant's owner was invited by) names the one the caller
//! authenticated, and no use case asks ambient state who is calling.

use crate::domain::error::ApiError;
use crate::domain::people::{Action, OwnerAction};
use crate::domain::status::{AuditRole, Role};
use crate::store::audit::{Approving, PendingAudit, Snapshot};
use crate::store::rows::AuditRow;

/// An operator: an identity, or a configuration token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operator {
    /// The identity's id; `None` for a configuration token.
    pub id: Option<String>,
    pub name: String,
    pub role: Role,
}

impl Operator {
    /// What tells two approvers apart: the identity, or the configuration
    /// token's name.
    pub fn approver_key(&self) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => format!("config:{}", self.name),
        }
    }

    /// Refuses, with the role it needs, an action the role does not allow.
    pub fn may(&self, action: Action) -> Result<(), ApiError> {
        if self.role.may(action) {
            Ok(())
        } else {
            Err(ApiError::RoleForbidden {
                role: self.role.as_str(),
                action: action.name(),
                needs: action.needs().as_str(),
            })
        }
    }
}

/// What an action is taken on.
#[derive(Clone, Debug)]
pub enum Target {
    Merchant(String),
    /// A merchant about to be created: its id is known once it is.
    NewMerchant,
    Operator(String),
    NewOperator,
    Order(String),
    BankTransaction(String),
    /// A bank transaction about to be recorded.
    NewBankTransaction,
    CallbackDelivery(String),
    /// A routing table, as `{currency}/{direction}` (and `/{merchant_id}`
    /// for a merchant's own).
    RoutingTable(String),
}

/// An operator taking one action in one request (API or console): the
/// action is what the role was checked against and what the trail names.
#[derive(Clone, Debug)]
pub struct Acting {
    pub who: Operator,
    pub action: Action,
    pub request_id: String,
    /// The change request this action is the approval of, marked approved
    /// in the action's own transaction.
    pub approves: Option<Approving>,
}

#[derive(Clone, Debug)]
pub enum Actor {
    Operator(Acting),
    /// A merchant's owner, signed in to the portal, taking `action` in one
    /// request.
    Owner {
        id: String,
        email: String,
        merchant_id: String,
        action: OwnerAction,
        request_id: String,
    },
    /// A merchant, by its signed request.
    Merchant {
        id: String,
        name: String,
    },
    /// The service itself: a worker, the sandbox's simulator, a test's
    /// set-up. Named for the logs.
    System(&'static str),
}

impl Actor {
    pub fn operator(who: Operator, action: Action, request_id: impl Into<String>) -> Actor {
        Actor::Operator(Acting {
            who,
            action,
            request_id: request_id.into(),
            approves: None,
        })
    }

    /// The same operator taking the action as the approval of a change
    /// request: the action commits only with the request marked approved.
    pub fn approving(self, approving: Approving) -> Actor {
        match self {
            Actor::Operator(a) => Actor::Operator(Acting {
                approves: Some(approving),
                ..a
            }),
            other => other,
        }
    }

    /// Its id: the operator's (a configuration token's `config:` name), the
    /// owner's, the merchant's, or the system part's name.
    pub fn id(&self) -> String {
        match self {
            Actor::Operator(a) => a.who.approver_key(),
            Actor::Owner { id, .. } | Actor::Merchant { id, .. } => id.clone(),
            Actor::System(name) => format!("system:{name}"),
        }
    }

    /// The name people read.
    pub fn name(&self) -> &str {
        match self {
            Actor::Operator(a) => &a.who.name,
            Actor::Owner { email, .. } => email,
            Actor::Merchant { name, .. } => name,
            Actor::System(name) => name,
        }
    }

    /// The operator, if an operator acts.
    pub fn acting(&self) -> Option<&Acting> {
        match self {
            Actor::Operator(a) => Some(a),
            _ => None,
        }
    }

    /// The audit row this actor's change to `target` appends in the change's
    /// own transaction (`Db::transaction_audited`): an operator's action or
    /// an owner's; a merchant's signed requests and the service's own work
    /// are not in the trail.
    pub fn audit(&self, target: Target, remarks: Option<&str>, now: i64) -> Option<PendingAudit> {
        let (target_type, target_id, snapshot) = target.parts();
        let row = |operator_id: Option<String>,
                   name: &str,
                   role: AuditRole,
                   action: &str,
                   request_id: &str| AuditRow {
            id: crate::ids::ordered(),
            created_at: now,
            operator_id,
            operator_name: name.to_string(),
            role,
            action: action.to_string(),
            target_type: target_type.to_string(),
            target_id: target_id.clone(),
            remarks: remarks.map(str::to_string),
            request_id: request_id.to_string(),
            before_state: None,
            after_state: None,
        };
        match self {
            Actor::Operator(acting) => Some(PendingAudit {
                row: row(
                    acting.who.id.clone(),
                    &acting.who.name,
                    acting.who.role.into(),
                    acting.action.name(),
                    &acting.request_id,
                ),
                snapshot,
                approves: acting.approves.clone(),
            }),
            Actor::Owner {
                id,
                email,
                action,
                request_id,
                ..
            } => Some(PendingAudit {
                row: row(
                    Some(id.clone()),
                    email,
                    AuditRole::Owner,
                    action.name(),
                    request_id,
                ),
                snapshot,
                approves: None,
            }),
            Actor::Merchant { .. } | Actor::System(_) => None,
        }
    }
}

impl Target {
    /// Its kind and id as the trail stores them.
    pub fn kind_and_id(self) -> (&'static str, String) {
        let (kind, id, _) = self.parts();
        (kind, id)
    }

    /// Its kind and id as the trail stores them, and which settings of it
    /// are read before and after the change.
    fn parts(self) -> (&'static str, String, Snapshot) {
        match self {
            Target::Merchant(id) => ("merchant", id, Snapshot::Merchant),
            Target::NewMerchant => ("merchant", String::new(), Snapshot::Merchant),
            Target::Operator(id) => ("operator", id, Snapshot::Operator),
            Target::NewOperator => ("operator", String::new(), Snapshot::Operator),
            Target::Order(no) => ("order", no, Snapshot::None),
            Target::BankTransaction(id) => ("bank_transaction", id, Snapshot::None),
            Target::NewBankTransaction => ("bank_transaction", String::new(), Snapshot::None),
            Target::CallbackDelivery(id) => ("callback_delivery", id, Snapshot::None),
            Target::RoutingTable(key) => ("routing_table", key, Snapshot::None),
        }
    }
}
