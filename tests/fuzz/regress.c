/* regress.c — run a fuzz target's corpus as a plain regression test.
 *
 *   regress_fuzz_url DIR|FILE...
 *
 * Linked with one target (tests/fuzz/fuzz_*.c) and built by the ordinary
 * compiler, no libFuzzer needed: every regular file of each DIR (in name
 * order), or each FILE, is passed once to LLVMFuzzerTestOneInput. A
 * violated invariant aborts, so the exit status is the verdict. Prints one
 * line: "NAME: N inputs passed". Exits 1 if a directory cannot be read or
 * nothing was run. When an input crashes (an invariant's abort, or a
 * sanitizer report in a SANITIZE= build), its path is printed last. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* The sanitizers read these when linked in; abort_on_error turns their
 * reports into SIGABRT, so on_crash below can name the input. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void)
{
    return "abort_on_error=1";
}
const char *__ubsan_default_options(void)
{
    return "abort_on_error=1:print_stacktrace=1";
}

static const char *current;

static void on_crash(int sig)
{
    static const char msg[] = "regress: the input that crashed: ";

    if (current) {
        /* Only async-signal-safe calls here. */
        (void)!write(2, msg, sizeof msg - 1);
        (void)!write(2, current, strlen(current));
        (void)!write(2, "\n", 1);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (f == NULL) {
        fprintf(stderr, "regress: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (;;) {
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap ? cap * 2 : 4096);
            if (grown == NULL) {
                fprintf(stderr, "regress: out of memory reading %s\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = grown;
            cap = cap ? cap * 2 : 4096;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        fprintf(stderr, "regress: cannot read %s\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    current = path;
    LLVMFuzzerTestOneInput(buf, len);
    current = NULL;
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (d == NULL) {
        fprintf(stderr, "regress: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;

        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            char **grown = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
            if (grown == NULL)
                abort();
            names = grown;
        }
        if ((names[n++] = strdup(path)) == NULL)
            abort();
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp);
    for (size_t i = 0; i < n; i++) {
        if (run_file(names[i]) < 0)
            rc = -1;
        else
            (*count)++;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int count = 0, rc = 0;
    struct stat st;

    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR|FILE...\n", name);
        return 2;
    }
    signal(SIGABRT, on_crash);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGILL, on_crash);
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (run_dir(argv[i], &count) < 0)
                rc = 1;
        } else if (run_file(argv[i]) < 0) {
            rc = 1;
        } else {
            count++;
        }
    }
    if (count == 0) {
        fprintf(stderr, "%s: no inputs run\n", name);
        return 1;
    }
    printf("%s: %d inputs passed\n", name, count);
    return rc;
}
