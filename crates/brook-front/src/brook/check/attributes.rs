//! Kernel attributes: `Attribute[GroupSize(x, y, z)]` (seed 001, section 1.17.1).

use super::ConstSize;
use super::{Checker, ParamInfo, ParamRole};
use crate::brook::ast::{Attribute, Kernel};
use crate::diagnostic::{Code, Diagnostic};

/// The largest thread group.
pub const MAX_GROUP_SIZE: u32 = 1024;

impl Checker<'_> {
    pub(super) fn group_size(&mut self, kernel: &Kernel, params: &[ParamInfo]) -> Option<[u32; 3]> {
        let mut result = None;
        let mut seen = false;
        for attribute in &kernel.attributes {
            if attribute.name.name != "GroupSize" {
                self.diags.push(
                    Diagnostic::error(
                        Code::Attribute,
                        attribute.name.span,
                        format!("Unsupported kernel Attribute `{}`", attribute.name.name),
                    )
                    .with_help("the only kernel attribute is GroupSize"),
                );
                continue;
            }
            if std::mem::replace(&mut seen, true) {
                self.diags.error(
                    Code::Attribute,
                    attribute.span,
                    "More than one GroupSize specified: only one GroupSize allowed",
                );
                continue;
            }
            result = self.group_size_values(attribute);
        }
        if result.is_some() {
            if let Some(output) = params.iter().find(|p| p.role == ParamRole::Output) {
                self.diags.push(
                    Diagnostic::error(
                        Code::Attribute,
                        output.span,
                        "Output must be a scatter type if you specify GroupSize attribute",
                    )
                    .with_help("declare the output as `out T name[]` and write it with an index"),
                );
            }
        }
        result
    }

    fn group_size_values(&mut self, attribute: &Attribute) -> Option<[u32; 3]> {
        if attribute.args.is_empty() {
            self.diags.error(
                Code::Attribute,
                attribute.span,
                "GroupSize must have values",
            );
            return None;
        }
        if attribute.args.len() > 4 {
            self.diags.error(
                Code::Attribute,
                attribute.span,
                "More than 4 components not allowed in GroupSize",
            );
            return None;
        }
        let mut values = [1u32; 3];
        for (n, arg) in attribute.args.iter().enumerate() {
            let ConstSize::Value(value) = self.info.constants.size_of(arg) else {
                self.diags.error(
                    Code::Attribute,
                    arg.span,
                    "GroupSize values must be integer constants",
                );
                return None;
            };
            if n > 0 && value != 1 {
                self.diags.push(
                    Diagnostic::error(
                        Code::Attribute,
                        arg.span,
                        format!(
                            "{} dimension of GroupSize must be 1 where n != 1",
                            ordinal(n + 1)
                        ),
                    )
                    .with_help("thread groups are one-dimensional: GroupSize(x, 1, 1)"),
                );
                return None;
            }
            if n == 0 && !(1..=i64::from(MAX_GROUP_SIZE)).contains(&value) {
                self.diags.push(
                    Diagnostic::error(
                        Code::Attribute,
                        arg.span,
                        format!("First dimension of GroupSize must be <= {MAX_GROUP_SIZE}, and at least 1: got {value}"),
                    )
                    .with_help(format!("Group size must be <= {MAX_GROUP_SIZE}")),
                );
                return None;
            }
            if n < 3 {
                values[n] = value as u32;
            }
        }
        Some(values)
    }
}

fn ordinal(n: usize) -> String {
    match n {
        2 => "2nd".into(),
        3 => "3rd".into(),
        _ => format!("{n}th"),
    }
}
