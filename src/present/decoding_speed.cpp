#include "decoding_speed.hpp"

#include <fstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "bench.hpp"

namespace sa {

std::vector<DecodingShape> decoding_shapes(std::size_t vocabulary)
{
    return {{"the book's model: d = 64, h = 4, 1 layer", {vocabulary, 64, 4, 1, 64, 0}, 48, 16, {4, 2, 1}},
            {"a larger model: d = 1024, h = 16, 1 layer", {vocabulary, 1024, 16, 1, 4096, 0}, 4080, 16, {16, 4, 1}}};
}

DecodingBytes decoding_bytes(const ModelShape& shape, std::size_t positions)
{
    const std::uint64_t d = shape.width;
    const std::uint64_t kv_width = kv_head_count(shape) * (d / shape.heads);  // the columns of W_K and W_V
    const std::uint64_t per_position = 2 * shape.layers * kv_width * 8;
    const std::uint64_t weights = d + shape.layers * (2 * d * d + 2 * d * kv_width) + d * shape.vocabulary;
    return {per_position, per_position * positions, 8 * weights};
}

std::string decoding_bytes_table(const std::vector<DecodingShape>& shapes)
{
    std::string text = "Decoding one token with chapter 16's cache (sa::decode_next): the bytes of F64 it reads\n";
    for (const DecodingShape& shape : shapes) {
        const std::size_t last = shape.positions + shape.steps - 1;
        text += fmt::format("\n{}; the token at position {} (attending over {} positions)\n  h_kv  cache per position  "
                            "cache read  weights read  cache / weights\n", shape.name, last, last + 1);
        for (const std::size_t count : shape.kv_counts) {
            ModelShape sized = shape.shape;
            sized.kv_heads = count;
            const DecodingBytes bytes = decoding_bytes(sized, last + 1);
            text += fmt::format("  {:>4}  {:>18}  {:>10}  {:>12}  {:>15.3f}\n", count, bytes.cache_per_position,
                                bytes.cache, bytes.weights,
                                static_cast<double>(bytes.cache) / static_cast<double>(bytes.weights));
        }
    }
    return text;
}

GenerationCache random_cache(const LanguageModel& model, std::size_t positions, SplitMix64& generator)
{
    GenerationCache cache = empty_cache(model);
    for (std::vector<KvCache>& layer : cache.layers) {
        for (KvCache& head : layer) {
            for (std::size_t i = 0; i < positions * head.key_dim; ++i) {
                head.keys.push_back(generator.unit_variance());
                head.values.push_back(generator.unit_variance());
            }
        }
    }
    cache.length = positions;
    return cache;
}

namespace {

// Forgets every position past t, keeping the storage: the next run decodes the same positions again.
void cut_back(GenerationCache& cache, std::size_t positions)
{
    for (std::vector<KvCache>& layer : cache.layers) {
        for (KvCache& head : layer) {
            head.keys.resize(positions * head.key_dim);
            head.values.resize(positions * head.value_dim);
        }
    }
    cache.length = positions;
}

}  // namespace

DecodingTimes time_decoding(const DecodingShape& shape, int runs, std::uint64_t seed)
{
    std::vector<LanguageModel> models;
    std::vector<GenerationCache> caches;
    for (const std::size_t count : shape.kv_counts) {
        ModelShape sized = shape.shape;
        sized.kv_heads = count;
        SplitMix64 generator(seed);
        models.push_back(random_model(sized, generator));
        caches.push_back(random_cache(models.back(), shape.positions, generator));
    }
    std::vector<std::function<void()>> methods;
    for (std::size_t c = 0; c < models.size(); ++c) {
        methods.emplace_back([&, c] {
            for (std::size_t step = 0; step < shape.steps; ++step) {
                static_cast<void>(decode_next(models[c], caches[c], step % shape.shape.vocabulary));
            }
        });
    }
    const auto cut = [&] {
        for (GenerationCache& cache : caches) {
            cut_back(cache, shape.positions);
        }
    };
    const std::vector<bench::Runs> timed =
        bench::time_interleaved(methods, std::vector<int>(methods.size(), runs), bench::now, cut);
    DecodingTimes times;
    for (const bench::Runs& run : timed) {
        times.per_token.emplace_back();
        for (const double wall : run.wall) {
            times.per_token.back().push_back(wall / static_cast<double>(shape.steps));
        }
    }
    return times;
}

std::string decoding_speed_text(const std::vector<DecodingShape>& shapes, const std::vector<DecodingTimes>& times,
                                int runs)
{
    std::string processor = "a processor that does not name itself";
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
            processor = line.substr(line.find(':') + 2);
            break;
        }
    }
    std::string text = fmt::format("Measured on the machine that built this copy: {}, {} logical cores, load "
                                   "average {}.\nDecoding time per token with chapter 16's cache, the counts "
                                   "interleaved run by run;\nthe median of {} runs, and its ratio to the median "
                                   "of h_kv = h.\n", processor, std::thread::hardware_concurrency(),
                                   bench::load_average_text("/proc/loadavg"), runs);
    for (std::size_t s = 0; s < shapes.size(); ++s) {
        text += fmt::format("\n{}; positions {} to {}\n  h_kv  µs per token (median)  fastest run  / h_kv = h\n",
                            shapes[s].name, shapes[s].positions, shapes[s].positions + shapes[s].steps - 1);
        const double reference = bench::median(times[s].per_token.front());
        for (std::size_t c = 0; c < shapes[s].kv_counts.size(); ++c) {
            const double middle = bench::median(times[s].per_token[c]);
            text += fmt::format("  {:>4}  {:>22.1f}  {:>11.1f}  {:>9.2f}\n", shapes[s].kv_counts[c], 1e6 * middle,
                                1e6 * bench::minimum(times[s].per_token[c]), middle / reference);
        }
    }
    return text;
}

}  // namespace sa
