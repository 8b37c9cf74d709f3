// weft/xp/io.hpp — the file-copy experiment of the "ders" article: locked
// stdio is hidden synchronisation.
//
// N threads each copy their own file (default 100 MB, in a temporary
// directory removed afterwards, also on error) concurrently. Byte-by-byte
// copies: fgetc/fputc (locked: a thread has been started, so glibc takes
// the FILE lock for every byte), getc_unlocked/putc_unlocked,
// std::ifstream::get/std::ofstream::put, weft Reader/Writer Cursors
// (weft-bytes). Block copies: weft Reader::peek + Writer::write (weft-blocks),
// read/write with a 64 KiB buffer, copy_file_range. Every buffered variant
// uses 64 KiB buffers (the article's size).
//
// mb_per_s is the aggregate rate: N x size / wall time from the release of
// the N threads to the last one finishing (open and close included), with
// MB = 10^6 bytes. Each destination is unlinked before its copy (so no
// page-cache truncation is timed) and compared with its source afterwards;
// a mismatch throws (it is a bug, not a row).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

// fgetc, getc_unlocked, iostream, weft-bytes, weft-blocks, read-write-64k,
// copy_file_range
const std::vector<std::string>& io_variants();

struct IoParams {
  std::int64_t size_bytes = 100'000'000;
  std::vector<int> threads;  // empty: 1 and available_parallelism(), deduplicated
  int reps = 3;
  std::string tmpdir;  // empty: default_tmpdir()
  std::vector<std::string> variants = io_variants();
};

std::vector<int> default_io_threads();
// $TMPDIR if set and not empty, else /tmp.
std::string default_tmpdir();
// Bytes the run needs in its directory: a source and a copy per thread.
std::int64_t io_space_needed(std::int64_t size_bytes, int max_threads);

// One "mb_per_s" row per variant and thread count (a variant the system
// does not support, e.g. copy_file_range on an old kernel, has
// measured = false and a note); extra "ratios": speed-ups from this run.
// Throws std::system_error on I/O failure and std::runtime_error when a
// copy differs from its source; the temporary directory is removed either way.
Result run_io(const IoParams& p);

}  // namespace weft::xp
