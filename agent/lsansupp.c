/* leakhound - SPDX-License-Identifier: MIT
 *
 * lsansupp.c: the program's embedded LeakSanitizer suppressions (see lsansupp.h).
 */
#include "lsansupp.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYMBOL "__lsan_default_suppressions"

typedef const char *(*supp_fn)(void);

static char text[LH_LSANSUPP_MAX];
static int have_text;

/* The load bias of the main executable (dl_iterate_phdr lists it first). */
static int
main_bias(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    *(uintptr_t *)ctx = info->dlpi_addr;
    return 1;
}

/* The value of a defined function symbol named SYMBOL in the ELF image (len bytes), or 0:
 * in its symbol table, or its dynamic one when stripped. */
static uintptr_t
symtab_value(const unsigned char *img, size_t len)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)img;
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff >= len ||
        (len - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum) {
        return 0;
    }
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(img + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if ((sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM) ||
            sh[i].sh_link >= eh->e_shnum ||
            sh[i].sh_entsize != sizeof(ElfW(Sym)) || sh[i].sh_offset > len ||
            sh[i].sh_size > len - sh[i].sh_offset) {
            continue;
        }
        const ElfW(Shdr) *str = &sh[sh[i].sh_link];
        if (str->sh_offset > len || str->sh_size > len - str->sh_offset) {
            continue;
        }
        const char *names = (const char *)img + str->sh_offset;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)(img + sh[i].sh_offset);
        size_t n = sh[i].sh_size / sizeof *sym;
        for (size_t k = 0; k < n; k++) {
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_shndx == SHN_UNDEF ||
                sym[k].st_name >= str->sh_size ||
                str->sh_size - sym[k].st_name < sizeof SYMBOL) {
                continue;
            }
            if (memcmp(names + sym[k].st_name, SYMBOL, sizeof SYMBOL) == 0) {
                return sym[k].st_value;
            }
        }
    }
    return 0;
}

/* The function in the executable's symbol table, or NULL. The file is mapped with the
 * system call itself: the agent's mmap would note the range (mmaps.h). */
static supp_fn
from_symtab(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    struct stat st;
    void *img = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        img = (void *)syscall(SYS_mmap, NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
                              0);
    }
    close(fd);
    if (img == MAP_FAILED) {
        return NULL;
    }
    uintptr_t value = symtab_value(img, (size_t)st.st_size);
    syscall(SYS_munmap, img, (size_t)st.st_size);
    if (!value) {
        return NULL;
    }
    uintptr_t bias = 0;
    dl_iterate_phdr(main_bias, &bias);
    return (supp_fn)(bias + value);
}

void
lh_lsansupp_read(void)
{
    supp_fn fn = from_symtab();
    const char *s = fn ? fn() : NULL;
    if (!s) {
        return;
    }
    size_t n = strnlen(s, sizeof text - 1);
    memcpy(text, s, n);
    text[n] = '\0';
    have_text = 1;
}

const char *
lh_lsansupp_text(void)
{
    return have_text ? text : NULL;
}
