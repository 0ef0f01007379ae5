#include "safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace sa {

namespace {

[[noreturn]] void refuse(const std::string& message)
{
    throw std::invalid_argument(message);
}

std::string json_string(const std::string& text)
{
    std::string out = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (byte < 0x20 || byte >= 0x7f) {
            out += fmt::format("\\u{:04x}", byte);
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// The subset of JSON a header uses: objects, arrays, strings and whole numbers.
struct Json {
    enum class Kind { object, array, string, number } kind = Kind::number;
    std::string text;
    std::uint64_t number = 0;
    std::vector<std::string> names;  // an object's member names, one per entry of items
    std::vector<Json> items;         // an array's items, or an object's member values
};

class JsonReader {
public:
    explicit JsonReader(const std::string& text) : text_(text) {}

    Json document()
    {
        Json value = parse(0);
        skip_blanks();
        if (at_ < text_.size()) {
            fail("text after the JSON object");
        }
        return value;
    }

private:
    const std::string& text_;
    std::size_t at_ = 0;

    [[noreturn]] void fail(const std::string& what) const
    {
        refuse(fmt::format("the header is not valid JSON: {} at byte {} of {}", what, at_, text_.size()));
    }
    void skip_blanks()
    {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\t' ||
                                      text_[at_] == '\r')) {
            ++at_;
        }
    }
    char next()
    {
        skip_blanks();
        if (at_ >= text_.size()) {
            fail("it ends early");
        }
        return text_[at_];
    }
    void expect(char wanted)
    {
        if (next() != wanted) {
            fail(fmt::format("expected '{}'", wanted));
        }
        ++at_;
    }
    Json parse(int depth)
    {
        if (depth > 4) {
            fail("nesting deeper than a header needs");
        }
        const char c = next();
        if (c == '{' || c == '[') {
            return parse_container(depth, c == '{');
        }
        if (c == '"') {
            Json value;
            value.kind = Json::Kind::string;
            value.text = parse_string();
            return value;
        }
        if (c >= '0' && c <= '9') {
            return parse_number();
        }
        fail("expected an object, an array, a string or a whole number");
    }
    Json parse_container(int depth, bool object)
    {
        Json value;
        value.kind = object ? Json::Kind::object : Json::Kind::array;
        ++at_;
        if (next() == (object ? '}' : ']')) {
            ++at_;
            return value;
        }
        while (true) {
            if (object) {
                if (next() != '"') {
                    fail("expected a name in quotes");
                }
                std::string name = parse_string();
                expect(':');
                value.items.push_back(parse(depth + 1));
                value.names.push_back(std::move(name));
            } else {
                value.items.push_back(parse(depth + 1));
            }
            const char c = next();
            ++at_;
            if (c == (object ? '}' : ']')) {
                return value;
            }
            if (c != ',') {
                --at_;
                fail("expected ',' or the end of the list");
            }
        }
    }
    Json parse_number()
    {
        Json value;
        while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
            if (value.number > (UINT64_MAX - 9) / 10) {
                fail("a number too large");
            }
            value.number = value.number * 10 + static_cast<std::uint64_t>(text_[at_] - '0');
            ++at_;
        }
        if (at_ < text_.size() && (text_[at_] == '.' || text_[at_] == 'e' || text_[at_] == 'E')) {
            fail("a number that is not whole");
        }
        return value;
    }
    std::string parse_string()
    {
        std::string out;
        ++at_;  // the opening quote
        while (true) {
            if (at_ >= text_.size()) {
                fail("a string without its closing quote");
            }
            const char c = text_[at_++];
            if (c == '"') {
                return out;
            }
            if (static_cast<unsigned char>(c) < 0x20) {
                fail("a control character inside a string");
            }
            if (c != '\\') {
                out += c;
                continue;
            }
            if (at_ >= text_.size()) {
                fail("a string without its closing quote");
            }
            out += parse_escape(text_[at_++]);
        }
    }
    char parse_escape(char kind)
    {
        switch (kind) {
        case '"': case '\\': case '/': return kind;
        case 'n': return '\n';
        case 't': return '\t';
        case 'r': return '\r';
        case 'b': return '\b';
        case 'f': return '\f';
        case 'u': break;
        default: fail("an unknown escape in a string");
        }
        if (at_ + 4 > text_.size()) {
            fail("a \\u escape cut short");
        }
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = text_[at_++];
            const int digit = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                             : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (digit < 0) {
                fail("a \\u escape that is not four hexadecimal digits");
            }
            code = code * 16 + static_cast<unsigned>(digit);
        }
        if (code >= 0x80) {
            fail("a character outside ASCII in a string");
        }
        return static_cast<char>(code);
    }
};

const Json* member(const Json& object, const std::string& name)
{
    for (std::size_t i = 0; i < object.names.size(); ++i) {
        if (object.names[i] == name) {
            return &object.items[i];
        }
    }
    return nullptr;
}

std::string tensor_entry(const std::string& name, const Matrix& matrix, std::uint64_t& offset)
{
    const std::uint64_t size = 8 * static_cast<std::uint64_t>(matrix.rows()) * matrix.cols();
    const std::string entry = fmt::format("{}:{{\"dtype\":\"F64\",\"shape\":[{},{}],\"data_offsets\":[{},{}]}}",
                                          json_string(name), matrix.rows(), matrix.cols(), offset, offset + size);
    offset += size;
    return entry;
}

void append_le(std::string& out, std::uint64_t bits)
{
    for (int byte = 0; byte < 8; ++byte) {
        out += static_cast<char>((bits >> (8 * byte)) & 0xffU);
    }
}

std::uint64_t read_le(const std::string& bytes, std::size_t at)
{
    std::uint64_t bits = 0;
    for (int byte = 7; byte >= 0; --byte) {
        bits = (bits << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(byte)]);
    }
    return bits;
}

}  // namespace

std::string save_safetensors(const LanguageModel& model, const std::string& vocabulary)
{
    if (vocabulary.size() != model.embedding.rows()) {
        refuse(fmt::format("save_safetensors: {} characters for the {} rows of W_E; give one per row",
                           vocabulary.size(), model.embedding.rows()));
    }
    LanguageModel copy = model;
    const std::vector<Matrix*> tensors = parameters(copy);
    const std::vector<std::string> names = parameter_names(model.shape);
    // h_kv only where the query heads share key/value heads (chapter 18): a file of chapter 14's model is unchanged.
    const std::size_t kv_heads = kv_head_count(model.shape);
    const std::string shared = kv_heads == model.shape.heads ? "" : fmt::format(",\"kv_heads\":\"{}\"", kv_heads);
    std::string header = fmt::format("{{\"__metadata__\":{{\"vocabulary\":{},\"heads\":\"{}\",\"context\":\"{}\"{}}}",
                                     json_string(vocabulary), model.shape.heads, model.shape.context, shared);
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        header += ',';
        header += tensor_entry(names[i], *tensors[i], offset);
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string bytes;
    append_le(bytes, header.size());
    bytes += header;
    for (const Matrix* tensor : tensors) {
        const double* entry = tensor->data();
        for (std::size_t i = 0; i < tensor->rows() * tensor->cols(); ++i) {
            append_le(bytes, std::bit_cast<std::uint64_t>(entry[i]));
        }
    }
    return bytes;
}

namespace {

// Where one tensor's bytes lie, from the start of the data.
struct Extent {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

std::size_t whole_metadata(const Json& metadata, const std::string& name, std::size_t low, std::size_t high)
{
    const Json* value = member(metadata, name);
    if (value == nullptr || value->kind != Json::Kind::string || value->text.empty() || value->text.size() > 9 ||
        value->text.find_first_not_of("0123456789") != std::string::npos) {
        refuse(fmt::format("the header's __metadata__ has no \"{}\" written as a whole number in a string", name));
    }
    const std::size_t number = std::stoul(value->text);
    if (number < low || number > high) {
        refuse(fmt::format("the header's __metadata__ gives {} = {}; expected {} to {}", name, number, low, high));
    }
    return number;
}

std::string vocabulary_metadata(const Json& root)
{
    const Json* metadata = member(root, "__metadata__");
    const Json* vocabulary = metadata != nullptr ? member(*metadata, "vocabulary") : nullptr;
    if (vocabulary == nullptr || vocabulary->kind != Json::Kind::string) {
        refuse("the header has no __metadata__ with the model's \"vocabulary\"; it was not written by this book");
    }
    const std::string& characters = vocabulary->text;
    if (characters.size() < 2 || characters.size() > 256) {
        refuse(fmt::format("the vocabulary in the header has {} characters; expected 2 to 256", characters.size()));
    }
    for (std::size_t i = 1; i < characters.size(); ++i) {
        if (static_cast<unsigned char>(characters[i - 1]) >= static_cast<unsigned char>(characters[i])) {
            refuse("the vocabulary in the header is not a list of distinct characters in increasing order");
        }
    }
    return characters;
}

// The tensor's entry must be F64 with the given shape, its data_offsets [begin, end) as many bytes
// as the shape's doubles; returns where its data lie.
Extent check_tensor(const Json& root, const std::string& name, std::size_t rows, std::size_t cols,
                    const std::string& why)
{
    const Json* tensor = member(root, name);
    if (tensor == nullptr || tensor->kind != Json::Kind::object) {
        refuse(fmt::format("the header has no tensor \"{}\"; the model needs it (the API page lists a model file's "
                           "tensors)", name));
    }
    const Json* dtype = member(*tensor, "dtype");
    if (dtype == nullptr || dtype->kind != Json::Kind::string || dtype->text != "F64") {
        refuse(fmt::format("tensor \"{}\" is not of dtype \"F64\"; the book saves doubles", name));
    }
    const Json* dims = member(*tensor, "shape");
    if (dims == nullptr || dims->kind != Json::Kind::array || dims->items.size() != 2 ||
        dims->items[0].kind != Json::Kind::number || dims->items[1].kind != Json::Kind::number ||
        dims->items[0].number != rows || dims->items[1].number != cols) {
        refuse(fmt::format("tensor \"{}\" does not have the shape [{}, {}] the model needs{}", name, rows, cols,
                           why));
    }
    // An end before its begin makes end − begin wrap round to a huge number, or to the size with a
    // begin past any data, which check_cover() refuses.
    const Json* offsets = member(*tensor, "data_offsets");
    const std::uint64_t size = 8 * static_cast<std::uint64_t>(rows) * cols;
    if (offsets == nullptr || offsets->kind != Json::Kind::array || offsets->items.size() != 2 ||
        offsets->items[0].kind != Json::Kind::number || offsets->items[1].kind != Json::Kind::number ||
        offsets->items[1].number - offsets->items[0].number != size) {
        refuse(fmt::format("tensor \"{}\" does not have data_offsets [begin, end] with end - begin = {}, the bytes "
                           "of its {} doubles", name, size, rows * cols));
    }
    return {offsets->items[0].number, offsets->items[1].number};
}

// The format's rule: the tensors' data, in any order, cover the data exactly, with no gap and no
// overlap. Returns the bytes they cover.
std::uint64_t check_cover(const std::vector<Extent>& extents, const std::vector<std::string>& names)
{
    std::vector<std::size_t> order(extents.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return extents[a].begin < extents[b].begin; });
    std::uint64_t covered = 0;
    for (const std::size_t i : order) {
        if (extents[i].begin != covered) {
            refuse(fmt::format("tensor \"{}\" has data_offsets [{}, {}], but the data before it end at byte {}: the "
                               "tensors' data must cover the data with no gap and no overlap", names[i],
                               extents[i].begin, extents[i].end, covered));
        }
        covered = extents[i].end;
    }
    return covered;
}

// h_kv, from the metadata's "kv_heads" where the query heads share key/value heads (chapter 18); else 0, the
// shape's default: one key/value head per query head, as in chapter 14's file.
std::size_t kv_heads_of(const Json& metadata, const ModelShape& shape)
{
    if (member(metadata, "kv_heads") == nullptr) {
        return 0;
    }
    const std::size_t kv_heads = whole_metadata(metadata, "kv_heads", 1, shape.heads);
    if (shape.heads % kv_heads != 0) {
        std::string fitting;  // the shapes W_K and W_V may have: h_kv heads of width d/h, h_kv dividing h
        for (std::size_t count = 1; count <= shape.heads; ++count) {
            const std::size_t columns = count * shape.width / shape.heads;
            fitting += shape.heads % count == 0 ? fmt::format(" [{}, {}]", shape.width, columns) : "";
        }
        refuse(fmt::format("the header's __metadata__ gives kv_heads = {}, which does not divide heads = {}: tensor "
                           "\"layers.0.w_key\" cannot be [{}, {}]; the query heads share key/value heads in equal "
                           "groups, so W_K and W_V are one of{}", kv_heads, shape.heads, shape.width,
                           kv_heads * shape.width / shape.heads, fitting));
    }
    return kv_heads;
}

ModelShape shape_of(const Json& root, std::size_t vocabulary)
{
    const Json* metadata = member(root, "__metadata__");
    const Json* embedding = member(root, "embedding");
    const Json* dims = embedding != nullptr ? member(*embedding, "shape") : nullptr;
    if (dims == nullptr || dims->kind != Json::Kind::array || dims->items.size() != 2 ||
        dims->items[1].kind != Json::Kind::number || dims->items[1].number == 0 || dims->items[1].number > 1024) {
        refuse("the header has no tensor \"embedding\" with a shape [d_vocab, d], d from 1 to 1024");
    }
    ModelShape shape;
    shape.vocabulary = vocabulary;
    shape.width = static_cast<std::size_t>(dims->items[1].number);
    shape.heads = whole_metadata(*metadata, "heads", 1, shape.width);
    shape.context = whole_metadata(*metadata, "context", 1, 1000000);
    const std::size_t tensors = root.names.size() - 1;
    // Two tensors, W_E and W_U with no layer, would be a bigram model; the book counts its bigram
    // instead, and every program that loads a model shows or scores its layers' heads.
    if (tensors < 6 || (tensors - 2) % 4 != 0 || (tensors - 2) / 4 > 64) {
        refuse(fmt::format("the header has {} tensors; a model of L layers has 4 L + 2, with L from 1 to 64",
                           tensors));
    }
    shape.layers = (tensors - 2) / 4;
    if (shape.width % shape.heads != 0 || (shape.width / shape.heads) % 2 != 0) {
        refuse(fmt::format("the header gives d = {} and {} heads; d/h must be a whole even number", shape.width,
                           shape.heads));
    }
    shape.kv_heads = kv_heads_of(*metadata, shape);
    return shape;
}

// Every tensor's entry, in the order of parameter_names(): where its data lie.
std::vector<Extent> check_tensors(const Json& root, const ModelShape& shape, const std::vector<std::string>& names)
{
    std::vector<Extent> extents;
    const std::size_t kv_heads = kv_head_count(shape);
    const std::size_t kv_width = kv_heads * (shape.width / shape.heads);  // W_K and W_V: h_kv heads of width d/h
    const std::string kv_why = fmt::format(" (h_kv = {} key/value head{} of width d/h = {}{})", kv_heads,
                                           kv_heads == 1 ? "" : "s", shape.width / shape.heads,
                                           kv_heads == shape.heads ? ", one per query head" : "");
    for (std::size_t i = 0; i < names.size(); ++i) {
        const bool first = i == 0;
        const bool last = i + 1 == names.size();
        const bool key_or_value = !first && !last && (i % 4 == 2 || i % 4 == 3);  // layers.l.w_key, w_value
        extents.push_back(check_tensor(root, names[i], last ? shape.width : first ? shape.vocabulary : shape.width,
                                       last ? shape.vocabulary : key_or_value ? kv_width : shape.width,
                                       key_or_value ? kv_why : ""));
    }
    return extents;
}

}  // namespace

//> load
SavedModel load_safetensors(const std::string& bytes)
{
    //{ refuses a file too short to hold the header's length
    if (bytes.size() < 8) {
        refuse(fmt::format("the file is truncated: {} bytes, fewer than the 8 of the header's length", bytes.size()));
    }
    //}
    const std::uint64_t header_size = read_le(bytes, 0);
    //{ refuses a header longer than the file
    if (header_size > bytes.size() - 8) {
        refuse(fmt::format("the file is truncated: its header says {} bytes of JSON, but only {} bytes follow",
                           header_size, bytes.size() - 8));
    }
    //}
    const std::string header = bytes.substr(8, static_cast<std::size_t>(header_size));
    const Json root = JsonReader(header).document();
    if (root.kind != Json::Kind::object) {
        refuse("the header is not a JSON object");
    }
    const std::string vocabulary = vocabulary_metadata(root);
    const ModelShape shape = shape_of(root, vocabulary.size());
    const std::vector<std::string> names = parameter_names(shape);
    const std::vector<Extent> extents = check_tensors(root, shape, names);
    const std::uint64_t covered = check_cover(extents, names);  // in any order, as the format allows
    const std::size_t data_start = 8 + static_cast<std::size_t>(header_size);
    //{ refuses data that do not fill the rest of the file exactly
    if (bytes.size() - data_start != covered) {
        refuse(fmt::format("the file holds {} bytes of data after the header, but its tensors need {}; it is "
                           "truncated or has bytes to spare", bytes.size() - data_start, covered));
    }
    //}
    SavedModel saved{zero_model(shape), vocabulary};
    const std::vector<Matrix*> tensors = parameters(saved.model);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        double* entry = tensors[i]->data();
        std::size_t at = data_start + static_cast<std::size_t>(extents[i].begin);
        for (std::size_t k = 0; k < tensors[i]->rows() * tensors[i]->cols(); ++k, at += 8) {
            entry[k] = std::bit_cast<double>(read_le(bytes, at));
            //{ refuses a number that is not finite
            if (!std::isfinite(entry[k])) {
                refuse(fmt::format("tensor \"{}\" holds {} at entry {}; a trained model's numbers are finite",
                                   names[i], entry[k], k));
            }
            //}
        }
    }
    return saved;
}
//< load

// Chapter 20's latent model: the same format, its nine tensors (latent_parameter_names()) and two more
// numbers in the metadata, "latent" and "rotary".
std::string save_latent_safetensors(const LatentModel& model, const std::string& vocabulary)
{
    if (vocabulary.size() != model.embedding.rows()) {
        refuse(fmt::format("save_latent_safetensors: {} characters for the {} rows of W_E; give one per row",
                           vocabulary.size(), model.embedding.rows()));
    }
    LatentModel copy = model;
    const std::vector<Matrix*> tensors = latent_parameters(copy);
    const std::vector<std::string> names = latent_parameter_names();
    std::string header = fmt::format("{{\"__metadata__\":{{\"vocabulary\":{},\"heads\":\"{}\",\"context\":\"{}\","
                                     "\"latent\":\"{}\",\"rotary\":\"{}\"}}",
                                     json_string(vocabulary), model.shape.heads, model.shape.context,
                                     model.shape.latent, model.shape.rotary);
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        header += ',';
        header += tensor_entry(names[i], *tensors[i], offset);
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string bytes;
    append_le(bytes, header.size());
    bytes += header;
    for (const Matrix* tensor : tensors) {
        for (std::size_t i = 0; i < tensor->rows() * tensor->cols(); ++i) {
            append_le(bytes, std::bit_cast<std::uint64_t>(tensor->data()[i]));
        }
    }
    return bytes;
}

namespace {

// The shape a latent model file declares: d from W_E, the rest from the metadata, each in range.
LatentModelShape latent_shape_of(const Json& root, std::size_t vocabulary)
{
    const std::vector<std::string> names = latent_parameter_names();
    if (root.names.size() != names.size() + 1) {
        refuse(fmt::format("the header has {} tensors; a latent model has {}: embedding, layers.0.w_query, "
                           "w_query_rotary, w_down, w_up_key, w_up_value, w_key_rotary, w_out, and unembedding",
                           root.names.size() - 1, names.size()));
    }
    const Json* embedding = member(root, "embedding");
    const Json* dims = embedding != nullptr ? member(*embedding, "shape") : nullptr;
    if (dims == nullptr || dims->kind != Json::Kind::array || dims->items.size() != 2 ||
        dims->items[1].kind != Json::Kind::number || dims->items[1].number == 0 || dims->items[1].number > 1024) {
        refuse("the header has no tensor \"embedding\" with a shape [d_vocab, d], d from 1 to 1024");
    }
    const Json& metadata = *member(root, "__metadata__");
    LatentModelShape shape;
    shape.vocabulary = vocabulary;
    shape.width = static_cast<std::size_t>(dims->items[1].number);
    shape.heads = whole_metadata(metadata, "heads", 1, shape.width);
    shape.context = whole_metadata(metadata, "context", 1, 1000000);
    shape.latent = whole_metadata(metadata, "latent", 1, shape.width);
    shape.rotary = whole_metadata(metadata, "rotary", 2, 1024);
    if (shape.width % shape.heads != 0 || shape.rotary % 2 != 0) {
        refuse(fmt::format("the header gives d = {}, {} heads and d_R = {}; h must divide d and d_R be even",
                           shape.width, shape.heads, shape.rotary));
    }
    return shape;
}

}  // namespace

SavedLatentModel load_latent_safetensors(const std::string& bytes)
{
    if (bytes.size() < 8) {
        refuse(fmt::format("the file is truncated: {} bytes, fewer than the 8 of the header's length", bytes.size()));
    }
    const std::uint64_t header_size = read_le(bytes, 0);
    if (header_size > bytes.size() - 8) {
        refuse(fmt::format("the file is truncated: its header says {} bytes of JSON, but only {} bytes follow",
                           header_size, bytes.size() - 8));
    }
    const Json root = JsonReader(bytes.substr(8, static_cast<std::size_t>(header_size))).document();
    if (root.kind != Json::Kind::object) {
        refuse("the header is not a JSON object");
    }
    const std::string vocabulary = vocabulary_metadata(root);
    SavedLatentModel saved{{}, vocabulary};
    saved.model.shape = latent_shape_of(root, vocabulary.size());
    const LatentModelShape& s = saved.model.shape;
    const std::vector<std::pair<std::size_t, std::size_t>> shapes = {
        {s.vocabulary, s.width}, {s.width, s.width},  {s.width, s.heads * s.rotary}, {s.width, s.latent},
        {s.latent, s.width},     {s.latent, s.width}, {s.width, s.rotary},           {s.width, s.width},
        {s.width, s.vocabulary}};
    const std::vector<std::string> names = latent_parameter_names();
    const std::vector<Matrix*> tensors = latent_parameters(saved.model);
    std::vector<Extent> extents;
    for (std::size_t i = 0; i < names.size(); ++i) {
        extents.push_back(check_tensor(root, names[i], shapes[i].first, shapes[i].second, ""));
        *tensors[i] = Matrix(shapes[i].first, shapes[i].second);
    }
    const std::uint64_t covered = check_cover(extents, names);
    const std::size_t data_start = 8 + static_cast<std::size_t>(header_size);
    if (bytes.size() - data_start != covered) {
        refuse(fmt::format("the file holds {} bytes of data after the header, but its tensors need {}; it is "
                           "truncated or has bytes to spare", bytes.size() - data_start, covered));
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        std::size_t at = data_start + static_cast<std::size_t>(extents[i].begin);
        for (std::size_t k = 0; k < tensors[i]->rows() * tensors[i]->cols(); ++k, at += 8) {
            tensors[i]->data()[k] = std::bit_cast<double>(read_le(bytes, at));
            if (!std::isfinite(tensors[i]->data()[k])) {
                refuse(fmt::format("tensor \"{}\" holds {} at entry {}; a trained model's numbers are finite",
                                   names[i], tensors[i]->data()[k], k));
            }
        }
    }
    return saved;
}

}  // namespace sa
