//! Points writes of the HTTP interface (neighbours.md section 8): award points to a user or
//! withdraw them (open question 20).
//!
//! `amount` is a whole number from 1 to [`MAX_AMOUNT`]; the direction is the operation's,
//! never the sign's. A withdrawal never takes a total below 0: it is refused (400) and
//! nothing changes. `reason` is optional, kept in the audit record only. A scoped caller
//! (department administrator, custom role) awards and withdraws only for users of its
//! subtrees.

use sea_orm::{DatabaseConnection, prelude::Uuid};
use serde_json::json;

use crate::service::{Parsed, lookups, points::change_total};
use crate::{
    access::{Caller, Grant, Operation},
    db::{self, AuditAction, Change},
    domain::{Invalid, Reason, ids::parse_field_id},
    error::{ServiceError, ServiceResult},
};

/// The most points one call may award or withdraw.
pub const MAX_AMOUNT: u64 = 1_000_000;
/// The longest `reason` kept.
pub const MAX_REASON_CHARS: usize = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Award,
    Withdraw,
}

/// One award or withdrawal, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointsMove {
    pub user_id: Uuid,
    pub amount: i64,
    pub reason: Option<String>,
}

impl PointsMove {
    /// From the request's text: `userId` and `amount` required, `reason` optional.
    pub fn parse(user_id: &str, amount: &str, reason: Option<&str>) -> Result<Self, Invalid> {
        let user_id = parse_field_id("userId", user_id)?;
        let amount = amount.trim();
        if amount.is_empty() {
            return Err(Invalid::new("amount", Reason::Missing));
        }
        let amount = amount
            .parse::<u64>()
            .ok()
            .filter(|amount| (1..=MAX_AMOUNT).contains(amount))
            .ok_or_else(|| {
                Invalid::new(
                    "amount",
                    Reason::OutOfRange {
                        min: 1,
                        max: MAX_AMOUNT,
                    },
                )
            })?;
        let reason = match reason.map(str::trim).filter(|reason| !reason.is_empty()) {
            None => None,
            Some(reason) if reason.chars().count() > MAX_REASON_CHARS => {
                return Err(Invalid::new(
                    "reason",
                    Reason::TooLong {
                        max: MAX_REASON_CHARS,
                    },
                ));
            }
            Some(reason) if reason.contains('\0') => {
                return Err(Invalid::new("reason", Reason::NulCharacters));
            }
            Some(reason) => Some(reason.to_owned()),
        };
        Ok(Self {
            user_id,
            amount: i64::try_from(amount).expect("at most MAX_AMOUNT"),
            reason,
        })
    }
}

/// Awards or withdraws points; the user's new total.
pub async fn move_points(
    db: &DatabaseConnection,
    caller: &Caller,
    direction: Direction,
    request: Parsed<PointsMove>,
) -> ServiceResult<i64> {
    let grant = caller.grant(Operation::AwardPoints)?;
    let PointsMove {
        user_id,
        amount,
        reason,
    } = request?;
    db::write(db, caller, async |w| {
        let txn = w.txn();
        // A body's id that names nothing in the account is 400 naming the field
        // (contract section 4), so another account's user reads like a missing one.
        if lookups::find_user(txn, caller.account_id, user_id)
            .await?
            .is_none()
        {
            return Err(lookups::unknown("userId", user_id, "user"));
        }
        if grant == Grant::InScope
            && !lookups::users_outside_scope(txn, &caller.managed_department_ids, &[user_id])
                .await?
                .is_empty()
        {
            return Err(ServiceError::denied(format!(
                "userId: user '{user_id}' is outside the departments you manage."
            )));
        }
        let (delta, action) = match direction {
            Direction::Award => (amount, AuditAction::PointsAwarded),
            Direction::Withdraw => (-amount, AuditAction::PointsWithdrawn),
        };
        let (before, total) = change_total(txn, caller.account_id, user_id, delta).await?;
        if total < 0 {
            // Returning the error rolls the whole write back.
            return Err(ServiceError::invalid(format!(
                "amount {amount} is more than the {before} points user '{user_id}' has; a total cannot go below 0."
            )));
        }
        w.record(Change {
            action,
            entity_id: user_id,
            before: Some(json!({ "points": before })),
            after: Some(json!({ "points": total, "amount": amount, "reason": reason })),
        });
        Ok(total)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = "0191a000-0000-7000-8000-000000000206";

    fn reason_of(amount: &str) -> Result<i64, String> {
        PointsMove::parse(USER, amount, None)
            .map(|parsed| parsed.amount)
            .map_err(|invalid| invalid.to_string())
    }

    #[test]
    fn an_amount_is_a_whole_number_from_one_to_the_maximum() {
        assert_eq!(reason_of("1"), Ok(1));
        assert_eq!(reason_of(" 1000000 "), Ok(1_000_000));
        for bad in [
            "0",
            "-5",
            "1.5",
            "ten",
            "1000001",
            "99999999999999999999999",
        ] {
            assert_eq!(
                reason_of(bad).unwrap_err(),
                "amount must be a whole number from 1 to 1000000",
                "{bad}"
            );
        }
        assert_eq!(reason_of("").unwrap_err(), "amount is required");
    }

    #[test]
    fn the_user_id_is_required_and_a_blank_reason_is_none() {
        assert_eq!(
            PointsMove::parse("", "5", None).unwrap_err().to_string(),
            "userId is required"
        );
        assert!(PointsMove::parse("nope", "5", None).is_err());
        let parsed = PointsMove::parse(USER, "5", Some("  ")).unwrap();
        assert_eq!(parsed.reason, None);
        let long = "x".repeat(MAX_REASON_CHARS + 1);
        assert_eq!(
            PointsMove::parse(USER, "5", Some(&long))
                .unwrap_err()
                .to_string(),
            "reason must be at most 1000 characters"
        );
    }
}
