# mk/fuzz.mk — fuzz targets (included at the end of the Makefile).
#
#   make fuzz                   build each target with clang and libFuzzer,
#                               run each FUZZ_SECONDS (60) on a scratch copy
#                               of its corpus; the repository is not written
#   make fuzz FUZZ_TARGETS=url  only some targets (url duration cli reply json render)
#   make fuzz-build             only build build-fuzz/fuzz_*
#   make fuzz-merge             add the scratch corpora's new-coverage inputs
#                               to tests/fuzz/corpus/ (writes the repository)
#   make fuzz-regress           run every corpus file through its target,
#                               built with $(CC) and linked with $(LIB); no
#                               clang needed (part of make check)
#
# The clang build compiles src/*.c itself with coverage instrumentation:
# $(LIB) is built by $(CC) without it, and libFuzzer would be blind inside.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_RUNFLAGS ?=
FUZZ_TARGETS ?= url duration cli reply json render
FUZZ_BUILD   ?= build-fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -DRR_VERSION=\"$(VERSION)\" $(WARN) -Isrc -I$(FUZZ_BUILD) \
                $(PKG_CFLAGS) -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) -MMD -MP
FUZZ_OBJS    := $(LIB_SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_LIB     := $(FUZZ_BUILD)/librr.a
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
FUZZ_CORPUS  := tests/fuzz/corpus

.PHONY: fuzz fuzz-build fuzz-merge fuzz-regress $(FUZZ_TARGETS:%=fuzz-%)

fuzz: $(FUZZ_TARGETS:%=fuzz-%)

fuzz-build: $(FUZZ_BINS)

$(FUZZ_BUILD)/scripts_gen.h: scripts/gen-lua.sh $(wildcard src/lua/*.lua src/lua/lib/*.lua) | $(FUZZ_BUILD)/obj
	scripts/gen-lua.sh $@ $(sort $(wildcard src/lua/*.lua))

$(FUZZ_BUILD)/obj/scripts.o: $(FUZZ_BUILD)/scripts_gen.h
$(FUZZ_OBJS): | $(FUZZ_BUILD)/scripts_gen.h

$(FUZZ_BUILD)/obj/%.o: src/%.c | $(FUZZ_BUILD)/obj
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB) | $(FUZZ_BUILD)/obj
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(PKG_LIBS)

$(FUZZ_BUILD)/obj $(FUZZ_BUILD)/artifacts $(BUILD)/fuzz:
	mkdir -p $@

# Each run starts from a fresh scratch copy of the seed corpus; crashes go
# to $(FUZZ_BUILD)/artifacts/ (FUZZ_BUILD=/tmp/x keeps it all out of the tree). A dictionary tests/fuzz/fuzz_T.dict is used if
# present. Extra libFuzzer flags: FUZZ_RUNFLAGS='-jobs=2 -workers=2'.
$(FUZZ_TARGETS:%=fuzz-%): fuzz-%: $(FUZZ_BUILD)/fuzz_% | $(FUZZ_BUILD)/artifacts
	rm -rf $(FUZZ_BUILD)/corpus/$*
	mkdir -p $(FUZZ_BUILD)/corpus/$*
	cp $(FUZZ_CORPUS)/$*/* $(FUZZ_BUILD)/corpus/$*/
	cd $(FUZZ_BUILD) && ./fuzz_$* -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=artifacts/$*- \
	    $(if $(wildcard tests/fuzz/fuzz_$*.dict),-dict=$(CURDIR)/tests/fuzz/fuzz_$*.dict) \
	    $(FUZZ_RUNFLAGS) corpus/$*

# Keeps only inputs that add coverage to what the seed corpus already has.
fuzz-merge: $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
	    if [ -d $(FUZZ_BUILD)/corpus/$$t ]; then \
	        $(FUZZ_BUILD)/fuzz_$$t -merge=1 $(FUZZ_CORPUS)/$$t $(FUZZ_BUILD)/corpus/$$t || exit 1; \
	    fi; \
	done

# The regression drivers: ordinary compiler, the project's flags, $(LIB).
FUZZ_REGRESS_BINS := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/regress_%)
FUZZ_REGRESS_OBJS := $(BUILD)/fuzz/regress.o $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%.o)

# Objects reached only through pattern rules would be deleted as
# intermediate files and rebuilt every time.
.SECONDARY: $(FUZZ_REGRESS_OBJS)

$(BUILD)/fuzz/%.o: tests/fuzz/%.c | $(BUILD)/fuzz
	$(CC) $(RR_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/regress_%: $(BUILD)/fuzz/regress.o $(BUILD)/fuzz/fuzz_%.o $(LIB)
	$(CC) $(RR_CFLAGS) $(CFLAGS) $(LDFLAGS) $(RR_LDFLAGS) -o $@ $^ $(PKG_LIBS)

# make tests builds what check runs: the corpus's drivers too.
tests: $(FUZZ_REGRESS_BINS)

# Every target runs even if one fails, so one report shows all of them.
fuzz-regress: $(FUZZ_REGRESS_BINS)
	@rc=0; for t in $(FUZZ_TARGETS); do \
	    $(BUILD)/fuzz/regress_$$t $(FUZZ_CORPUS)/$$t || rc=1; \
	done; exit $$rc

-include $(wildcard $(FUZZ_BUILD)/*.d $(FUZZ_BUILD)/obj/*.d $(BUILD)/fuzz/*.d)
