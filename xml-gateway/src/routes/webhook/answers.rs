//! The bodies of the `/webhook` GETs (section 5): subscriber info with its fields directly
//! under `<response>` (iSpring's schema has no entity element) or as a bare JSON object,
//! and the two lists.

use lms_proto::v1 as pb;
use serde::Serialize;

use crate::representation::{Document, json_text};
use crate::xml::writer::XmlWriter;

/// One subscriber's fields, in section 5's order.
fn write_subscriber(xml: &mut XmlWriter, s: &pb::WebhookSubscriber) {
    xml.text_element("subscriberStatus", &s.subscriber_status)
        .text_element("confirmationStatus", &s.confirmation_status)
        .text_element("notificationProcessStatus", &s.notification_process_status)
        .text_element("subscriberName", &s.subscriber_name)
        .text_element("callbackUrl", &s.callback_url)
        .text_element("hasSecret", if s.has_secret { "1" } else { "0" })
        .text_element("pendingEvents", &s.pending_events.to_string());
    if let Some(date) = &s.last_attempt_date {
        xml.text_element("lastAttemptDate", date);
    }
    if let Some(result) = &s.last_attempt_result {
        xml.text_element("lastAttemptResult", result);
    }
    if let Some(error) = &s.last_error {
        xml.text_element("lastError", error);
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubscriberJson<'a> {
    subscriber_status: &'a str,
    confirmation_status: &'a str,
    notification_process_status: &'a str,
    subscriber_name: &'a str,
    callback_url: &'a str,
    has_secret: u8,
    pending_events: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_attempt_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_attempt_result: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_error: Option<&'a str>,
}

fn subscriber_json(s: &pb::WebhookSubscriber) -> SubscriberJson<'_> {
    SubscriberJson {
        subscriber_status: &s.subscriber_status,
        confirmation_status: &s.confirmation_status,
        notification_process_status: &s.notification_process_status,
        subscriber_name: &s.subscriber_name,
        callback_url: &s.callback_url,
        has_secret: u8::from(s.has_secret),
        pending_events: s.pending_events,
        last_attempt_date: s.last_attempt_date.as_deref(),
        last_attempt_result: s.last_attempt_result.as_deref(),
        last_error: s.last_error.as_deref(),
    }
}

/// `GET /webhook/subscriber/info`.
pub(crate) struct Subscriber(pub(crate) pb::WebhookSubscriber);

impl Document for Subscriber {
    fn write_xml(&self, xml: &mut XmlWriter) {
        write_subscriber(xml, &self.0);
    }

    fn to_json(&self) -> String {
        json_text(&subscriber_json(&self.0))
    }
}

/// `GET /webhook/subscribers`: `<subscriber>` elements, or a top-level array.
pub(crate) struct Subscribers(pub(crate) Vec<pb::WebhookSubscriber>);

impl Document for Subscribers {
    fn write_xml(&self, xml: &mut XmlWriter) {
        for subscriber in &self.0 {
            xml.open("subscriber");
            write_subscriber(xml, subscriber);
            xml.close("subscriber");
        }
    }

    fn to_json(&self) -> String {
        json_text(&self.0.iter().map(subscriber_json).collect::<Vec<_>>())
    }
}

/// A filter's ids as a compact JSON array in a string (iSpring's form).
fn value(ids: &[String]) -> String {
    json_text(ids)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ParamJson<'a> {
    name: &'a str,
    value: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubscriptionJson<'a> {
    subscription_type: &'a str,
    params: Vec<ParamJson<'a>>,
}

/// `GET /webhook/subscription/list`.
pub(crate) struct Subscriptions(pub(crate) Vec<pb::WebhookSubscription>);

impl Document for Subscriptions {
    fn write_xml(&self, xml: &mut XmlWriter) {
        for subscription in &self.0 {
            xml.open("subscription")
                .text_element("subscriptionType", &subscription.subscription_type);
            if subscription.params.is_empty() {
                xml.empty("params");
            } else {
                xml.open("params");
                for param in &subscription.params {
                    xml.open("param")
                        .text_element("name", &param.name)
                        .text_element("value", &value(&param.ids))
                        .close("param");
                }
                xml.close("params");
            }
            xml.close("subscription");
        }
    }

    fn to_json(&self) -> String {
        json_text(
            &self
                .0
                .iter()
                .map(|s| SubscriptionJson {
                    subscription_type: &s.subscription_type,
                    params: s
                        .params
                        .iter()
                        .map(|p| ParamJson {
                            name: &p.name,
                            value: value(&p.ids),
                        })
                        .collect(),
                })
                .collect::<Vec<_>>(),
        )
    }
}
