//! Change a user's points total: award or withdraw points (neighbours.md section 8, open
//! question 20), or add a signed number of them (`AddPoints` of `lms.v1.DirectoryService`).
//!
//! An award or withdrawal moves by `amount`, a whole number from 1 to [`MAX_AMOUNT`]; the
//! direction is the operation's, never the sign's, and a withdrawal never takes a total below
//! 0: it is refused (400) and nothing changes. An addition is signed and may take the total
//! below 0. `reason` is optional, kept in the audit record only. A scoped caller (department
//! administrator, custom role) changes only the totals of users of its subtrees.

use sea_orm::{
    ActiveModelTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, Set,
    prelude::Uuid,
};
use serde_json::json;

use crate::{
    access::{Caller, Grant, Operation},
    domain::{
        Invalid, Reason,
        ids::{ResourceRef, parse_field_id},
    },
    entities::user_points,
    error::{ServiceError, ServiceResult},
    service::{Parsed, lookups},
    service::{
        audit::{AuditAction, Change},
        write,
    },
};

/// The most points one call may award or withdraw.
pub const MAX_AMOUNT: u64 = 1_000_000;
/// The longest `reason` kept.
pub const MAX_REASON_CHARS: usize = 1_000;

/// How a total moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Up by the amount.
    Award,
    /// Down by the amount; refused when the total would go below 0.
    Withdraw,
    /// By the signed amount, to any total.
    Add,
}

/// Whose total changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointsUser {
    /// The user the call is about: NOT_FOUND when it names none (`AddPoints`).
    Addressed(ResourceRef),
    /// A user named by the request's `userId` field: INVALID_ARGUMENT naming the field when
    /// it names none (a body's id, contract section 4).
    Field(Uuid),
}

/// One change of a total, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointsMove {
    pub user: PointsUser,
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
            user: PointsUser::Field(user_id),
            amount: i64::try_from(amount).expect("at most MAX_AMOUNT"),
            reason,
        })
    }
}

/// Moves the user's total in `direction`; the new total. The account write lock serializes
/// concurrent changes, so none is lost.
pub async fn move_points(
    db: &DatabaseConnection,
    caller: &Caller,
    direction: Direction,
    request: Parsed<PointsMove>,
) -> ServiceResult<i64> {
    let grant = caller.grant(Operation::AwardPoints)?;
    let PointsMove {
        user,
        amount,
        reason,
    } = request?;
    let user_id = match &user {
        PointsUser::Addressed(user) => user.id("User")?,
        PointsUser::Field(id) => *id,
    };
    write(db, caller, async |w| {
        let txn = w.txn();
        if lookups::find_user(txn, caller.account_id, user_id)
            .await?
            .is_none()
        {
            return Err(match &user {
                PointsUser::Addressed(user) => user.not_found("User").into(),
                PointsUser::Field(_) => lookups::unknown("userId", user_id, "user"),
            });
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
            Direction::Add => (amount, AuditAction::PointsAdded),
        };
        let (before, total) = change_total(txn, caller.account_id, user_id, delta).await?;
        if direction == Direction::Withdraw && total < 0 {
            // Returning the error rolls the whole write back.
            return Err(ServiceError::invalid(format!(
                "amount {amount} is more than the {before} points user '{user_id}' has; a total cannot go below 0."
            )));
        }
        let after = match direction {
            Direction::Add => json!({ "points": total, "added": amount }),
            _ => json!({ "points": total, "amount": amount, "reason": reason }),
        };
        w.record(Change {
            action,
            entity_id: user_id,
            before: Some(json!({ "points": before })),
            after: Some(after),
        });
        Ok(total)
    })
    .await
}

/// Adds `points` (possibly negative) to the total of `user_id` (a user of `account_id`)
/// inside the caller's write; the totals before and after.
async fn change_total(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    user_id: Uuid,
    points: i64,
) -> ServiceResult<(i64, i64)> {
    let current = user_points::Entity::find_by_id(user_id).one(txn).await?;
    let before = current.as_ref().map_or(0, |row| row.points);
    let total = before.checked_add(points).ok_or_else(|| {
        ServiceError::invalid(format!(
            "points {points} would take the user's total of {before} out of range."
        ))
    })?;
    match current {
        Some(row) => {
            let mut updated: user_points::ActiveModel = row.into();
            updated.points = Set(total);
            updated.update(txn).await?;
        }
        None => {
            user_points::ActiveModel {
                user_id: Set(user_id),
                account_id: Set(account_id),
                points: Set(total),
            }
            .insert(txn)
            .await?;
        }
    }
    Ok((before, total))
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
