//! Gamification points (interface 4.7; neighbours.md section 8).

use super::Resource;
use super::components::list_filter;
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_id_list, element, id, id_in, integer, integer_between, optional, reference,
    required, text, whole_list,
};
use crate::listing::Listing;
use crate::routes::points::Points;

const TAG: &str = "Gamification points";

const READERS: &str = "Account owners and administrators see every user; department administrators, publishers and custom roles with `points.read` the users of the departments they manage and their descendants (a named user outside the scope is 403).";

const WRITERS: &str = "Account owners and administrators; department administrators and custom roles with `points.award` for users in their scope.";

pub(crate) fn resource() -> Resource {
    let mut read = Operation::get("/gamification/points", TAG, "getPoints").describe(
        "Points of users",
        &format!("The points of every user named by `userIds`, or of every user the caller may see when none is named, ascending by user id, one entry per user (0 when it has none), streamed as they are read. An unknown id is left out; a malformed one is 400. {READERS}"),
    );
    for name in Points::FILTERS {
        read = read.query(list_filter(
            name,
            "Only these users. A list too long for a URI (65,534 bytes) goes in the body of `POST /gamification/points`.",
        ));
    }
    let operations = vec![
        read.answer(200, "The points.", both("PointsList"))
            .errors(&[403]),
        Operation::post("/gamification/points", TAG, "getPointsByBody")
            .describe(
                "Points of users named in a body",
                "As the `GET`, for up to 10,000 ids named in the body; the answer is the same.",
            )
            .body(
                "The users. The XML root is `request`.",
                vec![
                    Media::xml(reference("PointsQuery")).example(
                        "<request><userIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</id></userIds></request>",
                    ),
                    Media::json(reference("PointsQuery")).example(object! {
                        "userIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60"],
                    }),
                ],
            )
            .answer(200, "The points.", both("PointsList"))
            .errors(&[403]),
        change("/gamification/points/award", "awardPoints", "Award points", "Adds `amount` points to the user's balance.", "AwardPoints", "awardGamificationPoints"),
        change("/gamification/points/withdraw", "withdrawPoints", "Withdraw points", "Takes `amount` points from the user's balance (which may go below 0).", "WithdrawPoints", "withdrawGamificationPoints"),
    ];
    Resource {
        operations,
        schemas: vec![
            ("UserPointsInfo".into(), user_points()),
            (
                "PointsList".into(),
                whole_list(
                    "UserPointsInfo",
                    "The users' points: XML `<userPointsInfo>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            ("PointsQuery".into(), query()),
            (
                "AwardPoints".into(),
                points_change("awardGamificationPoints", "Points to award."),
            ),
            (
                "WithdrawPoints".into(),
                points_change("withdrawGamificationPoints", "Points to withdraw."),
            ),
        ],
    }
}

fn change(
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    what: &str,
    schema: &str,
    root: &str,
) -> Operation {
    Operation::post(path, TAG, id)
        .describe(summary, &format!("{what} {WRITERS}"))
        .body(
            &format!("The user, the amount and the reason. The XML root is `{root}` (or `request`)."),
            vec![
                Media::xml(reference(schema)).example(format!(
                    "<{root}><userId>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</userId><amount>10</amount><reason>Quiz</reason></{root}>"
                )),
                Media::json(reference(schema)).example(object! {
                    "userId" => "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60",
                    "amount" => 10_i64,
                    "reason" => "Quiz",
                }),
            ],
        )
        .empty(200, "Done; the body is empty.")
        .errors(&[403])
}

fn user_points() -> Node {
    element(
        "userPointsInfo",
        "One user's points.",
        vec![
            required("userId", id("The user.")),
            required("points", integer("The user's balance.")),
        ],
        Others::Refused,
    )
}

fn query() -> Node {
    element(
        "request",
        "Which users.",
        vec![optional(
            "userIds",
            bounded_id_list(
                id_in("A user."),
                "Up to 10,000 users; absent for every user the caller may see.",
                0,
                10_000,
            ),
        )],
        Others::Ignored,
    )
}

fn points_change(root: &str, description: &str) -> Node {
    element(
        root,
        description,
        vec![
            required("userId", id_in("The user.")),
            required("amount", integer_between("How many points.", 1, 1_000_000)),
            optional("reason", text("Why.")),
        ],
        Others::Ignored,
    )
}
