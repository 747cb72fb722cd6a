//! The open-files limit: raised to the hard limit at start, and the connection limit kept
//! inside it, so accepting never fails for want of descriptors.

/// Descriptors kept for everything but client connections: the core channel, the database,
/// logs, and a `lms up` core in the same process.
const RESERVED_DESCRIPTORS: u64 = 256;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns how many connections fit:
/// `wanted`, or fewer (with a warning) when the limit cannot hold them and the reserve.
pub(crate) fn connection_limit(wanted: usize) -> usize {
    let open_files = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(error) => {
            tracing::warn!(%error, "could not read or raise the open-files limit");
            return wanted;
        }
    };
    let fits = usize::try_from(open_files.saturating_sub(RESERVED_DESCRIPTORS).max(1))
        .unwrap_or(usize::MAX);
    if fits < wanted {
        tracing::warn!(
            open_files,
            wanted,
            serving = fits,
            "the open-files limit cannot hold the configured connections; serving fewer"
        );
        return fits;
    }
    tracing::debug!(open_files, max_connections = wanted, "open-files limit");
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let _ = connection_limit(1);
        let (soft, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
        // Some systems cap the soft limit below an unlimited hard one (macOS: OPEN_MAX).
        assert!(soft == hard || hard == rlimit::INFINITY, "{soft} < {hard}");
    }

    #[test]
    fn the_connection_limit_fits_in_the_open_files_limit() {
        let (soft, _) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
        let limit = connection_limit(usize::MAX);
        assert!((limit as u64) <= soft.saturating_sub(RESERVED_DESCRIPTORS).max(1));
        assert_eq!(connection_limit(3), 3);
    }
}
