//! Kernel names that cannot name a C++ object in the generated program.
//!
//! Brook code could name a kernel like a C library function (`bsearch`, `index`) or a C++
//! keyword (`new`): the original brcc generated C functions, which overloaded the library ones.
//! Here a kernel is an object; such a kernel's object gets a mangled name, a library name gets
//! overloaded functions that launch it (so `bsearch(keys, ...)` still calls the kernel and
//! `bsearch(&key, base, ...)` the library), and a keyword is renamed in the host code.

/// Words reserved by C++ that C (and so Brook) code may use as names.
#[rustfmt::skip]
const CPP_KEYWORDS: &[&str] = &[
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t",
    "char16_t", "char32_t", "class", "compl", "concept", "consteval", "constexpr", "constinit",
    "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete", "dynamic_cast",
    "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "reinterpret_cast",
    "requires", "static_assert", "static_cast", "template", "this", "thread_local", "throw", "try",
    "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
];

/// How a kernel's name appears in the generated C++.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelSpelling {
    /// The object has the kernel's name.
    Plain,
    /// The name is a C library function's: the object is mangled and overloads of the name
    /// launch it.
    Overloaded,
    /// The name is a C++ keyword: the object is mangled and the host code's uses are renamed.
    Renamed,
}

pub fn spelling(kernel: &str) -> KernelSpelling {
    if CPP_KEYWORDS.contains(&kernel) {
        KernelSpelling::Renamed
    } else if brook_front::brook::c_library::is_library_function(kernel) {
        KernelSpelling::Overloaded
    } else {
        KernelSpelling::Plain
    }
}

/// The C++ name of a kernel's object; under `brcc -g` (`brookgpu`) always a mangled one, as
/// the kernel's name is BrookGPU's function's.
pub fn object_name(kernel: &str, brookgpu: bool) -> String {
    match spelling(kernel) {
        KernelSpelling::Plain if !brookgpu => kernel.to_string(),
        _ => format!("brook_kernel_{kernel}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_spelled_by_what_they_clash_with() {
        assert_eq!(spelling("saxpy"), KernelSpelling::Plain);
        assert_eq!(spelling("bsearch"), KernelSpelling::Overloaded);
        assert_eq!(spelling("new"), KernelSpelling::Renamed);
        assert_eq!(object_name("new", false), "brook_kernel_new");
        assert_eq!(object_name("saxpy", false), "saxpy");
        assert_eq!(object_name("saxpy", true), "brook_kernel_saxpy");
    }
}
