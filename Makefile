# sepne-spark developer commands. `make run` and `make test` set everything up first.
PY := .venv/bin/python

.PHONY: setup run test test-deploy test-fast test-spark test-spark-version test-airflow airflow-setup bench wheel clean

setup:
	@bash scripts/setup.sh

# Without --input in ARGS it embeds a generated graph (--generated).
# out/embeddings is replaced at each run; an --output of your own in ARGS is not (the job
# refuses an existing output unless ARGS says --overwrite).
# A local run listens on the loopback interface (Spark's default is the address the host
# name resolves to, with a warning where that is a loopback one); SPARK_LOCAL_IP=... overrides.
run: setup
	SPARK_LOCAL_IP=$${SPARK_LOCAL_IP:-127.0.0.1} $(PY) jobs/embed.py $(if $(filter --input --input=%,$(ARGS)),,--generated) $(if $(findstring --output,$(ARGS)),,--output out/embeddings --overwrite) $(ARGS)

# Tiers (pytest.ini): unit (no Spark, under a minute), spark (in-process local[2]),
# e2e (jobs, subprocesses, spark-submit, Spark Connect). `make test` runs them all, in three
# test processes (pytest-xdist; three beat two on 2 cores, 767 s against 858 s in two
# runs on 2026-12-01), each test module in one of them, so that a module's
# servers (Spark Connect, the standalone cluster) start once, the longest modules first
# (tests/conftest.py).
# The Airflow virtualenv is installed beside the main set-up (two pip installs at once,
# 58 s instead of 92 on a fresh clone, 2026-12-03), its tests run after the suite.
# The deploy checks (marker `deploy`: workers and jobs killed mid-run, the standalone
# cluster, spark-submit of the built wheel from outside the checkout, README's example run
# from the wheel, a session without the GraphFrames JARs, a model outliving its session,
# five slower path checks) take half a minute to a minute or more each
# and run in `make test-deploy` (-m deploy; tests/conftest.py leaves them out of any
# run whose -m does not name them), so that `make test` stays under ten minutes.
test:
	@$(MAKE) --no-print-directory -j2 setup airflow-setup
	$(PY) -m pytest -q -n 3 --dist loadfile --no-loadscope-reorder --durations=15 tests $(ARGS)
	@$(MAKE) --no-print-directory test-airflow

test-deploy: setup
	$(PY) -m pytest -q -n 2 --dist loadfile -m deploy tests $(ARGS)

test-fast: setup
	$(PY) -m pytest -q -m unit tests $(ARGS)

test-spark: setup
	$(PY) -m pytest -q -m "unit or spark" tests $(ARGS)

# The unit and spark tiers on another PySpark, in .venv-spark-$(SPARK): make test-spark-version SPARK=3.5.9
test-spark-version:
	@SPARK=$(SPARK) bash scripts/spark_version_check.sh $(ARGS)

# The example Airflow DAG, in its own virtualenv (.venv-airflow) with a pinned Airflow.
test-airflow:
	@bash scripts/airflow_check.sh

airflow-setup:
	@bash scripts/airflow_check.sh --install-only

bench: setup
	$(PY) benchmarks/solver_bench.py $(ARGS)

# build/ first: setuptools adds to it and never removes a module that is gone.
wheel: setup
	rm -rf build
	$(PY) -m pip wheel --no-deps -w dist .

clean:
	rm -rf out dist build *.egg-info spark-warehouse
