// Chapter 16, Generating text: chapter 14's saved model continues a prompt one character at a time;
// greedy choice, temperature, top-k and a seeded inverse-CDF draw; the KV cache of every layer and
// head against recomputation; and what happens when the text runs past the trained context.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "char_text.hpp"
#include "circuits.hpp"
#include "cli.hpp"
#include "generation.hpp"
#include "generation_options.hpp"
#include "generation_text.hpp"
#include "language_model.hpp"
#include "report.hpp"
#include "safetensors.hpp"
#include "sampling.hpp"
#include "training_files.hpp"

namespace {

constexpr std::size_t max_length = 400;   // the longest --length: the check recomputes every prefix
constexpr std::size_t table_rows = 8;     // the most likely characters shown for one step
constexpr std::size_t table_top_k = 5;    // the top-k of the table's fourth rule
constexpr double table_temperature = 0.5; // the temperature of its third rule
constexpr std::size_t long_windows = 16;  // held-out windows of four contexts, for the last section

// The probabilities a rule draws from; greedy puts all of it on the largest logit.
std::vector<double> probabilities_of(const std::vector<double>& z, const sa::SamplingRule& rule)
{
    if (!rule.greedy) {
        return sa::rule_probabilities(z, rule.temperature, rule.top_k);
    }
    std::vector<double> p(z.size(), 0.0);
    p[sa::greedy_choice(z)] = 1.0;
    return p;
}

// One step after the prompt under the reader's rule, then the book's three rules on the same logits and u.
std::string one_step_table(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary,
                           const std::vector<std::size_t>& prompt, const sa::SamplingRule& rule, bool uncropped,
                           double u, int digits)
{
    const auto [z, listed] = sa::listed_logits(model, prompt, uncropped, table_rows);
    const std::size_t v = z.size();
    const std::vector<double> own = probabilities_of(z, rule);
    const std::vector<double> plain = sa::rule_probabilities(z, 1.0, v);
    const std::vector<double> cooled = sa::rule_probabilities(z, table_temperature, v);
    const std::vector<double> cut = sa::rule_probabilities(z, 1.0, table_top_k);
    const auto label = [&](std::size_t token) { return "'" + sa::character_label(vocabulary.characters[token]) + "'"; };
    std::string yours = fmt::format("One step with your rule ({}): the character after the prompt.\n"
                                    "The {} most likely, in the vocabulary's order; F sums p over every character up "
                                    "to this one.\n"
                                    "  char   logit       p       F\n", sa::rule_name(rule, v), table_rows);
    std::string book = fmt::format("The book's rules on the same logits:\n"
                                   "  char   p (τ = 1)   F (τ = 1)   p (τ = {})   p (top-{})\n",
                                   table_temperature, table_top_k);
    double own_sum = 0.0;
    double plain_sum = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
        own_sum += own[j];
        plain_sum += plain[j];
        if (listed[j]) {
            const std::string c = sa::character_label(vocabulary.characters[j]);
            yours += fmt::format("  {:<4} {:>7.{}f} {:>7.{}f} {:>7.{}f}\n", c, z[j], digits, own[j], digits, own_sum,
                                 digits);
            book += fmt::format("  {:<4} {:>11.{}f} {:>11.{}f} {:>12.{}f} {:>11.{}f}\n", c, plain[j], digits,
                                plain_sum, digits, cooled[j], digits, cut[j], digits);
        }
    }
    yours += fmt::format("The seed's first uniform number: u = {:.{}f}. Your rule draws {}, the first F above u{}.\n"
                         "The greedy choice, the largest logit: {}.\n\n", u, digits,
                         label(sa::inverse_cdf_draw(own, u)), rule.greedy ? " (greedy draws no u)" : "",
                         label(sa::greedy_choice(z)));
    book += fmt::format("The same u on each rule's own sums: τ = 1 draws {}, τ = {} draws {}, top-{} draws {}.\n\n",
                        label(sa::inverse_cdf_draw(plain, u)), table_temperature, label(sa::inverse_cdf_draw(cooled, u)),
                        table_top_k, label(sa::inverse_cdf_draw(cut, u)));
    return yours + book;
}

// One generation under a window, with the cache and without it: the text, the check, the rows and the cache's size.
std::string window_run(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary,
                       const std::vector<std::size_t>& prompt, std::size_t length, const sa::SamplingRule& rule,
                       std::int64_t seed, sa::Window window)
{
    const auto seed_bits = static_cast<std::uint64_t>(seed);
    const std::size_t c = model.shape.context;
    //> with-and-without
    const sa::Generated with = sa::generate_text(model, prompt, length, rule, seed_bits, true, window);
    const sa::Generated without = sa::generate_text(model, prompt, length, rule, seed_bits, false, window);
    if (with.tokens != without.tokens) {
        throw std::logic_error("the cached and the recomputed generations differ");
    }
    //< with-and-without
    const std::size_t fed = length == 0 ? 0 : prompt.size() + length - 1;  // the last character drawn is never read
    const std::size_t fullest = window == sa::Window::sliding ? std::min(fed, c) : fed;
    const std::size_t leaves = sa::leaves_context(prompt.size(), length, c);
    const std::string rows_by = window == sa::Window::sliding ? "the window" : "the text";
    std::string out = fmt::format("{}With the KV cache and without it: {} characters, identical (checked).\n",
                                  sa::wrapped_text(sa::shown_text(sa::decode(vocabulary, prompt)) + "[" +
                                                   sa::shown_text(sa::decode(vocabulary, with.tokens)) + "]"), length);
    if (leaves != 0 && window == sa::Window::sliding) {
        out += fmt::format("From generated character {} on, the text is longer than the context: each step reads "
                           "the last {},\nand the cache is filled again from them.\n", leaves, c);
    } else if (leaves != 0) {
        out += fmt::format("From generated character {} on, the step reads position {} and later: past the "
                           "context.\n", leaves, c);
    }
    return out + fmt::format("Rows of Q, K and V each layer computed: {} with the cache, {} recomputing {} at "
                             "every step.\n"
                             "The cache at its fullest: t = {} positions, 2 · {} · {} · {} = {} numbers, {} bytes "
                             "as F64.\n", with.rows, without.rows, rows_by, fullest, model.layers.size(),
                             sa::cached_width(model), fullest, sa::cache_numbers(model, fullest),
                             8 * sa::cache_numbers(model, fullest));
}

std::string generations(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary,
                        const std::vector<std::size_t>& prompt, std::size_t length, const sa::SamplingRule& rule,
                        std::int64_t seed, bool uncropped)
{
    const std::size_t c = model.shape.context;
    const auto bits = static_cast<std::uint64_t>(seed);
    const std::string sliding_title = fmt::format("each step reading at most the last {} characters, at positions "
                                                  "0 to {} as in training", c, c - 1);
    const std::string whole_title = "every step reading the whole text, at positions past the context (--uncropped)";
    const sa::Window mine = uncropped ? sa::Window::whole : sa::Window::sliding;
    const sa::Window other = uncropped ? sa::Window::sliding : sa::Window::whole;
    std::string out = fmt::format("The prompt continued ({}, seed {}),\n{}:\n", sa::rule_name(rule, vocabulary.characters.size()),
                                  seed, uncropped ? whole_title : sliding_title);
    out += window_run(model, vocabulary, prompt, length, rule, seed, mine);
    out += fmt::format("\nThe same seed, {}:\n", uncropped ? sliding_title : "the experiment: " + whole_title);
    out += window_run(model, vocabulary, prompt, length, rule, seed, other);
    const std::vector<std::size_t> sliding = sa::generate_text(model, prompt, length, rule, bits, true,
                                                               sa::Window::sliding).tokens;
    const std::vector<std::size_t> whole = sa::generate_text(model, prompt, length, rule, bits, true,
                                                             sa::Window::whole).tokens;
    const std::size_t apart = sa::first_difference(sliding, whole);
    out += apart == 0 ? "The two generations are the same.\n"
                      : fmt::format("The two generations differ first at generated character {}.\n", apart);
    const sa::Generated rolling = sa::generate_text(model, prompt, length, rule, bits, true, sa::Window::rolling);
    const std::size_t rolled = sa::first_difference(sliding, rolling.tokens);
    return out + fmt::format("\nA rolling cache: the last {} keys and values of each layer at their own positions, "
                             "one row per step.\n{} rows; {}.\n\n", c, rolling.rows,
                             rolled == 0 ? fmt::format("the same {} characters as the sliding window", length)
                                         : fmt::format("it parts from the sliding window at generated character {}",
                                                       rolled));
}

// The mean cross-entropy of rows [first, last) of each window of `span` rows.
double bucket_loss(const sa::Matrix& z, const std::vector<std::size_t>& targets, std::size_t span,
                   std::size_t first, std::size_t last)
{
    double total = 0.0;
    std::size_t count = 0;
    for (std::size_t r = 0; r < z.rows(); ++r) {
        if (r % span < first || r % span >= last) {
            continue;
        }
        double largest = z(r, 0);
        for (std::size_t j = 1; j < z.cols(); ++j) {
            largest = std::fmax(largest, z(r, j));
        }
        double sum = 0.0;
        for (std::size_t j = 0; j < z.cols(); ++j) {
            sum += std::exp(z(r, j) - largest);
        }
        total += largest + std::log(sum) - z(r, targets[r]);
        ++count;
    }
    return total / static_cast<double>(count);
}

// The logits of a sliding window over windows of `span` rows: row p reads the last c characters up
// to p, at positions 0 to c - 1, as generation does; below c that is the whole window so far. Each is
// recomputed_logits() on those c characters, bit for bit, computed as a server would: the first c - 1
// prefilled into a cache, then one decoding step (a third of the work: no queries, attention or
// logits for the rows before the last).
sa::Matrix sliding_logits(const sa::LanguageModel& model, const std::vector<std::size_t>& inputs,
                          const sa::Matrix& whole, std::size_t span)
{
    const std::size_t c = model.shape.context;
    sa::Matrix z = whole;  // rows below c: the same computation as one window
    for (std::size_t r = 0; r < inputs.size(); ++r) {
        if (r % span >= c) {
            const auto last = inputs.begin() + static_cast<std::ptrdiff_t>(r);
            sa::GenerationCache cache = sa::prefill(model, {last - static_cast<std::ptrdiff_t>(c - 1), last});
            const std::vector<double> row = sa::decode_next(model, cache, *last).logits;
            std::copy(row.begin(), row.end(), z.data() + r * z.cols());
        }
    }
    return z;
}

//> past-context
std::string past_context(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary, int digits)
{
    const std::size_t c = model.shape.context;
    const std::string text = sa::read_file(sa::book_file(BOOK_KJV_HELD_OUT), "the King James held-out text");
    //{ returns a note if the text has a character the model does not know
    for (const char ch : text) {
        if (vocabulary.token_of_byte[static_cast<unsigned char>(ch)] < 0) {
            return "Past the context: skipped, the held-out King James text has characters outside this model's "
                   "vocabulary.\n";
        }
    }
    //}
    const sa::Batch batch = sa::even_batch(sa::encode(vocabulary, text), long_windows, 4 * c);
    // The same tokens read three ways: one window of 4c positions (rotary angles up to 4c - 1, offsets the
    // model never saw); four windows of c, each starting again at position 0, so that a character reads
    // only those before it in its own quarter; and a window of the last c characters that slides by one
    // for each character, as generation reads.
    const sa::Matrix one = sa::forward(model, batch.inputs, 4 * c).logits;
    const sa::Matrix four = sa::forward(model, batch.inputs, c).logits;
    const sa::Matrix sliding = sliding_logits(model, batch.inputs, one, 4 * c);
    //{ out starts with the table's heading
    std::string out = fmt::format("Past the context, on held-out text (not --prompt): {} windows of {} characters, "
                                  "the model trained on {}.\n"
                                  "Mean cross-entropy, nats per character, by position in the window:\n"
                                  "  positions   one window of {}   restarting every {}   sliding, the last {}\n",
                                  long_windows, 4 * c, c, 4 * c, c, c);
    //}
    for (const auto& [first, last] : {std::pair{std::size_t{0}, c}, std::pair{c, 2 * c}, std::pair{2 * c, 4 * c}}) {
        out += fmt::format("  {:>3} to {:<3} {:>17.{}f}   {:>18.{}f}   {:>18.{}f}\n", first, last - 1,
                           bucket_loss(one, batch.targets, 4 * c, first, last), digits,
                           bucket_loss(four, batch.targets, 4 * c, first, last), digits,
                           bucket_loss(sliding, batch.targets, 4 * c, first, last), digits);
    }
    return out;
}
//< past-context

std::string generating_text_chapter(const sa::Example& example)
{
    const sa::SavedModel saved = sa::load_book_model(example.options.at("--load"));
    const sa::LanguageModel& model = saved.model;
    const sa::Vocabulary vocabulary = sa::make_vocabulary(saved.vocabulary);
    const std::size_t v = saved.vocabulary.size();
    const sa::SamplingRule rule = sa::sampling_rule(example, v);  // --greedy, or --temperature and --top-k
    const auto length = static_cast<std::size_t>(sa::whole_option(example, "--length", 0, max_length));
    const std::vector<std::size_t> prompt = sa::prompt_tokens(vocabulary, example.options.at("--prompt"));
    const int digits = example.precision;
    sa::SplitMix64 generator(static_cast<std::uint64_t>(example.seed));
    const std::size_t kv_heads = sa::kv_head_count(model.shape);  // a model of chapter 18 shares key/value heads
    const std::string shared = kv_heads == model.shape.heads ? "" : fmt::format(", h_kv = {}", kv_heads);
    std::string out = fmt::format("Model: {} attention layer(s), d = {}, h = {}{}, context {}, d_vocab = {}.\n"
                                  "Prompt: {}\n\n", model.shape.layers, model.shape.width, model.shape.heads, shared,
                                  model.shape.context, v, sa::shown_text(example.options.at("--prompt")));
    const bool uncropped = sa::flag_option(example, "--uncropped");
    const std::string step = one_step_table(model, vocabulary, prompt, rule, uncropped, generator.uniform(), digits);
    const std::string continued = generations(model, vocabulary, prompt, length, rule, example.seed, uncropped);
    out += example.given.contains("--prompt") ? continued + step : step + continued;  // the reader's text first
    out += past_context(model, vocabulary, digits);
    out += "\n";  // ch16-names prints the chapter's next part (names-output.txt)
    if (!example.options.at("--speed").empty()) {
        // A fact about the machine, not the model: a file of its own, never the checked output.
        sa::write_generation_speed(example.options.at("--speed"), sa::Report(example), model, prompt, rule,
                                   example.seed, {30, 120, max_length});
    }
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch16-generating-text",
                         "continue a prompt with chapter 14's trained model, with a KV cache in every layer",
                         sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--prompt", "TEXT", "the text to continue, characters of the model's vocabulary",
                     "And God said, Let there be"},
                    {"--length", "N", fmt::format("characters to generate, 0 to {}", max_length), "120"},
                    {"--temperature", "TAU",
                     "divide the logits by the temperature τ before the softmax, above 0 and at most 100", "0.8"},
                    {"--top-k", "K", "draw only among the K largest logits, 1 to d_vocab, or all", "all"},
                    {"--greedy", "", "take the largest logit at every step (the limit τ -> 0)", "off"},
                    {"--uncropped", "", "the experiment first: every step reads the whole text, past the trained "
                     "context (by default a step reads the last context characters)", "off"},
                    {"--load", "FILE", "the saved model (safetensors, F64)", BOOK_CH14_MODEL},
                    {"--speed", "FILE",
                     "write the measured characters per second, with and without the cache, to FILE (with --figures, "
                     "a plot too)", ""}};
    info.writes = {"--speed"};  // checked before the run starts
    const std::string own = "the model reads the characters of a prompt, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, generating_text_chapter);
}
