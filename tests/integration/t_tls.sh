#!/usr/bin/env bash
# t_tls.sh — rediss:// against real TLS redis-servers, with certificates
# made here by openssl: a CA, a server certificate for localhost and
# 127.0.0.1, one for wrong.example, an expired one, one from another CA,
# and a client certificate. Every case checks the exit status, whether the
# command ran and what Redis holds.
# shellcheck disable=SC2016,SC2153  # child commands; NAME_URL etc. come from start_*
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || { t "openssl"; fail "openssl not installed"; done_testing; exit 1; }

# --- certificates (lib.sh's pki_*, in $PKI) -----------------------------------

pki_ca ca && pki_ca otherca &&
    pki_cert good ca "DNS:localhost,IP:127.0.0.1" -days 30 &&
    pki_cert wrong ca "DNS:wrong.example" -days 30 &&
    pki_cert expired ca "DNS:localhost,IP:127.0.0.1" -startdate 20200101000000Z -enddate 20200201000000Z &&
    pki_cert foreign otherca "DNS:localhost,IP:127.0.0.1" -days 30 &&
    pki_cert client ca "DNS:client.example" -days 30 ||
    { t "make certificates"; fail "openssl could not make the test certificates"; done_testing; exit 1; }
CA=$PKI/ca.crt

# --- TLS servers (lib.sh's start_tls; R reaches them with client.crt) -----------

# Under valgrind OpenSSL's start-up and handshake take far longer than the
# default timeouts; the calls that time things use rr_direct (no valgrind).
if [ "${RR_VALGRIND:-0}" = 1 ]; then
    rr() { run_limited "${RR[@]}" --connect-timeout 15s --redis-timeout 10s "$@"; }
fi

start_tls T good || { t "start TLS redis"; fail "cannot start a TLS redis-server"; done_testing; exit 1; }
start_tls W wrong
start_tls X expired
start_tls F foreign
start_tls M good --tls-auth-clients yes
start_tls P good --requirepass tlspass
start_redis S
M1=T
start_tls M2 good
start_tls M3 good

ran=$TMP/ran
mark=(sh -c 'echo x >>"$1"' sh "$ran")
runs() { count_lines "$ran"; }
reset_ran() { rm -f "$ran"; }

# ---------------------------------------------------------------------------
t "verified by name: rediss://localhost, the command runs, the lock is released"
reset_ran
rr -r "$T_URL" --tls-ca "$CA" byname -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"
assert_key_gone T "$(k_lock byname)"
assert_hash T "$(k_state byname)" status succeeded

t "verified by IP: rediss://127.0.0.1 against the IP subjectAltName"
reset_ran
rr -r "$T_IPURL" --tls-ca "$CA" byip -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"
assert_hash T "$(k_state byip)" status succeeded

t "the system store honours SSL_CERT_FILE"
reset_ran
SSL_CERT_FILE=$CA rr -r "$T_URL" sysstore -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"

t "--tls-ca-dir: a hashed directory"
mkdir -p "$PKI/dir" && cp "$CA" "$PKI/dir/ca.pem" && openssl rehash "$PKI/dir" 2>/dev/null
reset_ran
rr -r "$T_URL" --tls-ca-dir "$PKI/dir" cadir -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"

t "unknown CA: 78, names the --tls-ca that was passed, nothing ran, nothing written"
reset_ran
rr -r "$F_URL" --tls-ca "$CA" unknownca -- "${mark[@]}"
assert_rc 78
assert_eq 0 "$(runs)" "times the command ran"
assert_contains "$(cat "$ERR")" "certificate not signed by the CA of --tls-ca $CA"
# It was passed: "pass --tls-ca" would send the reader in a circle.
assert_not_contains "$(cat "$ERR")" "pass --tls-ca"
assert_eq 0 "$(R F EXISTS "$(k_lock unknownca)" "$(k_state unknownca)")" "keys written"
# And with the system store, which does not know our CA: then pass one.
SSL_CERT_FILE=$PKI/otherca.crt rr -r "$T_URL" unknownca -- "${mark[@]}"
assert_rc 78 "system store"
assert_contains "$(cat "$ERR")" "certificate not signed by a trusted CA"
assert_contains "$(cat "$ERR")" "pass --tls-ca"
assert_eq 0 "$(runs)" "times the command ran"

t "a --tls-* file that does not load: 64 when it cannot be read, 78 when it holds no certificate"
reset_ran
rr -r "$T_URL" --tls-ca "$TMP/no-such-ca.pem" badca -- "${mark[@]}"
assert_rc 64 "a missing --tls-ca"
assert_contains "$(cat "$ERR")" "cannot read --tls-ca '$TMP/no-such-ca.pem': No such file or directory"
printf 'not a certificate\n' >"$TMP/junk-ca.pem"
rr -r "$T_URL" --tls-ca "$TMP/junk-ca.pem" badca -- "${mark[@]}"
assert_rc 78 "a --tls-ca with no certificate in it"
assert_contains "$(cat "$ERR")" "cannot load --tls-ca $TMP/junk-ca.pem"
rr -r "$M_URL" --tls-ca "$CA" --tls-cert "$PKI/client.crt" --tls-key "$PKI/good.key" badkey -- "${mark[@]}"
assert_rc 78 "a key that does not match the certificate"
assert_contains "$(cat "$ERR")" "cannot use --tls-key"
assert_eq 0 "$(runs)" "times the command ran"

t "name mismatch: 78, names the certificate's names and the fix"
reset_ran
rr -r "$W_URL" --tls-ca "$CA" mismatch -- "${mark[@]}"
assert_rc 78
assert_eq 0 "$(runs)" "times the command ran"
assert_contains "$(cat "$ERR")" "cannot connect to localhost:$W_PORT: certificate names wrong.example, not localhost; fix the URL or pass --tls-sni"
assert_eq 0 "$(R W EXISTS "$(k_lock mismatch)" "$(k_state mismatch)")" "keys written"
rr -r "rediss://127.0.0.1:$W_PORT" --tls-ca "$CA" mismatch -- "${mark[@]}"
assert_rc 78 "by IP"
assert_contains "$(cat "$ERR")" "not 127.0.0.1"

t "--tls-sni: the name sent and verified"
reset_ran
rr -r "$W_URL" --tls-ca "$CA" --tls-sni wrong.example sni -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"
assert_hash W "$(k_state sni)" status succeeded
rr -r "$T_URL" --tls-ca "$CA" --tls-sni wrong.example sni -- "${mark[@]}"
assert_rc 78 "a name the certificate does not have"

t "--tls-insecure: runs against a wrong name and an unknown CA, warns every time, even with -q"
reset_ran
rr -r "$W_URL" --tls-insecure insecure -- "${mark[@]}"
assert_rc 0
assert_contains "$(cat "$ERR")" "--tls-insecure: the server's certificate is not verified"
rr -q -r "$F_URL" --tls-insecure insecure -- "${mark[@]}"
assert_rc 0 "quiet, unknown CA"
assert_contains "$(cat "$ERR")" "--tls-insecure"
assert_eq 2 "$(runs)" "times the command ran"

t "expired certificate: 78, says so"
reset_ran
rr -r "$X_URL" --tls-ca "$CA" expired -- "${mark[@]}"
assert_rc 78
assert_eq 0 "$(runs)" "times the command ran"
assert_contains "$(cat "$ERR")" "certificate has expired"
assert_eq 0 "$(R X EXISTS "$(k_state expired)")" "state written"

t "mutual TLS: without a client certificate 78, with one it runs"
reset_ran
rr -r "$M_URL" --tls-ca "$CA" mtls -- "${mark[@]}"
assert_rc 78
assert_contains "$(cat "$ERR")" "client certificate"
assert_eq 0 "$(runs)" "times the command ran"
assert_eq 0 "$(R M EXISTS "$(k_state mtls)")" "state written"
rr -r "$M_URL" --tls-ca "$CA" --tls-cert "$PKI/client.crt" --tls-key "$PKI/client.key" mtls -- "${mark[@]}"
assert_rc 0 "with --tls-cert"
assert_eq 1 "$(runs)" "times the command ran"
assert_hash M "$(k_state mtls)" status succeeded

t "a client certificate from a CA the server does not trust: 78"
rr -r "$M_URL" --tls-ca "$CA" --tls-cert "$PKI/foreign.crt" --tls-key "$PKI/foreign.key" mtls -- "${mark[@]}"
assert_rc 78
assert_eq 1 "$(runs)" "times the command ran"

t "password over TLS: --password-file works, a wrong one is refused (78)"
reset_ran
printf 'tlspass\n' >"$TMP/pw"
printf 'nope\n' >"$TMP/badpw"
rr -r "$P_URL" --tls-ca "$CA" --password-file "$TMP/pw" pass -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"
assert_hash P "$(k_state pass)" status succeeded
rr -r "$P_URL" --tls-ca "$CA" --password-file "$TMP/badpw" pass -- "${mark[@]}"
assert_rc 78 "wrong password (the server refused our configuration)"
assert_eq 1 "$(runs)" "times the command ran"

t "TLS to a plain port: 69 within the connect timeout, with a hint"
reset_ran
rr_direct -r "rediss://127.0.0.1:$S_PORT" --connect-timeout 1s tlsplain -- "${mark[@]}"
assert_rc 69
assert_lt "$ELAPSED_MS" 3000 "elapsed ms"
assert_contains "$(cat "$ERR")" "plain redis:// port"
assert_eq 0 "$(runs)" "times the command ran"
assert_eq 0 "$(R S EXISTS "$(k_state tlsplain)")" "state written"

t "TLS to a plain port: the handshake gets --connect-timeout, not 2 x --redis-timeout"
rr_direct -r "rediss://127.0.0.1:$S_PORT" --connect-timeout 3s --redis-timeout 500ms tlsplain2 -- "${mark[@]}"
assert_rc 69
# Seen giving up after about 1 s (2 x 500 ms) before: a slow handshake
# could not be given more time.
[ "$ELAPSED_MS" -ge 2500 ] || fail "gave up after ${ELAPSED_MS} ms, before --connect-timeout 3s"
assert_lt "$ELAPSED_MS" 5000 "elapsed ms"
assert_contains "$(cat "$ERR")" "did not answer TLS"
end_test

t "plain to a TLS port: 69, bounded, with the hint to use rediss://"
rr_direct -r "redis://127.0.0.1:$T_PORT" --connect-timeout 1s --redis-timeout 500ms plaintls -- "${mark[@]}"
assert_rc 69
assert_lt "$ELAPSED_MS" 3000 "elapsed ms"
assert_contains "$(cat "$ERR")" "(is it a TLS port?); if it is, use rediss://"
assert_not_contains "$(cat "$ERR")" "; check that Redis is up"
assert_eq 0 "$(runs)" "times the command ran"
assert_eq 0 "$(R T EXISTS "$(k_state plaintls)")" "state written"

t "a SIGSTOPped TLS server: 69 within the connect timeout"
pause_redis M3
rr_direct -r "$M3_URL" --tls-ca "$CA" --connect-timeout 1s stopped -- "${mark[@]}"
resume_redis M3
assert_rc 69
assert_lt "$ELAPSED_MS" 3500 "elapsed ms"
assert_contains "$(cat "$ERR")" "did not answer TLS"
assert_eq 0 "$(runs)" "times the command ran"

t "--wait does not retry a refusal (78 at once)"
rr_direct -r "$W_URL" --tls-ca "$CA" --wait 10s waitrefused -- "${mark[@]}"
assert_rc 78
assert_lt "$ELAPSED_MS" 3000 "elapsed ms"
assert_eq 0 "$(runs)" "times the command ran"

t "a 1 s TTL renewed over TLS under a 3 s command"
reset_ran
rr_direct -r "$T_URL" --tls-ca "$CA" --ttl 1s renew -- sh -c 'sleep 3; echo x >>"$1"' sh "$ran"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"
assert_hash T "$(k_state renew)" status succeeded
assert_key_gone T "$(k_lock renew)"

t "--wait over TLS: woken by the holder's release"
reset_ran
bg "$TMP/holder" "$RR_BIN" -r "$T_URL" --tls-ca "$CA" waitjob -- sh -c 'sleep 1.5; echo h >>"$1"' sh "$ran"
h=$BG
wait_for 5 key_there T "$(k_lock waitjob)" || fail "the holder never took the lock"
rr -r "$T_URL" --tls-ca "$CA" --wait 10s waitjob -- "${mark[@]}"
wait_pid "$h" "$RR_LIMIT"
assert_rc 0 "waiter"
assert_eq 0 "$RC" "holder"
assert_eq "h x" "$(tr '\n' ' ' <"$ran" | sed 's/ $//')" "order of runs"
assert_key_gone T "$(k_lock waitjob)"

t "--once over TLS: the second run is skipped"
reset_ran
rr -r "$T_URL" --tls-ca "$CA" --once day1 oncejob -- "${mark[@]}"
assert_rc 0
rr -r "$T_URL" --tls-ca "$CA" --once day1 oncejob -- "${mark[@]}"
assert_rc 0 "second"
assert_eq 1 "$(runs)" "times the command ran"
assert_hash T "$(k_once oncejob day1)" status succeeded

t "--status, --release and --resolve over TLS"
rr -r "$T_URL" --tls-ca "$CA" --status --json byname
assert_rc 0 "--status"
assert_contains "$(cat "$OUT")" '"succeeded"'
# A lock with no record of its holder (an application's SET NX PX) is a
# live holder: --release would wait for its lease (t_app.sh); --force
# deletes it at once, over TLS as anywhere.
R T SET "$(k_lock held)" sometoken PX 60000 >/dev/null
rr -r "$T_URL" --tls-ca "$CA" --release --force held
assert_rc 0 "--release --force"
assert_key_gone T "$(k_lock held)"
rr -r "$T_URL" --tls-ca "$CA" --resolve clear --once day1 oncejob
assert_rc 0 "--resolve"
rr -r "$W_URL" --tls-ca "$CA" --status byname
assert_rc 78 "--status, name mismatch"

t "Redlock over 3 TLS masters, one down: runs on the quorum"
reset_ran
stop_redis M3
rr -r "$T_URL" -r "$M2_URL" -r "$M3_URL" --tls-ca "$CA" quorum -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"
assert_hash T "$(k_state quorum)" status succeeded
assert_hash M2 "$(k_state quorum)" status succeeded

t "Redlock mixing plain and TLS masters"
reset_ran
rr -r "$T_URL" -r "$S_URL" -r "$M2_URL" --tls-ca "$CA" mixed -- "${mark[@]}"
assert_rc 0
assert_eq 1 "$(runs)" "times the command ran"
assert_hash T "$(k_state mixed)" status succeeded
assert_hash S "$(k_state mixed)" status succeeded
assert_hash M2 "$(k_state mixed)" status succeeded

t "a plain run does not load OpenSSL; a TLS run does"
assert_eq "" "$(ldd "$RR_BIN" | grep -E 'libssl|libcrypto')" "ldd"
# The command's parent is the guard, forked before any connection: the
# maps to read are redlock-run's, the guard's parent.
RMAPS='cat /proc/$(cut -d" " -f4 /proc/$PPID/stat)/maps'
"$RR_BIN" -r "$S_URL" maps -- sh -c "$RMAPS" >"$TMP/maps.plain" 2>/dev/null
"$RR_BIN" -r "$T_URL" --tls-ca "$CA" maps -- sh -c "$RMAPS" >"$TMP/maps.tls" 2>/dev/null
assert_eq 0 "$(grep -c libssl "$TMP/maps.plain")" "libssl mapped in a plain run"
assert_ne 0 "$(grep -c libssl "$TMP/maps.tls")" "libssl mapped in a TLS run"

done_testing
