//! Every end-to-end scenario in one test binary: linking tonic, axum, SeaORM and reqwest
//! once instead of once per file is most of what building the tests costs.
//!
//! Layout: one module per area of the service. The XML-interface scenarios run through
//! the real gateway and core ([`lms_tests::TestStack`]); `directory` calls the core's gRPC
//! directory directly; `import` loads documents into a database of its own. Each scenario
//! runs on SQLite and on PostgreSQL (`LMS_TEST_POSTGRES_URL`).

mod authentication;
mod clients;
mod content;
mod content_lists;
mod department_moves_concurrently;
mod department_reads;
mod departments;
mod directory;
mod enrollment_create;
mod enrollment_lists;
mod enrollments;
mod every_operation;
mod export_workflow;
mod group_get;
mod group_lists;
mod group_update;
mod group_writes;
mod grpc_authorization;
mod hostile_input;
mod import;
mod list_streams;
mod openapi;
mod page_sizes;
mod points;
mod points_writes;
mod provisioning;
mod rate_limits;
mod reflection;
mod replicas;
mod results_grpc;
mod results_http;
mod scheduled_status;
mod scim;
mod smart_group_members;
mod tenant_isolation;
mod tokens;
mod user_profile;
mod user_reads;
mod user_writes;
mod webhook_flags;
mod webhooks;
mod whole_lists;
