//! `--linux` and the record's `sim.linux`: any text is exactly one kernel
//! era's name, written back as it reads, or one error quoting the text and
//! naming what is accepted.

use proptest::prelude::*;
use sim::costs::Era;

proptest! {
    #[test]
    fn any_text_is_an_era_name_or_refused_quoting_it(s in "\\PC{0,10}|6\\.[0-9]\\+{0,2}|pre-6\\.[0-9]\\+?") {
        match s.parse::<Era>() {
            Ok(e) => {
                prop_assert_eq!(e.name(), s.as_str());
                prop_assert_eq!(e.to_string().parse::<Era>(), Ok(e));
            }
            Err(text) => {
                prop_assert!(text.contains(&format!("'{s}'")), "{text}");
                prop_assert!(text.contains("\"6.5+\"") && text.contains("\"pre-6.5\""), "{text}");
                prop_assert!([Era::Current, Era::Pre65].iter().all(|e| e.name() != s));
            }
        }
    }
}
