/* cli_again.c — the options that name the lock service, as words to paste
 * into another command of the same job (cli.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "escape.h"
#include "url.h"

/* One word, escaped for the terminal, then quoted for the shell. */
static void put_word(char *out, size_t len, size_t *o, const char *w)
{
    char t[1200], q[sizeof t * 4 + 3];

    rr_text_escape(w, t, sizeof t);
    rr_shell_word(t, q, sizeof q);
    if (*o < len)
        *o += (size_t)snprintf(out + *o, len - *o, " %s", q);
}

static void put_opt(char *out, size_t len, size_t *o, const char *opt, const char *val)
{
    if (!val || !*val)
        return;
    put_word(out, len, o, opt);
    put_word(out, len, o, val);
}

int rr_cli_target_words(const struct rr_config *cfg, char *out, size_t len)
{
    size_t o = 0;
    char url[1024];

    if (len == 0)
        return -1;
    out[0] = '\0';
    for (int i = 0; !cfg->default_url && i < cfg->n_endpoints; i++)
        if (rr_url_format(&cfg->endpoints[i], url, sizeof url) == 0)
            put_opt(out, len, &o, "-r", url);
    if (cfg->prefix && strcmp(cfg->prefix, RR_DEFAULT_PREFIX) != 0)
        put_opt(out, len, &o, "--prefix", cfg->prefix);
    put_opt(out, len, &o, "--password-file", cfg->password_file);
    put_opt(out, len, &o, "--sentinel-password-file", cfg->sentinel_password_file);
    put_opt(out, len, &o, "--tls-ca", cfg->tls_ca);
    put_opt(out, len, &o, "--tls-ca-dir", cfg->tls_ca_dir);
    put_opt(out, len, &o, "--tls-cert", cfg->tls_cert);
    put_opt(out, len, &o, "--tls-key", cfg->tls_key);
    put_opt(out, len, &o, "--tls-sni", cfg->tls_sni);
    if (cfg->tls_insecure)
        put_word(out, len, &o, "--tls-insecure");
    if (o >= len) {
        /* Never a command without them: it would reach another Redis. */
        snprintf(out, len, " [the -r, --prefix and --tls-* options given here]");
        return -1;
    }
    return 0;
}

const char *rr_cli_resolve_command(char *out, size_t len, const char *again, const char *verb,
                                   const char *id, const char *name)
{
    char qid[RR_ONCE_MAX * 4 + 3], qnm[1100];

    snprintf(out, len, "redlock-run%s --resolve %s%s%s %s", again ? again : "", verb,
             id && *id ? " --once " : "", id && *id ? rr_shell_word(id, qid, sizeof qid) : "",
             rr_shell_word(name, qnm, sizeof qnm));
    return out;
}
