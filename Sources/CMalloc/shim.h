#ifndef GRAPHVAULT_CMALLOC_SHIM_H
#define GRAPHVAULT_CMALLOC_SHIM_H
// glibc's allocator tuning (mallopt), which the Glibc module does not export.
#if defined(__linux__)
#include <malloc.h>
#endif
#endif
