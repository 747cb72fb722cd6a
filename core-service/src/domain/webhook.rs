//! Webhook values (`docs/spec/webhooks.md`): subscriber names, secrets, callback URLs with
//! the address categories that deliveries refuse (section 10), event types and their
//! filters (section 7).

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr},
};

use uuid::Uuid;

use super::{Invalid, Reason, ids::clip};

/// Longest subscriber name, callback URL and secret.
pub const MAX_TEXT: usize = 255;
/// Most ids in one filter.
pub const MAX_FILTER_IDS: usize = 10_000;

/// `subscriberName`: trimmed, 1 to 255 characters, no control characters; compared exactly.
pub fn subscriber_name(raw: &str) -> Result<String, Invalid> {
    const FIELD: &str = "subscriberName";
    let name = raw.trim();
    if name.is_empty() {
        return Err(Invalid::new(FIELD, Reason::Missing));
    }
    if name.chars().count() > MAX_TEXT {
        return Err(Invalid::new(FIELD, Reason::TooLong { max: MAX_TEXT }));
    }
    if name.chars().any(char::is_control) {
        return Err(Invalid::new(FIELD, Reason::ControlCharacters));
    }
    Ok(name.to_owned())
}

/// `secret`: at most 255 characters; empty means none. Never echoed.
pub fn secret(raw: &str) -> Result<Option<String>, Invalid> {
    if raw.chars().count() > MAX_TEXT {
        return Err(Invalid::new("secret", Reason::TooLong { max: MAX_TEXT }));
    }
    Ok((!raw.is_empty()).then(|| raw.to_owned()))
}

/// Where an address falls among those deliveries refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressCategory {
    Loopback,
    Private,
    LinkLocal,
    /// Never allowed, whatever the settings.
    Reserved,
}

impl AddressCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::Reserved => "reserved",
        }
    }

    /// The category of `ip`, `None` for a public address. An IPv4-mapped IPv6 address is
    /// judged as its IPv4 address.
    pub fn of(ip: IpAddr) -> Option<Self> {
        match ip {
            IpAddr::V4(v4) => Self::of_v4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self::of_v4(v4),
                None => Self::of_v6(v6),
            },
        }
    }

    fn of_v4(ip: Ipv4Addr) -> Option<Self> {
        let [a, b, ..] = ip.octets();
        Some(match (a, b) {
            (0, _) | (224..=255, _) => Self::Reserved,
            (127, _) => Self::Loopback,
            (10, _) | (192, 168) => Self::Private,
            (172, 16..=31) | (100, 64..=127) => Self::Private,
            (169, 254) => Self::LinkLocal,
            _ => return None,
        })
    }

    fn of_v6(ip: Ipv6Addr) -> Option<Self> {
        let first = ip.segments()[0];
        Some(if ip.is_unspecified() || first & 0xff00 == 0xff00 {
            Self::Reserved
        } else if ip.is_loopback() {
            Self::Loopback
        } else if first & 0xfe00 == 0xfc00 {
            Self::Private
        } else if first & 0xffc0 == 0xfe80 {
            Self::LinkLocal
        } else {
            return None;
        })
    }

    /// Whether deliveries may reach this category: reserved never; the others when
    /// private networks are allowed.
    pub fn allowed(self, allow_private_networks: bool) -> bool {
        self != Self::Reserved && allow_private_networks
    }
}

impl fmt::Display for AddressCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a host name is one of the `localhost` names, which are loopback by definition.
pub fn is_localhost_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// A refused address as a sentence: "10.1.2.3 is a private address".
pub fn refusal(host: &str, category: AddressCategory) -> String {
    format!("{host} is a {category} address; such callback addresses are not allowed")
}

/// `callbackUrl`: an absolute `http` or `https` URL with a host, no user name or password,
/// at most 255 characters, parsed by the WHATWG rules. IP-literal hosts and the
/// `localhost` names are judged here; other names are judged at each attempt.
pub fn callback_url(raw: &str, allow_private_networks: bool) -> Result<url::Url, Invalid> {
    const FIELD: &str = "callbackUrl";
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(Invalid::new(FIELD, Reason::Missing));
    }
    if raw.chars().count() > MAX_TEXT {
        return Err(Invalid::new(FIELD, Reason::TooLong { max: MAX_TEXT }));
    }
    let not_http = || {
        Invalid::new(
            FIELD,
            Reason::NotAnHttpUrl {
                raw: raw.to_owned(),
            },
        )
    };
    let mut url = url::Url::parse(raw).map_err(|_| not_http())?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(not_http());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Invalid::new(
            FIELD,
            Reason::Rule("must not hold a user name or password".into()),
        ));
    }
    url.set_fragment(None);
    if url.as_str().chars().count() > MAX_TEXT {
        return Err(Invalid::new(FIELD, Reason::TooLong { max: MAX_TEXT }));
    }
    let judged = match url.host() {
        Some(url::Host::Ipv4(ip)) => {
            AddressCategory::of(IpAddr::V4(ip)).map(|c| (ip.to_string(), c))
        }
        Some(url::Host::Ipv6(ip)) => {
            AddressCategory::of(IpAddr::V6(ip)).map(|c| (ip.to_string(), c))
        }
        Some(url::Host::Domain(name)) => {
            is_localhost_name(name).then(|| (name.to_owned(), AddressCategory::Loopback))
        }
        None => None,
    };
    if let Some((host, category)) = judged
        && !category.allowed(allow_private_networks)
    {
        return Err(Invalid::new(FIELD, Reason::Rule(refusal(&host, category))));
    }
    Ok(url)
}

/// Every event type a subscription may name (section 7), in ascending order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    CourseCompletedSuccessfully,
    CourseItemCompletedSuccessfully,
    CourseItemStatusChanged,
    CourseStatusChanged,
    LearnersEnrolledInCourse,
    TrainingMeetingAdded,
    TrainingMeetingRemoved,
    TrainingMeetingUpdated,
    TrainingSessionParticipantsAdded,
    TrainingSessionParticipantRemoved,
    UserRegistered,
}

/// A filter of a subscription, in the order answers list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Filter {
    UserIds,
    CourseIds,
    CourseItemIds,
}

impl Filter {
    pub const ALL: [Filter; 3] = [Filter::UserIds, Filter::CourseIds, Filter::CourseItemIds];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::UserIds => "userIds",
            Self::CourseIds => "courseIds",
            Self::CourseItemIds => "courseItemIds",
        }
    }
}

impl EventType {
    pub const ALL: [EventType; 11] = [
        EventType::CourseCompletedSuccessfully,
        EventType::CourseItemCompletedSuccessfully,
        EventType::CourseItemStatusChanged,
        EventType::CourseStatusChanged,
        EventType::LearnersEnrolledInCourse,
        EventType::TrainingMeetingAdded,
        EventType::TrainingMeetingRemoved,
        EventType::TrainingMeetingUpdated,
        EventType::TrainingSessionParticipantsAdded,
        EventType::TrainingSessionParticipantRemoved,
        EventType::UserRegistered,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::CourseCompletedSuccessfully => "COURSE_COMPLETED_SUCCESSFULLY",
            Self::CourseItemCompletedSuccessfully => "COURSE_ITEM_COMPLETED_SUCCESSFULLY",
            Self::CourseItemStatusChanged => "COURSE_ITEM_STATUS_CHANGED",
            Self::CourseStatusChanged => "COURSE_STATUS_CHANGED",
            Self::LearnersEnrolledInCourse => "LEARNERS_ENROLLED_IN_COURSE",
            Self::TrainingMeetingAdded => "TRAINING_MEETING_ADDED",
            Self::TrainingMeetingRemoved => "TRAINING_MEETING_REMOVED",
            Self::TrainingMeetingUpdated => "TRAINING_MEETING_UPDATED",
            Self::TrainingSessionParticipantsAdded => "TRAINING_SESSION_PARTICIPANTS_ADDED",
            Self::TrainingSessionParticipantRemoved => "TRAINING_SESSION_PARTICIPANT_REMOVED",
            Self::UserRegistered => "USER_REGISTERED",
        }
    }

    /// The type named `raw` (exactly), or 400 naming `subscriptionType` and the value.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == raw)
            .ok_or_else(|| {
                Invalid::new(
                    "subscriptionType",
                    Reason::Rule(format!("'{}' is not a subscription type", clip(raw))),
                )
            })
    }

    /// The filters a subscription of this type accepts.
    pub fn filters(self) -> &'static [Filter] {
        match self {
            Self::LearnersEnrolledInCourse
            | Self::CourseStatusChanged
            | Self::CourseCompletedSuccessfully => &[Filter::UserIds, Filter::CourseIds],
            Self::CourseItemCompletedSuccessfully | Self::CourseItemStatusChanged => {
                &[Filter::UserIds, Filter::CourseItemIds]
            }
            Self::TrainingSessionParticipantsAdded | Self::TrainingSessionParticipantRemoved => {
                &[Filter::UserIds]
            }
            Self::TrainingMeetingAdded
            | Self::TrainingMeetingRemoved
            | Self::TrainingMeetingUpdated
            | Self::UserRegistered => &[],
        }
    }
}

/// The ids of one filter parameter as given (`value`): a JSON array of id strings, at most
/// [`MAX_FILTER_IDS`], each a UUID; ascending and without repeats once parsed. Whether
/// they name rows of the account is the service's question.
pub fn filter_ids(name: &str, ids: &[String]) -> Result<Vec<Uuid>, Invalid> {
    if ids.len() > MAX_FILTER_IDS {
        return Err(Invalid::new(
            "params",
            Reason::Rule(format!(
                "{} must hold at most {MAX_FILTER_IDS} ids; {} were given",
                clip(name),
                ids.len()
            )),
        ));
    }
    let mut parsed = ids
        .iter()
        .map(|raw| {
            Uuid::parse_str(raw.trim()).map_err(|_| {
                Invalid::new(
                    "params",
                    Reason::Rule(format!(
                        "{}: '{}' is not a valid identifier",
                        clip(name),
                        clip(raw)
                    )),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    parsed.sort_unstable();
    parsed.dedup();
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_categories_follow_the_specification() {
        let cases = [
            ("127.0.0.1", Some(AddressCategory::Loopback)),
            ("::1", Some(AddressCategory::Loopback)),
            ("10.1.2.3", Some(AddressCategory::Private)),
            ("172.31.0.1", Some(AddressCategory::Private)),
            ("172.32.0.1", None),
            ("192.168.1.1", Some(AddressCategory::Private)),
            ("100.64.0.1", Some(AddressCategory::Private)),
            ("100.128.0.1", None),
            ("fc00::1", Some(AddressCategory::Private)),
            ("fd12::1", Some(AddressCategory::Private)),
            ("169.254.169.254", Some(AddressCategory::LinkLocal)),
            ("fe80::1", Some(AddressCategory::LinkLocal)),
            ("0.0.0.0", Some(AddressCategory::Reserved)),
            ("::", Some(AddressCategory::Reserved)),
            ("224.0.0.1", Some(AddressCategory::Reserved)),
            ("255.255.255.255", Some(AddressCategory::Reserved)),
            ("ff02::1", Some(AddressCategory::Reserved)),
            ("::ffff:10.0.0.1", Some(AddressCategory::Private)),
            ("::ffff:127.0.0.1", Some(AddressCategory::Loopback)),
            ("93.184.216.34", None),
            ("2606:4700::1111", None),
        ];
        for (ip, category) in cases {
            assert_eq!(AddressCategory::of(ip.parse().unwrap()), category, "{ip}");
        }
    }

    #[test]
    fn callback_urls_with_refused_literal_hosts_are_invalid_unless_allowed() {
        for url in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://127.0.0.1:8080/hook",
            "http://[::1]/",
            "http://localhost/",
            "http://api.localhost./x",
            "http://10.1.2.3/",
            "http://169.254.169.254/latest",
            "http://[::ffff:192.168.0.1]/",
        ] {
            let refused = callback_url(url, false).expect_err(url).to_string();
            assert!(
                refused.contains("callbackUrl") && refused.contains(" address"),
                "{refused}"
            );
            callback_url(url, true).expect(url);
        }
        let reserved = callback_url("http://0.0.0.0/", true)
            .unwrap_err()
            .to_string();
        assert!(
            reserved.contains("0.0.0.0 is a reserved address"),
            "{reserved}"
        );
        let private = callback_url("http://10.1.2.3/", false)
            .unwrap_err()
            .to_string();
        assert_eq!(
            private,
            "callbackUrl: 10.1.2.3 is a private address; such callback addresses are not allowed"
        );
    }

    #[test]
    fn callback_urls_must_be_absolute_http_without_credentials() {
        for url in [
            "",
            "ftp://example.com/",
            "/relative",
            "https://user:pw@example.com/",
            "mailto:a@example.com",
        ] {
            let refused = callback_url(url, false).expect_err(url).to_string();
            assert!(refused.starts_with("callbackUrl"), "{refused}");
        }
        let long = format!("https://example.com/{}", "a".repeat(250));
        assert!(callback_url(&long, false).is_err());
        let url = callback_url("https://Hooks.Example.com/lms#frag", false).unwrap();
        assert_eq!(url.as_str(), "https://hooks.example.com/lms");
    }

    #[test]
    fn subscriber_names_are_trimmed_and_bounded() {
        assert_eq!(subscriber_name("  crm ").unwrap(), "crm");
        assert!(subscriber_name("   ").is_err());
        assert!(subscriber_name("a\u{7}b").is_err());
        assert!(subscriber_name(&"n".repeat(256)).is_err());
        assert!(subscriber_name(&"n".repeat(255)).is_ok());
    }
}
