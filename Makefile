# One verb per task. `make install` is what the README's first command does.
.DEFAULT_GOAL := help
PYTHON ?= python3

.PHONY: help install build-dev build-prod test test-rust test-py lint stubtest bench

help:
	@echo "install     pip install . (release build of the extension, profile-guided: ECNSIM_PGO=0 for none)"
	@echo "build-dev   editable install with a fast debug build (maturin develop)"
	@echo "build-prod  editable install with the release profile (maturin develop --release)"
	@echo "test        test-rust + test-py (what .ci/run does, after install)"
	@echo "test-rust   cargo test --workspace --profile release-test"
	@echo "test-py     pytest"
	@echo "lint        cargo fmt --check, clippy, ruff, mypy"
	@echo "stubtest    check python/ecnsim/_core.pyi against the built module"
	@echo "bench       ecnsim bench (packet-hops per wall second, memory per flow)"

install:
	$(PYTHON) -m pip install '.[test]'

build-dev:
	$(PYTHON) -m maturin develop --profile dev

build-prod:
	$(PYTHON) -m maturin develop --release

test: test-rust test-py

test-rust:
	cargo test --workspace --profile release-test

test-py:
	$(PYTHON) -m pytest

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(PYTHON) -m ruff check python tests validation bench build_backend
	$(PYTHON) -m ruff format --check python tests validation bench build_backend
	$(PYTHON) -m mypy

stubtest:
	$(PYTHON) -m mypy.stubtest ecnsim._core

bench:
	$(PYTHON) -m ecnsim bench
