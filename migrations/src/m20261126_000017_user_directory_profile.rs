//! The rest of the user profile over HTTP (neighbours.md section 4): an e-mail address apart
//! from the login, status 5 apart from 3, the other profile fields, and the last sign-in.
//!
//! - `users.contact_email` / `contact_email_key`: the profile's `EMAIL` when it is not the
//!   login. NULL means "the login is the e-mail address", which every user made before this
//!   migration (and every imported one) is, so nothing needs filling in. The key is indexed
//!   with the account for the `emails` filter.
//! - `users.employment_ended`: status 5 (employment ended). Like status 3 the user is
//!   inactive (`active` false) and cannot sign in; the flag only tells the two apart.
//! - `user_fields`: `JOB_TITLE`, `PHONE`, `COUNTRY`, `USER_DEFINED_FIELDn`…, one row per
//!   field given; the primary key `(user_id, name)` serves a page of profiles.
//! - `user_sign_ins`: the last authenticated request of each user, for `lastLoginDate`. A
//!   table of its own and not a column of `users`: `users` carries the triggers that tell
//!   every core to read callers again (migration 5), and a sign-in must not do that.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema::{foreign_key, index};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    AccountId,
    ContactEmail,
    ContactEmailKey,
    EmploymentEnded,
}

#[derive(DeriveIden)]
enum UserFields {
    Table,
    UserId,
    Name,
    Value,
}

#[derive(DeriveIden)]
enum UserSignIns {
    Table,
    UserId,
    LastAt,
}

const CONTACT_EMAIL: &str = "idx_users_account_id_contact_email_key";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite adds one at a time.
        for column in [
            string_len_null(Users::ContactEmail, 255),
            string_len_null(Users::ContactEmailKey, 255),
            boolean(Users::EmploymentEnded).default(false).take(),
        ] {
            let mut column = column;
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_index(index(
                CONTACT_EMAIL,
                Users::Table,
                [Users::AccountId, Users::ContactEmailKey],
            ))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(UserFields::Table)
                    .col(uuid(UserFields::UserId))
                    .col(string_len(UserFields::Name, 64))
                    .col(string_len(UserFields::Value, 1000))
                    .primary_key(
                        Index::create()
                            .col(UserFields::UserId)
                            .col(UserFields::Name),
                    )
                    .foreign_key(&mut foreign_key(
                        "fk_user_fields_user_id",
                        (UserFields::Table, UserFields::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(UserSignIns::Table)
                    .col(uuid(UserSignIns::UserId).primary_key())
                    .col(timestamp_with_time_zone(UserSignIns::LastAt))
                    .foreign_key(&mut foreign_key(
                        "fk_user_sign_ins_user_id",
                        (UserSignIns::Table, UserSignIns::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(UserSignIns::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(UserFields::Table).to_owned())
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(CONTACT_EMAIL)
                    .table(Users::Table)
                    .to_owned(),
            )
            .await?;
        for column in [
            Users::EmploymentEnded,
            Users::ContactEmailKey,
            Users::ContactEmail,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
