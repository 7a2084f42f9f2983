//! The command's conventions: completions and man pages generated from the
//! CLI definition, examples at the end of every subcommand's help, and the
//! default run pointing at the seeds' results.
mod common;

use common::stdout;

/// The subcommands `manycore --help` lists (clap's own `help` aside).
fn subcommands() -> Vec<String> {
    let help = stdout(&["--help"]);
    let list = &help[help.find("Commands:").expect("a Commands: section")..];
    let names: Vec<String> = list
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&n| n != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 8, "{help}");
    names
}

#[test]
fn completions_and_man_pages_cover_every_subcommand() {
    let bash = stdout(&["completions", "bash"]);
    assert!(bash.contains("complete -F _manycore"), "{bash}");
    let zsh = stdout(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef manycore"), "{zsh}");
    let man = stdout(&["man"]);
    assert!(man.contains(".TH manycore 1"), "{man}");
    for sub in &subcommands() {
        assert!(bash.contains(&format!("manycore,{sub})")), "bash: {sub}");
        assert!(man.contains(&format!("manycore\\-{sub}")), "man: {sub}");
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("man");
    stdout(&["man", "--dir", dir.to_str().unwrap()]);
    for sub in &subcommands() {
        let page = std::fs::read_to_string(dir.join(format!("manycore-{sub}.1"))).unwrap();
        assert!(
            page.contains("Examples:"),
            "manycore-{sub}.1 has no examples"
        );
    }
}

#[test]
fn every_help_ends_with_examples() {
    for sub in &subcommands() {
        let help = stdout(&[sub, "--help"]);
        let at = help.rfind("Examples:").unwrap_or_else(|| {
            panic!("{sub} --help has no examples: add after_help in cli/src/main.rs")
        });
        let tail = &help[at..];
        let examples: Vec<&str> = tail
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert!(!examples.is_empty(), "{sub}: empty examples");
        assert!(
            examples
                .iter()
                .all(|l| l.trim_start().starts_with("manycore ")),
            "{sub}: something after the examples:\n{tail}"
        );
    }
}

/// With no arguments: this host's tree, then one line naming where the seeds'
/// results are.
#[test]
fn default_run_shows_the_host_then_points_at_the_seeds() {
    let out = stdout(&[]);
    assert!(out.starts_with("Machine ("), "{out}");
    let last = out.lines().last().unwrap();
    assert!(last.contains("manycore validate"), "{last}");
    assert!(last.len() <= 100, "not short: {last}");
    assert_eq!(
        out.lines().filter(|l| l.contains("manycore ")).count(),
        1,
        "{out}"
    );
}
