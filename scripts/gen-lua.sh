#!/bin/sh
# gen-lua.sh OUT LUA... — embed the Lua scripts as C strings with their
# SHA1, so EVALSHA needs no hashing at run time and no crypto library, and
# name each script's KEYS and ARGV once, for both languages.
#
# A script lists its keys and arguments, in order, in header lines:
#   --! KEYS lock state history once?    a trailing ? : optional (the last ones)
#   --! ARGV token ttl_ms                several ARGV (or KEYS) lines continue
#   --! ARGV history_id...               a trailing ... : the rest of ARGV
# In the script as sent (and hashed) each header line is replaced by Lua
# locals holding the positions, on the same line so line numbers stay:
#   local KEY_LOCK, KEY_STATE, KEY_HISTORY, KEY_ONCE = 1, 2, 3, 4
# OUT gets, per script, C enums of the same positions counted from 0
# (RR_RELEASE_KEY_LOCK ... RR_RELEASE_NKEYS, RR_RELEASE_ARG_TOKEN ...
# RR_RELEASE_NARGS, the fixed ones; a rest starts at NARGS) and enum
# rr_script; with RR_SCRIPTS_SOURCES defined, the sources, SHA1s and shapes
# (scripts.c). The body must use the names: a literal KEYS[1] or ARGV[1],
# or a declared name the body never uses, fails the build.
#
# A line "--@ include NAME" is replaced by src/lua/lib/NAME.lua joined into
# one line (its comment lines left out; a line of code there may carry no
# comment), so that line numbers stay and a helper two scripts need is
# written once.
#
# A planted defect (scripts/mutants) is a line of its own
#   --mutant NAME: CODE
# that is sent as an empty line; with $MUTANT = NAME (make MUTANT=NAME) the
# line after it is replaced by CODE. A normal build sends neither.
set -eu
out=$1; shift
tmp=$out.d.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# One script: $tmp/N.lua (as sent), $tmp/N.h (its enums), $tmp/N.shape.
lua_names='
function fail(msg) { print FILENAME ":" FNR ": " msg > "/dev/stderr"; failed = 1; exit 1 }
BEGIN { nk = 0; na = 0; kmin = -1; rest = 0 }
/^ *--mutant [a-z_]+: / {
    m = $0; sub(/^ *--mutant /, "", m)
    mname = m; sub(/:.*/, "", mname)
    if (mname == mutant) { swap = m; sub(/^[a-z_]+: /, "", swap) }
    print "" > src
    next
}
swap != "" { $0 = swap; swap = "" }
/^--@ / {
    if ($2 != "include" || NF != 3 || $3 !~ /^[a-z_]+$/) fail("a directive is --@ include NAME")
    lib = FILENAME; sub(/[^\/]*$/, "", lib); lib = lib "lib/" $3 ".lua"
    line = ""
    while ((r = (getline l < lib)) > 0) {
        sub(/^[ \t]+/, "", l)
        if (l ~ /^--mutant /) fail(lib ": a planted defect belongs in the script, not in lib/")
        if (l ~ /^--\[=*\[/) fail(lib ": a long comment cannot be joined into one line")
        if (l == "" || l ~ /^--/) continue
        if (l ~ /--/) fail(lib ": a line to include carries a comment: " l)
        if (l ~ /\[=*\[/) fail(lib ": a long string cannot be joined into one line: " l)
        if (l ~ /^\(/) fail(lib ": a line that starts with ( would call what ends the line before: " l)
        line = line (line == "" ? "" : " ") l
    }
    close(lib)
    if (r < 0 || line == "") fail("nothing to include from " lib)
    $0 = line
}
/^--! / {
    kind = $2
    if (kind != "KEYS" && kind != "ARGV") fail("a header line is --! KEYS or --! ARGV")
    if (NF < 3) fail("an empty header line")
    lhs = ""; rhs = ""
    for (i = 3; i <= NF; i++) {
        w = $i; opt = sub(/\?$/, "", w); more = sub(/\.\.\.$/, "", w)
        if (w !~ /^[a-z][a-z0-9_]*$/) fail("not a name: " $i)
        if (rest) fail("nothing may follow " lastrest "...")
        if (kind == "KEYS") {
            if (more) fail("KEYS has no rest")
            id = "KEY_" toupper(w); key[++nk] = toupper(w); pos = nk
            if (opt && kmin < 0) kmin = nk - 1
            if (!opt && kmin >= 0) fail("an optional key must be among the last")
        } else {
            if (opt) fail("an argument is optional only as part of a rest (name...)")
            id = "ARG_" toupper(w); arg[++na] = toupper(w); pos = na
            if (more) { rest = 1; lastrest = w }
        }
        if (id in used) fail("declared twice: " w)
        used[id] = 0
        lhs = lhs (lhs == "" ? "" : ", ") id
        rhs = rhs (rhs == "" ? "" : ", ") pos
    }
    print "local " lhs " = " rhs > src
    next
}
{
    code = $0
    sub(/--.*/, "", code)
    if (code ~ /(KEYS|ARGV)\[ *[0-9]/) fail("a literal index; use the names of the --! lines")
    for (id in used)
        if (!used[id] && code ~ ("(^|[^A-Za-z0-9_])" id "([^A-Za-z0-9_]|$)"))
            used[id] = 1
    print $0 > src
}
END {
    if (failed) exit 1
    for (id in used)
        if (!used[id]) { print FILENAME ": declared but never used: " id > "/dev/stderr"; exit 1 }
    N = "RR_" toupper(name)
    print "/* " name ".lua */" > hdr
    printf "enum rr_%s_key {", name > hdr
    for (i = 1; i <= nk; i++) printf "\n    %s_KEY_%s,", N, key[i] > hdr
    printf "\n    %s_NKEYS\n};\n", N > hdr
    printf "enum rr_%s_arg {", name > hdr
    for (i = 1; i <= na; i++) printf "\n    %s_ARG_%s,", N, arg[i] > hdr
    if (rest) printf "\n    %s_NARGS = %s_ARG_%s\n};\n", N, N, arg[na] > hdr
    else printf "\n    %s_NARGS\n};\n", N > hdr
    print (kmin < 0 ? nk : kmin) ", " nk ", " (rest ? na - 1 : na) ", " rest > shape
}'

for f in "$@"; do
  n=$(basename "$f" .lua)
  awk -v name="$n" -v mutant="${MUTANT:-}" -v src="$tmp/$n.lua" -v hdr="$tmp/$n.h" -v shape="$tmp/$n.shape" \
      "$lua_names" "$f"
done

{
  echo "/* Generated by scripts/gen-lua.sh from src/lua/; do not edit. */"
  echo "#ifndef RR_SCRIPTS_GEN_H"
  echo "#define RR_SCRIPTS_GEN_H"
  echo
  echo "enum rr_script {"
  for f in "$@"; do
    echo "    RR_SCRIPT_$(basename "$f" .lua | tr a-z A-Z),"
  done
  echo "    RR_SCRIPT_COUNT"
  echo "};"
  for f in "$@"; do
    echo
    cat "$tmp/$(basename "$f" .lua).h"
  done
  echo
  echo "#endif"
  echo
  echo "#if defined RR_SCRIPTS_SOURCES && !defined RR_SCRIPTS_GEN_SOURCES"
  echo "#define RR_SCRIPTS_GEN_SOURCES"
  for f in "$@"; do
    n=$(basename "$f" .lua)
    echo "static const char lua_${n}_src[] ="
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/    "/' -e 's/$/\\n"/' "$tmp/$n.lua"
    echo "    ;"
  done
  echo
  echo "/* { SHA1, source, keys at least, keys at most, fixed args, a rest } */"
  echo "static const struct lua_script lua_scripts[RR_SCRIPT_COUNT] = {"
  for f in "$@"; do
    n=$(basename "$f" .lua)
    sha=$(sha1sum "$tmp/$n.lua" | cut -d' ' -f1)
    echo "    [RR_SCRIPT_$(echo "$n" | tr a-z A-Z)] = { \"$sha\", lua_${n}_src, $(cat "$tmp/$n.shape") },"
  done
  echo "};"
  echo "#endif"
} > "$out.tmp"
mv "$out.tmp" "$out"
