// The program the tests' precompiled header is built with
// (tests/CMakeLists.txt: weft_test_pch); it runs no test of its own.
