# nvq: a GPU batch queue.  `make`, `make test`, `make install`, `make clean`.
# make SAN=1 builds and tests under AddressSanitizer and UBSan in build-san/.
# make STATIC=1 links libuv, inih and sqlite statically (for GPU hosts that
# have none of them).

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
SBINDIR	?= $(PREFIX)/sbin
SHAREDIR ?= $(PREFIX)/share
LIBEXECDIR ?= $(PREFIX)/libexec/nvq
SYSCONFDIR ?= /etc
DESTDIR	?=

CC	?= cc
CFLAGS	?= -O2 -g
# snprintf truncation is checked where it matters; the warning fires on every path join
WARN	= -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-format-truncation
WERROR	?=
# Each program's folder sees its own headers and common/'s, nothing of another program's.
CPPFLAGS += -D_GNU_SOURCE -iquote common -DNVQ_LIBEXECDIR='"$(LIBEXECDIR)"'
ALL_CFLAGS = -std=c11 $(WARN) $(WERROR) $(CFLAGS) -MMD -MP

ifeq ($(SAN),1)
BUILD	?= build-san
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS	+= -fsanitize=address,undefined
# The preloaded hook runs inside ASan's own start-up (ASan resolves its
# interceptors through the hook's dlsym), before ASan's shadow memory exists:
# the hook and its test get UBSan only.  budget.c has an ASan'd unit test.
comma	:= ,
HOOK_CFLAGS = $(subst -fsanitize=address$(comma)undefined,-fsanitize=undefined,$(ALL_CFLAGS))
HOOK_LDFLAGS = -fsanitize=undefined
SHIM_LDFLAGS =
NVQ_LDFLAGS =
else
BUILD	?= build
HOOK_CFLAGS = $(ALL_CFLAGS)
HOOK_LDFLAGS =
# the shim starts once per job, nvq once per submit: static, they map and
# relocate nothing at start (bench/shim.sh measures the shim; a static nvq
# takes 0.36 ms of CPU to a dynamic one's 0.86); ASan cannot link statically
SHIM_LDFLAGS = -static
NVQ_LDFLAGS = -static
endif

ifeq ($(STATIC),1)
ML	= /usr/lib/x86_64-linux-gnu
UV_LIBS	= $(ML)/libuv_a.a -lpthread -ldl
INI_LIBS = $(ML)/libinih.a
SQL_LIBS = $(ML)/libsqlite3.a -lpthread -ldl -lm
# the dashboard needs libmicrohttpd and cJSON, which GPU hosts may lack
WEB	?= 0
else
UV_LIBS	= -luv
INI_LIBS = -linih
SQL_LIBS = -lsqlite3
endif

NVQD_SRC = nvqd/nvqd.c nvqd/engine/engine.c nvqd/engine/engine_base.c nvqd/engine/engine_usage.c nvqd/engine/engine_admit.c \
	   nvqd/engine/engine_supervise.c nvqd/engine/engine_ahead.c nvqd/engine/engine_finish.c nvqd/engine/engine_deps.c \
	   nvqd/engine/engine_launch.c nvqd/engine/job.c nvqd/engine/recover.c nvqd/engine/jobtab.c nvqd/queue/order.c nvqd/queue/waitq.c nvqd/queue/fairshare.c nvqd/engine/notify.c nvqd/queue/deptab.c nvqd/queue/gate.c nvqd/store/stored.c nvqd/gpu/gpuctl.c nvqd/gpu/gcslice.c nvqd/gpu/gcacts.c nvqd/gpu/gpuact.c nvqd/gpu/hooks.c nvqd/gpu/lcbe.c nvqd/gpu/lcbestat.c nvqd/gpu/member.c nvqd/gpu/energy.c nvqd/engine/engine_energy.c \
	   nvqd/gpu/hookmsg.c nvqd/gpu/suspend.c nvqd/server.c nvqd/front/watch.c \
	   nvqd/front/ctl.c nvqd/engine/submit.c nvqd/engine/submitq.c nvqd/store/statq.c nvqd/store/storework.c nvqd/store/store.c nvqd/store/store_job.c nvqd/store/store_query.c nvqd/store/store_energy.c nvqd/store/checkpoint.c nvqd/queue/sched.c nvqd/queue/preempt.c nvqd/gpu/gpu.c nvqd/runner.c nvqd/reap.c nvqd/engine/start.c \
	   nvqd/front/ctl_check.c nvqd/front/ctl_req.c nvqd/front/ctl_jobs.c nvqd/front/ctl_control.c nvqd/front/ctl_info.c \
	   nvqd/config.c nvqd/qos.c nvqd/lcclass.c nvqd/hostres.c nvqd/log.c nvqd/engine/slurmjob.c nvqd/engine/slurmopt.c nvqd/cmdq.c nvqd/engine/slurm.c nvqd/engine/adopt.c common/proto.c common/parse.c common/dep.c common/jobstate.c common/paths.c \
	   common/rlimits.c common/cgroup.c common/cgplace.c common/cglimit.c common/status.c common/proc.c common/fdpass.c \
	   common/roff.c common/esc.c
NVQ_SRC	= nvq/nvq.c nvq/client.c nvq/fmt.c nvq/num.c nvq/joules.c nvq/submit.c nvq/jobs.c nvq/control.c \
	  nvq/output.c nvq/gpus.c nvq/json.c nvq/shares.c nvq/script.c nvq/run.c nvq/tty.c nvq/intr.c nvq/table.c nvq/stats.c nvq/top.c nvq/opthelp.c nvq/task.c common/proto.c common/parse.c common/dep.c common/paths.c \
	  common/fdpass.c common/roff.c common/esc.c
# #SBATCH lines and Slurm's names (issue 42)
NVQ_SRC	+= nvq/sbatch.c
SCHEMA	= $(sort $(wildcard schema/[0-9]*.sql))

obj	= $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

all: $(BUILD)/nvqd $(BUILD)/nvq $(BUILD)/nvq-shim $(BUILD)/nvq-ckpt $(BUILD)/libnvq-hook.so $(BUILD)/bin/srun

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<
# nvqd's folders: the daemon itself, then queue/ (the policy and the waiting
# jobs), engine/ (a job's life), gpu/ (GPU control), store/ (SQLite), front/
# (the socket's requests, the dashboard, Slurm); headers found by bare name
NVQD_INC = -iquote nvqd -iquote nvqd/queue -iquote nvqd/engine -iquote nvqd/gpu \
	   -iquote nvqd/store -iquote nvqd/front
$(BUILD)/obj/nvqd/%.o: CPPFLAGS += $(NVQD_INC)
$(BUILD)/obj/nvq/%.o: CPPFLAGS += -iquote nvq
$(BUILD)/obj/hook/%.o: CPPFLAGS += -iquote hook
# WEB=0: nvqd without the dashboard ([web] listen is then refused)
WEB	?= 1
ifeq ($(WEB),1)
WEB_SRC	= nvqd/front/web.c nvqd/front/webmetrics.c nvqd/front/webrate.c nvqd/front/websum.c
WEB_OBJ	= $(BUILD)/obj/gen/web_files.o
WEB_LIBS = -lmicrohttpd -lcjson
else
WEB_SRC	= nvqd/front/web_off.c
WEB_OBJ	=
WEB_LIBS =
endif
NVQD_SRC += $(WEB_SRC)
WEB_FILES = web/index.html web/app.js web/style.css

# tests reach into the program they test
$(BUILD)/obj/tests/%.o: CPPFLAGS += $(NVQD_INC) -iquote hook -iquote nvq

$(BUILD)/gen/schema_sql.c: $(SCHEMA) schema/gen.sh
	@mkdir -p $(dir $@)
	sh schema/gen.sh $(SCHEMA) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/schema_sql.o: $(BUILD)/gen/schema_sql.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/gen/web_files.c: $(WEB_FILES) web/gen.sh
	@mkdir -p $(dir $@)
	sh web/gen.sh $(WEB_FILES) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/web_files.o: $(BUILD)/gen/web_files.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/nvqd: $(call obj,$(NVQD_SRC)) $(BUILD)/obj/gen/schema_sql.o $(WEB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(UV_LIBS) $(INI_LIBS) $(SQL_LIBS) $(WEB_LIBS) -ldl -lm

# the per-job supervisor: libc only, small, started with posix_spawn
SHIM_SRC = nvq-shim/shim.c nvq-shim/portable.c common/rlimits.c common/cgroup.c common/cgplace.c common/cglimit.c common/status.c \
	   common/share.c common/proc.c common/fdpass.c

# nvq starts once per submit, and each submit waits for it; nvq-shim once
# per job.  Where musl-gcc is (Debian's musl-tools) both are built with
# musl, whose start costs about 0.12 ms of CPU to static glibc's 0.35
# (glibc's asks the CPU about its caches with CPUID, a trap to the
# hypervisor on a virtual machine: about a quarter of it; bench/shim.sh).
# `make MUSL_CC=` builds them with glibc.
ifneq ($(SAN),1)
MUSL_CC	?= $(shell command -v musl-gcc 2> /dev/null)
endif
ifneq ($(MUSL_CC),)
INI_H	?= /usr/include/ini.h
# musl-gcc sees musl's headers only: inih's is copied beside them
$(BUILD)/musl/inc/ini.h: $(INI_H)
	@mkdir -p $(dir $@)
	cp $< $@
# and the kernel's (linux/, asm/), for the shim's clone3 and futex
KERNEL_INC ?= /usr/include
KERNEL_ASM ?= $(KERNEL_INC)/$(shell $(CC) -print-multiarch)/asm
$(BUILD)/musl/inc/.kernel:
	@mkdir -p $(dir $@)
	ln -sfn $(KERNEL_INC)/linux $(BUILD)/musl/inc/linux
	ln -sfn $(KERNEL_INC)/asm-generic $(BUILD)/musl/inc/asm-generic
	ln -sfn $(KERNEL_ASM) $(BUILD)/musl/inc/asm
	touch $@
$(BUILD)/musl/%.o: %.c $(BUILD)/musl/inc/ini.h $(BUILD)/musl/inc/.kernel
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(CPPFLAGS) -idirafter $(BUILD)/musl/inc $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/musl/nvq/%.o: CPPFLAGS += -iquote nvq
$(BUILD)/nvq: $(patsubst %.c,$(BUILD)/musl/%.o,$(NVQ_SRC))
	$(MUSL_CC) $(LDFLAGS) -static -o $@ $^ $(shell $(CC) -print-file-name=libinih.a) -lm
$(BUILD)/nvq-shim: $(patsubst %.c,$(BUILD)/musl/%.o,$(SHIM_SRC))
	$(MUSL_CC) $(LDFLAGS) -static -o $@ $^
else
$(BUILD)/nvq-shim: $(call obj,$(SHIM_SRC))
	$(CC) $(LDFLAGS) $(SHIM_LDFLAGS) -o $@ $^
# -static finds libinih.a where -linih is asked for
$(BUILD)/nvq: $(call obj,$(NVQ_SRC))
	$(CC) $(LDFLAGS) $(NVQ_LDFLAGS) -o $@ $^ $(INI_LIBS) -lm
endif


# srun inside a job (one node, the job's resources): libc only; in bin/, the
# folder nvqd puts first on jobs' PATH, so that it shadows nothing else.  It
# runs under the job's LD_PRELOAD (the hook): built as the hook is (UBSan only)
$(BUILD)/srun/srun.o: nvq-srun/srun.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(HOOK_CFLAGS) -c -o $@ $<
$(BUILD)/bin/srun: $(BUILD)/srun/srun.o
	@mkdir -p $(@D)
	$(CC) $(HOOK_LDFLAGS) $(SHIM_LDFLAGS) -o $@ $^

# suspend and resume through the driver's checkpoint API: libcuda by dlopen
$(BUILD)/nvq-ckpt: $(call obj,nvq-ckpt/ckpt.c common/proc.c)
	$(CC) $(LDFLAGS) -o $@ $^ -ldl

# The hook: position-independent, everything hidden but hook.map's names.
HOOK_SRC = hook/hook.c hook/lcbe.c hook/budget.c hook/link.c hook/cut.c hook/offload.c hook/stageplan.c hook/ipc.c \
	   hook/xmem.c hook/xreg.c hook/peerfd.c \
	   common/proto.c common/share.c \
	   common/proc.c
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote hook $(HOOK_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/libnvq-hook.so: $(patsubst %.c,$(BUILD)/pic/%.o,$(HOOK_SRC)) hook/hook.map
	$(CC) $(HOOK_LDFLAGS) -shared -Wl,--version-script=hook/hook.map -Wl,-z,defs -o $@ \
	    $(filter %.o,$^) -ldl -lpthread

# Unit tests: cmocka, pure logic only (and runner.c's spare files, in a folder of their own).
UNIT	= sched order preempt gpuctl proto config parse budget offload status share fairshare slurm runner json portable num \
	  esc stored webrate stageplan xreg gate jobtab store job ctl_check sbatch hostres dep intr cgplace \
	  energy joules lcbe slurmopt jobstate
UNIT_BIN = $(patsubst %,$(BUILD)/tests/test_%,$(UNIT))
TEST_LIBS = -lcmocka -lm

$(BUILD)/tests/test_sched: $(call obj,tests/unit/test_sched.c nvqd/queue/sched.c common/parse.c)
$(BUILD)/tests/test_order: $(call obj,tests/unit/test_order.c nvqd/queue/order.c nvqd/queue/waitq.c nvqd/queue/deptab.c \
	    nvqd/queue/sched.c \
	    nvqd/queue/preempt.c common/parse.c)
$(BUILD)/tests/test_preempt: $(call obj,tests/unit/test_preempt.c nvqd/queue/preempt.c nvqd/queue/sched.c \
	    common/parse.c)
$(BUILD)/tests/test_gpuctl: $(call obj,tests/unit/test_gpuctl.c nvqd/gpu/gpuctl.c nvqd/gpu/gcslice.c \
	nvqd/gpu/gcacts.c nvqd/queue/preempt.c nvqd/queue/sched.c common/parse.c)
$(BUILD)/tests/test_proto: $(call obj,tests/unit/test_proto.c common/proto.c)
$(BUILD)/tests/test_fairshare: $(call obj,tests/unit/test_fairshare.c nvqd/queue/fairshare.c nvqd/queue/sched.c \
	    common/parse.c)
$(BUILD)/tests/test_config: $(call obj,tests/unit/test_config.c nvqd/config.c nvqd/qos.c nvqd/lcclass.c common/parse.c \
	    common/paths.c common/rlimits.c common/roff.c)
$(BUILD)/tests/test_parse: $(call obj,tests/unit/test_parse.c common/parse.c)
$(BUILD)/tests/test_dep: $(call obj,tests/unit/test_dep.c common/dep.c common/parse.c)
$(BUILD)/tests/test_jobstate: $(call obj,tests/unit/test_jobstate.c common/jobstate.c)
$(BUILD)/tests/test_lcbe: $(call obj,tests/unit/test_lcbe.c nvqd/gpu/lcbestat.c nvqd/lcclass.c nvqd/qos.c common/roff.c \
	    common/proto.c common/parse.c)
$(BUILD)/tests/test_status: $(call obj,tests/unit/test_status.c common/status.c)
$(BUILD)/tests/test_slurm: $(call obj,tests/unit/test_slurm.c nvqd/engine/slurmjob.c)
$(BUILD)/tests/test_slurmopt: $(call obj,tests/unit/test_slurmopt.c nvqd/engine/slurmopt.c common/proto.c common/parse.c)
$(BUILD)/tests/test_stored: $(call obj,tests/unit/test_stored.c nvqd/store/stored.c)
$(BUILD)/tests/test_gate: $(call obj,tests/unit/test_gate.c nvqd/queue/gate.c nvqd/log.c)
$(BUILD)/tests/test_energy: $(call obj,tests/unit/test_energy.c nvqd/gpu/energy.c)
$(BUILD)/tests/test_jobtab: $(call obj,tests/unit/test_jobtab.c nvqd/engine/jobtab.c)
$(BUILD)/tests/test_hostres: $(call obj,tests/unit/test_hostres.c nvqd/hostres.c)
$(BUILD)/tests/test_cgplace: $(call obj,tests/unit/test_cgplace.c common/cgplace.c)
$(BUILD)/tests/test_store: $(call obj,tests/unit/test_store.c nvqd/store/store.c nvqd/store/store_job.c \
	    nvqd/store/store_query.c nvqd/store/store_energy.c nvqd/store/checkpoint.c nvqd/log.c common/parse.c \
	    common/jobstate.c) $(BUILD)/obj/gen/schema_sql.o
$(BUILD)/tests/test_store: TEST_LIBS += $(SQL_LIBS) -lpthread
$(BUILD)/tests/test_job: $(call obj,tests/unit/test_job.c nvqd/engine/job.c)
$(BUILD)/tests/test_webrate: $(call obj,tests/unit/test_webrate.c nvqd/front/webrate.c)
$(BUILD)/tests/test_ctl_check: $(call obj,tests/unit/test_ctl_check.c nvqd/front/ctl_check.c)
$(BUILD)/tests/test_runner: $(call obj,tests/unit/test_runner.c nvqd/runner.c common/status.c common/proc.c \
	    common/fdpass.c)
$(BUILD)/tests/test_budget: $(call obj,tests/unit/test_budget.c hook/budget.c)
$(BUILD)/tests/test_stageplan: $(call obj,tests/unit/test_stageplan.c hook/stageplan.c)
$(BUILD)/tests/test_share: $(call obj,tests/unit/test_share.c common/share.c common/proc.c)
$(BUILD)/tests/test_xreg: $(call obj,tests/unit/test_xreg.c hook/xreg.c common/share.c common/proc.c)
$(BUILD)/tests/test_json: $(call obj,tests/unit/test_json.c nvq/json.c common/esc.c)
$(BUILD)/tests/test_esc: $(call obj,tests/unit/test_esc.c common/esc.c)
$(BUILD)/tests/test_joules: $(call obj,tests/unit/test_joules.c nvq/joules.c)
$(BUILD)/tests/test_num: $(call obj,tests/unit/test_num.c nvq/num.c)
$(BUILD)/tests/test_sbatch: $(call obj,tests/unit/test_sbatch.c nvq/sbatch.c common/parse.c)
$(BUILD)/tests/test_intr: $(call obj,tests/unit/test_intr.c nvq/intr.c)
$(BUILD)/tests/test_portable: $(call obj,tests/unit/test_portable.c nvq-shim/portable.c)
$(BUILD)/obj/tests/unit/test_portable.o: CPPFLAGS += -iquote nvq-shim
# its tables name the fields they test, in order
$(BUILD)/obj/tests/unit/test_sched.o $(BUILD)/obj/tests/unit/test_preempt.o: CFLAGS += -Wno-missing-field-initializers
$(BUILD)/tests/test_config: TEST_LIBS += $(INI_LIBS)
$(UNIT_BIN):
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

# The hook, preloaded into a test linked with a fake libcuda.so.1.
FAKE_CUDA = $(BUILD)/tests/fake/libcuda.so.1
$(FAKE_CUDA): tests/hook/fake_cuda.c tests/hook/fake_nccl.c tests/hook/fake_nccl.h common/cuda_decls.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote hook $(HOOK_CFLAGS) -Wno-missing-prototypes -fPIC -shared \
	    -Wl,-soname,libcuda.so.1 \
	    -o $@ $(filter %.c,$^) $(HOOK_LDFLAGS)
# offload.c against the fake libcuda's VMM API (real memory)
$(BUILD)/tests/test_offload: $(call obj,tests/unit/test_offload.c hook/offload.c hook/stageplan.c \
	    hook/xmem.c hook/xreg.c hook/peerfd.c hook/ipc.c common/share.c common/proc.c) $(FAKE_CUDA)
# pieces of 4 MiB, so that the test's copies cross their edges
$(BUILD)/obj/hook/offload.o: CPPFLAGS += -DOFF_CHUNK='(4ull << 20)'
$(BUILD)/tests/test_offload: TEST_LIBS += -Wl,-rpath,$(abspath $(dir $(FAKE_CUDA))) -ldl -lpthread
FAKE_NVML = $(BUILD)/tests/fake/libnvidia-ml.so.1
$(FAKE_NVML): tests/system/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(HOOK_CFLAGS) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $< \
	    $(HOOK_LDFLAGS)
$(BUILD)/tests/test_hook: tests/hook/test_hook.c $(FAKE_CUDA) $(FAKE_NVML)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote hook $(HOOK_CFLAGS) -o $@ $< $(HOOK_LDFLAGS) $(FAKE_CUDA) -ldl \
	    -lcmocka
$(BUILD)/tests/fake_job: tests/hook/fake_job.c tests/hook/fake_ddp.c tests/hook/fake_reuse.c \
    tests/hook/fake_job.h tests/hook/fake_nccl.h \
    $(FAKE_CUDA)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote hook $(HOOK_CFLAGS) -o $@ $(filter %.c,$^) $(HOOK_LDFLAGS) $(FAKE_CUDA)
HOOK_PRELOAD = $(abspath $(BUILD)/libnvq-hook.so)
# the hook's declarations against the real cuda.h, where there is one
CUDA_H = $(wildcard /usr/local/cuda/include/cuda.h)

hooktest: $(BUILD)/libnvq-hook.so $(BUILD)/tests/test_hook
ifneq ($(CUDA_H),)
	$(CC) $(CPPFLAGS) -iquote hook -I$(dir $(CUDA_H)) $(HOOK_CFLAGS) -o $(BUILD)/tests/check_decls \
	    tests/hook/check_decls.c && echo "== common/cuda_decls.h agrees with $(CUDA_H)"
endif
	@echo "== $(BUILD)/tests/test_hook (preloaded hook, fake libcuda)"
	LD_LIBRARY_PATH=$(abspath $(dir $(FAKE_CUDA))) LD_PRELOAD="$(HOOK_PRELOAD)" \
	    NVQ_GPU_MEM=1073741824 FAKE_NVML_GPUS=2x16G \
	    CUDA_VISIBLE_DEVICES=GPU-fa4e0000-0000-0000-0000-000000000001 $(BUILD)/tests/test_hook

unit: $(UNIT_BIN) hooktest
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done

# TEST_JOBS system tests at once (run.sh -j): most wait on nvqd and their jobs
TEST_JOBS ?= 4
system: all $(BUILD)/tests/test_hook $(BUILD)/tests/fake_job
	NVQ_BUILD=$(BUILD) bash tests/system/run.sh -j $(TEST_JOBS)

test: unit system
check: test

# libFuzzer harnesses (clang), under ASan and UBSan, each run for
# FUZZ_SECONDS from the committed corpus in tests/fuzz/corpus/NAME; what
# they find new goes to build-fuzz/corpus, a crash fails the target.
FUZZ_CC	?= clang
FUZZ_SECONDS ?= 30
FUZZ_DIR = build-fuzz
FUZZ_FLAGS = -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
	     -fno-sanitize-recover=undefined $(CPPFLAGS) $(NVQD_INC)
FUZZ	= proto config parse status hook slurm
$(FUZZ_DIR)/fuzz_proto: tests/fuzz/fuzz_proto.c common/proto.c
$(FUZZ_DIR)/fuzz_config: tests/fuzz/fuzz_config.c nvqd/config.c nvqd/qos.c nvqd/lcclass.c common/parse.c common/paths.c \
	    common/rlimits.c common/roff.c
$(FUZZ_DIR)/fuzz_parse: tests/fuzz/fuzz_parse.c common/parse.c
$(FUZZ_DIR)/fuzz_hook: tests/fuzz/fuzz_hook.c nvqd/gpu/hookmsg.c nvqd/gpu/lcbestat.c common/proto.c
$(FUZZ_DIR)/fuzz_status: tests/fuzz/fuzz_status.c common/status.c
$(FUZZ_DIR)/fuzz_slurm: tests/fuzz/fuzz_slurm.c nvqd/engine/slurmjob.c
$(FUZZ_DIR)/fuzz_%:
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(if $(findstring config,$@),$(INI_LIBS))

fuzz: $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ))
	@for f in $(FUZZ); do \
		echo "== fuzz_$$f: $(FUZZ_SECONDS)s from tests/fuzz/corpus/$$f"; \
		mkdir -p $(FUZZ_DIR)/corpus/$$f $(FUZZ_DIR)/crashes; \
		if $(FUZZ_DIR)/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
		    -artifact_prefix=$(FUZZ_DIR)/crashes/$$f- -print_final_stats=1 \
		    $(FUZZ_DIR)/corpus/$$f tests/fuzz/corpus/$$f > $(FUZZ_DIR)/$$f.log 2>&1; then \
			grep -E "^(INFO: seed corpus|stat::number_of_executed_units|Done)" \
			    $(FUZZ_DIR)/$$f.log; \
		else \
			tail -n 40 $(FUZZ_DIR)/$$f.log; \
			echo "fuzz_$$f FAILED (its input is in $(FUZZ_DIR)/crashes)"; exit 1; \
		fi; \
	done

# the SPANK plugin (contrib/slurm): needs slurm/spank.h (libslurm-dev)
spank: $(BUILD)/spank_nvq.so
$(BUILD)/spank_nvq.so: contrib/slurm/spank_nvq.c common/parse.c common/share.c common/proc.c \
	    common/proto.c common/status.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -shared -fvisibility=default -o $@ $^

# man pages: written by the programs from their own tables
MANPAGES = $(BUILD)/man/nvq.1 $(BUILD)/man/nvqd.8 $(BUILD)/man/nvq.ini.5
man: $(MANPAGES)
$(BUILD)/man/nvq.1: $(BUILD)/nvq
	@mkdir -p $(@D)
	$(BUILD)/nvq --man > $@
$(BUILD)/man/nvqd.8: $(BUILD)/nvqd
	@mkdir -p $(@D)
	$(BUILD)/nvqd --man > $@
$(BUILD)/man/nvq.ini.5: $(BUILD)/nvqd
	@mkdir -p $(@D)
	$(BUILD)/nvqd --man-ini > $@

MANDIR ?= $(SHAREDIR)/man
ZSHDIR ?= $(SHAREDIR)/zsh/vendor-completions
BASHDIR ?= $(SHAREDIR)/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALLED = $(BINDIR)/nvq $(SBINDIR)/nvqd $(LIBEXECDIR)/nvq-shim $(LIBEXECDIR)/nvq-ckpt \
	$(LIBEXECDIR)/libnvq-hook.so $(LIBEXECDIR)/bin/srun $(BASHDIR)/nvq $(ZSHDIR)/_nvq $(UNITDIR)/nvqd.service \
	$(MANDIR)/man1/nvq.1 $(MANDIR)/man8/nvqd.8 $(MANDIR)/man5/nvq.ini.5 \
	$(addprefix $(PYTHONDIR)/nvq/,$(PYFILES))

# the Python package (python/nvq): where Debian's python3 looks, for /usr the
# folder of every version (as Debian's packages install), else the version's
PYTHON ?= python3
PYFILES = $(notdir $(wildcard python/nvq/*.py))
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/$(shell \
	$(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || \
	echo python3)/dist-packages)

install: all man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SYSCONFDIR)/nvq \
	    $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(LIBEXECDIR)/bin $(DESTDIR)$(ZSHDIR) \
	    $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(BASHDIR) $(DESTDIR)$(UNITDIR)
	install -m 755 $(BUILD)/nvq $(DESTDIR)$(BINDIR)/nvq
	install -m 755 $(BUILD)/nvqd $(DESTDIR)$(SBINDIR)/nvqd
	install -m 755 $(BUILD)/nvq-shim $(DESTDIR)$(LIBEXECDIR)/nvq-shim
	install -m 755 $(BUILD)/nvq-ckpt $(DESTDIR)$(LIBEXECDIR)/nvq-ckpt
	install -m 755 $(BUILD)/bin/srun $(DESTDIR)$(LIBEXECDIR)/bin/srun
	install -m 755 $(BUILD)/libnvq-hook.so $(DESTDIR)$(LIBEXECDIR)/libnvq-hook.so
	test -e $(DESTDIR)$(SYSCONFDIR)/nvq/nvq.ini || \
	    install -m 644 etc/nvq.ini $(DESTDIR)$(SYSCONFDIR)/nvq/nvq.ini
	install -m 644 contrib/nvq.bash $(DESTDIR)$(BASHDIR)/nvq
	install -m 644 contrib/_nvq $(DESTDIR)$(ZSHDIR)/_nvq
	install -m 644 $(BUILD)/man/nvq.1 $(DESTDIR)$(MANDIR)/man1/nvq.1
	install -m 644 $(BUILD)/man/nvqd.8 $(DESTDIR)$(MANDIR)/man8/nvqd.8
	install -m 644 $(BUILD)/man/nvq.ini.5 $(DESTDIR)$(MANDIR)/man5/nvq.ini.5
	sed 's|@SBINDIR@|$(SBINDIR)|' contrib/nvqd.service > $(DESTDIR)$(UNITDIR)/nvqd.service
	install -d $(DESTDIR)$(PYTHONDIR)/nvq
	install -m 644 $(addprefix python/nvq/,$(PYFILES)) $(DESTDIR)$(PYTHONDIR)/nvq/

# what install put there; the configuration stays (it may be the admin's)
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(LIBEXECDIR)/bin $(DESTDIR)$(LIBEXECDIR) 2>/dev/null
	rm -rf $(DESTDIR)$(PYTHONDIR)/nvq/__pycache__
	-rmdir $(DESTDIR)$(PYTHONDIR)/nvq 2>/dev/null

clean:
	rm -rf build build-san build-fuzz

.PHONY: fuzz all unit hooktest system test check install uninstall man clean
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
