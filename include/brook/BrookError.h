// The Brook+ SDK header name brook/BrookError.h: everything is in the one Brook+ C++ API header.
#include "brook.hpp"
