// Chapter 15's circuit: in the models ch15-induction-head saved, the induction head on repeated
// letters, the layer-0 head it needs (ablations, paths, OV circuits, previous-token scores), and the
// controls: the model trained without the letters mix and the models of one layer.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "char_text.hpp"
#include "circuits.hpp"
#include "cli.hpp"
#include "dense.hpp"
#include "induction_runs.hpp"
#include "induction_tables.hpp"
#include "report.hpp"
#include "settings.hpp"

namespace ch15 {
namespace {

using Data = sa::InductionData;
using sa::best_head;
using sa::best_score;
using sa::head_header;
using sa::head_row;
constexpr sa::InductionSizes sizes{context, test_windows, shorter_period, held_out_windows, span_windows,
                                   span_shortest, span_longest};

std::string shorter_text(const sa::LanguageModel& model, const Data& data, int digits)
{
    const sa::CopyScores shorter = sa::copy_scores(model, data.shorter, nullptr);
    return fmt::format(" on {} letters repeated once: best induction score {:.{}f};\n  first copy {:.{}f} nats, "
                       "second copy {:.{}f} nats.\n", shorter_period, best_score(shorter.induction.back()), digits,
                       shorter.first_copy_loss, digits, shorter.second_copy_loss, digits);
}

// The best a model can do on the first copy without copying: letter k + 1 (k = 1 … 31) is one of the
// letters − k letters not yet in the window, each as likely, so the mean loss is the mean of ln(letters − k).
double first_copy_floor(std::size_t letters)
{
    double total = 0.0;
    for (std::size_t k = 1; k < context / 2; ++k) {
        total += std::log(static_cast<double>(letters - k));
    }
    return total / static_cast<double>(context / 2 - 1);
}

std::string circuit_text(const sa::CopyScores& scores, std::size_t heads, std::size_t letters, std::size_t vocabulary,
                         int digits)
{
    std::string text = "Induction score on the test sequences (period 32):\n         " + head_header(heads);
    for (std::size_t l = 0; l < scores.induction.size(); ++l) {
        text += fmt::format("layer {}", l) + head_row(scores.induction[l], digits);
    }
    text += fmt::format("Loss on the first copy (letters 2 to 32, each new): {:.{}f} nats; at best {:.{}f} without "
                        "copying, uniform ln {} = {:.{}f}.\n"
                        "Loss on the second copy (each letter a repeat):      {:.{}f} nats.\n",
                        scores.first_copy_loss, digits, first_copy_floor(letters), digits, vocabulary,
                        std::log(static_cast<double>(vocabulary)), digits, scores.second_copy_loss, digits);
    return text;
}

std::string ablation_text(const sa::LanguageModel& model, const Data& data, const sa::CopyScores& whole,
                          std::size_t& needed, int digits)
{
    std::string text = fmt::format("Ablation: each layer-0 head's output zeroed in turn (zero), or replaced at every "
                                   "position by its mean\nover the {} positions of the held-out windows (text) or the {} "
                                   "of the test sequences (letters).\n"
                                   "             best induction score         second-copy loss\n"
                                   "  removed      zero    text  letters      zero    text  letters\n"
                                   "  none       {:>6.{}f}                     {:>6.{}f}\n", data.held_out.inputs.size(),
                                   data.test.inputs.size(), best_score(whole.induction.back()), digits,
                                   whole.second_copy_loss, digits);
    double lowest = 2.0;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const sa::HeadAblation ablation{0, h};
        const sa::CopyScores scores = sa::copy_scores(model, data.test, &ablation);
        const sa::HeadAblation text_mean{0, h, sa::mean_head_output(model, data.held_out, 0, h)};
        const sa::CopyScores on_text = sa::copy_scores(model, data.test, &text_mean);
        const sa::HeadAblation letters_mean{0, h, sa::mean_head_output(model, data.test, 0, h)};
        const sa::CopyScores on_letters = sa::copy_scores(model, data.test, &letters_mean);
        const double score = best_score(scores.induction.back());
        text += fmt::format("  head {}     {:>6.{}f}  {:>6.{}f}   {:>6.{}f}    {:>6.{}f}  {:>6.{}f}   {:>6.{}f}\n", h, score,
                            digits, best_score(on_text.induction.back()), digits, best_score(on_letters.induction.back()), digits,
                            scores.second_copy_loss, digits, on_text.second_copy_loss, digits,
                            on_letters.second_copy_loss, digits);
        if (score < lowest) {
            lowest = score;
            needed = h;
        }
    }
    return text;
}

// The needed head removed from one input of layer 1 alone: which path the circuit runs through.
std::string letters_path_text(const sa::LanguageModel& model, const Data& data, std::size_t needed, int digits)
{
    std::string text = fmt::format("Path ablation: layer-0 head {} removed from one input of layer 1 alone.\n"
                                   "  removed from   best induction score  second-copy loss\n", needed);
    const std::pair<sa::Path, const char*> paths[] = {
        {sa::Path::key, "keys"}, {sa::Path::query, "queries"}, {sa::Path::value, "values"}};
    for (const auto& [path, name] : paths) {
        const sa::CopyScores cut = sa::path_copy_scores(model, data.test, {0, needed}, path);
        text += fmt::format("  {:<12} {:>22.{}f}  {:>16.{}f}\n", name, best_score(cut.induction.back()), digits,
                            cut.second_copy_loss, digits);
    }
    return text;
}

std::string comparison_text(const sa::InductionComparison& c, int digits)
{
    std::string text = fmt::format("Without the mix (two layers, text alone, the same steps and seed):\n"
                                   "  best induction score {:.{}f}; first copy {:.{}f} nats, second copy {:.{}f} nats.\n",
                                   best_score(c.plain.induction.back()), digits, c.plain.first_copy_loss, digits,
                                   c.plain.second_copy_loss, digits);
    if (c.has_control) {
        text += fmt::format("The one-layer control, chapter 14's saved model (text alone):\n"
                            "  best induction score {:.{}f}; first copy {:.{}f} nats, second copy {:.{}f} nats.\n",
                            best_score(c.control.induction.back()), digits, c.control.first_copy_loss, digits,
                            c.control.second_copy_loss, digits);
    } else {
        text += "The one-layer control, chapter 14's saved model: not here (it is made by chapter 14's run, on the "
                "King James text).\n";
    }
    text += fmt::format("The one-layer control trained as this model (the letters mix, the same steps and seed):\n"
                        "  best induction score {:.{}f}; first copy {:.{}f} nats, second copy {:.{}f} nats.\n",
                        best_score(c.one_layer.induction.back()), digits, c.one_layer.first_copy_loss, digits,
                        c.one_layer.second_copy_loss, digits);
    return text + fmt::format("Held-out text, nats per character: with the mix {:.{}f}, without {:.{}f}; "
                              "difference {:.{}f}.\n", c.held_out_mixed, digits, c.held_out_plain, digits,
                              c.held_out_mixed - c.held_out_plain, digits);
}

// The mean of a loss per row.
double mean_loss(const sa::Matrix& logits, const std::vector<std::size_t>& targets)
{
    double total = 0.0;
    for (const double loss : sa::row_losses(logits, targets)) {
        total += loss;
    }
    return total / static_cast<double>(targets.size());
}

// A one-layer model's logits on the held-out windows cut into Elhage et al.'s paths, checked against the forward pass.
std::string paths_text(const sa::LanguageModel& one, const Data& data, int digits)
{
    const sa::PathLogits paths = sa::path_logits(one, data.held_out.inputs, context);
    const sa::Matrix logits = sa::forward(one, data.held_out.inputs, context).logits;
    sa::Matrix sum = paths.direct;
    for (const sa::Matrix& head : paths.heads) {
        sa::add_in_place(sum, head);
    }
    double largest = 0.0;
    for (std::size_t k = 0; k < sum.rows() * sum.cols(); ++k) {
        largest = std::fmax(largest, std::fabs(sum.data()[k] - logits.data()[k]));
    }
    return fmt::format("Chapter 14's one layer, its logits on the held-out windows cut into paths,\n"
                       "  Z = X W_U + sum over its {} heads κ of A^κ X W_V^κ W_O^κ W_U:\n"
                       "  the largest difference from the forward pass's logits {:.1e};\n"
                       "  held-out loss, nats per character: the direct path alone (the bigram table W_E W_U) {:.{}f},\n"
                       "  all paths {:.{}f}.\n", paths.heads.size(), largest, mean_loss(paths.direct, data.held_out.targets),
                       digits, mean_loss(sum, data.held_out.targets), digits);
}

// Layer 0's needed head on held-out text: its weight on the previous character, by the current character's kind.
std::string previous_at_text(const sa::LanguageModel& model, const Data& data, const sa::Vocabulary& vocabulary,
                             std::size_t needed, int digits)
{
    const sa::ForwardTrace trace = sa::forward(model, data.held_out.inputs, context);
    double weight[3] = {0.0, 0.0, 0.0}, rows[3] = {0.0, 0.0, 0.0};  // at a space, a full stop, a letter
    for (std::size_t w = 0; w * context < data.held_out.inputs.size(); ++w) {
        const sa::Matrix a = sa::trace_attention(trace.layers[0], model.shape.heads, context, w)[needed];
        for (std::size_t i = 1; i < context; ++i) {
            const char c = vocabulary.characters[data.held_out.inputs[w * context + i]];
            const int kind = c == ' ' ? 0 : c == '.' ? 1 : std::isalpha(static_cast<unsigned char>(c)) ? 2 : -1;
            if (kind >= 0) {
                weight[kind] += a(i, i - 1);
                rows[kind] += 1.0;
            }
        }
    }
    std::string window;
    for (std::size_t i = 0; i < context; ++i) {
        window += vocabulary.characters[data.held_out.inputs[i]];
    }
    return fmt::format("Layer-0 head {} on held-out text, mean weight on the previous character: at a space {:.{}f},\n"
                       "  at a full stop {:.{}f}, at a letter {:.{}f}.\n  The heatmap's window: \"{}\"\n", needed,
                       weight[0] / rows[0], digits, weight[1] / rows[1], digits, weight[2] / rows[2], digits, window);
}

// Layer 0's previous-token scores, on held-out text and on the test letters.
std::string previous_token_text(const sa::LanguageModel& model, const std::vector<double>& text_previous,
                                const sa::CopyScores& whole, std::size_t needed, int digits)
{
    return "Previous-token score of layer 0 (mean attention from i to i-1):\n                " +
           head_header(model.shape.heads) + "held-out text  " + head_row(text_previous, digits) + "test letters   " +
           head_row(whole.previous[0], digits) +
           fmt::format("Zeroing layer-0 head {} lowers the score most; the best previous-token head on text is "
                       "head {}.\n",
                       needed, best_head(text_previous));
}


// The model with the mix against the one without and the one-layer controls.
std::string compare(const sa::SavedInduction& saved, const Data& data, const std::optional<sa::LanguageModel>& control,
                    sa::InductionComparison& c, int digits)
{
    const sa::InductionModels& models = saved.models;
    c = {sa::evaluate(models.mixed, data.held_out), sa::evaluate(models.plain, data.held_out),
         sa::copy_scores(models.plain, data.test, nullptr), control.has_value(),
         control ? sa::copy_scores(*control, data.test, nullptr) : sa::CopyScores{},
         sa::copy_scores(models.one_layer, data.test, nullptr)};
    return comparison_text(c, digits) + (control ? "The one-layer control" + shorter_text(*control, data, digits) : "") +
           (control ? "\n" + paths_text(*control, data, digits) : "") + "\n";
}

std::string circuit_chapter(const sa::Example& example)
{
    const sa::SavedInduction saved = sa::load_induction_models(example.options.at("--load"), BOOK_KJV_TRAINING,
                                                               BOOK_KJV_HELD_OUT, context);
    const Data data = sa::induction_data(saved.corpus, saved.vocabulary, saved.run.seed, sizes);
    const sa::LanguageModel& model = saved.models.mixed;
    const int digits = example.precision;
    sa::Report report(example);
    const sa::CopyScores whole = sa::copy_scores(model, data.test, nullptr);
    report.text(circuit_text(whole, model.shape.heads, data.letters.size(), data.vocabulary_size, digits) +
                "The same model" + shorter_text(model, data, digits) + "\n");
    std::size_t needed = 0;
    report.text(ablation_text(model, data, whole, needed, digits));
    report.text((model.layers.size() >= 2 ? letters_path_text(model, data, needed, digits) : "") + "\n");
    const std::vector<std::vector<double>> text_previous = sa::previous_token_scores(model, data.held_out);
    report.text(sa::ov_table(model, data.letters, digits) + "\n");
    report.text(previous_token_text(model, text_previous[0], whole, needed, digits));
    report.text(previous_at_text(model, data, saved.vocabulary, needed, digits) + "\n");
    sa::InductionComparison comparison;
    report.text(compare(saved, data, sa::control_model(BOOK_CH14_MODEL, saved.run.text, saved.vocabulary, context),
                        comparison, digits));
    if (model.layers.size() >= 2) {
        const sa::InductionGoals goals = sa::induction_goals(model, data.test, data.shorter, whole, text_previous[0],
                                                             needed, comparison, mix_budget);
        report.text(sa::induction_goals_text(goals, shorter_period) + "\n");
    }
    const auto first = [](const std::vector<std::size_t>& tokens) {
        return std::vector<std::size_t>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(context));
    };
    sa::draw_induction_heads(report, model, saved.vocabulary, first(data.test.inputs), first(data.held_out.inputs),
                             best_head(whole.induction.back()), needed);
    return report.str();
}

}  // namespace
}  // namespace ch15

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch15-circuit",
                         "find the induction head and the head it needs in the models ch15-induction-head saved, "
                         "and compare them with the controls",
                         sa::mouse_eats_cheese()};
    info.options = {{"--load", "FILE", "the models saved by ch15-induction-head --save FILE (FILE, FILE.* and "
                                       "FILE.run); their text and seed are read from FILE.run", BOOK_CH15_MODEL}};
    const std::string own = "the models read the characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, ch15::circuit_chapter);
}
