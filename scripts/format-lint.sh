#!/usr/bin/env bash
# swift format lint --strict over every Swift file, with the repository's .swift-format; any finding
# fails the run. `make check` (CI) runs it first. To fix what it reports:
#   swift format format -i -r Sources Tests Benchmarks Examples Package.swift
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --recursive Sources Tests Benchmarks Examples Package.swift
echo "format-lint.sh: swift format lint --strict reports nothing" >&2
