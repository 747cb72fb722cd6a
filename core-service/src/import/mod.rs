//! The import document (contract section 9) and the built-in demo account.
