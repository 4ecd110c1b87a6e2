//! One way to declare a table of fixed token spellings (Brook's punctuators, LOOM's operators):
//! the enum, its spellings, and the order a lexer tries them in.

/// `spelled_tokens! { pub enum Name { Variant = "text", ... } }`, longest spellings first: the
/// enum, `Name::BY_LENGTH` (the variants in that order, so that a lexer takes the first that
/// matches) and `Name::text`.
macro_rules! spelled_tokens {
    ($(#[$meta:meta])* $vis:vis enum $ty:ident { $($name:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $ty { $($name,)* }

        impl $ty {
            /// Longest spellings first, so that the lexer can take the first that matches.
            pub const BY_LENGTH: &'static [$ty] = &[$($ty::$name,)*];

            pub fn text(self) -> &'static str {
                match self { $($ty::$name => $text,)* }
            }
        }
    };
}

pub(crate) use spelled_tokens;
