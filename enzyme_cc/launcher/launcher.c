/* enzyme-cc / enzyme-c++ / enzyme-fc fast path: the compile step of one C or C++ source at -O1
 * and above, or of one Fortran source.
 *
 * A build runs the compiler once per source, so Python's start-up and imports (~60 ms) would
 * double the cost of a compile (clang itself takes ~40 ms on a small file). This launcher does
 * exactly what the Python driver does for the common case -- one clang invocation with our
 * include directory, the attribute plugin and embedded bitcode, then the rename of .llvmbc to
 * .enzyme.bc in the object's section headers -- and hands every other command line, unchanged,
 * to the Python driver (`python -m enzyme_cc.cli DRIVER ARGS...`). It is conservative: any
 * option it does not know, any ENZYME_CC_* variable, an enzyme.toml, -O0, Fortran, response
 * files, a stale plugin, ... all go to Python.
 *
 * Fortran (enzyme-fc): one flang run that writes a fat LTO object (the object, and its pre-link
 * bitcode in .llvm.lto), whose section is renamed; for a source that names enzyme, flang's IR
 * before LLVM's passes compiled by clang, embedding it -- compile._compile_fortran's steps.
 *
 * It also runs the link of objects and archives none of which holds a marker name (the Python
 * link step's own first test, lto/link.py _may_call_markers): that link is clang's, unchanged.
 *
 * Built by enzyme_cc/launcher.py with the paths below given as -D macros.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PYTHON
#error "build with enzyme_cc/launcher.py"
#endif

extern char **environ;

static char *argv0_base(char *p) {
    char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int starts(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Whether a is one of the NULL-terminated list (prefix: starts with one of them). */
static int listed(const char *a, const char **list, int prefix) {
    for (int k = 0; list[k]; k++)
        if (prefix ? starts(a, list[k]) : strcmp(a, list[k]) == 0)
            return 1;
    return 0;
}

/* Hand the whole command line to the Python driver. */
static void fallback(const char *driver, int argc, char **argv) {
    char **args = calloc((size_t)argc + 5, sizeof(char *));
    int k = 0;
    args[k++] = PYTHON;
    args[k++] = "-m";
    args[k++] = "enzyme_cc.cli";
    args[k++] = (char *)driver;
    for (int i = 1; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    execv(PYTHON, args);
    fprintf(stderr, "%s: error: cannot run the Python driver '%s': %s\n", argv0_base(argv[0]),
            PYTHON, strerror(errno));
    exit(127);
}

/* shutil.which(name): the first executable on PATH. */
static int which(const char *name, char *out, size_t size) {
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if (len > 0 && (size_t)snprintf(out, size, "%.*s/%s", (int)len, path, name) < size &&
            access(out, X_OK) == 0)
            return 1;
        path += len + (end ? 1 : 0);
    }
    return 0;
}

/* True when an enzyme.toml lies in the working directory or above (the Python driver reads it). */
static int config_upward(void) {
    char dir[PATH_MAX];
    if (!getcwd(dir, sizeof dir))
        return 1;
    for (;;) {
        char p[PATH_MAX + 16];
        struct stat st;
        snprintf(p, sizeof p, "%s/enzyme.toml", strcmp(dir, "/") ? dir : "");
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            return 1;
        char *slash = strrchr(dir, '/');
        if (!slash || (slash == dir && dir[1] == 0))
            return 0;
        if (slash == dir)
            dir[1] = 0;
        else
            *slash = 0;
    }
}

/* ENZYME_CC_* variables other than the link step's own may change what a compile does. */
static int any_enzyme_env(void) {
    static const char *link_only[] = {"ENZYME_CC_CACHE=", "ENZYME_CC_PREOPT=",
                                      "ENZYME_CC_DUMP_DIR=", "ENZYME_CC_TAPE_STATS=", 0};
    for (char **e = environ; *e; e++) {
        if (!starts(*e, "ENZYME_CC_"))
            continue;
        int ok = 0;
        for (int k = 0; link_only[k]; k++)
            ok |= starts(*e, link_only[k]);
        if (!ok)
            return 1;
    }
    return 0;
}

static const char *CXX_EXT[] = {".cc", ".cpp", ".cxx", ".c++", ".cp", ".C", ".CPP", ".CC", 0};

static int is_source(const char *a) {
    if (ends(a, ".c"))
        return 1;
    for (int k = 0; CXX_EXT[k]; k++)
        if (ends(a, CXX_EXT[k]))
            return 1;
    return 0;
}

/* Options whose value is the next token (when not joined): kept as they are. */
static int takes_value(const char *a) {
    static const char *sep[] = {"-I", "-D", "-U", "-isystem", "-iquote", "-idirafter",
                                "-include", "-MF", "-MT", "-MQ", 0};
    return listed(a, sep, 0);
}

/* Options the fast path passes to clang unchanged (everything else: the Python driver). */
static int plain_option(const char *a) {
    static const char *exact[] = {"-pthread", "-pipe", "-w", "-ansi", "-pedantic",
                                  "-pedantic-errors", "-MD", "-MMD", "-MP", "-P", "-C", 0};
    static const char *prefix[] = {"-I", "-D", "-U", "-isystem", "-iquote", "-idirafter",
                                   "-include", "-std=", "-W", "-f", "-g", "-m", "-MF", "-MT",
                                   "-MQ", 0};
    static const char *refused[] = {"-Wl,", "-include-pch", "-isystem-after", "-flto",
                                    "-fno-lto", "-ffat-lto", "-fno-fat-lto",
                                    "-fembed-bitcode", "-fplugin", "-fpass-plugin",
                                    "-fsyntax-only", "-fuse-ld", "-fopenmp", "-fno-openmp",
                                    "-fmodules", "-mllvm", "-fdriver-only", "-fsave-optimization",
                                    "-fprofile", "-fsanitize", "-fcoverage", "-fdump", 0};
    return !listed(a, refused, 1) && (listed(a, exact, 0) || listed(a, prefix, 1));
}

/* The object's bitcode section (clang's .llvmbc, a fat LTO object's .llvm.lto) renamed
 * .enzyme.bc, and it and .llvmcmd marked SHF_EXCLUDE:
 * the same in-place edit as compile._rename_in_place. 0 on success, -1 for another layout
 * (then llvm-objcopy does it). */
#define SHF_EXCLUDE 0x80000000u
struct shdr {
    uint32_t name, type;
    uint64_t flags, addr, offset, size;
    uint32_t link, info;
    uint64_t align, entsize;
};

static int rename_in_place(const char *path, const char *section) {
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 64) {
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    unsigned char *data = malloc(n + 64);
    int rc = -1;
    if (!data || pread(fd, data, n, 0) != (ssize_t)n || memcmp(data, "\x7f" "ELF\x02\x01", 6))
        goto out;
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx;
    memcpy(&shoff, data + 0x28, 8);
    memcpy(&shentsize, data + 0x3A, 2);
    memcpy(&shnum, data + 0x3C, 2);
    memcpy(&shstrndx, data + 0x3E, 2);
    if (shentsize != 64 || shoff + (uint64_t)shnum * 64 != n || shstrndx == 0 || shstrndx >= shnum)
        goto out;
    struct shdr *h = malloc(sizeof(struct shdr) * shnum);
    memcpy(h, data + shoff, sizeof(struct shdr) * shnum);
    uint64_t soff = h[shstrndx].offset, ssize = h[shstrndx].size;
    if (soff + ssize > shoff)
        goto out_h;
    int bc = -1, bcs = 0;
    for (int k = 0; k < shnum; k++) {
        if (k != shstrndx && h[k].type != 8 && h[k].offset + h[k].size > soff)
            goto out_h;             /* a section after the name table: not LLVM's layout */
        if (h[k].name >= ssize)
            goto out_h;
        const char *nm = (const char *)data + soff + h[k].name;
        if (!memchr(nm, 0, ssize - h[k].name))
            goto out_h;
        if (strcmp(nm, section) == 0)
            bc = k, bcs++;
        if (strcmp(nm, ".enzyme.bc") == 0)
            goto out_h;
    }
    if (bcs != 1)
        goto out_h;
    for (int k = 0; k < shnum; k++)
        if (strcmp((const char *)data + soff + h[k].name, ".llvmcmd") == 0)
            h[k].flags |= SHF_EXCLUDE;
    h[bc].name = (uint32_t)ssize;
    h[bc].flags |= SHF_EXCLUDE;
    static const char NEW[] = ".enzyme.bc";     /* with its terminating NUL */
    uint64_t tsize = ssize + sizeof NEW;
    h[shstrndx].size = tsize;
    uint64_t new_shoff = (soff + tsize + 7) & ~(uint64_t)7;
    size_t tail = (size_t)(new_shoff - soff) + sizeof(struct shdr) * shnum;
    unsigned char *buf = calloc(1, tail);
    memcpy(buf, data + soff, ssize);
    memcpy(buf + ssize, NEW, sizeof NEW);
    memcpy(buf + (new_shoff - soff), h, sizeof(struct shdr) * shnum);
    if (pwrite(fd, &new_shoff, 8, 0x28) == 8 && pwrite(fd, buf, tail, (off_t)soff) == (ssize_t)tail
        && ftruncate(fd, (off_t)(soff + tail)) == 0)
        rc = 0;
    free(buf);
out_h:
    free(h);
out:
    free(data);
    close(fd);
    return rc;
}

static int run(char **args) {
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execv(args[0], args);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* The object's bitcode section renamed .enzyme.bc (compile._embedded_as_ours): in place, else
 * by llvm-objcopy. The exit status. */
static int embedded_as_ours(const char *out, const char *tool_name, const char *section) {
    if (rename_in_place(out, section) == 0)
        return 0;
    char objcopy[PATH_MAX];
    if (!which(OBJCOPY_NAME, objcopy, sizeof objcopy)) {
        fprintf(stderr, "%s: error: cannot find '%s'\n", tool_name, OBJCOPY_NAME);
        return 1;
    }
    char rename[64];
    snprintf(rename, sizeof rename, "%s=.enzyme.bc,exclude", section);
    char *oc[] = {objcopy, "--rename-section", rename, "--remove-section", ".llvmcmd",
                  (char *)out, NULL};
    int rc = run(oc);
    return rc < 0 ? 1 : rc;
}

static int same_stat(const char *path, long long mtime_ns, long long size) {
    struct stat st;
    return stat(path, &st) == 0 &&
           (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec == mtime_ns &&
           (long long)st.st_size == size;
}

/* ---- links without markers --------------------------------------------------------------- */

/* True when the file's bytes hold a marker name, or it cannot be read, or it is a thin archive
 * (whose members live elsewhere): then the Python link step decides. */
static int may_call_markers(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 1;
    }
    size_t n = (size_t)st.st_size;
    char *data = malloc(n + 1);
    ssize_t got = data ? pread(fd, data, n, 0) : -1;
    close(fd);
    int hit = got != (ssize_t)n || (n >= 8 && memcmp(data, "!<thin>\n", 8) == 0) ||
              memmem(data, n, MARKER, sizeof MARKER - 1) != NULL;
    free(data);
    return hit;
}

/* -lNAME as GNU ld finds it (bitcode/libs.py find_library): per directory, libNAME.so, then
 * libNAME.a. Returns 1 when the library found is an archive holding a marker name. */
static int library_may_call_markers(const char *name, char **dirs, int ndirs) {
    char defaults[] = LIB_DIRS, path[PATH_MAX];
    char *all[256];
    int n = 0;
    for (int i = 0; i < ndirs && n < 200; i++)
        all[n++] = dirs[i];
    for (char *d = strtok(defaults, ":"); d && n < 256; d = strtok(NULL, ":"))
        all[n++] = d;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            if (name[0] == ':')
                snprintf(path, sizeof path, "%s/%s", all[i], name + 1);
            else
                snprintf(path, sizeof path, "%s/lib%s.%s", all[i], name, k ? "a" : "so");
            if (access(path, F_OK) != 0)
                continue;
            return ends(path, ".a") ? may_call_markers(path) : 0;   /* shared: never ours */
        }
    }
    return 0;                   /* not found: clang reports it */
}

/* Options of a link the fast path passes to clang unchanged. */
static int link_option(const char *a) {
    static const char *exact[] = {"-pthread", "-s", "-rdynamic", "-shared", "-pie", "-no-pie",
                                  "-static-libgcc", "-fPIC", "-fpic", "-fPIE", "-fpie", "-w", 0};
    static const char *prefix[] = {"-O", "-Wl,", "-g", "-march=", "-mtune=", "-fuse-ld=", 0};
    return listed(a, exact, 0) || listed(a, prefix, 1);
}

/* A link of .o/.a files with link_option()s, -L, -l and -o only: when nothing holds a marker
 * name, run clang with the same arguments (else return, and Python decides). */
static void link_fast_path(int argc, char **argv, const char *tool) {
    char **dirs = calloc((size_t)argc + 1, sizeof(char *));
    int ndirs = 0, inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            if (!ends(a, ".o") && !ends(a, ".a"))
                return;
            inputs++;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "-L") == 0 || strcmp(a, "-l") == 0) {
            if (++i >= argc)
                return;
            if (a[1] == 'L')
                dirs[ndirs++] = argv[i];
        } else if (starts(a, "-L")) {
            dirs[ndirs++] = (char *)a + 2;
        } else if (!starts(a, "-l") && !link_option(a)) {
            return;
        }
    }
    if (!inputs)
        return;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "-L") == 0) {
            i++;
        } else if (strcmp(a, "-l") == 0) {
            if (library_may_call_markers(argv[++i], dirs, ndirs))
                return;
        } else if (starts(a, "-l")) {
            if (library_may_call_markers(a + 2, dirs, ndirs))
                return;
        } else if (a[0] != '-' && may_call_markers(a)) {
            return;
        }
    }
    argv[0] = (char *)tool;
    execv(tool, argv);
}

/* ---- Fortran ----------------------------------------------------------------------------- */
static const char *FORTRAN_EXT[] = {".f", ".F", ".f77", ".F77", ".f90", ".F90", ".f95", ".F95",
                                    ".f03", ".F03", ".f08", ".F08", ".for", ".FOR", ".fpp",
                                    ".FPP", ".ftn", ".FTN", 0};

static int is_fortran(const char *a) {
    for (int k = 0; FORTRAN_EXT[k]; k++)
        if (ends(a, FORTRAN_EXT[k]))
            return 1;
    return 0;
}

/* flang options the fast path passes on unchanged; *value: the next token is the option's */
static int fortran_option(const char *a, int *value) {
    static const char *sep[] = {"-I", "-D", "-U", "-J", "-module-dir", 0};
    static const char *exact[] = {"-cpp", "-nocpp", "-w", "-pedantic", 0};
    static const char *prefix[] = {"-I", "-D", "-U", "-J", "-std=", "-W", "-f", "-g", "-m", 0};
    static const char *refused[] = {"-fopenmp", "-fno-openmp", "-fsyntax-only", "-flto",
                                    "-fno-lto", "-fembed-bitcode", "-fplugin", "-fpass-plugin",
                                    "-fsave-optimization", "-fprofile", "-fsanitize",
                                    "-fcoverage", "-fdriver-only", "-fc1", "-Wl,", 0};
    if ((*value = listed(a, sep, 0)))
        return 1;
    return !listed(a, refused, 1) && (listed(a, exact, 0) || listed(a, prefix, 1));
}

/* compile._names_enzyme: the source mentions enzyme, in any case (1 also when unreadable) */
static int names_enzyme(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    static const char word[] = "enzyme";
    size_t matched = 0;
    int c, found = 0;
    while (!found && (c = fgetc(f)) != EOF) {
        c = (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
        matched = c == word[matched] ? matched + 1 : (c == word[0] ? 1 : 0);
        found = matched == sizeof word - 1;
    }
    fclose(f);
    return found;
}

/* compile._codegen_flag: what matters when flang's IR is compiled to an object */
static int codegen_flag(const char *a) {
    static const char *prefix[] = {"-O", "-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-pic",
                                   "-fno-pie", "-march=", "-mcpu=", "-mtune=", "-m64", "-m32",
                                   "-ffunction-sections", "-fdata-sections",
                                   "-fomit-frame-pointer", "-fno-omit-frame-pointer",
                                   "--target=", "-g", 0};
    return !starts(a, "-gen") && !starts(a, "-Og") && listed(a, prefix, 1);
}

/* an include directory with Open MPI's gfortran-made Fortran headers
   (fortran_mpi_headers.py) */
static int mpi_fortran_headers(const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/mpif-sizeof.h", dir);
    return access(path, F_OK) == 0;
}

/* fortran_mpi_headers._key: FNV-1a (64 bits) over the headers' and flang's paths and stats */
static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static int stat_line(const char *path, char *line, size_t size) {
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    snprintf(line, size, "%s:%lld:%lld\n", path, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
    return 1;
}

/* The directory fortran_mpi_headers made for Open MPI's headers in `ompi`, in enzyme-cc's
   cache: 1 with its path in `shim`, 0 where its verdict is that flang reads Open MPI's own,
   -1 where Python has not decided yet (the caller hands the command to it). */
static int mpi_shim(const char *ompi, const char *flang, char *shim, size_t size) {
    char real[PATH_MAX], path[PATH_MAX + 32], line[2 * PATH_MAX + 64];
    if (!realpath(ompi, real))
        return -1;
    uint64_t h = fnv1a(0xcbf29ce484222325ULL, real);
    h = fnv1a(h, "\n");
    static const char *files[] = {"mpif.h", "mpif-sizeof.h"};
    for (int k = 0; k < 3; k++) {
        if (k < 2)
            snprintf(path, sizeof path, "%s/%s", real, files[k]);
        else if (!realpath(flang, path))
            return -1;
        if (!stat_line(path, line, sizeof line))
            return -1;
        h = fnv1a(h, line);
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char root[PATH_MAX];
    if (xdg && *xdg)
        snprintf(root, sizeof root, "%s/enzyme-cc", xdg);
    else if (home && *home)
        snprintf(root, sizeof root, "%s/.cache/enzyme-cc", home);
    else
        return -1;
    snprintf(shim, size, "%s/fortran-mpi/%016llx", root, (unsigned long long)h);
    snprintf(path, sizeof path, "%s/verdict", shim);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char verdict[16] = "";
    int ok = fgets(verdict, sizeof verdict, f) != NULL;
    fclose(f);
    if (ok && strcmp(verdict, "shim\n") == 0)
        return 1;
    return ok && strcmp(verdict, "none\n") == 0 ? 0 : -1;
}

/* cmd = tool, the n options of mid, the m words of tail, NULL (cmd has room for them all) */
static char **command(char **cmd, const char *tool, char **mid, int n, char **tail, size_t m) {
    int k = 0;
    cmd[k++] = (char *)tool;
    for (int i = 0; i < n; i++)
        cmd[k++] = mid[i];
    for (size_t i = 0; i < m; i++)
        cmd[k++] = tail[i];
    cmd[k] = NULL;
    return cmd;
}

static void fortran_fast_path(int argc, char **argv, const char *clang) {
    char flang[PATH_MAX], real[PATH_MAX];
    if (!which(FLANG_NAME, flang, sizeof flang) || !realpath(flang, real) ||
        strcmp(real, FLANG_REAL) != 0 || !same_stat(real, FLANG_MTIME_NS, FLANG_SIZE))
        return;
    const char *src = NULL, *out = NULL, *ompi = NULL;
    int compile = 0;
    char **keep = calloc((size_t)argc + 2, sizeof(char *));
    char **cg = calloc((size_t)argc + 1, sizeof(char *));
    int nkeep = 1, ncg = 0;                 /* keep[0]: our -I for Open MPI's headers */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int value;
        if (a[0] != '-' || a[1] == 0) {
            if (src || !is_fortran(a))
                return;
            src = a;
        } else if (strcmp(a, "-c") == 0) {
            compile = 1;
        } else if (strcmp(a, "-o") == 0) {
            if (out || i + 1 >= argc)
                return;
            out = argv[++i];
        } else if (a[1] == 'O' || fortran_option(a, &value)) {
            const char *inc = a[2] ? a + 2 : i + 1 < argc ? argv[i + 1] : "";
            if (starts(a, "-I") && !ompi && mpi_fortran_headers(inc))
                ompi = inc;
            keep[nkeep++] = (char *)a;
            if (codegen_flag(a))
                cg[ncg++] = (char *)a;
            if (a[1] != 'O' && value) {
                if (i + 1 >= argc)
                    return;
                keep[nkeep++] = argv[++i];
            }
        } else {
            return;
        }
    }
    struct stat st;
    if (!src || !out || !compile || out[0] == '-' || stat(src, &st) != 0)
        return;
    /* with_mpi_headers: our directory first where Open MPI's headers are gfortran's */
    char shim[PATH_MAX], shim_arg[PATH_MAX + 2];
    int use_shim = ompi ? mpi_shim(ompi, flang, shim, sizeof shim) : 0;
    if (use_shim < 0)
        return;
    snprintf(shim_arg, sizeof shim_arg, "-I%s", shim);
    char **opts = use_shim ? keep : keep + 1;
    int nopts = use_shim ? nkeep : nkeep - 1;
    keep[0] = shim_arg;
    char **cmd = calloc((size_t)(nkeep > ncg ? nkeep : ncg) + 16, sizeof(char *));
    if (!names_enzyme(src)) {
        /* one flang run: the object, and its pre-link bitcode in .llvm.lto */
        char *tail[] = {"-flto=full", "-ffat-lto-objects", "-c", (char *)src, "-o", (char *)out};
        int rc = run(command(cmd, flang, opts, nopts, tail, sizeof tail / sizeof *tail));
        if (rc == 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
            rc = embedded_as_ours(out, "enzyme-fc", ".llvm.lto");
        exit(rc < 0 ? 1 : rc);
    }
    /* a source naming enzyme (its loops may be marked): flang's IR before LLVM's passes,
       compiled by clang; named after the source in a fresh directory (as
       compile._compile_fortran: the name clang records is the same every build) */
    const char *tmpdir = getenv("TMPDIR");
    char dir[PATH_MAX], bc[2 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s/enzyme-fc-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(dir))
        return;
    const char *stem = argv0_base((char *)src), *dot = strrchr(stem, '.');
    snprintf(bc, sizeof bc, "%s/%.*s.bc", dir, (int)(dot ? dot - stem : (long)strlen(stem)), stem);
    char *tail[] = {"-emit-llvm", "-mllvm", "-opt-bisect-limit=0", "-mllvm",
                    "-opt-bisect-verbose=false", "-c", (char *)src, "-o", bc};
    int rc = run(command(cmd, flang, opts, nopts, tail, sizeof tail / sizeof *tail));
    if (rc == 0) {
        char *cc_tail[] = {"-Wno-unused-command-line-argument", "-Xclang", "-fembed-bitcode=all",
                           "-c", bc, "-o", (char *)out};
        rc = run(command(cmd, clang, cg, ncg, cc_tail, sizeof cc_tail / sizeof *cc_tail));
        if (rc == 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
            rc = embedded_as_ours(out, "enzyme-fc", ".llvmbc");
    }
    unlink(bc);
    rmdir(dir);
    exit(rc < 0 ? 1 : rc);
}

int main(int argc, char **argv) {
    const char *base = argv0_base(argv[0]);
    int cxx = strcmp(base, "enzyme-c++") == 0, fortran = strcmp(base, "enzyme-fc") == 0;
    const char *driver = cxx ? "clang++" : fortran ? "flang" : "clang";
    if (!cxx && !fortran && strcmp(base, "enzyme-cc") != 0)
        fallback(driver, argc, argv);
    char tool[PATH_MAX], toolxx[PATH_MAX], real[PATH_MAX];
    int tools_ok = which(cxx ? CLANGXX_NAME : CLANG_NAME, tool, sizeof tool) &&
                   which(CLANGXX_NAME, toolxx, sizeof toolxx) && realpath(toolxx, real) &&
                   strcmp(real, CLANGXX_REAL) == 0 &&
                   same_stat(real, CLANGXX_MTIME_NS, CLANGXX_SIZE);
    if (fortran) {              /* its links (flang's runtime libraries) go to Python */
        if (tools_ok && !any_enzyme_env() && !config_upward())
            fortran_fast_path(argc, argv, tool);
        fallback(driver, argc, argv);
    }
    if (tools_ok && !any_enzyme_env() && !config_upward())
        link_fast_path(argc, argv, tool);

    /* The command line: exactly one C/C++ source, -c, -o OUT, an optimization level >= 1,
     * and only options from plain_option(). */
    const char *src = NULL, *out = NULL;
    int compile = 0, opt = 0;
    char **keep = calloc((size_t)argc + 16, sizeof(char *));
    int nkeep = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == 0) {
            if (src || !is_source(a))
                fallback(driver, argc, argv);
            src = a;
        } else if (strcmp(a, "-c") == 0) {
            compile = 1;
        } else if (strcmp(a, "-o") == 0) {
            if (out || i + 1 >= argc)
                fallback(driver, argc, argv);
            out = argv[++i];
        } else if (a[1] == 'O') {
            /* -O1..-O3 (and above), -Os, -Oz, -Ofast, -O; -O0 has its own two-job path */
            const char *v = a + 2;
            if (strcmp(v, "0") == 0)
                opt = 0;
            else if (*v == 0 || strcmp(v, "s") == 0 || strcmp(v, "z") == 0 ||
                     strcmp(v, "fast") == 0 || (v[0] >= '1' && v[0] <= '9' && v[1] == 0))
                opt = 1;
            else
                fallback(driver, argc, argv);
            keep[nkeep++] = (char *)a;
        } else if (plain_option(a)) {
            keep[nkeep++] = (char *)a;
            if (takes_value(a)) {
                if (i + 1 >= argc)
                    fallback(driver, argc, argv);
                keep[nkeep++] = argv[++i];
            }
        } else {
            fallback(driver, argc, argv);
        }
    }
    if (!src || !out || !compile || !opt || out[0] == '-' || any_enzyme_env() || config_upward())
        fallback(driver, argc, argv);
    struct stat st;
    if (stat(src, &st) != 0)
        fallback(driver, argc, argv);       /* clang's own "no such file" via the driver */

    /* The tools and the plugin the Python driver would pick (else it decides). */
    if (!tools_ok || !same_stat(PLUGIN_SOURCE, PLUGIN_SOURCE_MTIME_NS, PLUGIN_SOURCE_SIZE) ||
        access(PLUGIN, R_OK) != 0)
        fallback(driver, argc, argv);

    char **cmd = calloc((size_t)nkeep + 16, sizeof(char *));
    int k = 0;
    cmd[k++] = tool;
    for (int i = 0; i < nkeep; i++)
        cmd[k++] = keep[i];
    cmd[k++] = "-isystem";
    cmd[k++] = INCLUDE_DIR;
    cmd[k++] = "-fplugin=" PLUGIN;
    cmd[k++] = "-Xclang";
    cmd[k++] = "-fembed-bitcode=all";
    cmd[k++] = "-c";
    cmd[k++] = (char *)src;
    cmd[k++] = "-o";
    cmd[k++] = (char *)out;
    cmd[k] = NULL;
    int rc = run(cmd);
    if (rc != 0)
        return rc < 0 ? 1 : rc;
    if (stat(out, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;                           /* -o /dev/null */
    return embedded_as_ours(out, base, ".llvmbc");
}
