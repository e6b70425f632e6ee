/* kernel/buildid.h: the kernel's GNU build id (ld --build-id=sha1), as
 * `version` and every machine-readable profile print it, so that a host
 * tool can refuse to name addresses with the wrong ELF. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX 64                  /* bytes of id kept; sha1 is 20 */

/* This kernel's id as lowercase hex ("" if the image has no note).
 * Parsed once on first use; the string lives for the life of the kernel. */
const char *build_id(void);

/* Parse one ELF note list [note, note + len) for the NT_GNU_BUILD_ID note
 * of owner "GNU" and write its id as hex to hex[cap]. Returns the id's
 * length in bytes, or -1 if there is none or it does not fit (hex is then
 * ""). Every length is checked against len before it is used. */
int build_id_parse(const void *note, size_t len, char *hex, size_t cap);
