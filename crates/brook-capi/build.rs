//! Names the shared library `libbrook_capi.so` inside itself (its soname), so a program linked
//! against it by path looks for it by name, in its run path, wherever the library was built.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libbrook_capi.so");
    }
}
