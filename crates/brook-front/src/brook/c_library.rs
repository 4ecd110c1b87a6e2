//! The functions of the C library that Brook host code sees at global scope.
//!
//! The original brcc generated a C function per kernel, so a kernel could share its name with a
//! library function (`bsearch`): C++ overloading told the calls apart. brcc keeps that (see
//! `brcc`'s `cpp::reserved`), and the checker leaves a host call that cannot be the kernel's
//! (another argument count) to the library function.

/// Functions that the C headers the generated program includes (`stdio.h`, `stdlib.h`,
/// `string.h`, `math.h`, and what glibc brings with them) declare at global scope.
#[rustfmt::skip]
const FUNCTIONS: &[&str] = &[
    // stdlib.h
    "abs", "labs", "llabs", "div", "ldiv", "lldiv", "atoi", "atol", "atoll", "atof", "strtod",
    "strtof", "strtol", "strtoll", "strtoul", "strtoull", "rand", "srand", "rand_r", "random",
    "srandom", "drand48", "erand48", "lrand48", "nrand48", "mrand48", "jrand48", "srand48",
    "seed48", "lcong48", "initstate", "setstate", "malloc", "calloc", "realloc", "free",
    "aligned_alloc", "posix_memalign", "valloc", "exit", "abort", "atexit", "quick_exit", "getenv",
    "setenv", "unsetenv", "putenv", "system", "qsort", "bsearch", "mblen", "mbtowc", "wctomb",
    "mbstowcs", "wcstombs", "mkstemp", "mktemp", "realpath", "ecvt", "fcvt", "gcvt", "select",
    "pselect",
    // stdio.h
    "printf", "fprintf", "sprintf", "snprintf", "dprintf", "scanf", "fscanf", "sscanf", "puts",
    "fputs", "gets", "fgets", "putchar", "fputc", "putc", "getchar", "fgetc", "getc", "ungetc",
    "fopen", "fclose", "freopen", "fflush", "fread", "fwrite", "fseek", "ftell", "rewind",
    "fgetpos", "fsetpos", "feof", "ferror", "clearerr", "perror", "remove", "rename", "tmpfile",
    "tmpnam", "setbuf", "setvbuf", "vprintf", "vfprintf", "vsprintf", "vsnprintf", "fileno",
    "popen", "pclose", "getline", "getdelim",
    // string.h, strings.h
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strcpy", "strncpy", "strcat", "strncat",
    "strcmp", "strncmp", "strchr", "strrchr", "strstr", "strlen", "strtok", "strspn", "strcspn",
    "strpbrk", "strerror", "strcoll", "strxfrm", "strdup", "strndup", "index", "rindex", "bzero",
    "bcopy", "bcmp", "strcasecmp", "strncasecmp", "ffs",
    // math.h
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt",
    "hypot", "fabs", "floor", "ceil", "round", "trunc", "fmod", "remainder", "fmin", "fmax", "fma",
    "frexp", "ldexp", "modf", "nan", "erf", "erfc", "tgamma", "lgamma", "copysign", "nextafter",
    "rint", "lrint", "lround", "nearbyint", "scalbn", "ilogb", "logb", "fdim", "j0", "j1", "jn",
    "y0", "y1", "yn", "gamma", "drem", "significand",
    // ctype.h, time.h
    "isalpha", "isdigit", "isalnum", "isspace", "isupper", "islower", "toupper", "tolower",
    "isprint", "ispunct", "iscntrl", "isxdigit", "isgraph", "isblank", "time", "clock", "difftime",
    "mktime", "strftime", "localtime", "gmtime", "asctime", "ctime",
];

/// Whether the C headers of a generated program declare a function `name`.
pub fn is_library_function(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}
