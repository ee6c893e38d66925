# The two commands a new user types are `make run` and `make test`; both set up first.
PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
# Python keeps its compiled modules (__pycache__, git-ignored) even where the environment says not
# to: every command a test starts would compile the package again, and pytest rewrite every test
# module's asserts again, on every run.
unexport PYTHONDONTWRITEBYTECODE
# Delta JVM jars matching the pinned pyspark 4.1.x (docs/reference/gx-delta-catalog.md §3.3).
DELTA_VERSION := 4.4.0
SPARK_BINARY  := 4.1
JARS_DIR      := .jars
DELTA_JARS    := $(JARS_DIR)/delta-spark_$(SPARK_BINARY)_2.13-$(DELTA_VERSION).jar \
                 $(JARS_DIR)/delta-storage-$(DELTA_VERSION).jar
CLASS_ARCHIVE := $(JARS_DIR)/embedded-spark.jsa
# Tests only: Spark's own Iceberg writer and reader (the oracle for Iceberg tables other engines write).
ICEBERG_VERSION := 1.11.0
ICEBERG_JAR   := $(JARS_DIR)/test/iceberg-spark-runtime-$(SPARK_BINARY)_2.13-$(ICEBERG_VERSION).jar
# Tests only: spark-avro, whose SchemaConverters is the oracle for how Spark reads an Avro schema as
# a table (4.1.1 is the newest 4.1 build Maven Central serves here; pyspark is 4.1.4).
SPARK_AVRO_VERSION := 4.1.1
SPARK_AVRO_JAR := $(JARS_DIR)/test/spark-avro_2.13-$(SPARK_AVRO_VERSION).jar
DEMO_DIR      ?= .demo/lake
CONF          ?= conf/schemaguard.toml
# Headless Chromium from Debian's packages renders the HTML report in the tests.
CHROMIUM      := /usr/bin/chromium
SUDO          := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Tests and bench only: moto's S3 server, in an environment of its own (moto pins python-dateutil
# below 3, which the project's environment is past); the tests start it on loopback.
MOTO          := .venv-moto/bin/moto_server

.PHONY: setup run test test-fast sanitize mutants oracle-tables oracle lint bench soak clean

setup: $(STAMP) $(DELTA_JARS) $(CLASS_ARCHIVE)

$(STAMP): pyproject.toml src/schemaguard/formats/_thrift.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

$(JARS_DIR)/delta-spark_$(SPARK_BINARY)_2.13-$(DELTA_VERSION).jar:
	mvn -q -B dependency:copy -Dartifact=io.delta:delta-spark_$(SPARK_BINARY)_2.13:$(DELTA_VERSION) -DoutputDirectory=$(JARS_DIR)

$(JARS_DIR)/delta-storage-$(DELTA_VERSION).jar:
	mvn -q -B dependency:copy -Dartifact=io.delta:delta-storage:$(DELTA_VERSION) -DoutputDirectory=$(JARS_DIR)

# The embedded session's JVM loads its classes from this archive (CDS), written by one training run
# of what a cold session does: about 2-3 s less per Spark start (bench/footer_scan.py times it).
$(CLASS_ARCHIVE): $(STAMP) $(DELTA_JARS)
	rm -f $@ $@.tmp
	SCHEMAGUARD_WRITE_CLASS_ARCHIVE=$(CURDIR)/$@.tmp $(PY) -m schemaguard.spark >$@.log 2>&1 \
	  || (tail -20 $@.log; echo "the class archive's training run failed (its log: $@.log)"; exit 1)
	mv $@.tmp $@

$(ICEBERG_JAR):
	mvn -q -B dependency:copy -Dartifact=org.apache.iceberg:iceberg-spark-runtime-$(SPARK_BINARY)_2.13:$(ICEBERG_VERSION) -DoutputDirectory=$(JARS_DIR)/test

$(SPARK_AVRO_JAR):
	mvn -q -B dependency:copy -Dartifact=org.apache.spark:spark-avro_2.13:$(SPARK_AVRO_VERSION) -DoutputDirectory=$(JARS_DIR)/test

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null

# The demo lake has findings on purpose: exit 1 (findings; a staged plan) is a successful demo, 2+
# is not. DEMO_REV names the demo's data: a lake an older build made is built anew.
DEMO_REV := 3
DEMO_PARTS := orders orders_delta orders_iceberg plan
PLAN_HTML ?= .schemaguard/plan.html
PLAN_JSON = $(dir $(PLAN_HTML))plan.json
# The demo's `sales.orders`: a managed Delta table of the embedded catalog (its warehouse is under
# SCHEMAGUARD_HOME), which `schemaguard demo --catalog-table` writes and the plan reads.
DEMO_TABLE := sales.orders
DEMO_TABLE_LOG = $(or $(SCHEMAGUARD_HOME),.warehouse)/warehouse/sales.db/orders/_delta_log
DEMO_PLAN = --ddl "ALTER TABLE $(DEMO_TABLE) RENAME COLUMN customer TO customer_id" \
  --table $(DEMO_TABLE) --spark-catalog --identity name \
  --query-log $(DEMO_DIR)/plan/queries.jsonl --sql $(DEMO_DIR)/plan/consumers
run: setup
	@test -e $(DEMO_DIR)/.rev-$(DEMO_REV) -a -d $(DEMO_TABLE_LOG) || { \
	  rm -rf $(addprefix $(DEMO_DIR)/,$(DEMO_PARTS)) && \
	  $(VENV)/bin/schemaguard demo $(DEMO_DIR) --catalog-table $(DEMO_TABLE) && touch $(DEMO_DIR)/.rev-$(DEMO_REV); }
	@$(VENV)/bin/schemaguard audit --conf $(CONF); status=$$?; test $$status -le 1
	@echo; echo "== the plan: rename customer to customer_id on $(DEMO_TABLE), read by several teams"
	@$(VENV)/bin/schemaguard plan $(DEMO_PLAN); status=$$?; test $$status -le 1
	@mkdir -p $(dir $(PLAN_HTML)); $(VENV)/bin/schemaguard plan $(DEMO_PLAN) --format html > $(PLAN_HTML); \
	  status=$$?; test $$status -le 1
	@$(VENV)/bin/schemaguard plan $(DEMO_PLAN) --format json > $(PLAN_JSON); status=$$?; test $$status -le 1
	@echo; echo "== its first step, shown: add --apply to run it on $(DEMO_TABLE)"
	@$(VENV)/bin/schemaguard migrate start --plan $(PLAN_JSON)
	@echo; echo "plan: $(PLAN_HTML)"; $(VENV)/bin/schemaguard findings --conf $(CONF) --where

$(MOTO):
	$(PYTHON) -m venv .venv-moto
	.venv-moto/bin/python -m pip install --quiet "moto[server]==5.2.5"

# The footer decoder's tests (JVM-free), which `make test` runs a second time on the Python decoder
# (formats/thrift.py; the switch SCHEMAGUARD_PYTHON_DECODER=1 runs any test that way) and
# `make sanitize` on the C one under AddressSanitizer and UBSan.
FOOTER_TESTS := tests/test_thrift_c.py tests/test_fuzz_footer.py tests/test_parquet_footer.py \
                tests/test_footer_files.py

# pytest-xdist, a test file per worker at a time (its module fixtures built once): each worker that
# meets a Spark test starts its own shared session, and a test that waits on processes of its own
# (a kill, a wheel, `make run`) overlaps the rest. At most 4 workers: each may hold a JVM. Files go
# out in collection order, the longest first (tests/conftest.py), not xdist's most-tests-first.
# The Spark processes the tests start are short runs on tiny tables: the JIT's first tier only
# halves their CPU (docs/catalog.md, `$SCHEMAGUARD_JAVA_OPTIONS`; the shared session keeps the full JIT).
test: export SCHEMAGUARD_JAVA_OPTIONS ?= -XX:TieredStopAtLevel=1
test: setup $(CHROMIUM) $(ICEBERG_JAR) $(SPARK_AVRO_JAR) $(MOTO)
	$(VENV)/bin/ruff check src jobs tests bench
	$(VENV)/bin/mypy
	SCHEMAGUARD_TEST_IN_PROCESS=1 $(VENV)/bin/pytest --numprocesses=auto --maxprocesses=4 --dist loadfile \
	  --no-loadscope-reorder
	SCHEMAGUARD_PYTHON_DECODER=1 $(VENV)/bin/pytest -m "not spark" $(FOOTER_TESTS)
	$(PY) -m tests.mutants --sample 10

# formats/_thrift.c built with -fsanitize=address,undefined into a copy of the package under
# .sanitize/ (the installed build is left alone), then the footer tests and the fuzz test on it:
# any out-of-bounds read, overflow or undefined behaviour aborts the run with the sanitizer's report
# (--capture=sys leaves stderr's descriptor to it). LD_PRELOAD puts ASan's runtime first, as an
# uninstrumented python needs; PYTHONMALLOC=malloc gives every bytes object its own redzones
# (pymalloc's arenas would hide a read past one); leak checks are off (the interpreter's own).
# Reads inside libpython (PyFloat_Unpack8, PyBytes_FromStringAndSize) are not instrumented.
SAN_DIR  := .sanitize
SAN_EXT   = $(SAN_DIR)/schemaguard/formats/_thrift$(shell $(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
sanitize: setup
	rm -rf $(SAN_DIR) && mkdir -p $(SAN_DIR) && cp -r src/schemaguard $(SAN_DIR)/
	rm -f $(SAN_DIR)/schemaguard/formats/_thrift*.so
	gcc -shared -fPIC -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -Wall -Wextra -Wno-unused-parameter -I$(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])') \
	  src/schemaguard/formats/_thrift.c -o $(SAN_EXT)
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  PYTHONMALLOC=malloc ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  PYTHONPATH=$(CURDIR)/$(SAN_DIR) SCHEMAGUARD_SANITIZED=$(CURDIR)/$(SAN_EXT) \
	  $(VENV)/bin/pytest -m "not spark" -p no:xdist --capture=sys $(FOOTER_TESTS)

# The tests that start no JVM, in well under a minute: neither `spark` nor `slow` tests. JAVA_HOME is
# unset and tests/no-jvm comes first on PATH, so pyspark's spark-class (and py4j, and spark-submit)
# find its fake `java`, which fails: a test that starts a JVM without the `spark` marker fails
# loudly here instead of slowly. SPARK_CONF_DIR points there too: no spark-env.sh to set JAVA_HOME.
# The console script's commands run in the test's own process (tests/helpers.py `run`), as in
# `make test`: a process start costs more than most commands.
NO_JVM := $(CURDIR)/tests/no-jvm

test-fast: setup $(MOTO)
	env -u JAVA_HOME SPARK_CONF_DIR=$(NO_JVM) PATH="$(NO_JVM):$$PATH" SCHEMAGUARD_TEST_IN_PROCESS=1 \
	  $(VENV)/bin/pytest -m "not spark and not slow and not chromium" -n auto

# The engines' truth tables (tests/truth_tables.py) written anew under tests/truth/ with real Spark
# and delta-spark; `make test` replays them with no JVM. Pass TABLES="spark_read" to redo one.
oracle-tables: setup
	$(PY) -m tests.truth_tables $(TABLES)

# The oracle tests with three times the generated cases and truth-table rows `make test` samples
# (SCHEMAGUARD_ORACLE_SCALE), then a randomized search against the engines (tests/oracle_search.py,
# 2,400 pairs by default); each disagreement becomes a case under tests/oracle_cases/ that
# `make test` replays.
ORACLE_TESTS := tests/test_oracle_*.py tests/test_truth_tables.py
oracle: setup $(ICEBERG_JAR) $(SPARK_AVRO_JAR)
	SCHEMAGUARD_ORACLE_SCALE=3 $(VENV)/bin/pytest --numprocesses=auto --maxprocesses=4 --dist loadfile $(ORACLE_TESTS)
	$(PY) -m tests.oracle_search $(ARGS)

# Planted faults (tests/mutants.py), one at a time on a copy: each must make a test fail. `make test`
# runs a sample of 10 that changes daily (its seed printed).
mutants: setup
	$(PY) -m tests.mutants

bench: setup $(MOTO)
	$(PY) bench/footer_scan.py

# Audits of a table another process keeps changing, some killed mid-run; then the catalog and the
# report folders checked (bench/soak.py). Not part of `make test`.
soak: setup
	$(PY) bench/soak.py

clean:
	rm -rf $(VENV) .venv-moto $(JARS_DIR) .demo .bench .warehouse .schemaguard .sanitize
