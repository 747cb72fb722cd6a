//! Members named for a smart group, through both doors of the one operation: the directory's
//! `AddGroupMembers` (gRPC) and the interface's `POST /group/{id}/members` (HTTP, through the
//! gateway's `ReplaceGroupMembers`). A smart group's members are its department's subtree, so
//! both refuse with the caller's-mistake class: INVALID_ARGUMENT and 400 (neighbours Q19),
//! with the same message, and nothing changes.

use lms_proto::v1::{
    self as pb, admin_service_client::AdminServiceClient,
    directory_service_client::DirectoryServiceClient,
};
use lms_tests::{
    TestStack, on_both_backends,
    world::{self, acme},
};
use tonic::Code;

on_both_backends!(members_named_for_a_smart_group_are_refused_alike_through_both_doors);

async fn members_named_for_a_smart_group_are_refused_alike_through_both_doors(stack: &TestStack) {
    let before = stack.snapshot().await;
    let channel = stack.grpc_channel().await;

    let directory = DirectoryServiceClient::new(channel.clone())
        .add_group_members(world::OWNER.grpc_request(pb::AddGroupMembersRequest {
            group_id: acme::ALL_OF_SALES.into(),
            user_ids: vec![acme::ENGINEER.into()],
        }))
        .await
        .expect_err("a smart group takes no members");
    let admin = AdminServiceClient::new(channel)
        .replace_group_members(world::OWNER.grpc_request(pb::ReplaceGroupMembersRequest {
            group_id: acme::ALL_OF_SALES.into(),
            user_ids: vec![acme::ENGINEER.into()],
        }))
        .await
        .expect_err("a smart group takes no members");
    let http = stack
        .post_xml(
            &format!("/group/{}/members", acme::ALL_OF_SALES),
            world::OWNER,
            &format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::ENGINEER
            ),
        )
        .await;

    assert_eq!(directory.code(), Code::InvalidArgument, "{directory:?}");
    assert_eq!(admin.code(), Code::InvalidArgument, "{admin:?}");
    http.assert_error(400, "smart group");
    // One function answered all three: one message.
    assert_eq!(directory.message(), admin.message());
    assert_eq!(http.error_message(), directory.message());
    assert!(
        directory.message().contains(acme::ALL_OF_SALES),
        "{directory:?}"
    );
    assert_eq!(stack.snapshot().await, before, "nothing changed");

    // A plain group takes them through both doors.
    DirectoryServiceClient::new(stack.grpc_channel().await)
        .add_group_members(world::OWNER.grpc_request(pb::AddGroupMembersRequest {
            group_id: acme::EMPTY_GROUP.into(),
            user_ids: vec![acme::ENGINEER.into()],
        }))
        .await
        .expect("members added");
    let replaced = stack
        .post_xml(
            &format!("/group/{}/members", acme::EMPTY_GROUP),
            world::OWNER,
            &format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::SUPPORTER
            ),
        )
        .await;
    assert!(
        (200..300).contains(&replaced.status),
        "{}: {}",
        replaced.status,
        replaced.body
    );
    let group = stack
        .get(&format!("/group/{}", acme::EMPTY_GROUP), world::OWNER)
        .await;
    assert_eq!(
        lms_tests::xml::texts_of(&group.body, "id"),
        [acme::SUPPORTER],
        "{}",
        group.body
    );
}
