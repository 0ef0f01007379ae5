// A libFuzzer target for chapter 14's model files and chapter 20's latent ones: whatever bytes
// --load reads, load_safetensors() and load_latent_safetensors() each return a model whose
// tensors have the shapes its header names, or throw std::invalid_argument with a one-line message. Anything else (another exception, a
// crash, a sanitizer report, a message of two lines) stops the run. tools/fuzz.sh builds and
// runs it from the seed files in tests/fuzz/model-corpus/: a model in the book's order of tensors
// and the same model in Hugging Face's (by name), since the loader takes any order, and a small latent model.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "safetensors.hpp"

namespace {

void one_line(const std::invalid_argument& error)
{
    const std::string message = error.what();
    if (message.empty() || message.find('\n') != std::string::npos) {
        std::cerr << "contract broken: the message is not one line: [" << message << "]\n";
        std::abort();
    }
}

void load_latent(const std::string& bytes)
{
    try {
        const sa::SavedLatentModel saved = sa::load_latent_safetensors(bytes);
        const sa::LatentModelShape& shape = saved.model.shape;
        if (saved.vocabulary.size() != shape.vocabulary || saved.model.embedding.rows() != shape.vocabulary ||
            saved.model.layer.w_down.cols() != shape.latent || saved.model.layer.w_key_rotary.cols() != shape.rotary) {
            std::cerr << "contract broken: a loaded latent model does not fit its own shape\n";
            std::abort();
        }
    } catch (const std::invalid_argument& error) {
        one_line(error);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    load_latent(bytes);
    try {
        const sa::SavedModel saved = sa::load_safetensors(bytes);
        const sa::ModelShape& shape = saved.model.shape;
        if (saved.vocabulary.size() != shape.vocabulary || saved.model.embedding.rows() != shape.vocabulary ||
            saved.model.unembedding.cols() != shape.vocabulary || saved.model.layers.size() != shape.layers ||
            shape.layers == 0) {
            std::cerr << "contract broken: a loaded model does not fit its own shape or has no layer\n";
            std::abort();
        }
    } catch (const std::invalid_argument& error) {
        one_line(error);
    }
    return 0;
}
