// The Brook+ SDK header name brook/KernelInterface.h: everything is in the one Brook+ C++ API header.
#include "brook.hpp"
