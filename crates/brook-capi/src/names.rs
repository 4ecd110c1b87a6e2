//! Element types named as in Brook (`float`, `float4`, `uchar2`, `double2`).

use brook_ir::{ScalarKind, ValueType};
use brook_runtime::element::ElementType;

/// The element type called `name`: a scalar type with an optional width 2-4.
pub fn element_type(name: &str) -> Option<ElementType> {
    let digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let width: u8 = match &name[digits.len()..] {
        "" => 1,
        w => w.parse().ok().filter(|w| (2..=4).contains(w))?,
    };
    let kind = ScalarKind::ALL
        .into_iter()
        .find(|k| k.brook_name() == digits)?;
    Some(ElementType::Value(ValueType::vector(kind, width)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_their_sizes() {
        for (name, size) in [("float", 4), ("float4", 16), ("uchar2", 2), ("double2", 16)] {
            assert_eq!(element_type(name).map(|e| e.size()), Some(size), "{name}");
        }
        for bad in ["float5", "float1", "vec3", "", "4"] {
            assert!(element_type(bad).is_none(), "{bad}");
        }
    }
}
