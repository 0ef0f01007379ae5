#include "ring_layout.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "exercise.hpp"

namespace sa {

namespace {

void check_ranks(std::size_t tokens, std::size_t ranks, std::size_t rank)
{
    if (ranks == 0 || rank >= ranks) {
        throw std::invalid_argument(fmt::format("rank {} of {}: a ring needs at least 1 rank and g below G", rank,
                                                ranks));
    }
    if (tokens < ranks) {
        throw std::invalid_argument(fmt::format("{} ranks for {} tokens: each rank needs at least one token, so G "
                                                "can be at most n", ranks, tokens));
    }
}

}  // namespace

std::string layout_name(Layout layout)
{
    switch (layout) {
    case Layout::contiguous: return "contiguous";
    case Layout::striped: return "striped";
    case Layout::zigzag: return "zig-zag";
    }
    return "unknown";
}

//> zigzag-rows
std::vector<std::size_t> zigzag_rows(std::size_t tokens, std::size_t ranks, std::size_t rank)
{
    // BEGIN SOLUTION zigzag_rows: chapter 17, Attention across machines
    const std::size_t chunks = 2 * ranks;
    const std::size_t base = tokens / chunks;   // every chunk has this many tokens ...
    const std::size_t extra = tokens % chunks;  // ... and the first `extra` chunks one more
    const auto chunk_start = [&](std::size_t chunk) { return chunk * base + (chunk < extra ? chunk : extra); };
    std::vector<std::size_t> rows;
    for (const std::size_t chunk : {rank, chunks - 1 - rank}) {  // one early chunk, its mirror late
        for (std::size_t row = chunk_start(chunk); row < chunk_start(chunk + 1); ++row) {
            rows.push_back(row);
        }
    }
    return rows;
    // END SOLUTION
}
//< zigzag-rows

//> layout-rows
std::vector<std::size_t> layout_rows(Layout layout, std::size_t tokens, std::size_t ranks, std::size_t rank)
{
    check_ranks(tokens, ranks, rank);
    std::vector<std::size_t> rows;
    switch (layout) {
    case Layout::contiguous:  // chapter 13's split of the keys between workers
        for (std::size_t row = rank * tokens / ranks; row < (rank + 1) * tokens / ranks; ++row) {
            rows.push_back(row);
        }
        break;
    case Layout::striped:
        for (std::size_t row = rank; row < tokens; row += ranks) {
            rows.push_back(row);
        }
        break;
    case Layout::zigzag:
        rows = zigzag_rows(tokens, ranks, rank);
        break;
    }
    return rows;
}
//< layout-rows

//> ring-schedule
std::size_t ring_block_owner(std::size_t rank, std::size_t step, std::size_t ranks)
{
    // BEGIN SOLUTION ring_block_owner: chapter 17, Attention across machines
    return (rank + ranks - step % ranks) % ranks;  // (g - s) mod G, without going below 0
    // END SOLUTION
}
//< ring-schedule

}  // namespace sa
