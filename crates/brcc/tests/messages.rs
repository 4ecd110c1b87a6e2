//! How brcc writes diagnostics: `--message-format json` (one JSON object per line on stderr,
//! for editors and CI) and colour (`--color`, `NO_COLOR`).

use serde_json::Value;
use std::process::{Command, Output};

fn brcc(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_brcc"));
    command.args(args).env_remove("NO_COLOR");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run brcc")
}

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("brcc-messages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path.to_string_lossy().into_owned()
}

/// Every stderr line, each of which must be one JSON object.
fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

const ONE_ERROR_TWO_WARNINGS: &str =
    "kernel void k(float a<>, out float b<>)\n{\n    b = a + 1.0 + c;\n}\n";

#[test]
fn json_has_one_object_per_diagnostic_and_no_summary() {
    let file = temp_file("mixed.br", ONE_ERROR_TWO_WARNINGS);
    for flags in [
        &["--message-format", "json"][..],
        &["--message-format=json"],
    ] {
        let mut args = vec!["check"];
        args.extend_from_slice(flags);
        args.push(&file);
        let out = brcc(&args, &[]);
        assert_eq!(out.status.code(), Some(1));
        let records = json_lines(&out);
        let severities: Vec<&str> = records
            .iter()
            .map(|r| r["severity"].as_str().unwrap())
            .collect();
        assert!(severities.contains(&"error"), "{records:?}");
        assert!(severities.contains(&"warning"), "{records:?}");
        let error = records.iter().find(|r| r["severity"] == "error").unwrap();
        assert_eq!(error["code"], "BR0401");
        assert_eq!(error["file"], file.as_str());
        assert_eq!(
            (error["line"].as_u64(), error["column"].as_u64()),
            (Some(3), Some(19))
        );
        assert_eq!(
            (error["end_line"].as_u64(), error["end_column"].as_u64()),
            (Some(3), Some(20))
        );
        assert!(error["help"].is_string() && error["label"].is_string());
        let rendered = error["rendered"].as_str().unwrap();
        assert!(rendered.contains("3 |     b = a + 1.0 + c;"), "{rendered}");
        let warning = records.iter().find(|r| r["severity"] == "warning").unwrap();
        assert_eq!(warning["code"], "BR0403");
        // The strong-typing note rides on the first warning.
        let notes = records
            .iter()
            .flat_map(|r| r["notes"].as_array().unwrap().clone())
            .collect::<Vec<_>>();
        assert!(
            notes.iter().any(|n| n["message"]
                .as_str()
                .unwrap()
                .contains("strong type checking")),
            "{notes:?}"
        );
    }
}

#[test]
fn json_covers_files_that_cannot_be_read_and_missing_headers() {
    let out = brcc(
        &["check", "--message-format", "json", "no-such-file.br"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let records = json_lines(&out);
    assert_eq!(records.len(), 1);
    assert!(records[0]["message"]
        .as_str()
        .unwrap()
        .contains("cannot read `no-such-file.br`"));
    assert!(records[0]["line"].is_null());

    let file = temp_file("includes.br", "int x;\n#include \"missing.brh\"\n");
    let out = brcc(&["check", "--message-format", "json", &file], &[]);
    assert_eq!(out.status.code(), Some(1));
    let records = json_lines(&out);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["file"], file.as_str());
    assert_eq!(records[0]["line"], 2);
    assert!(records[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("cannot include the header `missing.brh`"));
}

#[test]
fn json_covers_loom_programs() {
    let file = temp_file(
        "bad.loom",
        "kernel k(a: Int32[THREADS])\n  a[T] <- y\n  return\n",
    );
    let out = brcc(&["check", "--message-format", "json", &file], &[]);
    assert_eq!(out.status.code(), Some(1));
    let records = json_lines(&out);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["code"], "LM0301");
    assert_eq!(
        (records[0]["line"].as_u64(), records[0]["column"].as_u64()),
        (Some(2), Some(11))
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let file = temp_file("colour.br", ONE_ERROR_TWO_WARNINGS);
    let escape = |out: &Output| out.stderr.contains(&0x1b);
    // Tests run with stderr a pipe: `auto` means plain.
    assert!(!escape(&brcc(&["check", &file], &[])));
    assert!(escape(&brcc(&["check", "--color", "always", &file], &[])));
    assert!(escape(&brcc(
        &["check", "--color=always", &file],
        &[("NO_COLOR", "1")]
    )));
    assert!(!escape(&brcc(&["check", "--color", "never", &file], &[])));
    assert!(!escape(&brcc(
        &["check", "--color", "auto", &file],
        &[("NO_COLOR", "1")]
    )));
    // JSON is never coloured, its rendered text neither.
    let json = brcc(
        &[
            "check",
            "--color",
            "always",
            "--message-format",
            "json",
            &file,
        ],
        &[],
    );
    assert!(!escape(&json));
}

#[test]
fn bad_values_are_usage_errors() {
    for args in [
        &["check", "--message-format", "xml", "x.br"][..],
        &["check", "--color=sometimes", "x.br"],
        &["check", "--colour=always", "x.br"],
    ] {
        let out = brcc(args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("brcc: "), "{stderr}");
    }
}
