//! Caller input quoted back in a message is clipped: an error answer must never grow with the
//! attack that caused it. Same bound and marker as the core's messages.

/// Most characters of caller input quoted in one place of a message.
pub(crate) const MAX_QUOTED_CHARS: usize = 64;

/// `text` cut to [`MAX_QUOTED_CHARS`] characters, with `…` when something was cut.
pub(crate) fn clip(text: &str) -> String {
    clip_to(text, MAX_QUOTED_CHARS)
}

/// `text` cut to `max` characters, with `…` when something was cut.
pub(crate) fn clip_to(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(clip("request"), "request");
        assert_eq!(clip(&"a".repeat(64)), "a".repeat(64));
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary_and_marked() {
        assert_eq!(clip(&"a".repeat(65)), format!("{}…", "a".repeat(64)));
        let wide = "é".repeat(1_000);
        assert_eq!(clip(&wide), format!("{}…", "é".repeat(64)));
        assert_eq!(clip_to("abcdef", 3), "abc…");
    }
}
