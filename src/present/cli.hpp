/// \file cli.hpp
/// \brief The command line shared by every chapter program: the reader's own numbers.
///
/// Matrices are written row by row, rows separated by `;` and entries by `,`:
/// `"2,0;1,2;2,0"` is the 3×2 matrix with rows [2, 0], [1, 2] and [2, 0].
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "example.hpp"
#include "matrix.hpp"

namespace sa {

/// \brief Thrown for a malformed command line; the message is one line that names
///        the option, the problem and the expected format or shape.
class UsageError : public std::invalid_argument {
public:
    /// \brief Builds the error from its one-line message.
    /// \param message the option, the problem and what was expected
    explicit UsageError(const std::string& message);
};

/// \brief Parses one matrix written as `"2,0;1,2"`.
///
/// Rows are separated by `;` and entries by `,`. Blanks (spaces, tabs, line breaks)
/// before and after an entry do not count, so `" 1 , 2 ;3,4"` is the 2×2 matrix
/// [[1, 2], [3, 4]]; a blank inside an entry does (`"1 2"` is not a number). An entry
/// is a decimal number read with `.` as the decimal point whatever the locale, with
/// at most one sign (`+1`, `-0.5`, `1e-3`; not `+-1`). It must be finite: `inf`, `-inf`
/// and `nan` are refused, since a table of NaN would teach nothing (the library's edge
/// rules for them are shown by chapters 4, 5 and 13 and checked by the tests). Finite
/// numbers as large as `1e200` are taken: the results may overflow, and the chapter says so.
///
/// \param option the option name used in error messages, e.g. `"--wq"`
/// \param text the matrix text
/// \return the matrix, at least 1×1
/// \throws UsageError for an empty matrix, an empty row (as after a trailing `;`), an
///         empty entry, an entry that is not a number, does not fit a double or is not
///         finite (NaN, an infinity), or a
///         row with a different number of entries than row 1; the message names the
///         option and the row, on one line (the reader's text is quoted, and a line
///         break in it is shown as an escape)
[[nodiscard]] Matrix parse_matrix(std::string_view option, std::string_view text);

/// \brief Writes a matrix as the command line takes it, the inverse of parse_matrix().
/// \param matrix the matrix
/// \return e.g. "1,0;0,1": rows separated by `;` and entries by `,`, each entry in the
///         shortest text that reads back as the same double
[[nodiscard]] std::string matrix_text(const Matrix& matrix);

/// \brief An option of one chapter's own, beyond the common set, e.g. `--heads H`.
///
/// Such an option takes a value, unless its placeholder is empty: then it is a flag,
/// whose text is "on" when given and default_value otherwise. The parsed Example
/// holds its text in Example::options (the reader's, or the default); the program
/// reads it with matrix_option(), whole_option(), whole_list_option(), choice_option()
/// or flag_option(), which give the one-line errors.
struct ProgramOption {
    std::string name;           ///< e.g. `"--heads"`
    std::string value;          ///< the placeholder shown in `--help`, e.g. "H"; empty for a flag
    std::string help;           ///< one line for `--help`
    std::string default_value;  ///< the text used when the reader does not give the option
    /// What the default becomes when it does not fit the reader's numbers: called, when
    /// the reader did not give the option, with the example parsed so far (the options
    /// before this one already fitted); returns the text to use instead, or an empty
    /// string when the default fits. Left empty, the default is always used.
    std::function<std::string(const Example&)> fit = {};
};

/// \brief What a chapter program is called and which options it reads beyond the common ones.
struct ProgramInfo {
    std::string name;     ///< the program's name, e.g. "ch02-scores"
    std::string summary;  ///< one line saying what it shows
    Example defaults;     ///< the example used when no option changes it
    bool uses_seed = false;  ///< accept `--seed` N
    /// Options of the common set this program does not read, each with the reason
    /// given to a reader who passes it, e.g. {`"--causal"`, "the scores come before any mask"}.
    std::vector<std::pair<std::string, std::string>> unused_options = {};
    std::vector<ProgramOption> options = {};  ///< the chapter's own options, each with its default
    /// W_K may be narrower than W_Q (chapter 18: \f$ h_{kv} \f$ key heads for h query heads): `--wk`
    /// and `--wq` need not have the same columns, and the default W_K keeps its width beside the
    /// default W_Q (beside the reader's `--wq` it becomes the identity of W_Q's width).
    bool grouped_keys = false;
    /// The chapter's own options that name a file the program writes, e.g. {`"--save"`, `"--speed"`}.
    /// run_program() checks each one given, and `--figures DIR`, before the run starts (see
    /// output_problem()), so that a long run is never thrown away for a path it could not write.
    std::vector<std::string> writes = {};
};

/// \brief Why a file cannot be written, found before anything is written to it.
///
/// A file: the folder it goes into must exist and take new files (or the file must exist and be
/// writable), and the path must not be a folder. A folder (\p folder): it must exist and take
/// new files. Nothing is created or changed.
/// \param path the file the reader gave (or the folder, with \p folder)
/// \param folder whether \p path names a folder to write files into (`--figures DIR`)
/// \return an empty string when it can be written, else the reason, e.g.
///         "the folder out does not exist", or for a folder "it does not exist; create it first"
[[nodiscard]] std::string output_problem(const std::string& path, bool folder);

/// \brief Reads a chapter option (ProgramInfo::options) that holds a matrix.
/// \param example the parsed example
/// \param name the option, e.g. `"--wo"`
/// \return the matrix
/// \throws UsageError if the text is not a matrix, or the program declared no such option
[[nodiscard]] Matrix matrix_option(const Example& example, std::string_view name);

/// \brief Reads a chapter option that holds a whole number from \p low to \p high.
/// \param example the parsed example
/// \param name the option, e.g. `"--heads"`
/// \param low the smallest number accepted
/// \param high the largest number accepted
/// \return the number
/// \throws UsageError naming the option and the range when the text is not such a
///         number (blanks around it do not count, as for `--precision`)
[[nodiscard]] long whole_option(const Example& example, std::string_view name, long low, long high);

/// \brief Reads `--heads` for a model with rotary positions (chapters 14 and 15): 1 to 32 heads
///        that cut the width d into slices of an even width, since rotary embeddings turn pairs.
/// \param example the parsed example
/// \param width d, the width the heads share
/// \return h
/// \throws UsageError naming `--heads` and the counts that fit, e.g. "choose 1, 2, 4, 8, 16 or 32"
[[nodiscard]] std::size_t rotary_heads_option(const Example& example, std::size_t width);

/// \brief Reads a chapter option that holds a list of whole numbers, e.g. `--sizes 512,1024`.
/// \param example the parsed example
/// \param name the option, e.g. `"--sizes"`
/// \param low the smallest number accepted
/// \param high the largest number accepted
/// \return the numbers, in the reader's order
/// \throws UsageError naming the option, the entry and the range when an entry is not
///         such a number (blanks around an entry do not count)
[[nodiscard]] std::vector<long> whole_list_option(const Example& example, std::string_view name, long low,
                                                  long high);

/// \brief Reads a chapter option that is a flag (ProgramOption::value empty).
/// \param example the parsed example
/// \param name the option, e.g. `"--smoke"`
/// \return whether the reader gave the flag
/// \throws std::logic_error if the program declared no such option
[[nodiscard]] bool flag_option(const Example& example, std::string_view name);

/// \brief Reads a chapter option that holds one word out of a fixed list.
/// \param example the parsed example
/// \param name the option, e.g. `"--positions"`
/// \param choices the words accepted, e.g. {"none", "sinusoidal", "rope"}
/// \return the word
/// \throws UsageError naming the option and every choice when the word is not one of them
[[nodiscard]] std::string choice_option(const Example& example, std::string_view name,
                                        const std::vector<std::string>& choices);

/// \brief Applies the command-line options to the program's default example.
///
/// Options: `--tokens A,B,C`, `--embeddings M`, `--wq M`, `--wk M`, `--wv M`,
/// `--causal`, `--precision N`, `--seed N` (where the program uses one),
/// `--figures DIR`, and the program's own (ProgramInfo::options). The rules:
///
/// - A value follows its option as the next argument or after `=`: `--wq 0,1;1,0`
///   and `--wq=0,1;1,0` are the same. A flag (`--causal`) takes no value. An option
///   given twice keeps its last value. `--help` is left to run_program().
/// - An option the program does not read (ProgramInfo::unused_options) is refused
///   with its reason; `--seed` is unknown to a program without a random experiment.
/// - `--precision` takes a whole number from 0 to 10 and `--seed` one from 0 to
///   2147483647; blanks around the number do not count, anything outside is refused.
/// - New embeddings without `--tokens` are named `t1`, `t2`, ... one per row (n of
///   them for n×d_model embeddings). A token name given twice is labelled with its
///   position (`--tokens the,cat,saw,the` gives `the#1`, `cat`, `saw`, `the#4`), so
///   the rows of every table can be told apart.
/// - The result is checked as a whole: the token names one per embedding row; a
///   projection the reader gave one row per embedding feature, and `--wq` and
///   `--wk` the same number of columns (d_k). A default projection that no longer
///   fits the reader's numbers is never an error: it becomes the identity of the
///   shape needed (ones on the diagonal, zeros elsewhere): d_model×d_k for W_Q and
///   W_K, with d_k taken from `--wq` or `--wk` when one is given, and d_model×d_model
///   for W_V. A program thus checks only the options it reads. Then each of the
///   program's own options that the reader did not give is fitted the same way, by
///   its ProgramOption::fit.
///
/// \param info the program's name, summary and defaults
/// \param args the arguments after the program name
/// \return the example to run
/// \throws UsageError for an unknown or unused option, a missing value, a malformed
///         matrix, number or name, or shapes that do not fit; the message is one line
[[nodiscard]] Example parse_arguments(const ProgramInfo& info, const std::vector<std::string>& args);

/// \brief The text printed by `--help`.
/// \param info the program's name, summary and defaults
/// \return the usage text
[[nodiscard]] std::string usage(const ProgramInfo& info);

/// \brief Runs a chapter program: parses the options, then prints what \p body returns.
///
/// `--help` (or `-h`) anywhere on the command line prints usage() on stdout and
/// returns 0: the reader asked for that text, so it is the program's output.
/// Nothing reaches stdout unless the whole run succeeds. A malformed command line,
/// or an error thrown by the library, prints one line on stderr and returns 2. Before
/// \p body runs, every file the program would write (ProgramInfo::writes, `--figures`)
/// is checked with output_problem(): a path it cannot write is refused then, in one line
/// (`--save: cannot write the file out/m.safetensors: the folder out does not exist`),
/// never after a long run.
/// When a default projection was replaced by the identity (see parse_arguments()), or
/// the default of one of the program's own options by what ProgramOption::fit
/// returned, a successful run adds one line on stderr that says so.
///
/// Before anything else it calls keep_freed_memory(), so that every chapter program
/// reuses the memory it frees.
///
/// \param info the program's name, summary and defaults
/// \param argc argument count from main
/// \param argv arguments from main
/// \param body builds the program's complete output from the parsed example
/// \return the exit status: 0 on success and for `--help`, 2 on bad input
int run_program(const ProgramInfo& info, int argc, char** argv,
                const std::function<std::string(const Example&)>& body);

/// \brief Keeps freed memory with the program (glibc's mallopt; nothing elsewhere).
///
/// A program that makes and drops matrices of megabytes again and again (a training step, a
/// forward pass window by window, a benchmark's method run after run) would otherwise have the
/// C library map each such block from the system and hand it back when freed, so that every
/// new one paid again for fresh zeroed pages: a cost of the operating system, not of the
/// arithmetic (on a virtual machine, a quarter of chapter 13's fast kernel at n = 4096, and
/// more than half of ch15-copying's run). Kept on the heap, a block is reused. Every number
/// stays the same: only where the memory comes from changes. run_program() calls it for every
/// chapter program, and every test program calls it before its checks start
/// (tests/common/keep_freed_memory.cpp).
void keep_freed_memory();

}  // namespace sa
