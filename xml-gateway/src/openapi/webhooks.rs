//! Webhook subscribers (webhooks.md sections 2 to 5): iSpring's `/webhook` calls and our list
//! of subscribers.

use super::Resource;
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_text, digit_flag, element, formatted, integer, one_of_texts, optional,
    reference, required, text, whole_list,
};

const TAG: &str = "Webhooks";

const CALLERS: &str = "Account owners and account administrators only; every other role is 403 (events carry the whole account). A name unknown in the caller's account is 404 \"Subscriber not found\".";

const EVENT_TYPES: [&str; 11] = [
    "COURSE_COMPLETED_SUCCESSFULLY",
    "COURSE_ITEM_COMPLETED_SUCCESSFULLY",
    "COURSE_ITEM_STATUS_CHANGED",
    "COURSE_STATUS_CHANGED",
    "LEARNERS_ENROLLED_IN_COURSE",
    "TRAINING_MEETING_ADDED",
    "TRAINING_MEETING_REMOVED",
    "TRAINING_MEETING_UPDATED",
    "TRAINING_SESSION_PARTICIPANTS_ADDED",
    "TRAINING_SESSION_PARTICIPANT_REMOVED",
    "USER_REGISTERED",
];

const NAME_EXAMPLE: &str = "crm";
const URL_EXAMPLE: &str = "https://hooks.example.com/lms";

/// A POST whose body is `schema` with the examples given, answered 200 without a body.
fn write(
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    what: &str,
    schema: &str,
    xml: &str,
    json: Node,
) -> Operation {
    Operation::post(path, TAG, id)
        .describe(summary, &format!("{what} {CALLERS}"))
        .body(
            "The XML root is `request`; JSON may be wrapped in `{\"request\": …}`.",
            vec![
                Media::xml(reference(schema)).example(xml),
                Media::json(reference(schema)).example(json),
            ],
        )
        .empty(200, "Done; the body is empty.")
        .errors(&[403, 404])
}

/// A POST naming only the subscriber.
fn by_name(path: &'static str, id: &'static str, summary: &'static str, what: &str) -> Operation {
    write(
        path,
        id,
        summary,
        what,
        "WebhookSubscriberName",
        "<request><subscriberName>crm</subscriberName></request>",
        object! { "subscriberName" => NAME_EXAMPLE },
    )
}

fn subscriber_name_query() -> Node {
    object! {
        "name" => "subscriberName",
        "in" => "query",
        "required" => true,
        "description" => "The subscriber; missing or empty is 400.",
        "schema" => object! { "type" => "string" },
        "example" => NAME_EXAMPLE,
    }
}

pub(crate) fn resource() -> Resource {
    let settings_xml = "<request><subscriberName>crm</subscriberName><callbackUrl>https://hooks.example.com/lms</callbackUrl><secret>s3cret</secret></request>";
    let settings_json = || {
        object! {
            "subscriberName" => NAME_EXAMPLE,
            "callbackUrl" => URL_EXAMPLE,
            "secret" => "s3cret",
        }
    };
    let operations = vec![
        write(
            "/webhook/register",
            "registerWebhookSubscriber",
            "Register a subscriber",
            "Creates a subscriber: active, unconfirmed, without subscriptions; nothing is sent. A name already registered in the account, or a 51st subscriber, is 400.",
            "WebhookSubscriberSettings",
            settings_xml,
            settings_json(),
        ),
        write(
            "/webhook/settings/change",
            "changeWebhookSubscriberSettings",
            "Change a subscriber's callback and secret",
            "Another callback URL makes the subscriber unconfirmed (its backlog is kept for the new URL once confirmed). `secret` absent or `null` keeps it, empty removes it.",
            "WebhookSubscriberSettings",
            settings_xml,
            settings_json(),
        ),
        by_name(
            "/webhook/code/send",
            "sendWebhookConfirmationCode",
            "Send a confirmation code",
            "Makes a new code (valid 24 hours; earlier codes stop working) and sends it to the callback URL in a CONFIRMATION delivery; answers at once, never waiting for the delivery.",
        ),
        write(
            "/webhook/confirm",
            "confirmWebhookSubscriber",
            "Confirm a subscriber",
            "Confirms the subscriber with the latest code (letter case ignored); its pending events start to flow. A wrong or expired code is 400 naming `code`.",
            "WebhookConfirmation",
            "<request><subscriberName>crm</subscriberName><code>5b0c3f7e-6a86-4d8a-9b1e-2f4c7d9a1e03</code></request>",
            object! {
                "subscriberName" => NAME_EXAMPLE,
                "code" => "5b0c3f7e-6a86-4d8a-9b1e-2f4c7d9a1e03",
            },
        ),
        by_name(
            "/webhook/enable",
            "enableWebhookSubscriber",
            "Enable a subscriber",
            "Delivery resumes, in order, with the events recorded while it was disabled.",
        ),
        by_name(
            "/webhook/disable",
            "disableWebhookSubscriber",
            "Disable a subscriber",
            "A pause: nothing is delivered, events keep being recorded.",
        ),
        by_name(
            "/webhook/remove",
            "removeWebhookSubscriber",
            "Remove a subscriber",
            "Deletes the subscriber with its subscriptions, codes and undelivered events; the name is free again.",
        ),
        write(
            "/webhook/subscribe",
            "subscribeWebhookSubscriber",
            "Subscribe to an event type",
            "Replaces the subscriber's subscription of that type. A filter value is a JSON array of ids written as a string (in JSON also an array); `[]` is no filter; an id that names nothing of the account is 400 naming the parameter and the id.",
            "WebhookSubscribe",
            "<request><subscriberName>crm</subscriberName><subscription><subscriptionType>LEARNERS_ENROLLED_IN_COURSE</subscriptionType><params><param><name>courseIds</name><value>[\"1cf62af4-02c3-11ed-8874-3ebfbdfaeb70\"]</value></param></params></subscription></request>",
            object! {
                "subscriberName" => NAME_EXAMPLE,
                "subscription" => object! {
                    "subscriptionType" => "LEARNERS_ENROLLED_IN_COURSE",
                    "params" => vec![object! {
                        "name" => "courseIds",
                        "value" => "[\"1cf62af4-02c3-11ed-8874-3ebfbdfaeb70\"]",
                    }],
                },
            },
        ),
        write(
            "/webhook/unsubscribe",
            "unsubscribeWebhookSubscriber",
            "Unsubscribe from an event type",
            "Later events of the type are not recorded; those recorded before are still delivered. A type the subscriber is not subscribed to is 404 \"Subscription not found\".",
            "WebhookUnsubscribe",
            "<request><subscriberName>crm</subscriberName><subscriptionType>USER_REGISTERED</subscriptionType></request>",
            object! {
                "subscriberName" => NAME_EXAMPLE,
                "subscriptionType" => "USER_REGISTERED",
            },
        ),
        Operation::get("/webhook/subscription/list", TAG, "listWebhookSubscriptions")
            .describe(
                "A subscriber's subscriptions",
                &format!("Ascending by type; filter values as compact JSON arrays of lower-case ids in strings. {CALLERS}"),
            )
            .query(subscriber_name_query())
            .answer(200, "The subscriptions.", both("WebhookSubscriptionList"))
            .errors(&[403, 404]),
        Operation::get("/webhook/subscriber/info", TAG, "getWebhookSubscriber")
            .describe(
                "A subscriber's state",
                &format!("Its statuses, callback, pending events and latest attempt; never its secret or code. {CALLERS}"),
            )
            .query(subscriber_name_query())
            .answer(200, "The subscriber.", both("WebhookSubscriber"))
            .errors(&[403, 404]),
        Operation::get("/webhook/subscribers", TAG, "listWebhookSubscribers")
            .describe(
                "Every subscriber of the account",
                "Ascending by name, at most 50, each as `/webhook/subscriber/info` shows it. Account owners and account administrators only; every other role is 403.",
            )
            .answer(200, "The subscribers.", both("WebhookSubscriberList"))
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            ("WebhookSubscriberName".into(), name_body()),
            ("WebhookSubscriberSettings".into(), settings_body()),
            ("WebhookConfirmation".into(), confirmation_body()),
            ("WebhookSubscribe".into(), subscribe_body()),
            ("WebhookUnsubscribe".into(), unsubscribe_body()),
            ("WebhookSubscription".into(), subscription()),
            (
                "WebhookSubscriptionList".into(),
                whole_list(
                    "WebhookSubscription",
                    "The subscriptions: XML `<subscription>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            ("WebhookSubscriber".into(), subscriber("response")),
            ("WebhookSubscriberItem".into(), subscriber("subscriber")),
            (
                "WebhookSubscriberList".into(),
                whole_list(
                    "WebhookSubscriberItem",
                    "The subscribers: XML `<subscriber>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
        ],
    }
}

fn name() -> Node {
    bounded_text(
        "The subscriber's name in the account: 1 to 255 characters after trimming, letter case significant.",
        255,
    )
}

fn event_type(description: &str) -> Node {
    one_of_texts(&EVENT_TYPES, description)
}

fn name_body() -> Node {
    element(
        "request",
        "The subscriber.",
        vec![required("subscriberName", name())],
        Others::Ignored,
    )
}

fn settings_body() -> Node {
    element(
        "request",
        "The subscriber's callback and secret.",
        vec![
            required("subscriberName", name()),
            required(
                "callbackUrl",
                bounded_text(
                    "An absolute `http` or `https` URL with a host and no user name or password; loopback, private and link-local addresses are refused unless the core allows them, reserved ones always.",
                    255,
                ),
            ),
            optional(
                "secret",
                bounded_text(
                    "Signs deliveries (`X-Hub-Signature`, `X-Hub-Signature-256`); also spelt `Secret`. Empty: no secret.",
                    255,
                ),
            ),
        ],
        Others::Ignored,
    )
}

fn confirmation_body() -> Node {
    element(
        "request",
        "The code a CONFIRMATION delivery carried.",
        vec![
            required("subscriberName", name()),
            required("code", text("The latest code sent.")),
        ],
        Others::Ignored,
    )
}

fn param(description: &str) -> Node {
    element(
        "param",
        description,
        vec![
            required(
                "name",
                one_of_texts(
                    &["userIds", "courseIds", "courseItemIds"],
                    "A filter the type accepts, once each.",
                ),
            ),
            required(
                "value",
                text(
                    "A JSON array of lower-case ids in a string, ascending, e.g. `[\"1cf62af4-02c3-11ed-8874-3ebfbdfaeb70\"]`.",
                ),
            ),
        ],
        Others::Refused,
    )
}

fn params(description: &str) -> Node {
    object! {
        "type" => "array",
        "description" => description,
        "items" => param("One filter."),
        "xml" => object! { "wrapped" => true },
    }
}

fn subscribe_body() -> Node {
    let subscription = element(
        "subscription",
        "The type and its filters.",
        vec![
            required("subscriptionType", event_type("The event type.")),
            optional(
                "params",
                params("Filters: an event must match every one; at most 10,000 ids each."),
            ),
        ],
        Others::Ignored,
    );
    element(
        "request",
        "A subscription of the subscriber.",
        vec![
            required("subscriberName", name()),
            required("subscription", subscription),
        ],
        Others::Ignored,
    )
}

fn unsubscribe_body() -> Node {
    element(
        "request",
        "The subscription to end.",
        vec![
            required("subscriberName", name()),
            required("subscriptionType", event_type("The event type.")),
        ],
        Others::Ignored,
    )
}

fn subscription() -> Node {
    element(
        "subscription",
        "One subscription.",
        vec![
            required("subscriptionType", event_type("The event type.")),
            required(
                "params",
                params(
                    "Its filters in the order `userIds`, `courseIds`, `courseItemIds`; none is an empty element (`[]`).",
                ),
            ),
        ],
        Others::Refused,
    )
}

fn subscriber(element_name: &str) -> Node {
    element(
        element_name,
        "A subscriber's state, its elements in this order (XML: directly under `<response>` for one subscriber).",
        vec![
            required(
                "subscriberStatus",
                one_of_texts(&["ACTIVE", "INACTIVE"], "`INACTIVE` after disable."),
            ),
            required(
                "confirmationStatus",
                one_of_texts(
                    &["CONFIRMED", "UNCONFIRMED"],
                    "`UNCONFIRMED` until a code is confirmed, and again after the URL changes or delivery gives up.",
                ),
            ),
            required(
                "notificationProcessStatus",
                one_of_texts(
                    &["ACTIVE", "SUSPENDED", "INACTIVE"],
                    "`INACTIVE` when disabled or unconfirmed; `SUSPENDED` when the last attempt of its oldest undelivered delivery failed.",
                ),
            ),
            required("subscriberName", name()),
            required("callbackUrl", text("Where deliveries go.")),
            required("hasSecret", digit_flag("1 when deliveries are signed.")),
            required(
                "pendingEvents",
                integer("Events recorded for it and not yet acknowledged."),
            ),
            optional(
                "lastAttemptDate",
                formatted(
                    "date-time",
                    "The latest attempt of any delivery, UTC with a numeric offset; absent before the first.",
                ),
            ),
            optional(
                "lastAttemptResult",
                text(
                    "The answer's status (`200`, `302`), or `timeout`, `unreachable` or `refused`.",
                ),
            ),
            optional(
                "lastError",
                bounded_text(
                    "Absent after a 2xx; else the start of the answer body or a sentence.",
                    256,
                ),
            ),
        ],
        Others::Refused,
    )
}
