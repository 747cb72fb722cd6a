//! API clients (contract section 12): each acts as a user of its account, with a secret
//! hashed here, as soon as it is checked, the way the RPC-made clients' secrets are.

use super::{
    AccountCheck, List, Place, Validator, label, plan::ApiClientRow, reference, refused, require,
};
use crate::{
    auth::tokens::secret_hash,
    domain::{client_secret::ClientSecret, roles::Role},
    import::{ImportError, document::ApiClientEntry},
};

impl AccountCheck {
    pub(crate) fn api_client(
        &mut self,
        validator: &mut Validator,
        i: usize,
        client: &ApiClientEntry,
    ) -> Result<(), ImportError> {
        let entry = label(self.a, "apiClients", i, "clientId", &client.client_id);
        // Parsed first so that a malformed id is refused as the field the document names.
        reference(&entry, "clientId", &client.client_id)?;
        let id = validator.register_id(
            Place::new(self.a, List::ApiClients, i),
            &entry,
            &client.client_id,
        )?;
        let secret = ClientSecret::parse(&client.client_secret).map_err(refused(&entry))?;
        let user_id = reference(&entry, "userId", &client.user_id)?;
        require(&entry, "userId", user_id, &self.known.users, "user")?;
        if client.scim {
            // A SCIM token acts on the whole account (provisioning.md section 13).
            let may = self.plan.users.iter().any(|user| {
                user.id == user_id
                    && matches!(user.role, Role::AccountOwner | Role::AccountAdministrator)
            });
            if !may {
                return Err(ImportError::invalid(
                    &entry,
                    "userId of a SCIM client must name an account owner or administrator",
                ));
            }
        }
        self.plan.api_clients.push(ApiClientRow {
            id,
            user_id,
            secret_hash: secret_hash(secret.expose()),
            scim: client.scim,
        });
        Ok(())
    }
}
