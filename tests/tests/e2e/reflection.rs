//! gRPC server reflection, as stock clients use it: the service list and the descriptors of
//! `lms.v1`, over both reflection protocols (`grpc.reflection.v1`, which current grpcurl
//! speaks, and `grpc.reflection.v1alpha`, which many other tools still speak only).

use futures::StreamExt as _;
use lms_tests::{Backend, TestStack};
use prost::Message as _;

const EXPECTED_SERVICES: [&str; 3] = [
    "grpc.health.v1.Health",
    "lms.v1.AdminService",
    "lms.v1.DirectoryService",
];

#[tokio::test]
async fn a_v1alpha_reflection_client_lists_the_services_and_gets_their_descriptors() {
    use tonic_reflection::pb::v1alpha::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let stack = TestStack::start(Backend::Sqlite).await.expect("SQLite");
    let mut client = ServerReflectionClient::new(stack.grpc_channel().await);
    let requests = [
        MessageRequest::ListServices(String::new()),
        MessageRequest::FileContainingSymbol("lms.v1.DirectoryService".to_owned()),
    ]
    .map(|message_request| ServerReflectionRequest {
        host: String::new(),
        message_request: Some(message_request),
    });
    let mut answers = client
        .server_reflection_info(futures::stream::iter(requests))
        .await
        .expect("v1alpha reflection answers")
        .into_inner();
    let listed = answers.next().await.expect("an answer").expect("no error");
    let Some(MessageResponse::ListServicesResponse(list)) = listed.message_response else {
        panic!("not a service list: {listed:?}");
    };
    let mut names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    names.sort();
    for expected in EXPECTED_SERVICES {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    let file = answers.next().await.expect("an answer").expect("no error");
    let Some(MessageResponse::FileDescriptorResponse(files)) = file.message_response else {
        panic!("not a file descriptor: {file:?}");
    };
    let descriptor = prost_types::FileDescriptorProto::decode(&files.file_descriptor_proto[0][..])
        .expect("a file descriptor");
    assert_eq!(descriptor.package(), "lms.v1");
    assert!(
        descriptor
            .service
            .iter()
            .any(|s| s.name() == "DirectoryService")
    );
    stack.stop().await;
}

#[tokio::test]
async fn a_v1_reflection_client_lists_the_services() {
    use tonic_reflection::pb::v1::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let stack = TestStack::start(Backend::Sqlite).await.expect("SQLite");
    let mut client = ServerReflectionClient::new(stack.grpc_channel().await);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let listed = client
        .server_reflection_info(futures::stream::iter([request]))
        .await
        .expect("v1 reflection answers")
        .into_inner()
        .next()
        .await
        .expect("an answer")
        .expect("no error");
    let Some(MessageResponse::ListServicesResponse(list)) = listed.message_response else {
        panic!("not a service list: {listed:?}");
    };
    for expected in EXPECTED_SERVICES {
        assert!(
            list.service.iter().any(|s| s.name == expected),
            "{expected} in {list:?}"
        );
    }
    stack.stop().await;
}
