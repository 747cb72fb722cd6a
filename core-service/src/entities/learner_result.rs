//! `learner_results`: the result of one enrollment, both layers (results.md section 1) and
//! the effective status and completion date the lists filter on.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "learner_results")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub enrollment_id: Uuid,
    pub account_id: Uuid,
    /// The tracked status, one of the nine.
    #[sea_orm(column_type = "String(StringLen::N(16))")]
    pub status: String,
    pub progress: i32,
    /// Hundredths of a point.
    pub awarded_score: i32,
    /// Hundredths of a point.
    pub passing_score: i32,
    pub time_spent: i64,
    pub views_count: i64,
    pub completed_at: Option<DateTimeUtc>,
    pub last_viewed_at: Option<DateTimeUtc>,
    /// The administrator's status, when one is set.
    #[sea_orm(column_type = "String(StringLen::N(16))", nullable)]
    pub admin_status: Option<String>,
    pub admin_completed_at: Option<DateTimeUtc>,
    /// The administrator's score in hundredths, when one was given.
    pub admin_score: Option<i32>,
    /// `admin_status` when set, else `status`.
    #[sea_orm(column_type = "String(StringLen::N(16))")]
    pub effective_status: String,
    /// The completion date shown: the administrator's while one is set, else the tracked.
    pub effective_completed_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::enrollment::Entity",
        from = "Column::EnrollmentId",
        to = "super::enrollment::Column::Id",
        on_update = "Restrict",
        on_delete = "Cascade"
    )]
    Enrollment,
    #[sea_orm(
        belongs_to = "super::account::Entity",
        from = "Column::AccountId",
        to = "super::account::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    Account,
}

impl Related<super::enrollment::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Enrollment.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
