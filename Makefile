# sepne-spark developer commands. `make run` and `make test` set everything up first.
PY := .venv/bin/python

.PHONY: setup run test bench wheel clean

setup:
	@bash scripts/setup.sh

run: setup
	$(PY) jobs/embed.py --output out/embeddings --overwrite $(ARGS)

test: setup
	$(PY) -m pytest -q tests $(ARGS)

bench: setup
	$(PY) benchmarks/solver_bench.py $(ARGS)

wheel: setup
	$(PY) -m pip wheel --no-deps -w dist .

clean:
	rm -rf out dist build *.egg-info spark-warehouse
