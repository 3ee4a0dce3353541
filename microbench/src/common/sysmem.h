/* How much memory this machine has, to refuse problem sizes that could only end in the OOM killer. */
#ifndef MB_SYSMEM_H
#define MB_SYSMEM_H

#include <stddef.h>

/* Physical memory in bytes (0 when unknown). */
size_t mb_physical_memory(void);
/* Formats bytes as "3.2 GB" (SI). */
const char *mb_format_bytes(double bytes, char *out, size_t cap);

#endif
