// Chapter 15's second half, copying the Bible: in the models ch15-induction-head saved, why text is
// harder to copy than letters (the prefix table, the rotary pairs), and how the copying model, trained
// on repeated text, copies it: against counting (a 5-gram and a copying rule) and through which path.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "circuits.hpp"
#include "cli.hpp"
#include "copying.hpp"
#include "copying_rows.hpp"
#include "induction_runs.hpp"
#include "induction_tables.hpp"
#include "report.hpp"
#include "settings.hpp"

namespace ch15 {
namespace {

using Data = sa::InductionData;
using Rows = sa::CopyRows;
using Versus = sa::CopyingVersus;
constexpr sa::InductionSizes sizes{context, test_windows, shorter_period, held_out_windows, span_windows,
                                   span_shortest, span_longest};

// The model's mean loss on the copied held-out spans: at their first occurrence and at the copy.
sa::SpanLosses copy_losses(const sa::LanguageModel& model, const sa::CopiedSpans& spans)
{
    const sa::ForwardTrace trace = sa::forward(model, spans.batch.inputs, spans.batch.window);
    return sa::span_losses(sa::row_losses(trace.logits, spans.batch.targets), spans, span_skip);
}

// The prefix table: on held-out windows, what copying after an earlier match of the last k characters gives.
std::string prefix_text(const Data& data, std::uint64_t seed)
{
    sa::SplitMix64 generator(seed + 2);  // after the copied spans' draws
    for (std::size_t w = 0; w < span_windows * 4; ++w) {
        (void)generator.next();
    }
    const sa::Batch windows = sa::random_batch(data.held_out_tokens, prefix_windows, context, generator);
    std::string text = fmt::format("Copying the Bible. Held-out text, {} windows of {}, positions {} to {}: copy what "
                                   "came after an earlier place\nwhose last k characters are the current position's.\n"
                                   "  k  matches per position  positions with a match  right when matched\n",
                                   prefix_windows, context, prefix_first, context - 1);
    for (std::size_t k = 1; k <= 4; ++k) {
        const sa::PrefixMatches m = sa::prefix_matches(windows, prefix_first, k);
        text += fmt::format("  {}  {:>20.2f}  {:>20.1f} %  {:>16.1f} %\n", k, m.matches_per_position,
                            100.0 * m.share_matched, 100.0 * m.share_right);
    }
    return text + "\n";
}

// A model on the copied held-out spans: its losses, and where its chosen last-layer head looks from the copy.
std::string span_text(const sa::LanguageModel& model, const Data& data, std::size_t head, int digits)
{
    const sa::SpanLosses losses = copy_losses(model, data.spans);
    const sa::ForwardTrace trace = sa::forward(model, data.spans.batch.inputs, context);
    const std::size_t last = model.layers.size() - 1;
    const sa::SpanAttention seen = sa::span_attention(trace.layers[last], model.shape.heads, data.spans, head, span_skip);
    return fmt::format("  first occurrence {:.{}f} nats, copy {:.{}f} nats per character;\n  layer {} head {} from the "
                       "copy's rows: {:.{}f} of its weight on the place to copy from,\n  {:.{}f} on the places after "
                       "the character's other earlier occurrences ({:.{}f} of them on average).\n",
                       losses.first, digits, losses.second, digits, last, head, seen.on_source, digits, seen.on_other,
                       digits, seen.other_places, digits);
}

// How many of a head's rotary pairs turn by less than one radian across a window (context − 1 places):
// only those can compare two characters whatever the distance between them.
std::string rotary_text(std::size_t narrow_heads)
{
    std::string text = fmt::format("Rotary pairs turning less than one radian across a window ({} places):\n ",
                                   context - 1);
    const std::vector<std::size_t> widths = narrow_heads == copy_heads ? std::vector<std::size_t>{copy_heads}
                                                                        : std::vector<std::size_t>{narrow_heads, copy_heads};
    for (const std::size_t heads : widths) {
        const std::size_t features = width / heads;
        std::size_t slow = 0;
        for (std::size_t i = 0; i < features / 2; ++i) {
            slow += static_cast<double>(context - 1) * std::pow(10000.0, -2.0 * static_cast<double>(i) /
                                                                           static_cast<double>(features)) < 1.0;
        }
        text += fmt::format(" {} of {} in a head of {} features{}", slow, features / 2, features,
                            heads == widths.back() ? ".\n" : ";");
    }
    return text;
}

// The copying model's second phase, from the losses ch15-induction-head measured while training it.
std::string copy_phase_text(const sa::LanguageModel& model, const sa::InductionRun& run, int digits)
{
    std::string text = fmt::format("The copying model: {} attention layers, d = {}, h = {} (heads of {} features);\n"
                                   "  {} steps of the letters mix above, then {} steps at Adam α = {} with every "
                                   "other window\n  a span of the training text ({} to {} characters) repeated.\n"
                                   "   step  copy loss on the validation spans\n", model.shape.layers, width, copy_heads,
                                   width / copy_heads, run.steps, run.copy_steps, copy_learning_rate, text_mix.shortest,
                                   text_mix.longest);
    for (std::size_t i = 0; i < run.copy_checkpoints.size(); ++i) {
        text += fmt::format("  {:>5}  {:>9.{}f}\n", run.copy_checkpoints[i], run.copy_losses[i], digits);
    }
    return text;
}

// The copying rule's shortest match and λ: the lowest loss over the validation windows' characters
// that have four before them in their window (copies, first occurrences and the text around them).
sa::CopyRule choose_rule(const sa::NgramCounts& counts, const sa::CopiedSpans& validation, double& lowest)
{
    const Rows rows = sa::inside_rows(validation.batch, ngram_order);
    sa::CopyRule chosen{};
    lowest = HUGE_VAL;
    for (const std::size_t shortest : rule_shortest) {
        for (const double weight : rule_weights) {
            const double loss = sa::rule_loss(counts, validation.batch, rows, {shortest, weight});
            if (loss < lowest) {
                lowest = loss;
                chosen = {shortest, weight};
            }
        }
    }
    return chosen;
}

Versus versus(const sa::InductionModels& models, const sa::InductionRun& run, const Data& data)
{
    const sa::NgramCounts counts = sa::count_ngrams(data.training, ngram_order, data.vocabulary_size);
    Versus v;
    v.rule = choose_rule(counts, data.validation, v.rule_validation);
    const Rows validation = sa::inside_rows(data.validation.batch, ngram_order);
    v.ngram_validation = sa::rule_loss(counts, data.validation.batch, validation, {1, 0.0});
    const Rows copies = sa::copy_rows(data.spans, span_skip);  // the test spans, scored once from here on
    v.ngram_copy = sa::rule_loss(counts, data.spans.batch, copies, {1, 0.0});
    v.rule_copy = sa::rule_loss(counts, data.spans.batch, copies, v.rule);
    v.model_validation = run.copy_losses.back();  // the last step's copy loss on the validation spans
    v.control_validation = copy_losses(models.control, data.validation).second;  // the same for the control
    v.model = copy_losses(models.copying, data.spans);
    v.control = copy_losses(models.control, data.spans);
    const Rows inside = sa::inside_rows(data.held_out, ngram_order);
    v.ngram_plain = sa::rule_loss(counts, data.held_out, inside, {1, 0.0});
    v.rule_plain = sa::rule_loss(counts, data.held_out, inside, v.rule);
    v.model_inside = sa::model_loss(models.copying, data.held_out, inside);
    v.model_plain = sa::evaluate(models.copying, data.held_out);
    v.without_mix = sa::evaluate(models.plain, data.held_out);
    return v;
}

std::string versus_text(const Versus& v, std::size_t heads, int digits)
{
    const double price = v.model_plain - v.without_mix;
    return fmt::format("The copying rule: copy what followed the longest earlier match of the last characters in the "
                       "window\n  with probability λ, the rest by the counted {0}-gram (chapter 14's counting over the "
                       "training text,\n  add-one smoothing); on the {1} validation windows, every character with {2} "
                       "before it in its window,\n  the lowest loss is {3:.{4}f} nats per character with the shortest "
                       "match {5} and λ = {6} (the {0}-gram alone {7:.{4}f}).\n"
                       "On the validation copies: the copying model (h = {10}) {29:.{4}f}, the chapter's model "
                       "(h = {13}) after the same training {30:.{4}f}.\n"
                       "On the copied held-out spans (the test spans), from the fourth character on, nats per "
                       "character:\n"
                       "                                        first occurrence   copy\n"
                       "  counted {0}-gram                                       -  {8:.{4}f}\n"
                       "  the copying rule                                     -  {9:.{4}f}\n"
                       "  the copying model (h = {10})                       {11:.{4}f}  {12:.{4}f}\n"
                       "  the chapter's model (h = {13}), the same training  {14:.{4}f}  {15:.{4}f}\n"
                       "Plain held-out text (the {16} windows above), every character with {2} before it in its "
                       "window:\n  counted {0}-gram {17:.{4}f}, the copying rule {18:.{4}f}, the copying model "
                       "{19:.{4}f}.\n"
                       "On the copy the model beats the {0}-gram by {20:.{4}f} nats per character, and {28} by "
                       "{21:.{4}f};\n  on plain text the {0}-gram wins by {22:.{4}f}.\n"
                       "Plain held-out text, every character: the copying model {23:.{4}f}, the two-layer model "
                       "trained on text alone {24:.{4}f};\n  the second phase costs {25:.{4}f} nats per character, "
                       "{26} the {27} the chapter allows the letters mix.\n",
                       ngram_order, span_windows, ngram_order - 1, v.rule_validation, digits, v.rule.shortest,
                       v.rule.weight, v.ngram_validation, v.ngram_copy, v.rule_copy, copy_heads, v.model.first,
                       v.model.second, heads, v.control.first, v.control.second, held_out_windows, v.ngram_plain,
                       v.rule_plain, v.model_inside, v.ngram_copy - v.model.second,
                       std::fabs(v.rule_copy - v.model.second), v.model_inside - v.ngram_plain, v.model_plain,
                       v.without_mix, price, price <= mix_budget ? "within" : "above", mix_budget,
                       v.rule_copy > v.model.second ? "the model beats the rule" : "the rule beats the model",
                       v.model_validation, v.control_validation);
}

// Layer 0 on held-out text: the mean weight from i to i − k, for k = 1, 2, 3.
std::string offset_text(const sa::LanguageModel& model, const Data& data, int digits)
{
    const sa::ForwardTrace trace = sa::forward(model, data.held_out.inputs, context);
    const std::size_t windows = data.held_out.inputs.size() / context;
    std::string text = "The circuit. Layer 0 on held-out text, the mean weight from i to i − k:\n          k = 1   k = 2   "
                       "k = 3\n";
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        text += fmt::format("  head {}", h);
        for (std::size_t k = 1; k <= 3; ++k) {
            double score = 0.0;
            for (std::size_t w = 0; w < windows; ++w) {
                score += sa::offset_score(sa::trace_attention(trace.layers[0], model.shape.heads, context, w)[h], k);
            }
            text += fmt::format("  {:.{}f}", score / static_cast<double>(windows), digits);
        }
        text += "\n";
    }
    return text;
}

// Layer 1 from the copy's rows, whole and with each layer-0 head removed from one of its inputs, zeroed or
// replaced by its mean over the validation windows. The copier, the head the table follows, is the one
// with the most weight on the place to copy from in the validation spans.
std::string path_text(const sa::LanguageModel& model, const Data& data, std::size_t& copier, int digits)
{
    const std::size_t heads = model.shape.heads;
    const auto seen = [&](const sa::ForwardTrace& trace, const sa::CopiedSpans& spans, std::size_t head) {
        return sa::span_attention(trace.layers[1], heads, spans, head, span_skip).on_source;
    };
    const auto loss = [&](const sa::ForwardTrace& trace) {
        return sa::span_losses(sa::row_losses(trace.logits, data.spans.batch.targets), data.spans, span_skip).second;
    };
    const sa::ForwardTrace chosen_on = sa::forward(model, data.validation.batch.inputs, context);
    const sa::ForwardTrace whole = sa::forward(model, data.spans.batch.inputs, context);
    std::string text = "Layer 1 from the copy's rows, weight on the place to copy from (validation spans):";
    copier = 0;
    for (std::size_t h = 0; h < heads; ++h) {
        text += fmt::format(" head {} {:.{}f}{}", h, seen(chosen_on, data.validation, h), digits,
                            h + 1 < heads ? "," : ".\n");
        copier = seen(chosen_on, data.validation, h) > seen(chosen_on, data.validation, copier) ? h : copier;
    }
    text += fmt::format("Path ablation on the test spans: one layer-0 head's output removed from one input of layer 1 "
                        "alone,\nzeroed (zero) or replaced at every position by its mean over the {} positions of the "
                        "validation windows (mean);\ncopy loss, and layer 1 head {}'s weight on the place to copy from "
                        "(whole: {:.{}f}, {:.{}f}):\n  removed from          keys            queries         values\n",
                        data.validation.batch.inputs.size(), copier, loss(whole), digits,
                        seen(whole, data.spans, copier), digits);
    for (std::size_t h = 0; h < heads; ++h) {
        for (const bool mean : {false, true}) {
            const sa::HeadAblation removed{0, h, mean ? sa::mean_head_output(model, data.validation.batch, 0, h)
                                                      : std::vector<double>{}};
            text += fmt::format("  head {}  {}", h, mean ? "mean" : "zero");
            for (const sa::Path path : {sa::Path::key, sa::Path::query, sa::Path::value}) {
                const sa::ForwardTrace cut = sa::path_ablated_forward(model, data.spans.batch.inputs, context, removed,
                                                                      path);
                text += fmt::format("  {:.{}f}  {:.{}f}", loss(cut), digits, seen(cut, data.spans, copier), digits);
            }
            text += "\n";
        }
    }
    return text;
}

// The measurements only read the models and the data: the path ablation on one core, the rest on the other.
std::string copying_chapter(const sa::Example& example)
{
    const sa::SavedInduction saved = sa::load_induction_models(example.options.at("--load"), BOOK_KJV_TRAINING,
                                                               BOOK_KJV_HELD_OUT, context);
    const sa::InductionModels& models = saved.models;
    if (saved.run.copy_steps == 0 || models.mixed.layers.size() < 2) {
        return "No second half: the models were trained with --copy-steps 0, or with one layer.\n";
    }
    const Data data = sa::induction_data(saved.corpus, saved.vocabulary, saved.run.seed, sizes);
    const int digits = example.precision;
    const std::size_t induction_head =
        sa::best_head(sa::copy_scores(models.mixed, data.test, nullptr).induction.back());
    Versus v;
    std::string prefix, paths;
    std::size_t copier = 0;
    sa::side_by_side({[&] { paths = path_text(models.copying, data, copier, digits); },
                      [&] {
                          prefix = prefix_text(data, saved.run.seed);
                          v = versus(models, saved.run, data);
                      }});
    std::string text = prefix + "The chapter's model on " + std::to_string(span_windows) + " held-out windows, each with "
                       "a span of 8 to 24 held-out characters\ncopied to a later place, from the span's fourth character "
                       "on:\n" + span_text(models.mixed, data, induction_head, digits) + "\n" +
                       rotary_text(models.mixed.shape.heads) + "\n" + copy_phase_text(models.copying, saved.run, digits);
    text += versus_text(v, models.mixed.shape.heads, digits) + "\n" + offset_text(models.copying, data, digits) + paths;
    text += sa::ov_table(models.copying, data.letters, digits);
    text += "The copying model's layer 1 head " + std::to_string(copier) + " on the copy:\n" +
            span_text(models.copying, data, copier, digits) + "\n";
    return text + sa::copying_goals_text(v, ngram_order);
}

}  // namespace
}  // namespace ch15

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch15-copying",
                         "measure how the models ch15-induction-head saved copy held-out text, against counting",
                         sa::mouse_eats_cheese()};
    info.options = {{"--load", "FILE", "the models saved by ch15-induction-head --save FILE (FILE, FILE.* and "
                                       "FILE.run); their text and seed are read from FILE.run", BOOK_CH15_MODEL}};
    const std::string own = "the models read the characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, ch15::copying_chapter);
}
