//! `--kernel`: any text is one of the three kernels whose placement rules are
//! modelled, written back as it reads, or one error quoting the text; never a
//! panic, never another kernel.

use place::Kernel;
use proptest::prelude::*;

proptest! {
    #[test]
    fn any_text_is_a_modelled_kernel_or_refused_by_name(s in "\\PC{0,12}") {
        match s.parse::<Kernel>() {
            Ok(k) => {
                prop_assert!(["6.6", "6.8", "6.12"].contains(&k.as_str()), "{k}");
                prop_assert_eq!(k.to_string().parse::<Kernel>(), Ok(k));
                prop_assert!(s.contains(k.as_str()), "{s:?} read as {k}");
            }
            Err(e) => {
                let quoted = format!("{:?}", s.trim().trim_start_matches('v'));
                prop_assert!(e.contains(&quoted), "{e} does not quote {quoted}");
                prop_assert!(e.contains("6.6, 6.8 or 6.12"), "{e}");
            }
        }
    }
}

#[test]
fn the_three_kernels_and_their_v_forms_read() {
    for (text, want) in [("6.6", "6.6"), ("v6.8", "6.8"), (" 6.12\n", "6.12")] {
        assert_eq!(text.parse::<Kernel>().unwrap().as_str(), want);
    }
    for bad in ["", "6", "6.10", "7.0", "6.12.1"] {
        assert!(bad.parse::<Kernel>().is_err(), "{bad:?} was accepted");
    }
}
