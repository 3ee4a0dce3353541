#include "sysmem.h"

#include <stdio.h>
#include <unistd.h>

size_t mb_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

const char *mb_format_bytes(double bytes, char *out, size_t cap)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1000.0 && u < 5) { bytes /= 1000.0; u++; }
    snprintf(out, cap, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return out;
}
