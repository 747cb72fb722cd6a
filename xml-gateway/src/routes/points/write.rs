//! `POST /gamification/points/award` and `POST /gamification/points/withdraw` (neighbours.md
//! 8.1, 8.2): 200 with an empty body. `amount` goes to the core as written, so `10`, `"10"`
//! and `<amount>10</amount>` read alike and the core alone says what an amount may be.

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{AwardPointsRequest, WithdrawPointsRequest};

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::routes::NoQuery;
use crate::xml::{Element, FromXml, XmlError};

/// `userId`, `amount`, `reason`; missing required ones go to the core as empty, which names
/// them.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct PointsFields {
    pub(crate) user_id: String,
    pub(crate) amount: String,
    pub(crate) reason: Option<String>,
}

impl PointsFields {
    fn read_xml(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            user_id: root.optional_text("userId")?.unwrap_or_default(),
            amount: root.optional_text("amount")?.unwrap_or_default(),
            reason: root.optional_text("reason")?,
        })
    }

    fn read_json(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            user_id: object.optional_text("userId")?.unwrap_or_default(),
            amount: object.optional_text("amount")?.unwrap_or_default(),
            reason: object.optional_text("reason")?,
        })
    }
}

/// The award body: root `<awardGamificationPoints>` as documented, or `<request>`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Award(pub(crate) PointsFields);

impl FromXml for Award {
    const ROOT: &'static str = "awardGamificationPoints";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        PointsFields::read_xml(root).map(Self)
    }
}

impl FromJson for Award {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        PointsFields::read_json(object).map(Self)
    }
}

/// The withdraw body: root `<withdrawGamificationPoints>` as documented, or `<request>`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Withdraw(pub(crate) PointsFields);

impl FromXml for Withdraw {
    const ROOT: &'static str = "withdrawGamificationPoints";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        PointsFields::read_xml(root).map(Self)
    }
}

impl FromJson for Withdraw {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        PointsFields::read_json(object).map(Self)
    }
}

#[tracing::instrument(skip_all)]
pub(crate) async fn award_points(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(Award(fields)): Body<Award>,
) -> Result<StatusCode, GatewayError> {
    let message = AwardPointsRequest {
        user_id: fields.user_id,
        amount: fields.amount,
        reason: fields.reason,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.award_points(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

#[tracing::instrument(skip_all)]
pub(crate) async fn withdraw_points(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(Withdraw(fields)): Body<Withdraw>,
) -> Result<StatusCode, GatewayError> {
    let message = WithdrawPointsRequest {
        user_id: fields.user_id,
        amount: fields.amount,
        reason: fields.reason,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.withdraw_points(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_json;
    use crate::xml::reader::parse_document;

    fn xml<T: FromXml>(body: &str) -> Result<T, XmlError> {
        T::from_root(&parse_document(body.as_bytes(), T::ROOT)?)
    }

    fn fields(user_id: &str, amount: &str, reason: Option<&str>) -> PointsFields {
        PointsFields {
            user_id: user_id.into(),
            amount: amount.into(),
            reason: reason.map(Into::into),
        }
    }

    #[test]
    fn the_documented_root_and_request_are_both_read() {
        let body = "<awardGamificationPoints><userId>u</userId><amount> 10 </amount>\
                    <reason>Quiz</reason></awardGamificationPoints>";
        assert_eq!(
            xml::<Award>(body).unwrap().0,
            fields("u", "10", Some("Quiz"))
        );
        let body = "<request><userId>u</userId><amount>5</amount></request>";
        assert_eq!(xml::<Withdraw>(body).unwrap().0, fields("u", "5", None));
        assert!(matches!(
            xml::<Award>("<withdrawGamificationPoints/>").unwrap_err(),
            XmlError::WrongRoot { .. }
        ));
        assert_eq!(
            xml::<Award>("<request><amount>1</amount><amount>2</amount></request>").unwrap_err(),
            XmlError::Duplicate("amount".into())
        );
    }

    #[test]
    fn json_numbers_and_strings_read_alike_and_missing_fields_are_empty() {
        let number: Award = parse_json(br#"{"userId":"u","amount":10,"reason":null}"#).unwrap();
        let text: Award = parse_json(br#"{"userId":"u","amount":"10"}"#).unwrap();
        assert_eq!(number, text);
        assert_eq!(number.0, fields("u", "10", None));
        let empty: Withdraw = parse_json(b"{}").unwrap();
        assert_eq!(empty.0, PointsFields::default());
    }
}
