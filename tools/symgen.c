/* tools/symgen.c: `nm -n -S kernel.elf | symgen > symtab.S`, the kernel's
 * symbol table as assembler source; tools/symgen/table.c builds it. */
#include <stdio.h>

#include "tools/symgen/table.h"

int main(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "usage: nm -n -S kernel.elf | %s > symtab.S\n", argv[0]);
        return 2;
    }
    struct sg_table t = { 0 };
    symgen_read(stdin, &t);
    symgen_finish(&t);
    symgen_emit(&t, stdout);
    symgen_free(&t);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("symgen: writing stdout");
        return 1;
    }
    return 0;
}
