//! Stream element types and their host layout, which is C's.
//!
//! An [`ElementType`] describes the bytes of one stream element: a scalar or short vector
//! (`float3` is 12 bytes, aligned to 4) or a struct laid out as a C compiler would. The
//! [`Element`] trait connects Rust types to element types: scalars, `[T; N]` vectors and
//! structs declared with [`crate::brook_struct!`].

use brook_ir::{Module, ScalarKind, Type, ValueType};
use std::fmt;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    Value(ValueType),
    Struct(Arc<StructLayout>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructLayout {
    pub name: String,
    pub fields: Vec<FieldLayout>,
    pub size: usize,
    pub align: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldLayout {
    pub name: String,
    pub ty: ElementType,
    pub offset: usize,
}

impl ElementType {
    pub fn scalar(kind: ScalarKind) -> Self {
        ElementType::Value(ValueType::scalar(kind))
    }

    /// Every scalar component, in order: its kind and its byte offset in the element.
    pub fn components(&self) -> Vec<(ScalarKind, usize)> {
        fn walk(ty: &ElementType, base: usize, out: &mut Vec<(ScalarKind, usize)>) {
            match ty {
                ElementType::Value(v) => {
                    for i in 0..usize::from(v.width) {
                        out.push((v.kind, base + i * v.kind.size() as usize));
                    }
                }
                ElementType::Struct(s) => {
                    for f in &s.fields {
                        walk(&f.ty, base + f.offset, out);
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(self, 0, &mut out);
        out
    }

    /// Whether two elements' bytes are the same value, as devices are compared: every
    /// component bit-identical, except that any NaN equals any NaN (IEEE 754 leaves the
    /// payload of a computed NaN open: x86 propagates an operand's, a GPU writes its
    /// canonical NaN), and float components within `ulp` ulps of each other. Padding bytes
    /// are not compared.
    pub fn same_value(&self, a: &[u8], b: &[u8], ulp: u64) -> bool {
        self.components().into_iter().all(|(kind, at)| {
            same_component(kind, &a[at..], &b[at..])
                || (ulp > 0 && float_ulps(kind, &a[at..], &b[at..]).is_some_and(|d| d <= ulp))
        })
    }

    /// A struct of the given fields, laid out as C does: each field at the next multiple of its
    /// alignment, the size rounded up to the largest alignment.
    pub fn structure(name: &str, fields: Vec<(String, ElementType)>) -> Self {
        let mut offset = 0usize;
        let mut align = 1usize;
        let mut laid_out = Vec::with_capacity(fields.len());
        for (field_name, ty) in fields {
            offset = offset.next_multiple_of(ty.align());
            align = align.max(ty.align());
            let size = ty.size();
            laid_out.push(FieldLayout {
                name: field_name,
                ty,
                offset,
            });
            offset += size;
        }
        ElementType::Struct(Arc::new(StructLayout {
            name: name.to_string(),
            fields: laid_out,
            size: offset.next_multiple_of(align),
            align,
        }))
    }

    pub fn size(&self) -> usize {
        match self {
            ElementType::Value(v) => v.size() as usize,
            ElementType::Struct(s) => s.size,
        }
    }

    pub fn align(&self) -> usize {
        match self {
            ElementType::Value(v) => v.align() as usize,
            ElementType::Struct(s) => s.align,
        }
    }

    /// The element type of an IR type; `None` for arrays, which are not stream elements.
    pub fn from_ir(module: &Module, ty: &Type) -> Option<ElementType> {
        match ty {
            Type::Value(v) => Some(ElementType::Value(*v)),
            Type::Struct(id) => {
                let decl = module.struct_decl(*id)?;
                let fields = decl
                    .fields
                    .iter()
                    .map(|f| Some((f.name.clone(), ElementType::from_ir(module, &f.ty)?)))
                    .collect::<Option<Vec<_>>>()?;
                Some(ElementType::structure(&decl.name, fields))
            }
            Type::Array { .. } => None,
        }
    }

    /// Whether two element types have the same bytes: the same scalar kinds at the same offsets.
    /// Struct and field names do not matter.
    pub fn same_layout(&self, other: &ElementType) -> bool {
        match (self, other) {
            (ElementType::Value(a), ElementType::Value(b)) => a == b,
            (ElementType::Struct(a), ElementType::Struct(b)) => {
                a.size == b.size
                    && a.fields.len() == b.fields.len()
                    && a.fields
                        .iter()
                        .zip(&b.fields)
                        .all(|(x, y)| x.offset == y.offset && x.ty.same_layout(&y.ty))
            }
            _ => false,
        }
    }

    /// Whether the layout has no padding bytes.
    pub fn is_packed(&self) -> bool {
        match self {
            ElementType::Value(_) => true,
            ElementType::Struct(s) => {
                let fields: usize = s.fields.iter().map(|f| f.ty.size()).sum();
                fields == s.size && s.fields.iter().all(|f| f.ty.is_packed())
            }
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::Value(v) => write!(f, "{v}"),
            ElementType::Struct(s) => write!(f, "struct {}", s.name),
        }
    }
}

/// A Rust type whose values are stream elements.
///
/// # Safety
/// `Self` must be `Copy`, have exactly the layout [`Element::element_type`] describes (size and
/// field offsets as C lays them out) and contain no padding bytes, so that a `&[Self]` may be
/// viewed as bytes and any bytes written by a kernel are a valid `Self`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Brook stream element or kernel value",
    label = "not a number, a number array (`[f32; 4]`) or a `brook_struct!` struct",
    note = "a reduction into a host variable is passed as `brook::host_var(&mut total)`; a stream as `&stream`"
)]
pub unsafe trait Element: Copy + Send + Sync + 'static {
    fn element_type() -> ElementType;
}

macro_rules! scalar_elements {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        // SAFETY: a primitive number has the size of its kind, no padding, and every bit
        // pattern is valid.
        unsafe impl Element for $t {
            fn element_type() -> ElementType {
                ElementType::scalar(ScalarKind::$kind)
            }
        }
        // SAFETY: an array of a primitive number is laid out like a C vector of it.
        unsafe impl Element for [$t; 2] {
            fn element_type() -> ElementType {
                ElementType::Value(ValueType::vector(ScalarKind::$kind, 2))
            }
        }
        // SAFETY: as above.
        unsafe impl Element for [$t; 3] {
            fn element_type() -> ElementType {
                ElementType::Value(ValueType::vector(ScalarKind::$kind, 3))
            }
        }
        // SAFETY: as above.
        unsafe impl Element for [$t; 4] {
            fn element_type() -> ElementType {
                ElementType::Value(ValueType::vector(ScalarKind::$kind, 4))
            }
        }
    )*};
}

scalar_elements!(
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f32 => F32, f64 => F64,
);

/// Views a slice of elements as bytes.
pub fn as_bytes<T: Element>(values: &[T]) -> &[u8] {
    // SAFETY: `Element` guarantees no padding, so every byte is initialised.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// Views a mutable slice of elements as bytes.
pub fn as_bytes_mut<T: Element>(values: &mut [T]) -> &mut [u8] {
    // SAFETY: `Element` guarantees no padding and that every bit pattern is a valid `T`.
    unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(values),
        )
    }
}

/// Declares a `#[repr(C)]` struct usable as a stream element, with its [`Element`] layout.
/// The struct may not contain padding (a compile-time check): order fields from the largest
/// alignment down, as the kernel's struct must be declared the same way.
///
/// ```
/// brook_runtime::brook_struct! {
///     pub struct Particle { pub position: [f32; 3], pub mass: f32 }
/// }
/// ```
#[macro_export]
macro_rules! brook_struct {
    ($(#[$meta:meta])* $vis:vis struct $name:ident { $($fvis:vis $field:ident : $fty:ty),* $(,)? }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        $vis struct $name { $($fvis $field: $fty),* }

        const _: () = assert!(
            0 $(+ ::std::mem::size_of::<$fty>())* == ::std::mem::size_of::<$name>(),
            "a brook_struct may not contain padding"
        );

        // SAFETY: `repr(C)` with no padding (checked above) and fields that are elements.
        unsafe impl $crate::element::Element for $name {
            fn element_type() -> $crate::element::ElementType {
                $crate::element::ElementType::structure(
                    stringify!($name),
                    vec![$((
                        stringify!($field).to_string(),
                        <$fty as $crate::element::Element>::element_type(),
                    )),*],
                )
            }
        }
    };
}

/// How many ulps apart the leading float components of `a` and `b` are
/// (`brook_codegen::mathlib`'s count); `None` for other kinds or a NaN.
pub fn float_ulps(kind: ScalarKind, a: &[u8], b: &[u8]) -> Option<u64> {
    use brook_codegen::mathlib::{ulps, ulps_f32};
    match kind {
        ScalarKind::F32 => {
            let f = |x: &[u8]| Some(f32::from_le_bytes(x.get(..4)?.try_into().ok()?));
            let (a, b) = (f(a)?, f(b)?);
            (!a.is_nan() && !b.is_nan()).then(|| ulps_f32(a, b))
        }
        ScalarKind::F64 => {
            let f = |x: &[u8]| Some(f64::from_le_bytes(x.get(..8)?.try_into().ok()?));
            let (a, b) = (f(a)?, f(b)?);
            (!a.is_nan() && !b.is_nan()).then(|| ulps(a, b))
        }
        _ => None,
    }
}

/// Whether the leading component of `a` and of `b`, of `kind`, are the same value: the same
/// bits, or both NaN ([`ElementType::same_value`]).
pub fn same_component(kind: ScalarKind, a: &[u8], b: &[u8]) -> bool {
    let n = kind.size() as usize;
    let (Some(a), Some(b)) = (a.get(..n), b.get(..n)) else {
        return false;
    };
    if a == b {
        return true;
    }
    match kind {
        ScalarKind::F32 => {
            let f = |x: &[u8]| x.try_into().is_ok_and(|w| f32::from_le_bytes(w).is_nan());
            f(a) && f(b)
        }
        ScalarKind::F64 => {
            let f = |x: &[u8]| x.try_into().is_ok_and(|w| f64::from_le_bytes(w).is_nan());
            f(a) && f(b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    brook_struct! {
        struct Pair { wide: f64, a: f32, b: [f32; 3] }
    }

    #[test]
    fn struct_layout_matches_rust_repr_c() {
        let ty = Pair::element_type();
        assert_eq!(ty.size(), std::mem::size_of::<Pair>());
        let ElementType::Struct(s) = &ty else {
            panic!("a struct")
        };
        let offsets: Vec<usize> = s.fields.iter().map(|f| f.offset).collect();
        assert_eq!(offsets, vec![0, 8, 12]);
        assert!(ty.is_packed());
    }

    #[test]
    fn names_do_not_change_layout() {
        let a = ElementType::structure("a", vec![("x".into(), f32::element_type())]);
        let b = ElementType::structure("b", vec![("y".into(), f32::element_type())]);
        assert!(a.same_layout(&b));
        assert!(!a.same_layout(&i32::element_type()));
    }
}
