//! Element types named as in Brook (`float`, `float4`, `uchar2`, `double2`), and structs
//! described by their fields: `struct pair{a:float;b:float2}` (fields in order, each a type
//! name or another struct description), laid out as C lays them out.

use brook_ir::ValueType;
use brook_runtime::element::ElementType;

/// The element type called or described by `name`.
pub fn element_type(name: &str) -> Option<ElementType> {
    let name = name.trim();
    if name.starts_with("struct ") {
        let (ty, rest) = structure(name)?;
        return rest.trim().is_empty().then_some(ty);
    }
    value_type(name)
}

/// A struct description at the start of `text`, and the text after it.
fn structure(text: &str) -> Option<(ElementType, &str)> {
    let rest = text.strip_prefix("struct ")?;
    let open = rest.find('{')?;
    let name = rest[..open].trim();
    let mut rest = &rest[open + 1..];
    let mut fields = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('}') {
            return Some((ElementType::structure(name, fields), after));
        }
        let colon = rest.find(':')?;
        let field = rest[..colon].trim().to_string();
        rest = &rest[colon + 1..];
        let (ty, after) = if rest.trim_start().starts_with("struct ") {
            structure(rest.trim_start())?
        } else {
            let end = rest.find([';', '}'])?;
            (value_type(rest[..end].trim())?, &rest[end..])
        };
        fields.push((field, ty));
        rest = after.trim_start();
        rest = rest.strip_prefix(';').unwrap_or(rest);
    }
}

/// A scalar type with an optional width 2-4.
fn value_type(name: &str) -> Option<ElementType> {
    ValueType::from_brook_name(name).map(ElementType::Value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_their_sizes() {
        for (name, size) in [("float", 4), ("float4", 16), ("uchar2", 2), ("double2", 16)] {
            assert_eq!(element_type(name).map(|e| e.size()), Some(size), "{name}");
        }
        for bad in [
            "float5",
            "float1",
            "vec3",
            "",
            "4",
            "struct p{a:float",
            "struct p{a:vec}",
        ] {
            assert!(element_type(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn struct_descriptions_are_laid_out_as_c() {
        let pair = element_type("struct pair{a:float;b:double}").expect("pair");
        assert_eq!((pair.size(), pair.align()), (16, 8));
        let nested =
            element_type("struct outer{c:uchar;in:struct pair{a:float;b:double};d:float3}")
                .expect("nested");
        assert_eq!(nested.size(), 40);
    }
}
