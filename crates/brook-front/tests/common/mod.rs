//! Helpers shared by the frontend's integration tests.

use brook_front::brook::{CheckOptions, Define};

/// The options a fixture asks for on its first line: `// brcc-flags: -a -c -pp -x -wN -D X`.
pub fn options_from(text: &str) -> CheckOptions {
    let mut options = CheckOptions::default();
    let Some(flags) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// brcc-flags:"))
    else {
        return options;
    };
    let mut words = flags.split_whitespace();
    while let Some(flag) = words.next() {
        match flag {
            "-a" => options.strong_types = false,
            "-g" => options.dialect = brook_front::brook::Dialect::BrookGpu,
            "-c" => options.constant_buffers = false,
            "-pp" => options.preprocess = true,
            "-x" => options.warnings_as_errors = true,
            "-D" => options
                .defines
                .push(Define::parse(words.next().expect("-D value")).expect("valid -D")),
            _ if flag.starts_with("-w") => options.warning_level = flag[2..].parse().expect("-wN"),
            _ => panic!("unknown fixture flag {flag}"),
        }
    }
    options
}
