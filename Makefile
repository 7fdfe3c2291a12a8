# redlock-run — see README.md for the targets.
#
#   make                      build ./redlock-run
#   make check                install missing test packages, run unit + integration tests
#   make unit                 Check suites and the fuzz corpus (check_conn starts its own redis-server)
#   make SANITIZE=address,undefined check
#   make DEVELOPER=1          strict warnings as errors
#   make install PREFIX=/usr/local DESTDIR=
#   make dist                 the release tarballs and SHA256SUMS in build/dist/ (scripts/release.sh)
#   make static               fully static binaries (musl, OpenSSL linked in) in
#                             build-static/ARCH/ (scripts/static-build; ARCH=x86_64 for one)

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
# Shell completions. zsh searches vendor-completions under /usr only; under
# another prefix (/usr/local) its site-functions directory is the one in fpath.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
else
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
endif
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
CC      ?= cc
CFLAGS  ?= -O2 -g
PKG_CONFIG ?= pkg-config

VERSION := 0.1.0

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags hiredis libuv 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs hiredis libuv 2>/dev/null)
# libuv and hiredis are linked statically by default (STATIC=0: dynamically),
# from the .a files their Debian -dev packages ship: the dynamic loader's
# relocations and page faults were the largest part of a plain run, and the
# binary then needs only libc, so one build installs on Debian 12 and 13
# (README, "Build and install"). libuv's archive is libuv_a.a on Debian 12
# and libuv.a on later releases.
STATIC ?= 1
ifeq ($(STATIC),1)
# The compiler's own search path finds the archives (hiredis.pc's libdir is
# not where Debian puts the library); a name without a path is "not found".
find_a = $(firstword $(foreach a,$(1),$(filter /%,$(shell $(CC) -print-file-name=$(a)))))
UV_A := $(call find_a,libuv_a.a libuv.a)
HIREDIS_A := $(call find_a,libhiredis.a)
ifneq ($(and $(UV_A),$(HIREDIS_A)),)
PKG_LIBS := $(HIREDIS_A) $(UV_A) \
            $(filter-out -luv -lhiredis,$(shell $(PKG_CONFIG) --libs --static hiredis libuv 2>/dev/null))
endif
endif
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

WARN := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wwrite-strings \
        -Wvla -Wformat-security -Wshadow -Wpointer-arith
RR_CFLAGS := -std=c11 -D_GNU_SOURCE -DRR_VERSION=\"$(VERSION)\" $(WARN) -Isrc $(PKG_CFLAGS) -MMD -MP
# Symbols bound at start (full RELRO): the GOT is read-only, and the guard
# and the command's process, forks of redlock-run, write no page of it on
# their first calls (each such write is a copy-on-write fault).
RR_LDFLAGS := -Wl,-z,relro,-z,now
ifneq ($(DEVELOPER),)
RR_CFLAGS += -Werror
endif

BUILD ?= build
ifneq ($(SANITIZE),)
BUILD := build-san
RR_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
RR_LDFLAGS += -fsanitize=$(SANITIZE)
endif

# A planted defect (scripts/mutants, src/mutant.h), in a build of its own.
ifneq ($(MUTANT),)
ifneq ($(BUILD),build-mutant-$(MUTANT))
$(error MUTANT=$(MUTANT) builds only into BUILD=build-mutant-$(MUTANT))
endif
RR_CFLAGS += -DRR_MUTANT_$(MUTANT)=1
export MUTANT
endif

RR_CFLAGS += -I$(BUILD)

SRCS     := $(wildcard src/*.c)
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/librr.a
BIN      := $(BUILD)/redlock-run
UNIT_SRCS := $(wildcard tests/check_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/%.c=$(BUILD)/tests/%)
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(HELPER_SRCS:tests/helpers/%.c=$(BUILD)/tests/%)

.PHONY: all check tests unit integration deps install uninstall clean fuzz bench demo dist mutants static

all: redlock-run

# The binary users run sits at the top of the tree; sanitizer builds keep
# theirs under build-san/ so they never replace it.
redlock-run: $(BIN)
ifeq ($(SANITIZE),)
	cp $(BIN) $@
endif

$(BIN): $(BUILD)/main.o $(LIB)
	$(CC) $(RR_CFLAGS) $(CFLAGS) $(LDFLAGS) $(RR_LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(LIB): $(LIB_OBJS)
	$(AR) rcs $@ $^

# The Lua scripts are embedded with their SHA1, computed here once, and
# the names of their KEYS and ARGV, which every user of scripts.h reads.
$(BUILD)/scripts_gen.h: scripts/gen-lua.sh $(wildcard src/lua/*.lua src/lua/lib/*.lua) | $(BUILD)
	scripts/gen-lua.sh $@ $(sort $(wildcard src/lua/*.lua))

$(BUILD)/scripts.o: $(BUILD)/scripts_gen.h
$(LIB_OBJS) $(BUILD)/main.o: | $(BUILD)/scripts_gen.h

$(BUILD)/%.o: src/%.c | $(BUILD)
	$(CC) $(RR_CFLAGS) $(CFLAGS) -c -o $@ $<

# Every Check suite shares one main() (tests/unit_main.c, see tests/unit.h).
$(BUILD)/tests/unit_main.o: tests/unit_main.c | $(BUILD)/tests
	$(CC) $(RR_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/check_%: tests/check_%.c $(BUILD)/tests/unit_main.o $(LIB) | $(BUILD)/tests
	$(CC) $(RR_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) $(LDFLAGS) $(RR_LDFLAGS) -o $@ $< $(BUILD)/tests/unit_main.o $(LIB) $(PKG_LIBS) $(CHECK_LIBS)

$(BUILD)/tests/%: tests/helpers/%.c | $(BUILD)/tests
	$(CC) $(RR_CFLAGS) $(CFLAGS) $(LDFLAGS) $(RR_LDFLAGS) -o $@ $<

$(BUILD) $(BUILD)/tests:
	mkdir -p $@

# check installs what the tests need (Debian packages, only the missing
# ones), then runs everything with a fresh make so pkg-config sees them.
check: deps
	$(MAKE) --no-print-directory unit integration

# Everything check builds, and nothing run: .ci/run builds it with -j2
# first, then runs the suites one file at a time as they expect.
tests: redlock-run $(BIN) $(UNIT_BINS) $(HELPER_BINS)

deps:
	@scripts/deps.sh test

unit: $(UNIT_BINS) fuzz-regress
	@scripts/run-unit.sh $(UNIT_BINS)

integration: redlock-run $(BIN) $(HELPER_BINS)
	@RR_BIN=$(abspath $(BIN)) RR_HELPERS=$(abspath $(BUILD)/tests) tests/integration/run.sh $(T)

demo:
	@scripts/demo.sh

# Each safety mechanism disabled in turn, and the tests that must notice
# (scripts/mutants; M="name ..." runs only those).
mutants:
	@scripts/mutants $(M)

bench: redlock-run
	@scripts/bench

# The release tarballs: the glibc one from its own hardened build in
# build-dist/, the -static ones from `make static` when its libraries are
# cached (RR_DIST_STATIC=1: built first), each with the man page, the
# completions, examples/ and an install.sh; and SHA256SUMS (scripts/release.sh).
DISTDIR ?= build/dist
dist:
	@scripts/release.sh $(DISTDIR)

# Static binaries for any Linux (x86_64 and aarch64): musl, libuv, hiredis
# and OpenSSL from Debian's packages, built once into a cache (README,
# "Static binaries"). The glibc build above stays the default.
ARCH ?= all
static:
	@scripts/static-build $(ARCH)

install: redlock-run
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 redlock-run $(DESTDIR)$(BINDIR)/redlock-run
	install -m 0644 man/redlock-run.1 $(DESTDIR)$(MANDIR)/man1/redlock-run.1
	install -m 0644 completions/redlock-run.bash $(DESTDIR)$(BASHCOMPDIR)/redlock-run
	install -m 0644 completions/_redlock-run $(DESTDIR)$(ZSHCOMPDIR)/_redlock-run
	install -m 0644 completions/redlock-run.fish $(DESTDIR)$(FISHCOMPDIR)/redlock-run.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/redlock-run $(DESTDIR)$(MANDIR)/man1/redlock-run.1 \
		$(DESTDIR)$(BASHCOMPDIR)/redlock-run $(DESTDIR)$(ZSHCOMPDIR)/_redlock-run \
		$(DESTDIR)$(FISHCOMPDIR)/redlock-run.fish

clean:
	rm -rf build build-san build-fuzz build-dist build-mutant-* build-static redlock-run

-include $(wildcard $(BUILD)/*.d $(BUILD)/tests/*.d)
-include mk/fuzz.mk
