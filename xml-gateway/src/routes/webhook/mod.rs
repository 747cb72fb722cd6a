//! `/webhook/*` (`docs/spec/webhooks.md`, sections 2 to 5): iSpring's subscriber API, each
//! route one `lms.v1.WebhookService` call. Bodies are read here (XML or JSON, `Secret` as
//! another spelling of `secret`, filter values as iSpring's JSON-array strings); every rule
//! about their values is the core's.

mod answers;

use axum::extract::{FromRequestParts, State};
use axum::http::{StatusCode, request::Parts};
use lms_proto::v1 as pb;
use serde_json::Value;

use crate::body::Body;
use crate::clip::clip;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::Answer;
use crate::routes::{NoQuery, unknown_query_parameter};
use crate::xml::{Element, FromXml, XmlError};

use self::answers::{Subscriber, Subscribers, Subscriptions};

/// `secret`, also spelt `Secret` (iSpring's help pages, Pipedream); both at once is refused.
fn xml_secret(root: &Element) -> Result<Option<String>, XmlError> {
    match (root.optional_text("secret")?, root.optional_text("Secret")?) {
        (Some(_), Some(_)) => Err(XmlError::Duplicate("secret".into())),
        (secret, other) => Ok(secret.or(other)),
    }
}

fn json_secret(object: &JsonObject<'_>) -> Result<Option<String>, JsonError> {
    match (
        object.optional_text("secret")?,
        object.optional_text("Secret")?,
    ) {
        (Some(_), Some(_)) => Err(JsonError::Duplicate("secret".into())),
        (secret, other) => Ok(secret.or(other)),
    }
}

/// `subscriberName`, `callbackUrl` and the secret: register and settings/change.
#[derive(Debug, Default)]
pub(crate) struct SubscriberFields {
    name: Option<String>,
    callback_url: Option<String>,
    secret: Option<String>,
    code: Option<String>,
}

impl FromXml for SubscriberFields {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            name: root.optional_text("subscriberName")?,
            callback_url: root.optional_text("callbackUrl")?,
            secret: xml_secret(root)?,
            code: root.optional_text("code")?,
        })
    }
}

impl FromJson for SubscriberFields {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            name: object.optional_text("subscriberName")?,
            callback_url: object.optional_text("callbackUrl")?,
            secret: json_secret(object)?,
            code: object.optional_text("code")?,
        })
    }
}

/// A filter parameter as sent: its name and its ids.
#[derive(Debug)]
struct Param {
    name: String,
    ids: Vec<String>,
}

/// `subscribe`'s body.
#[derive(Debug, Default)]
pub(crate) struct SubscribeFields {
    name: Option<String>,
    subscription_type: Option<String>,
    params: Vec<Param>,
}

fn bad_params(problem: impl Into<String>) -> String {
    format!("params: {}", problem.into())
}

/// A parameter's `value`: a JSON array of id strings written as a string (iSpring's form).
fn ids_of_text(name: &str, text: &str) -> Result<Vec<String>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => ids_of_array(name, &items),
        _ => Err(bad_params(format!(
            "the value of {} must be a JSON array of id strings, e.g. [\"id\"]",
            clip(name)
        ))),
    }
}

fn ids_of_array(name: &str, items: &[Value]) -> Result<Vec<String>, String> {
    items
        .iter()
        .map(|item| match item {
            Value::String(id) => Ok(id.clone()),
            _ => Err(bad_params(format!(
                "the value of {} must hold id strings only",
                clip(name)
            ))),
        })
        .collect()
}

impl FromXml for SubscribeFields {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        let mut fields = Self {
            name: root.optional_text("subscriberName")?,
            ..Self::default()
        };
        let Some(subscription) = root.single_child("subscription")? else {
            return Ok(fields);
        };
        fields.subscription_type = subscription.optional_text("subscriptionType")?;
        if let Some(params) = subscription.single_child("params")? {
            for param in params.children_named("param") {
                let name = param.optional_text("name")?.unwrap_or_default();
                let value = param.optional_text("value")?.unwrap_or_default();
                let ids = ids_of_text(&name, &value).map_err(XmlError::Invalid)?;
                fields.params.push(Param { name, ids });
            }
        }
        Ok(fields)
    }
}

impl FromJson for SubscribeFields {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let mut fields = Self {
            name: object.optional_text("subscriberName")?,
            ..Self::default()
        };
        let subscription = match object.value("subscription") {
            None | Some(Value::Null) => return Ok(fields),
            Some(Value::Object(subscription)) => subscription,
            Some(_) => return Err(JsonError::NotFields("subscription".into())),
        };
        fields.subscription_type = match subscription.get("subscriptionType") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.trim().to_owned()),
            Some(_) => return Err(JsonError::NotText("subscriptionType".into())),
        };
        match subscription.get("params") {
            None | Some(Value::Null) => {}
            Some(Value::Array(params)) => {
                for param in params {
                    let Value::Object(param) = param else {
                        return Err(JsonError::NotFields("params".into()));
                    };
                    let name = match param.get("name") {
                        Some(Value::String(name)) => name.trim().to_owned(),
                        None | Some(Value::Null) => String::new(),
                        Some(_) => return Err(JsonError::NotText("name".into())),
                    };
                    let ids = match param.get("value") {
                        None | Some(Value::Null) => Vec::new(),
                        Some(Value::String(text)) => {
                            ids_of_text(&name, text).map_err(JsonError::Invalid)?
                        }
                        Some(Value::Array(items)) => {
                            ids_of_array(&name, items).map_err(JsonError::Invalid)?
                        }
                        Some(_) => {
                            return Err(JsonError::Invalid(bad_params(format!(
                                "the value of {} must be a JSON array of id strings",
                                clip(&name)
                            ))));
                        }
                    };
                    fields.params.push(Param { name, ids });
                }
            }
            Some(_) => return Err(JsonError::NotFields("params".into())),
        }
        Ok(fields)
    }
}

/// `unsubscribe`'s body: the name and a type.
#[derive(Debug, Default)]
pub(crate) struct UnsubscribeFields {
    name: Option<String>,
    subscription_type: Option<String>,
}

impl FromXml for UnsubscribeFields {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            name: root.optional_text("subscriberName")?,
            subscription_type: root.optional_text("subscriptionType")?,
        })
    }
}

impl FromJson for UnsubscribeFields {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            name: object.optional_text("subscriberName")?,
            subscription_type: object.optional_text("subscriptionType")?,
        })
    }
}

/// `?subscriberName=`: the one query parameter of the GETs; any other is a 400 naming it.
/// Missing or empty goes to the core as empty, which names it after checking the caller.
#[derive(Debug)]
pub(crate) struct NameQuery(String);

impl<S: Send + Sync> FromRequestParts<S> for NameQuery {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let mut name = None;
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            if key != "subscriberName" {
                return Err(unknown_query_parameter(&key));
            }
            if name.replace(value.into_owned()).is_some() {
                return Err(GatewayError::BadRequest(
                    "Query parameter \"subscriberName\" is given twice.".to_owned(),
                ));
            }
        }
        Ok(Self(name.unwrap_or_default()))
    }
}

pub(crate) async fn register(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscriberFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::RegisterSubscriberRequest {
        subscriber_name: fields.name.unwrap_or_default(),
        callback_url: fields.callback_url.unwrap_or_default(),
        secret: fields.secret,
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.register_subscriber(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn change_settings(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscriberFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::ChangeSubscriberSettingsRequest {
        subscriber_name: fields.name.unwrap_or_default(),
        callback_url: fields.callback_url.unwrap_or_default(),
        secret: fields.secret,
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.change_subscriber_settings(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn send_code(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscriberFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::SendConfirmationCodeRequest {
        subscriber_name: fields.name.unwrap_or_default(),
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.send_confirmation_code(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn confirm(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscriberFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::ConfirmSubscriberRequest {
        subscriber_name: fields.name.unwrap_or_default(),
        code: fields.code.unwrap_or_default(),
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.confirm_subscriber(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn enable(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscriberFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::EnableSubscriberRequest {
        subscriber_name: fields.name.unwrap_or_default(),
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.enable_subscriber(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn disable(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscriberFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::DisableSubscriberRequest {
        subscriber_name: fields.name.unwrap_or_default(),
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.disable_subscriber(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn remove(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscriberFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::RemoveSubscriberRequest {
        subscriber_name: fields.name.unwrap_or_default(),
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.remove_subscriber(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn subscribe(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<SubscribeFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::SubscribeRequest {
        subscriber_name: fields.name.unwrap_or_default(),
        subscription_type: fields.subscription_type.unwrap_or_default(),
        params: fields
            .params
            .into_iter()
            .map(|param| pb::WebhookParameter {
                name: param.name,
                ids: param.ids,
            })
            .collect(),
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.subscribe(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn unsubscribe(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<UnsubscribeFields>,
) -> Result<StatusCode, GatewayError> {
    let message = pb::UnsubscribeRequest {
        subscriber_name: fields.name.unwrap_or_default(),
        subscription_type: fields.subscription_type.unwrap_or_default(),
    };
    core.webhooks(&caller, message, |mut client, request| async move {
        client.unsubscribe(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

pub(crate) async fn subscription_list(
    State(core): State<CoreClient>,
    caller: Caller,
    NameQuery(name): NameQuery,
) -> Result<Answer, GatewayError> {
    let message = pb::ListSubscriptionsRequest {
        subscriber_name: name,
    };
    let answer = core
        .webhooks(&caller, message, |mut client, request| async move {
            client.list_subscriptions(request).await
        })
        .await?;
    Ok(Answer::ok(Subscriptions(answer.subscriptions)))
}

pub(crate) async fn subscriber_info(
    State(core): State<CoreClient>,
    caller: Caller,
    NameQuery(name): NameQuery,
) -> Result<Answer, GatewayError> {
    let message = pb::GetSubscriberInfoRequest {
        subscriber_name: name,
    };
    let answer = core
        .webhooks(&caller, message, |mut client, request| async move {
            client.get_subscriber_info(request).await
        })
        .await?;
    let subscriber = answer.subscriber.ok_or_else(|| {
        GatewayError::Internal(anyhow::anyhow!("the core answered no subscriber"))
    })?;
    Ok(Answer::ok(Subscriber(subscriber)))
}

pub(crate) async fn subscribers(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
) -> Result<Answer, GatewayError> {
    let answer = core
        .webhooks(
            &caller,
            pb::ListSubscribersRequest {},
            |mut client, request| async move { client.list_subscribers(request).await },
        )
        .await?;
    Ok(Answer::ok(Subscribers(answer.subscribers)))
}
