/* Writing a finished document: to stdout, or atomically to a file (temp file + rename). */
#ifndef MB_OUTPUT_H
#define MB_OUTPUT_H

/* path NULL or "-" means stdout. Returns 0 on success, -1 with a message on stderr. */
int mb_write_document(const char *prog, const char *path, const char *text);

#endif
