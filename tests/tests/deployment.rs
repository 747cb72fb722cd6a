//! The deployment files as an operator relies on them, read the way compose and Prometheus
//! read them (YAML with merge keys): every service of ours is health-checked, restarted and
//! started only after what it needs is healthy; the core's gRPC port is published nowhere but
//! on loopback behind a profile; the gateway balances over every core replica; Prometheus
//! scrapes each of them; import documents have a mounted folder; the image runs as a numeric
//! user with a health check. CI also runs hadolint on the Dockerfile.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_norway::Value;

fn repo_file(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn yaml(path: &str) -> Value {
    let mut value: Value = serde_norway::from_str(&repo_file(path)).expect("valid YAML");
    value.apply_merge().expect("merge keys resolve");
    value
}

fn text(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not text: {value:?}"))
}

fn list(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .map(|items| items.iter().map(|item| text(item).to_owned()).collect())
        .unwrap_or_default()
}

struct Compose(Value);

impl Compose {
    fn load() -> Self {
        Self(yaml("docker-compose.yml"))
    }

    fn service(&self, name: &str) -> &Value {
        self.0["services"]
            .get(name)
            .unwrap_or_else(|| panic!("no service {name}"))
    }

    fn names(&self) -> Vec<String> {
        self.0["services"]
            .as_mapping()
            .expect("services")
            .keys()
            .map(|key| text(key).to_owned())
            .collect()
    }

    /// Services running one of our binaries.
    fn ours(&self) -> Vec<String> {
        self.names()
            .into_iter()
            .filter(|name| self.service(name)["image"].as_str() == Some("lms:local"))
            .collect()
    }

    fn cores(&self) -> Vec<String> {
        self.ours()
            .into_iter()
            .filter(|name| list(&self.service(name)["command"]) == ["lms-core"])
            .collect()
    }

    fn always_on(&self, name: &str) -> bool {
        self.service(name).get("profiles").is_none()
    }
}

#[test]
fn every_service_of_ours_is_health_checked_restarted_and_waits_for_healthy_dependencies() {
    let compose = Compose::load();
    let ours = compose.ours();
    assert!(ours.len() >= 3, "{ours:?}");
    for name in compose.names() {
        let service = compose.service(&name);
        assert!(
            service["restart"].as_str().is_some(),
            "{name} has no restart policy"
        );
        if let Some(depends) = service.get("depends_on") {
            let depends = depends
                .as_mapping()
                .unwrap_or_else(|| panic!("{name}: depends_on must give conditions, not a list"));
            for (on, how) in depends {
                let condition = text(&how["condition"]);
                let on = text(on);
                let expected = if compose.service(on).get("healthcheck").is_some() {
                    "service_healthy"
                } else {
                    "service_started"
                };
                assert_eq!(condition, expected, "{name} depends on {on}");
            }
        }
    }
    for name in &ours {
        let test = list(&compose.service(name)["healthcheck"]["test"]);
        assert_eq!(
            &test[..3],
            ["CMD", "lms", "healthcheck"],
            "{name}: {test:?}"
        );
    }
    let gateway = compose.service("gateway");
    for core in compose
        .cores()
        .iter()
        .filter(|core| compose.always_on(core))
    {
        assert_eq!(
            text(&gateway["depends_on"][core.as_str()]["condition"]),
            "service_healthy"
        );
    }
}

#[test]
fn the_gateway_balances_over_every_always_on_core_replica() {
    let compose = Compose::load();
    let cores: BTreeSet<String> = compose
        .cores()
        .into_iter()
        .filter(|core| compose.always_on(core))
        .collect();
    assert!(cores.len() >= 2, "{cores:?}");
    let urls = text(&compose.service("gateway")["environment"]["LMS_CORE_URL"]);
    let named: BTreeSet<String> = urls
        .split(',')
        .map(|url| {
            url.trim_start_matches("http://")
                .trim_end_matches(":50051")
                .to_owned()
        })
        .collect();
    assert_eq!(named, cores, "{urls}");
    for core in &cores {
        let environment = &compose.service(core)["environment"];
        assert!(text(&environment["DATABASE_URL"]).starts_with("postgres://"));
        assert_eq!(text(&environment["LMS_GRPC_ADDR"]), "0.0.0.0:50051");
    }
}

#[test]
fn the_cores_grpc_port_is_published_only_on_loopback_behind_a_profile() {
    let compose = Compose::load();
    for core in compose.cores() {
        for port in list(&compose.service(&core)["ports"]) {
            assert!(
                port.starts_with("127.0.0.1:"),
                "{core} publishes {port} beyond this host"
            );
            assert!(
                !compose.always_on(&core),
                "{core} publishes {port} by default"
            );
        }
    }
    // The XML interface is what the stack is for: published.
    assert!(list(&compose.service("gateway")["ports"]).contains(&"8080:8080".to_owned()));
}

#[test]
fn prometheus_scrapes_every_core_and_the_gateway_on_their_metrics_address() {
    let compose = Compose::load();
    let mounted = list(&compose.service("prometheus")["volumes"]);
    let config = mounted
        .iter()
        .find_map(|volume| volume.strip_suffix(":/etc/prometheus/prometheus.yml:ro"))
        .expect("a prometheus.yml is mounted");
    let prometheus = yaml(config.trim_start_matches("./"));
    let targets: BTreeSet<String> = prometheus["scrape_configs"]
        .as_sequence()
        .expect("scrape configs")
        .iter()
        .flat_map(|job| {
            job["static_configs"]
                .as_sequence()
                .expect("static configs")
                .clone()
        })
        .flat_map(|configs| list(&configs["targets"]))
        .collect();
    let mut expected: BTreeSet<String> = compose
        .cores()
        .into_iter()
        .filter(|core| compose.always_on(core))
        .map(|core| format!("{core}:9464"))
        .collect();
    expected.insert("gateway:9464".to_owned());
    assert_eq!(targets, expected);
    for name in compose.ours() {
        assert_eq!(
            text(&compose.service(&name)["environment"]["LMS_METRICS_ADDR"]),
            "0.0.0.0:9464",
            "{name}"
        );
    }
}

#[test]
fn import_documents_have_a_mounted_folder_and_traces_go_to_a_current_jaeger() {
    let compose = Compose::load();
    for core in compose.cores() {
        assert!(
            list(&compose.service(&core)["volumes"]).contains(&"./data:/data:ro".to_owned()),
            "{core}"
        );
    }
    assert!(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../data")
            .is_dir()
    );
    let header = repo_file("docker-compose.yml");
    assert!(header.contains("docker compose run --rm core-1 lms import /data/"));
    let jaeger = text(&compose.service("jaeger")["image"]);
    assert!(jaeger.starts_with("jaegertracing/jaeger:2."), "{jaeger}");
    for name in compose.ours() {
        assert_eq!(
            text(&compose.service(&name)["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"]),
            "http://jaeger:4317"
        );
    }
}

#[test]
fn the_image_caches_dependencies_strips_and_runs_as_a_numeric_user_with_a_health_check() {
    let dockerfile = repo_file("Dockerfile");
    let instructions: Vec<&str> = dockerfile
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .collect();
    let position = |needle: &str| {
        instructions
            .iter()
            .position(|line| line.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in the Dockerfile"))
    };
    // The dependencies are built before the sources are copied in.
    assert!(position("cargo chef cook") < position("RUN cargo build --release"));
    assert!(dockerfile.contains("CARGO_PROFILE_RELEASE_STRIP=symbols"));
    let user = instructions
        .iter()
        .rev()
        .find_map(|line| line.strip_prefix("USER "))
        .expect("a USER");
    assert!(
        user.split(':')
            .all(|id| id.parse::<u32>().is_ok_and(|id| id != 0)),
        "USER {user} is not a numeric non-root user"
    );
    assert!(position("HEALTHCHECK") > position("FROM debian"));
}
