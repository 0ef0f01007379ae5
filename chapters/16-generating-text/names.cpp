// Chapter 16, Generating text: the induction head at work. Chapter 15's models continue names written
// once and begun again (greedy): where the copy stops, which names of the King James text they complete,
// and the recall control (the name's first occurrence removed, its letters shuffled).
#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <optional>
#include <utility>

#include "char_text.hpp"
#include "circuits.hpp"
#include "cli.hpp"
#include "generation.hpp"
#include "language_model.hpp"
#include "safetensors.hpp"
#include "sampling.hpp"
#include "training_files.hpp"

namespace {

// Chapter 15's circuit, found as that chapter finds it on its test letters (16 of 32 distinct
// letters repeated once, seed 2018): the layer-1 head with the best induction score, and the
// layer-0 head whose zeroing leaves the lowest best score.
struct Circuit {
    std::size_t induction = 0;  // the layer-1 head
    double score = 0.0;         // its induction score
    std::size_t needed = 0;     // the layer-0 head it reads
};

Circuit find_circuit(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary)
{
    sa::SplitMix64 test_generator(2018);
    const sa::Batch test = sa::repeated_batch(sa::letter_tokens(vocabulary), 16, 32, test_generator);
    const std::vector<double> scores = sa::copy_scores(model, test, nullptr).induction.at(1);
    Circuit circuit;
    circuit.induction = static_cast<std::size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
    circuit.score = scores[circuit.induction];
    double lowest = 2.0;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const sa::HeadAblation ablation{0, h};
        const std::vector<double> cut = sa::copy_scores(model, test, &ablation).induction.at(1);
        const double best = *std::max_element(cut.begin(), cut.end());
        if (best < lowest) {
            lowest = best;
            circuit.needed = h;
        }
    }
    return circuit;
}

//> induction-demo
// A prompt with a name written once in full and, at its end, the name's first
// `shown` letters again.
struct NamePrompt {
    std::string name;
    std::string prompt;
    std::size_t shown = 0;
};

// What the model does at the prompt's last position, where copying would write
// the name's next letter.
struct CopyStep {
    std::string wrote;          // its greedy continuation, as long as the rest of the name
    std::size_t copied = 0;     // how many letters of the rest of the name it wrote, from the first
    double on_copy = 0.0;       // the induction head's weight on the copy place: the letter
                                // after the name's first letters, where they occurred before
    double previous = 0.0;      // the layer-0 head's weight, at the copy place, on the
                                // letter before it
    std::size_t strongest = 0;  // the place where the induction head puts the most
    std::size_t copy_place = 0; // where the name's first letters are followed the first time
};

CopyStep copy_step(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary,
                   const NamePrompt& p, const Circuit& circuit)
{
    const std::vector<std::size_t> tokens = sa::encode(vocabulary, p.prompt);
    const sa::NameCompletion completion =
        sa::complete_name(model, tokens, sa::encode(vocabulary, p.name.substr(p.shown)));
    CopyStep step;
    step.wrote = sa::decode(vocabulary, completion.wrote);
    step.copied = completion.copied;
    const std::size_t last = tokens.size() - 1;
    const std::size_t copy_place = p.prompt.find(p.name) + p.shown;
    step.copy_place = copy_place;
    const sa::Matrix layer_1 = sa::head_attention(model, 1, tokens)[circuit.induction];
    const sa::Matrix layer_0 = sa::head_attention(model, 0, tokens)[circuit.needed];
    step.on_copy = layer_1(last, copy_place);
    step.previous = layer_0(copy_place, copy_place - 1);
    for (std::size_t j = 0; j <= last; ++j) {
        step.strongest = layer_1(last, j) > layer_1(last, step.strongest) ? j : step.strongest;
    }
    return step;
}
//< induction-demo

// Made-up names (letters typed at random, in no text the model read) and a rare name of the King
// James text, alone and inside a verse.
const std::array<NamePrompt, 5> name_prompts{{
    {"Jaqxbuvmwfzk", "Jaqxbuvmwfzk Jaq", 3},
    {"Jaqxbuvmwfzk", "Jaqxbuvmwfzk, Jaq", 3},
    {"Jaqxbuvmwfzk", "Then came Jaqxbuvmwfzk the king, Jaq", 3},
    {"Chedorlaomer", "Chedorlaomer Ched", 4},  // Genesis 14, a king of Elam
    {"Chedorlaomer", "Then came Chedorlaomer the king, Ched", 4},
}};

// Where a copy stops: at the first letter the model gets wrong, the text is the prompt and the
// letters copied so far; the induction head's weight on that letter's copy place, and the
// probabilities (τ = 1) of the right letter and of the one the model wrote. One row of a table.
std::string copy_miss(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary, const NamePrompt& p,
                      const CopyStep& step, const Circuit& circuit, int digits)
{
    const std::size_t rest = p.name.size() - p.shown;
    if (step.copied == rest) {
        return fmt::format("  {:<37} no miss: all {} letters copied\n", p.prompt, rest);
    }
    const std::vector<std::size_t> text = sa::encode(vocabulary, p.prompt + p.name.substr(p.shown, step.copied));
    const std::size_t last = text.size() - 1;
    const double weight = sa::head_attention(model, 1, text)[circuit.induction](last, step.copy_place + step.copied);
    const std::vector<double> z = sa::recomputed_logits(model, text);
    const std::vector<double> prob = sa::rule_probabilities(z, 1.0, z.size());
    const char right = p.name[p.shown + step.copied];
    const char wrote = step.wrote[step.copied];
    const auto token = [&](char c) {
        return static_cast<std::size_t>(vocabulary.token_of_byte[static_cast<unsigned char>(c)]);
    };
    return fmt::format("  {:<37} {:>3} '{}'{:>19.{}f}{:>11.{}f}     '{}'{:>10.{}f}\n", p.prompt, step.copied + 1, right,
                       weight, digits, prob[token(right)], digits, sa::character_label(wrote), prob[token(wrote)],
                       digits);
}

// One of chapter 15's saved models, if it is there and reads this text.
std::optional<sa::SavedModel> chapter_15_model(const std::string& path, const sa::Vocabulary& vocabulary)
{
    std::ifstream in(sa::book_file(path), std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    sa::SavedModel saved = sa::load_book_model(path);
    if (saved.vocabulary != vocabulary.characters || saved.model.layers.size() < 2) {
        return std::nullopt;
    }
    return saved;
}

// The names, greedy, with one of chapter 15's models: what it wrote and where its circuit looked.
std::string name_table(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary, int digits)
{
    const Circuit circuit = find_circuit(model, vocabulary);
    std::string out = fmt::format(
        "Its circuit on chapter 15's test letters: layer 1 head {} (induction score {:.{}f}) reads layer 0 head {}.\n"
        "  prompt[what the model wrote]                     copied   on the copy place   previous letter\n",
        circuit.induction, circuit.score, digits, circuit.needed);
    std::string strongest;
    std::string misses;
    for (const NamePrompt& p : name_prompts) {
        const CopyStep step = copy_step(model, vocabulary, p, circuit);
        misses += copy_miss(model, vocabulary, p, step, circuit, digits);
        out += fmt::format("  {:<48} {:>2} of {:<2} {:>14.{}f} {:>17.{}f}\n", p.prompt + "[" + step.wrote + "]",
                           step.copied, p.name.size() - p.shown, step.on_copy, digits, step.previous, digits);
        strongest += fmt::format("  {}: position {}, '{}', after '{}'\n", p.prompt, step.strongest,
                                 sa::character_label(p.prompt[step.strongest]),
                                 step.strongest == 0 ? "(none)" : sa::character_label(p.prompt[step.strongest - 1]));
    }
    return out + "Where the induction head puts the most, at each prompt's last position:\n" + strongest +
           "Where the copy stops: the first letter the model gets wrong, after those it got right; the induction\n"
           "head's weight on that letter's copy place, and p (τ = 1) of the right letter and of the letter written:\n"
           "  prompt                                 letter  on its copy place   p(right)   wrote  p(wrote)\n" +
           misses;
}

// Names of the King James text, chosen before any model was run on them: long, rare and in every
// part of the Bible. Each is written in a verse-like frame and begun again with its first 4 letters.
const std::array<const char*, 23> bible_names{{
    "Abednego", "Ahasuerus", "Ahithophel", "Belshazzar", "Chedorlaomer", "Hammedatha", "Ishbosheth", "Jehoiachin",
    "Jehoshaphat", "Jerubbaal", "Mahershalalhashbaz", "Melchizedek", "Mephibosheth", "Methuselah", "Nathanael",
    "Nebuchadnezzar", "Sennacherib", "Shadrach", "Shalmaneser", "Tiglathpileser", "Zaphnathpaaneah", "Zelophehad",
    "Zerubbabel"}};

// The names a model completes, greedy, all but at most one of their remaining letters.
std::vector<std::string> completed_names(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary)
{
    std::vector<std::string> completed;
    for (const std::string name : bible_names) {
        const NamePrompt p{name, "Then came " + name + " the king, " + name.substr(0, 4), 4};
        const std::vector<std::size_t> tokens = sa::encode(vocabulary, p.prompt);
        const std::string wrote = sa::decode(vocabulary, sa::generate(model, tokens, name.size() - 4,
                                                                      {.greedy = true}, 0, true));
        std::size_t right = 0;
        for (std::size_t k = 0; k < wrote.size(); ++k) {
            right += wrote[k] == name[4 + k] ? 1 : 0;
        }
        if (right + 1 >= name.size() - 4) {
            completed.push_back(name);
        }
    }
    return completed;
}

std::string names_text(const sa::LanguageModel& letters, const sa::LanguageModel& copying,
                       const sa::Vocabulary& vocabulary)
{
    const std::vector<std::string> by_letters = completed_names(letters, vocabulary);
    const std::vector<std::string> by_copying = completed_names(copying, vocabulary);
    std::string list;  // six names a line
    for (std::size_t k = 0; k < by_copying.size(); ++k) {
        list += (k == 0 ? "" : k % 6 == 0 ? ",\n  " : ", ") + by_copying[k];
    }
    return fmt::format("{} names of the King James text, each in \"Then came NAME the king, \" and begun again with "
                       "its first 4 letters;\ncompleted greedy, all but at most one letter: chapter 15's model {} of "
                       "{}, the copying model {} of {}:\n  {}.\n", bible_names.size(), by_letters.size(),
                       bible_names.size(), by_copying.size(), bible_names.size(), list);
}

// The seed of the made-up names: name k of bible_names is shuffled with seed made_up_seed + k.
constexpr std::uint64_t made_up_seed = 1611;  // the year the King James text was printed

// Letters right, greedy, after the first 4 of a name: with the name written before in the verse
// ("Then came NAME the king, Name"), and without it ("Then came the king, Name").
std::pair<std::size_t, std::size_t> recalled(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary,
                                             const std::string& name)
{
    const std::vector<std::size_t> rest = sa::encode(vocabulary, name.substr(4));
    const auto right = [&](const std::string& prompt) {
        return sa::complete_name(model, sa::encode(vocabulary, prompt), rest).right;
    };
    return {right("Then came " + name + " the king, " + name.substr(0, 4)),
            right("Then came the king, " + name.substr(0, 4))};
}

// The recall control: each name of the King James text, and its letters shuffled into a name that
// no text the models read holds, with and without the name written before.
std::string recall_control(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary)
{
    std::string out = "Copied or remembered? The copying model, greedy: letters right of those after the first 4, "
                      "with the name\nwritten before in the verse, and without it (\"Then came the king, \" and "
                      "the first 4 letters);\nthen the same for the name's letters shuffled (a name in no text the "
                      "models read).\n"
                      "  name                 letters   with   without   shuffled             with   without\n";
    std::array<std::array<std::size_t, 5>, 2> sums{};  // names up to 10 letters, and longer: after 4, and the four
    for (std::size_t k = 0; k < bible_names.size(); ++k) {
        const std::string name = bible_names[k];
        const std::string made_up = sa::shuffled_name(name, made_up_seed + k);
        const auto [with, without] = recalled(model, vocabulary, name);
        const auto [made_with, made_without] = recalled(model, vocabulary, made_up);
        out += fmt::format("  {:<18} {:>9} {:>6} {:>9}   {:<18} {:>6} {:>9}\n", name, name.size() - 4, with, without,
                           made_up, made_with, made_without);
        const std::array<std::size_t, 5> row{name.size() - 4, with, without, made_with, made_without};
        for (std::size_t j = 0; j < row.size(); ++j) {
            sums[name.size() <= 10 ? 0 : 1][j] += row[j];
        }
    }
    for (std::size_t g = 0; g < 2; ++g) {
        out += fmt::format("  {:<18} {:>9} {:>6} {:>9}   {:<18} {:>6} {:>9}\n", g == 0 ? "8 to 10 letters" :
                           "11 to 18 letters", sums[g][0], sums[g][1], sums[g][2], "", sums[g][3], sums[g][4]);
    }
    return out;
}

std::string names_chapter(const sa::Example& example)
{
    const std::string path = example.options.at("--load");
    const sa::SavedModel letters = sa::load_book_model(path);
    const sa::Vocabulary vocabulary = sa::make_vocabulary(letters.vocabulary);
    if (letters.model.layers.size() < 2) {
        throw sa::UsageError(fmt::format("--load {}: expected a model of at least 2 attention layers (chapter 15's)",
                                         path));
    }
    const int digits = example.precision;
    std::string out = "The induction head at work, on prompts of its own (not --prompt, and greedy whatever the "
                      "rule):\nchapter 15's model on names written once, then begun again.\n" +
                      name_table(letters.model, vocabulary, digits);
    const std::optional<sa::SavedModel> copying = chapter_15_model(path + ".copying",
                                                                   vocabulary);
    if (copying) {
        out += "\nThe same names with chapter 15's copying model (two heads of 32, trained on repeated text too).\n" +
               name_table(copying->model, vocabulary, digits) + "\n" +
               names_text(letters.model, copying->model, vocabulary) + "\n" +
               recall_control(copying->model, vocabulary);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch16-names",
                         "complete names written once and begun again with chapter 15's models, and the recall control",
                         sa::mouse_eats_cheese()};
    info.options = {{"--load", "FILE", "chapter 15's saved model (safetensors, F64); its copying model is read from "
                                       "FILE.copying if it is there", BOOK_CH15_MODEL}};
    const std::string own = "the models read the characters of their own prompts, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, names_chapter);
}
