#ifndef GRAPHVAULT_CZSTD_SHIM_H
#define GRAPHVAULT_CZSTD_SHIM_H
#include <zstd.h>
#endif
