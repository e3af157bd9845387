# Harvester — the two commands a newcomer needs:  make run   |   make test
# Both bootstrap on a fresh machine: create .venv (Python >= 3.11), install the project,
# generate the gRPC code from proto/, then serve or test.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PROTOS := $(wildcard proto/harvester/v1/*.proto)
GEN    := harvester/v1/.generated
PYTEST_ARGS ?=
ARGS ?=

.PHONY: run test proto bench clean help shim shim-test

help:
	@echo "make run   - bootstrap, then serve the embedded default (Ctrl-C stops)"
	@echo "make test  - bootstrap, then run the whole test suite"
	@echo "make bench - run every benchmark in bench/ (writes bench/results/*.json)"
	@echo "make shim  - build the Java plug-ins: deploy/shim/target/harvester-shim.jar (docs/shim.md)"
	@echo "make shim-test - the Java plug-ins' unit tests with the cross-language vectors (also run by make test)"

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python >= 3.11 is required")'
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Generated code is not committed: it is rebuilt whenever a .proto changes.
$(GEN): $(PROTOS) $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. $(PROTOS)
	touch $(GEN)

proto: $(GEN)

run: $(GEN)
	$(BIN)/harvester serve $(ARGS)

test: $(GEN)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(GEN)
	@for b in bench/[a-z]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# The Java shim (deploy/shim/Makefile: javac/jar; HADOOP_HOME=... builds against a real install).
shim:
	$(MAKE) -C deploy/shim jar

shim-test: $(GEN)
	$(BIN)/python deploy/shim/make_vectors.py deploy/shim/target/vectors.json
	$(MAKE) -C deploy/shim test VECTORS=$(CURDIR)/deploy/shim/target/vectors.json

clean:
	$(MAKE) -C deploy/shim clean
	rm -rf $(VENV) harvester/v1/*_pb2*.py harvester/v1/*_pb2*.pyi $(GEN) .pytest_cache
