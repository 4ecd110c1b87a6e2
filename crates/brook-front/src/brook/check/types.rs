//! The checker's types: values, structs and arrays, and resolution of written types.

use super::Checker;
use crate::brook::ast::{TypeSpec, TypeSpecKind};
use crate::diagnostic::{Code, Diagnostic};
use brook_ir::{ScalarKind, ValueType};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StructId(pub u32);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    Void,
    Value(ValueType),
    Struct(StructId),
    /// A gather, scatter, local or shared array; `None` dimensions are unspecified (`a[][]`).
    Array {
        elem: Box<Type>,
        dims: Vec<Option<u32>>,
    },
    /// The type of an expression that already has an error: accepted everywhere, never reported.
    Error,
}

impl Type {
    pub fn value(kind: ScalarKind, width: u8) -> Type {
        Type::Value(ValueType::vector(kind, width))
    }

    pub fn scalar(kind: ScalarKind) -> Type {
        Type::Value(ValueType::scalar(kind))
    }

    pub fn as_value(&self) -> Option<ValueType> {
        match self {
            Type::Value(v) => Some(*v),
            _ => None,
        }
    }

    pub fn is_error(&self) -> bool {
        *self == Type::Error
    }
}

/// A struct as the checker knows it: fields in declaration order.
#[derive(Clone, Debug)]
pub struct StructInfo {
    pub name: String,
    pub fields: Vec<(String, Type)>,
}

impl Checker<'_> {
    /// The bytes a value of `ty` takes, at least (fields without padding; unsized array
    /// dimensions count once).
    pub fn storage_bytes(&self, ty: &Type) -> u64 {
        match ty {
            Type::Value(v) => u64::from(v.size()),
            Type::Struct(id) => self.info.structs[id.0 as usize]
                .fields
                .iter()
                .map(|(_, field)| self.storage_bytes(field))
                .sum(),
            Type::Array { elem, dims } => dims
                .iter()
                .map(|d| u64::from(d.unwrap_or(1)))
                .fold(self.storage_bytes(elem), u64::saturating_mul),
            Type::Void | Type::Error => 0,
        }
    }

    /// The Brook spelling of a type, for messages.
    pub fn type_name(&self, ty: &Type) -> String {
        match ty {
            Type::Void => "void".into(),
            Type::Value(v) => v.to_string(),
            Type::Struct(id) => format!("struct {}", self.info.structs[id.0 as usize].name),
            Type::Array { elem, dims } => {
                let dims: String = dims
                    .iter()
                    .map(|d| d.map_or("[]".to_string(), |n| format!("[{n}]")))
                    .collect();
                format!("{}{dims}", self.type_name(elem))
            }
            Type::Error => "<error>".into(),
        }
    }

    /// Resolves a written type, reporting unsupported ones. `void` is returned as is.
    pub fn resolve_type(&mut self, spec: &TypeSpec) -> Type {
        match &spec.kind {
            TypeSpecKind::Void => Type::Void,
            TypeSpecKind::Value(v) => self.check_width(*v, spec),
            TypeSpecKind::Reserved(name) => {
                self.diags.push(
                    Diagnostic::error(
                        Code::UnsupportedType,
                        spec.span,
                        format!("Unsupported variable type: `{name}` is a reserved type"),
                    )
                    .with_help(
                        "use int, uint, float or double (64-bit integer types are reserved)",
                    ),
                );
                Type::Error
            }
            TypeSpecKind::Named(name) => match self.type_names.get(name) {
                Some(ty) => ty.clone(),
                None => {
                    self.diags.push(
                        Diagnostic::error(
                            Code::UnsupportedType,
                            spec.span,
                            format!("Unsupported variable type: `{name}` is not a Brook type"),
                        )
                        .with_label("not a built-in type, struct or typedef known to kernels"),
                    );
                    Type::Error
                }
            },
        }
    }

    fn check_width(&mut self, v: ValueType, spec: &TypeSpec) -> Type {
        let (ok, message) = if v.kind == ScalarKind::F64 {
            (v.width <= 2, "double data types can have 1 or 2 components")
        } else {
            (
                (1..=4).contains(&v.width),
                "Non double data types can have 1, 2, 3, or 4 components except void type",
            )
        };
        if ok && v.width >= 1 {
            return Type::Value(v);
        }
        self.diags.push(
            Diagnostic::error(Code::VectorWidth, spec.span, message)
                .with_label(format!("this type has {} components", v.width)),
        );
        Type::Error
    }

    /// A type that a stream, gather or scatter array may hold: a non-bool scalar or vector, or
    /// a struct of those.
    /// A struct with an array member (at any depth): usable in host code only.
    pub fn host_only_struct(&self, ty: &Type) -> Option<String> {
        let Type::Struct(id) = ty else { return None };
        let info = &self.info.structs[id.0 as usize];
        info.fields
            .iter()
            .any(|(_, field)| {
                matches!(field, Type::Array { .. }) || self.host_only_struct(field).is_some()
            })
            .then(|| info.name.clone())
    }

    pub fn is_stream_element(&self, ty: &Type) -> bool {
        match ty {
            Type::Value(v) => v.kind != ScalarKind::Bool,
            Type::Struct(id) => self.info.structs[id.0 as usize]
                .fields
                .iter()
                .all(|(_, field)| self.is_stream_element(field)),
            Type::Error => true,
            _ => false,
        }
    }
}
