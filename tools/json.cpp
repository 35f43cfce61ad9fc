#include "json.h"

#include <cstdlib>

namespace fusedmoe::tools {

const Json* Json::get(const std::string& key) const {
  for (const auto& kv : object) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Status parse(Json* out) {
    Status st = value(out, 0);
    if (!st.ok()) return st;
    skip_ws();
    if (pos_ != s_.size()) return error("end of input");
    return st;
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status error(const std::string& expected) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
    const std::string got = pos_ < s_.size() ? std::string("'") + s_[pos_] + "'" : "end of input";
    return Status(StatusCode::kInvalidArgument, "json line " + std::to_string(line) + " column " +
                                                    std::to_string(col) + ": expected " + expected + ", got " + got);
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }

  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }

  Status string(std::string* out) {
    if (pos_ >= s_.size() || s_[pos_] != '"') return error("'\"'");
    ++pos_;
    out->clear();
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size()) return error("an escape");
        const char e = s_[pos_++];
        switch (e) {
          case '"': case '\\': case '/': c = e; break;
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          default: --pos_; return error("one of the escapes \\\" \\\\ \\/ \\n \\t \\r \\b \\f");
        }
      }
      out->push_back(c);
    }
    if (pos_ >= s_.size()) return error("closing '\"'");
    ++pos_;
    return Status();
  }

  Status value(Json* out, int depth) {
    if (depth > kMaxDepth) return error("nesting below 64 levels");
    skip_ws();
    if (pos_ >= s_.size()) return error("a value");
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      out->type = Json::Type::kObject;
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == '}') { ++pos_; return Status(); }
      while (true) {
        skip_ws();
        std::string key;
        Status st = string(&key);
        if (!st.ok()) return st;
        skip_ws();
        if (pos_ >= s_.size() || s_[pos_] != ':') return error("':'");
        ++pos_;
        Json v;
        st = value(&v, depth + 1);
        if (!st.ok()) return st;
        out->object.emplace_back(std::move(key), std::move(v));
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
        if (pos_ < s_.size() && s_[pos_] == '}') { ++pos_; return Status(); }
        return error("',' or '}'");
      }
    }
    if (c == '[') {
      ++pos_;
      out->type = Json::Type::kArray;
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ']') { ++pos_; return Status(); }
      while (true) {
        Json v;
        Status st = value(&v, depth + 1);
        if (!st.ok()) return st;
        out->array.push_back(std::move(v));
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
        if (pos_ < s_.size() && s_[pos_] == ']') { ++pos_; return Status(); }
        return error("',' or ']'");
      }
    }
    if (c == '"') {
      out->type = Json::Type::kString;
      return string(&out->string);
    }
    if (literal("true")) { out->type = Json::Type::kBool; out->boolean = true; return Status(); }
    if (literal("false")) { out->type = Json::Type::kBool; out->boolean = false; return Status(); }
    if (literal("null")) { out->type = Json::Type::kNull; return Status(); }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const char* begin = s_.c_str() + pos_;
      char* end = nullptr;
      out->number = std::strtod(begin, &end);
      if (end == begin) return error("a number");
      out->type = Json::Type::kNumber;
      pos_ += static_cast<size_t>(end - begin);
      return Status();
    }
    return error("a value");
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

Status parse_json(const std::string& text, Json* out) {
  *out = Json();
  return Parser(text).parse(out);
}

}  // namespace fusedmoe::tools
