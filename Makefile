# Sonde: `make` builds build/$(ARCH)/kernel.elf; `make run`, `make test`,
# `make bench`, `make iso`. See README.md.

ARCH    ?= x86_64
B       := build/$(ARCH)
HOSTB   := build/host
WEBB    := build/web

HOSTCC  := gcc

# Per-architecture toolchain and flags: CROSS, ARCH_CFLAGS, ARCH_LDFLAGS.
include arch/$(ARCH)/build.mk

CC      := $(CROSS)gcc
LD      := $(CROSS)ld
NM      := $(CROSS)nm

KCFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-omit-frame-pointer \
           -fno-optimize-sibling-calls -mgeneral-regs-only \
           -fno-pic -fno-pie -fno-stack-protector \
           -fno-asynchronous-unwind-tables -fno-strict-aliasing \
           -Wall -Wextra -Werror -Wmissing-prototypes -Wno-unused-parameter -I. -MMD -MP $(ARCH_CFLAGS)
KASFLAGS := -I. -MMD -MP -D__ASSEMBLY__ $(ARCH_ASFLAGS)
KLDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack \
            --no-warn-rwx-segments --build-id=sha1 -T arch/$(ARCH)/linker.ld $(ARCH_LDFLAGS)

KSRC    := $(wildcard arch/$(ARCH)/*.c arch/$(ARCH)/*.S arch/$(ARCH)/testing/*.c \
                      kernel/*.c kernel/cmd/*.c kernel/prof/*.c kernel/testing/*.c mm/*.c \
                      lib/*.c drivers/*.c net/*.c uapi/*.c)
KOBJ    := $(patsubst %,$(B)/%.o,$(basename $(KSRC)))

# Host tools. A program is a file at the top of tools/ (tools/NAME.c
# builds build/host/NAME); every folder under tools/ holds parts, not
# programs: tools/common/ what every tool shares (address, clock, options,
# the UDP-shell client); sonde-prof's layers, tools/model/ (the profile in
# memory, symbols, the pprof reader), tools/output/ (the writers),
# tools/ingest/ (shells, streams, the collector, fleet rounds),
# tools/store/ (the history in SQLite or PostgreSQL), tools/serve/
# (serve's history, HTTP and API) and tools/cmd/ (one file per
# subcommand); and a folder per program for parts of its own kept apart
# from main() so unit tests link them (tools/symgen/, tools/switch/,
# tools/fleet/). Each folder is built into one archive of all its .c
# files; a program links its file, the folders named in NAME_DIRS (so a
# new part needs no Makefile line), the files NAME_SRC adds (the formats
# it speaks from uapi/) and NAME_LIBS. scripts/check_tree.sh keeps
# sonde-prof's layers one way: common < model < output < ingest < store
# < serve < cmd.
symgen_DIRS       := symgen
sonde-sh_DIRS     := common
sonde-sh_SRC      := uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c
netload_DIRS      := common
netload_SRC       := uapi/netload.c
sonde-switch_DIRS := switch common
# fleet-gen: simulated kernels for the collector's benchmarks (bench/fleet.py)
fleet-gen_DIRS    := fleet
fleet-gen_SRC     := uapi/stream_ctl.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c uapi/udpshell.c lib/sha256.c
# sonde-prof: pprof's schema compiled at build time from Debian's copy
# (golang-github-google-pprof-dev), never copied into the tree; the part of
# Perfetto's schema the trace writer uses, the project's own .proto
# (tools/output/perfetto.proto), compiled the same way; libdw names;
# ncurses draws `top`; libmicrohttpd serves `serve`'s page and API; jansson
# writes the JSON of both the HTML page and serve.
PPROF_PROTO     := /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
PERFETTO_PROTO  := tools/output/perfetto.proto
PROTOGEN        := $(HOSTB)/proto
sonde-prof_DIRS := cmd serve store ingest output model common
sonde-prof_SRC  := uapi/udpshell_auth.c lib/sha256.c \
                   uapi/profile_raw.c uapi/trace_raw.c uapi/profile_stream.c uapi/profile_stream_meta.c \
                   uapi/profile_stream_tag.c \
                   uapi/udpshell.c uapi/stream_ctl.c \
                   $(PROTOGEN)/profile.pb-c.c $(PROTOGEN)/perfetto.pb-c.c $(WEBB)/assets.c
sonde-prof_LIBS := -ldw -lelf -lprotobuf-c -lz -lncurses -lmicrohttpd -ljansson -lsqlite3 -lpq
TOOL_NAMES := $(patsubst tools/%.c,%,$(wildcard tools/*.c))
TOOLS   := $(addprefix $(HOSTB)/,$(TOOL_NAMES))
HOSTOBJ := $(HOSTB)/obj
HOSTCFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -I.

.PHONY: all run test unit system bench iso clean tools fuzz soak
all: $(B)/kernel.elf tools


$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) -c $< -o $@

$(B)/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(KASFLAGS) -c $< -o $@

$(HOSTOBJ)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOSTCFLAGS) -MMD -MP -c $< -o $@

$(PROTOGEN)/profile.pb-c.c: $(PPROF_PROTO)
	@mkdir -p $(PROTOGEN)
	protoc-c --c_out=$(PROTOGEN) -I$(dir $(PPROF_PROTO)) $(notdir $(PPROF_PROTO))
$(PROTOGEN)/profile.pb-c.h: $(PROTOGEN)/profile.pb-c.c
$(HOSTOBJ)/tools/output/pprof.o: HOSTCFLAGS += -I$(PROTOGEN)
$(HOSTOBJ)/tools/output/pprof.o: $(PROTOGEN)/profile.pb-c.h
$(HOSTOBJ)/tools/model/pprof_read.o: HOSTCFLAGS += -I$(PROTOGEN)
$(HOSTOBJ)/tools/model/pprof_read.o: $(PROTOGEN)/profile.pb-c.h
$(HOSTOBJ)/$(PROTOGEN)/profile.pb-c.o: HOSTCFLAGS += -I$(PROTOGEN)
$(PROTOGEN)/perfetto.pb-c.c: $(PERFETTO_PROTO)
	@mkdir -p $(PROTOGEN)
	protoc-c --c_out=$(PROTOGEN) -I$(dir $(PERFETTO_PROTO)) $(notdir $(PERFETTO_PROTO))
$(PROTOGEN)/perfetto.pb-c.h: $(PROTOGEN)/perfetto.pb-c.c
$(HOSTOBJ)/tools/output/trace_pftrace.o: HOSTCFLAGS += -I$(PROTOGEN)
$(HOSTOBJ)/tools/output/trace_pftrace.o: $(PROTOGEN)/perfetto.pb-c.h
$(HOSTOBJ)/$(PROTOGEN)/perfetto.pb-c.o: HOSTCFLAGS += -I$(PROTOGEN)
# The store's PostgreSQL backend: libpq's header is in Debian's own folder.
$(HOSTOBJ)/tools/store/store_pg.o: HOSTCFLAGS += -I/usr/include/postgresql

# The web pages (tools/output/web_assets.h). web/package-lock.json pins
# the npm packages; `npm ci` installs them into web/node_modules whenever
# that is missing or older than the lock file (the stamp), so a fresh clone
# builds with plain `make`. A page is a folder of web/ (WEB_PAGES): its
# template PAGE/page.html and its ES modules, PAGE/main.js the entry;
# web/build.js bundles the entry with esbuild (web/bundle.js) and inlines
# the bundle into the template: build/web/PAGE.html, one self-contained
# file. web/embed.js makes build/web/assets.c of the pages, one symbol
# each (sp_web_PAGE_html).
NPM_STAMP := web/node_modules/.sonde-npm-ci
WEB_PAGES := flame serve trace
WEB_HTML  := $(patsubst %,$(WEBB)/%.html,$(WEB_PAGES))

$(NPM_STAMP): web/package-lock.json web/package.json
	@command -v npm >/dev/null && command -v node >/dev/null || { \
	  echo "make: node and npm are missing: sonde-prof's web pages are built from npm" \
	       "packages (web/package.json); install them with: bash scripts/deps.sh" \
	       "(Debian: apt-get install nodejs npm)" >&2; exit 1; }
	cd web && npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	@touch $@

# A page is made again when its folder, the library (web/lib/) or the
# build changes.
$(foreach p,$(WEB_PAGES),$(eval $(WEBB)/$(p).html: $(wildcard web/$(p)/* web/lib/*) \
  web/build.js web/bundle.js $(NPM_STAMP)))
$(WEB_HTML): $(WEBB)/%.html:
	node web/build.js $(WEBB) $*

$(WEBB)/assets.c: web/embed.js $(WEB_HTML) Makefile
	node web/embed.js $@ $(foreach p,$(WEB_PAGES),$(p)_html=$(WEBB)/$(p).html)

# One archive per folder of parts: the linker takes from it only the
# parts a program calls, so a program need not link what the folder's
# other parts depend on. The folder itself is a prerequisite so that a
# part added or removed rebuilds the archive.
$(HOSTOBJ)/tools/%.a: Makefile
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)
TOOL_DIRS := $(patsubst tools/%/,%,$(sort $(dir $(wildcard tools/*/*.c))))
$(foreach d,$(TOOL_DIRS),$(eval $(HOSTOBJ)/tools/$(d).a: tools/$(d)/ \
  $(patsubst %.c,$(HOSTOBJ)/%.o,$(wildcard tools/$(d)/*.c))))

define host_tool
$(HOSTB)/$(1): $(patsubst %.c,$(HOSTOBJ)/%.o,tools/$(1).c $($(1)_SRC)) \
               $(patsubst %,$(HOSTOBJ)/tools/%.a,$($(1)_DIRS))
	$(HOSTCC) $(HOSTCFLAGS) $$(filter %.o,$$^) -Wl,--start-group $$(filter %.a,$$^) \
	  -Wl,--end-group $($(1)_LIBS) -o $$@
endef
$(foreach t,$(TOOL_NAMES),$(eval $(call host_tool,$(t))))
-include $(shell find $(HOSTOBJ) -name '*.d' 2>/dev/null)

tools: $(TOOLS)

# The three-pass link: kernel.0 (pass 1) with an empty table, kernel.1
# (pass 2) with pass 1's, kernel.2 (pass 3) with pass 2's. The table sits
# after all text, so its size cannot move a text symbol: the tables in
# pass 2 and pass 3 (symtab1.S, symtab2.S) must be byte-identical, and the
# build fails if they are not.
SYMGEN := $(HOSTB)/symgen
$(B)/symtab0.S: $(SYMGEN)
	@mkdir -p $(dir $@)
	$(SYMGEN) < /dev/null > $@

$(B)/kernel.%.elf: $(KOBJ) $(B)/symtab%.o arch/$(ARCH)/linker.ld
	$(LD) $(KLDFLAGS) -o $@ $(KOBJ) $(B)/symtab$*.o

$(B)/symtab%.o: $(B)/symtab%.S
	$(CC) $(KASFLAGS) -c $< -o $@

$(B)/symtab1.S: $(B)/kernel.0.elf $(SYMGEN)
	$(NM) -n -S $< | $(SYMGEN) > $@
$(B)/symtab2.S: $(B)/kernel.1.elf $(SYMGEN)
	$(NM) -n -S $< | $(SYMGEN) > $@

$(B)/kernel.elf: $(B)/kernel.2.elf $(B)/symtab1.S $(B)/symtab2.S
	@cmp -s $(B)/symtab1.S $(B)/symtab2.S || \
	  { echo "symbol table unstable: pass 2 and pass 3 tables differ" \
	         "($(B)/symtab1.S vs $(B)/symtab2.S)"; exit 1; }
	cp $< $@

.SECONDARY:

-include $(KOBJ:.o=.d)
$(KOBJ): Makefile arch/$(ARCH)/build.mk

run: all
	@bash scripts/deps.sh
	@bash scripts/run.sh $(ARCH)

unit:
	@bash scripts/unit.sh

# libFuzzer targets (tests/fuzz/): each over its corpus, then FUZZ_SECONDS
# of fuzzing each (make test runs 10 s each).
FUZZ_SECONDS ?= 60
fuzz:
	@bash scripts/deps.sh
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh

# The soak at full size: 10000 profile cycles under burn and UDP-shell
# load (make test runs 1000).
SOAK_CYCLES ?= 10000
soak: all
	@bash scripts/deps.sh
	@python3 tests/system/soak.py --cycles $(SOAK_CYCLES)

system: all
	@python3 tests/system/run.py

test:
	@bash scripts/deps.sh
	@$(MAKE) -s all
	@bash scripts/test.sh

bench: all
	@bash scripts/deps.sh
	@python3 bench/run.py

iso: $(B)/kernel.elf
	@bash scripts/deps.sh
	@bash scripts/iso.sh $(B)

clean:
	rm -rf build
