//! `lms.v1.WebhookService`: one method per `/webhook` route (`docs/spec/webhooks.md`,
//! section 13). Each parses its message into the service's input and calls the service,
//! which checks the grant before it looks at what the parse found.

use lms_proto::v1::{self as pb, webhook_service_server::WebhookService};
use tonic::{Request, Response, Status};

use super::{SharedState, request::caller};
use crate::{
    domain::{
        Invalid, Reason,
        webhook::{self, EventType},
    },
    entities::webhook_subscriber::Hidden,
    service::{
        Parsed,
        webhooks::{
            subscribers::{
                self, Confirmation, NewSettings, Registration, Subscription, SubscriptionView,
                Unsubscription,
            },
            view::SubscriberView,
        },
    },
};

pub struct WebhookApi {
    state: SharedState,
}

impl WebhookApi {
    pub fn new(state: SharedState) -> Self {
        Self { state }
    }

    fn callback_url(&self, raw: &str) -> Parsed<url::Url> {
        webhook::callback_url(raw, self.state.webhook_allow_private_networks)
    }
}

fn name(raw: &str) -> Parsed<String> {
    webhook::subscriber_name(raw)
}

fn secret(raw: Option<String>) -> Parsed<Option<Hidden>> {
    match raw {
        None => Ok(None),
        Some(raw) => Ok(webhook::secret(&raw)?.map(Hidden)),
    }
}

fn subscriber(view: SubscriberView) -> pb::WebhookSubscriber {
    pb::WebhookSubscriber {
        subscriber_status: view.subscriber_status.into(),
        confirmation_status: view.confirmation_status.into(),
        notification_process_status: view.notification_process_status.into(),
        subscriber_name: view.name,
        callback_url: view.callback_url,
        has_secret: view.has_secret,
        pending_events: view.pending_events,
        last_attempt_date: view.last_attempt_date,
        last_attempt_result: view.last_attempt_result,
        last_error: view.last_error,
    }
}

fn subscription(view: SubscriptionView) -> pb::WebhookSubscription {
    pb::WebhookSubscription {
        subscription_type: view.event_type,
        params: view
            .params
            .into_iter()
            .map(|(name, ids)| pb::WebhookParameter {
                name: name.into(),
                ids: ids.iter().map(ToString::to_string).collect(),
            })
            .collect(),
    }
}

#[tonic::async_trait]
impl WebhookService for WebhookApi {
    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/RegisterSubscriber")]
    async fn register_subscriber(
        &self,
        request: Request<pb::RegisterSubscriberRequest>,
    ) -> Result<Response<pb::RegisterSubscriberResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let message = request.into_inner();
        let input = (|| {
            Ok(Registration {
                name: name(&message.subscriber_name)?,
                callback_url: self.callback_url(&message.callback_url)?,
                secret: secret(message.secret)?,
            })
        })();
        subscribers::register(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::RegisterSubscriberResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/SendConfirmationCode")]
    async fn send_confirmation_code(
        &self,
        request: Request<pb::SendConfirmationCodeRequest>,
    ) -> Result<Response<pb::SendConfirmationCodeResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let input = name(&request.into_inner().subscriber_name);
        subscribers::send_code(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::SendConfirmationCodeResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/ConfirmSubscriber")]
    async fn confirm_subscriber(
        &self,
        request: Request<pb::ConfirmSubscriberRequest>,
    ) -> Result<Response<pb::ConfirmSubscriberResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let message = request.into_inner();
        let input = (|| {
            let name = name(&message.subscriber_name)?;
            if message.code.trim().is_empty() {
                return Err(Invalid::new("code", Reason::Missing));
            }
            Ok(Confirmation {
                name,
                code: Hidden(message.code),
            })
        })();
        subscribers::confirm(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::ConfirmSubscriberResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/EnableSubscriber")]
    async fn enable_subscriber(
        &self,
        request: Request<pb::EnableSubscriberRequest>,
    ) -> Result<Response<pb::EnableSubscriberResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let input = name(&request.into_inner().subscriber_name);
        subscribers::set_active(&self.state.db, &caller, input, true).await?;
        Ok(Response::new(pb::EnableSubscriberResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/DisableSubscriber")]
    async fn disable_subscriber(
        &self,
        request: Request<pb::DisableSubscriberRequest>,
    ) -> Result<Response<pb::DisableSubscriberResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let input = name(&request.into_inner().subscriber_name);
        subscribers::set_active(&self.state.db, &caller, input, false).await?;
        Ok(Response::new(pb::DisableSubscriberResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/RemoveSubscriber")]
    async fn remove_subscriber(
        &self,
        request: Request<pb::RemoveSubscriberRequest>,
    ) -> Result<Response<pb::RemoveSubscriberResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let input = name(&request.into_inner().subscriber_name);
        subscribers::remove(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::RemoveSubscriberResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/ChangeSubscriberSettings")]
    async fn change_subscriber_settings(
        &self,
        request: Request<pb::ChangeSubscriberSettingsRequest>,
    ) -> Result<Response<pb::ChangeSubscriberSettingsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let message = request.into_inner();
        let input = (|| {
            Ok(NewSettings {
                name: name(&message.subscriber_name)?,
                callback_url: self.callback_url(&message.callback_url)?,
                secret: match message.secret {
                    None => None,
                    Some(raw) => Some(webhook::secret(&raw)?.map(Hidden)),
                },
            })
        })();
        subscribers::change_settings(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::ChangeSubscriberSettingsResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/Subscribe")]
    async fn subscribe(
        &self,
        request: Request<pb::SubscribeRequest>,
    ) -> Result<Response<pb::SubscribeResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let message = request.into_inner();
        let input = (|| {
            let name = name(&message.subscriber_name)?;
            if message.subscription_type.trim().is_empty() {
                return Err(Invalid::new("subscriptionType", Reason::Missing));
            }
            let event_type = EventType::parse(message.subscription_type.trim())?;
            let params = message
                .params
                .iter()
                .map(|param| {
                    Ok((
                        param.name.clone(),
                        webhook::filter_ids(&param.name, &param.ids)?,
                    ))
                })
                .collect::<Result<Vec<_>, Invalid>>()?;
            Ok(Subscription {
                name,
                event_type,
                params,
            })
        })();
        subscribers::subscribe(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::SubscribeResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/Unsubscribe")]
    async fn unsubscribe(
        &self,
        request: Request<pb::UnsubscribeRequest>,
    ) -> Result<Response<pb::UnsubscribeResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let message = request.into_inner();
        let input = (|| {
            let name = name(&message.subscriber_name)?;
            if message.subscription_type.trim().is_empty() {
                return Err(Invalid::new("subscriptionType", Reason::Missing));
            }
            Ok(Unsubscription {
                name,
                event_type: EventType::parse(message.subscription_type.trim())?,
            })
        })();
        subscribers::unsubscribe(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::UnsubscribeResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/ListSubscriptions")]
    async fn list_subscriptions(
        &self,
        request: Request<pb::ListSubscriptionsRequest>,
    ) -> Result<Response<pb::ListSubscriptionsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let input = name(&request.into_inner().subscriber_name);
        let views = subscribers::list_subscriptions(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::ListSubscriptionsResponse {
            subscriptions: views.into_iter().map(subscription).collect(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/GetSubscriberInfo")]
    async fn get_subscriber_info(
        &self,
        request: Request<pb::GetSubscriberInfoRequest>,
    ) -> Result<Response<pb::GetSubscriberInfoResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let input = name(&request.into_inner().subscriber_name);
        let view = subscribers::info(&self.state.db, &caller, input).await?;
        Ok(Response::new(pb::GetSubscriberInfoResponse {
            subscriber: Some(subscriber(view)),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.WebhookService/ListSubscribers")]
    async fn list_subscribers(
        &self,
        request: Request<pb::ListSubscribersRequest>,
    ) -> Result<Response<pb::ListSubscribersResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let views = subscribers::list_subscribers(&self.state.db, &caller).await?;
        Ok(Response::new(pb::ListSubscribersResponse {
            subscribers: views.into_iter().map(subscriber).collect(),
        }))
    }
}
