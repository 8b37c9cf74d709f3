/// @file
/// weft/exec/blocked_range.hpp — a 2-D index space for parallel_for.
///
///   weft::BlockedRange2d<int> grid{0, rows, 16, 0, cols, 64};   // rows x cols, grains 16 and 64
///   weft::parallel_for(pool, grid, [&](const weft::BlockedRange2d<int>& b) {
///     for (int r = b.row_lo; r < b.row_hi; ++r)
///       for (int c = b.col_lo; c < b.col_hi; ++c) out[r][c] = f(r, c);
///   });
///
/// The body gets a whole sub-rectangle, not one cell: it keeps its inner
/// loops (which the compiler can vectorise and which walk rows in memory
/// order), and one call per block costs nothing per cell. The sub-rectangle
/// is the same type as the range, so a body can be handed to a serial loop
/// over the whole grid too; its grains are the whole range's.
///
/// Splitting halves the dimension that holds more grains (rows when the two
/// are equal), as oneTBB's blocked_range2d does, so blocks stay close to
/// grain-shaped: a 3 x 1000 grid splits its columns, a 1000 x 3 one its rows.
/// A dimension is divisible while it holds more than its grain; a grain
/// below 1 means 1. An empty dimension (hi <= lo) makes the range empty.
/// The bounds may span more than I's maximum (an int range of -2e9..2e9):
/// the split arithmetic is done in I's unsigned type.
#pragma once

#include <concepts>

namespace weft {

template <std::integral I>
/// A rectangle of rows [row_lo, row_hi) by columns [col_lo, col_hi), split
/// no finer than the grains: what the 2-D parallel_for tiles.
struct BlockedRange2d {
  I row_lo{};      ///< first row
  I row_hi{};      ///< one past the last row
  I row_grain{1};  ///< a block never has fewer rows than this, unless the range does
  I col_lo{};      ///< first column
  I col_hi{};      ///< one past the last column
  I col_grain{1};  ///< a block never has fewer columns than this, unless the range does
};

}  // namespace weft
