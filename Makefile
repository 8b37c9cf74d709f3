# A thin shim over the CMake presets: `make report` and `make test` install
# what is missing (apt-get), build and run. Everything else is plain CMake:
#   cmake --preset release && cmake --build --preset release && ctest --preset release
JOBS ?= $(shell nproc)
WEFT := build/release/tools/weft/weft
REPORT_ARGS ?=

.PHONY: all deps release debug asan tsan clang-release clang-asan clang-tsan report test test-release test-tsan test-asan test-clang-asan test-clang test-more install-test package docs clean

all: release

deps:
	@scripts/install-deps.sh

release debug asan tsan clang-release clang-asan clang-tsan: deps
	cmake --preset $@
	cmake --build --preset $@ -j $(JOBS)

# weft-report/ is this target's own output directory, so it is refreshed
# (--force removes only the files an earlier report wrote there).
# It builds only the CLI (and the library and experiments it links), not the
# tests, benchmarks and examples a full `make release` compiles.
report: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS) --target weft-cli
	$(WEFT) report --out weft-report --force $(REPORT_ARGS)

# The test matrix on 2 CPUs within CI's 30 minutes: g++ in release (every
# test), g++ with ThreadSanitizer (the stress and interleaving tests) and
# clang with AddressSanitizer + UndefinedBehaviorSanitizer (every test not
# labelled nosan: not the models, the slow report test, the package and docs
# checks or MPI; at -O1 with line tables only: a third of
# the compile time of -O2 -g). Three builds, two compilers, both sanitizers;
# `make test-more` adds the other combinations (g++ ASan, clang release,
# clang TSan) by hand.
test: test-release install-test test-tsan test-clang-asan

# The spin models are single-threaded and deterministic: two at a time.
test-release: release
	ctest --preset release -L model -j 2
	ctest --preset release -E "^model[.]" -j 1

test-tsan: tsan
	ctest --preset tsan -j 1

test-asan: asan
	ctest --preset asan -j 1

test-clang-asan: clang-asan
	ctest --preset clang-asan -j 1

# The same tests built by clang: every test in release but the spin models
# (the clang-release test preset leaves them out: they compile the model with
# cc, not with the C++ compiler under test, and `make test` has run them),
# then the stress tests under ThreadSanitizer.
test-clang: clang-release clang-tsan
	ctest --preset clang-release -j 1
	ctest --preset clang-tsan -j 1

test-more: test-asan test-clang

# Builds tests/install/ against an installed weft, through find_package and
# through pkg-config.
install-test: release
	tests/install/run.sh build/release

# Debian packages (cmake/Package.cmake): libweft-dev and weft, written to
# build/release/packages/. `apt-get install ./build/release/packages/*.deb`.
package: release
	cd build/release && cpack -G DEB

# The API reference from the contract headers (doxygen; docs/api/): fails on
# a public name without its comment or an internal name in the reference.
docs: deps
	cmake --preset release
	cmake --build --preset release --target docs

clean:
	rm -rf build
