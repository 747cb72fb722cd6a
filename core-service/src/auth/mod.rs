//! Who is calling: argon2id passwords, the verified-credentials cache, throttling.

pub mod password;
