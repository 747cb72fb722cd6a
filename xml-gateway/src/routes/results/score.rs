//! Scores as the interface writes them (results.md section 1): the shortest decimal with at
//! most two decimals (`80`, `92.5`, `83.33`), the same digits in XML text and as a JSON number.

use serde::{Serialize, Serializer};

/// A score of 0 to 100, rounded to two decimals half away from zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Score(f64);

/// Below 2^53 every whole `f64` is exact, so it is written as an integer.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

impl Score {
    /// `value` as stored (at most two decimals); a stray binary digit (`83.33000000000001`)
    /// is rounded away so that it never reaches the text. A value that is not a number is
    /// written as 0: the core never sends one.
    pub(crate) fn of(value: f64) -> Self {
        let rounded = (value * 100.0).round() / 100.0;
        // `-0` would be written with its sign.
        if !rounded.is_finite() || rounded == 0.0 {
            return Self(0.0);
        }
        Self(rounded)
    }

    /// The score as an integer when it is one (the bound makes the cast exact).
    fn whole(self) -> Option<i64> {
        (self.0.fract() == 0.0 && self.0.abs() < EXACT_INTEGERS).then_some(self.0 as i64)
    }

    /// The shortest decimal: an integer without a point, otherwise Rust's shortest round-trip
    /// digits, which for a value of two decimals are those two decimals at most.
    pub(crate) fn text(self) -> String {
        match self.whole() {
            Some(whole) => whole.to_string(),
            None => self.0.to_string(),
        }
    }
}

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.whole() {
            Some(whole) => serializer.serialize_i64(whole),
            None => serializer.serialize_f64(self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::fuzz::config;

    #[test]
    fn scores_are_the_shortest_decimal_in_text_and_json_alike() {
        for (value, text) in [
            (80.0, "80"),
            (92.5, "92.5"),
            (83.33, "83.33"),
            (83.330_000_000_000_01, "83.33"),
            (100.0, "100"),
            (0.0, "0"),
            (-0.0, "0"),
            (0.01, "0.01"),
            (0.1, "0.1"),
            (66.666_666, "66.67"),
            (f64::NAN, "0"),
        ] {
            let score = Score::of(value);
            assert_eq!(score.text(), text, "{value}");
            assert_eq!(serde_json::to_string(&score).unwrap(), text, "{value}");
        }
    }

    proptest! {
        #![proptest_config(config(2_000))]

        #[test]
        fn fuzz_every_score_of_two_decimals_reads_back_as_itself(hundredths in 0_u32..=10_000) {
            let value = f64::from(hundredths) / 100.0;
            let text = Score::of(value).text();
            prop_assert_eq!(text.parse::<f64>().unwrap(), value);
            prop_assert!(!text.contains('e') && !text.ends_with(".0"));
            let decimals = text.split_once('.').map_or(0, |(_, fraction)| fraction.len());
            prop_assert!(decimals == 0 || (decimals <= 2 && !text.ends_with('0')), "{}", text);
            prop_assert_eq!(serde_json::to_string(&Score::of(value)).unwrap(), text);
        }
    }
}
