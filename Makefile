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
# test but the seeded interleavings, which need the library built a second
# time with schedule points: TSan runs them, and checks more), g++ with
# ThreadSanitizer (the stress and interleaving tests) and clang with
# AddressSanitizer + UndefinedBehaviorSanitizer (the library's unit and
# stress tests and the examples: not the models, the package and docs
# checks or MPI (label nosan), not the interleaving tests, which TSan
# runs, and not the CLI and its experiments, whose build
# and runs would take a third of CI's time; line tables only, the library
# and the tests whose own loops run billions of steps at -O1, the rest at
# -O0: half the build time of -O1 throughout). Three builds, two compilers,
# both sanitizers; `make test-more` adds the other combinations by hand:
# g++ ASan over every test, the CLI's included, clang release, clang TSan.
test: test-release install-test test-tsan test-clang-asan

# Two at a time: the spin models are single-threaded and deterministic, and
# the tests assert behaviour, never speed.
test-release: release
	ctest --preset release -j 2

# Two at a time, as the others: the stress tests assert behaviour, never
# speed (90 s against 118 s one at a time on 2 CPUs).
test-tsan: tsan
	ctest --preset tsan -j 2

test-asan: asan
	ctest --preset asan -j 1

# Two at a time: the tests assert behaviour, never speed, and most of them
# leave a CPU idle under the sanitizer (a sleeper, a single thread).
test-clang-asan: clang-asan
	ctest --preset clang-asan -j 2

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
