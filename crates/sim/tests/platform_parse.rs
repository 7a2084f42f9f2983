//! `--platform`: any text is exactly one platform's name, written back as it
//! reads, or one error naming the option and quoting the text.

use proptest::prelude::*;
use sim::Platform;

proptest! {
    #[test]
    fn any_text_is_a_platform_name_or_refused_by_name(s in "\\PC{0,12}") {
        match s.parse::<Platform>() {
            Ok(p) => {
                prop_assert_eq!(p.name(), s.as_str());
                prop_assert_eq!(p.name().parse::<Platform>(), Ok(p));
            }
            Err(e) => {
                let text = e.to_string();
                prop_assert!(text.starts_with("--platform:"), "{text}");
                prop_assert!(text.contains(&format!("'{s}'")), "{text}");
                prop_assert!(Platform::ALL.iter().all(|p| p.name() != s));
            }
        }
    }
}
