#include "kernel_signature.hpp"

#include <cctype>
#include <map>

namespace torsh::detail {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> t;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ident_char(c)) {
      std::size_t j = i;
      while (j < s.size() && ident_char(s[j])) ++j;
      t.emplace_back(s.substr(i, j - i));
      i = j;
    } else {
      t.emplace_back(1, c);
      ++i;
    }
  }
  return t;
}

// Scalar types by the names the dialects spell them (long is 64-bit in all of them).
const std::map<std::string, ParamType, std::less<>>& scalar_names() {
  static const std::map<std::string, ParamType, std::less<>> m = {
      {"float", ParamType::F32},       {"double", ParamType::F64},    {"half", ParamType::F16},
      {"__half", ParamType::F16},      {"int", ParamType::I32},       {"uint", ParamType::U32},
      {"long", ParamType::I64},        {"ulong", ParamType::U64},     {"short", ParamType::I16},
      {"ushort", ParamType::U16},      {"char", ParamType::I8},       {"uchar", ParamType::U8},
      {"bool", ParamType::U8},         {"size_t", ParamType::U64},    {"int8_t", ParamType::I8},
      {"uint8_t", ParamType::U8},      {"int16_t", ParamType::I16},   {"uint16_t", ParamType::U16},
      {"int32_t", ParamType::I32},     {"uint32_t", ParamType::U32},  {"int64_t", ParamType::I64},
      {"uint64_t", ParamType::U64},    {"ptrdiff_t", ParamType::I64}, {"__nv_bfloat16", ParamType::U16},
      {"hip_bfloat16", ParamType::U16}};
  return m;
}

ParamType make_unsigned(ParamType t) {
  switch (t) {
    case ParamType::I8: return ParamType::U8;
    case ParamType::I16: return ParamType::U16;
    case ParamType::I32: return ParamType::U32;
    case ParamType::I64: return ParamType::U64;
    default: return t;
  }
}

bool is_qualifier(std::string_view t) {
  static const char* const q[] = {"GLOBAL",   "__global",    "global",       "const",     "__restrict__", "__restrict",
                                  "restrict", "volatile",    "__constant",   "constant",  "CONSTANT",     "struct",
                                  "signed",   "__read_only", "__write_only", "read_only", "write_only"};
  for (const char* s : q)
    if (t == s) return true;
  return false;
}

// A vector type such as float4: the element's size times the lanes (3 lanes take 4).
std::size_t vector_size(std::string_view name) {
  std::size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size() || i == 0) return 0;
  const auto it = scalar_names().find(name.substr(0, i));
  if (it == scalar_names().end()) return 0;
  const int lanes = std::stoi(std::string(name.substr(i)));
  if (lanes != 2 && lanes != 3 && lanes != 4 && lanes != 8 && lanes != 16) return 0;
  return param_type_size(it->second) * static_cast<std::size_t>(lanes == 3 ? 4 : lanes);
}

KernelParam classify(const std::vector<std::string>& t, bool& local) {
  KernelParam p;
  std::string spelling;
  for (const auto& s : t) {
    if (!spelling.empty() && (ident_char(s[0]) && ident_char(spelling.back()))) spelling += ' ';
    spelling += s;
  }
  p.spelling = spelling;
  bool is_const = false, pointer = false, is_unsigned = false;
  int longs = 0;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string& s = t[i];
    if (s == "__local" || s == "local" || s == "LOCAL_PTR") local = true;
    if (s == "*" || s == "&") {
      pointer = pointer || s == "*";
      // `T* const p` is a constant pointer, not a pointer to constants.
      continue;
    }
    if (s == "const") {
      if (!pointer) is_const = true;
      continue;
    }
    if (s == "unsigned") {
      is_unsigned = true;
      continue;
    }
    if (s == "long") ++longs;
    if (is_qualifier(s) || !ident_char(s[0])) continue;
    names.push_back(s);
  }
  // The last name is the parameter's when a type name precedes it.
  const bool named =
      names.size() >= 2 || (names.size() == 1 && (is_unsigned && names[0] != "int" && names[0] != "long" &&
                                                  names[0] != "short" && names[0] != "char"));
  if (named) {
    p.name = names.back();
    names.pop_back();
  }
  ParamType type = ParamType::Unknown;
  std::size_t size = 0;
  if (names.empty()) {
    type = is_unsigned ? ParamType::U32 : ParamType::Unknown;
  } else {
    const std::string& base = longs ? std::string("long") : names.back();
    if (auto it = scalar_names().find(base); it != scalar_names().end()) {
      type = is_unsigned ? make_unsigned(it->second) : it->second;
    } else if (base == "void") {
      type = ParamType::Unknown;
    } else if (const std::size_t v = vector_size(base)) {
      type = ParamType::Struct;
      size = v;
    } else {
      type = ParamType::Struct;  // a struct or typedef of unknown size
    }
  }
  if (pointer) {
    p.kind = KernelParam::Kind::Buffer;
    p.writable = !is_const;
    p.type = type == ParamType::Struct ? ParamType::Unknown : type;
    p.size = type == ParamType::Struct ? size : param_type_size(type);
  } else {
    p.kind = KernelParam::Kind::Value;
    p.type = type;
    p.size = size ? size : param_type_size(type);
  }
  return p;
}

bool kernel_keyword(std::string_view t) {
  return t == "KERNEL" || t == "__kernel" || t == "kernel" || t == "__global__";
}

}  // namespace

std::string strip_comments(std::string_view s) {
  std::string out(s);
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '"' || out[i] == '\'') {  // skip literals: a "//" inside one is no comment
      const char q = out[i];
      for (++i; i < out.size() && out[i] != q && out[i] != '\n'; ++i)
        if (out[i] == '\\') ++i;
    } else if (out[i] == '/' && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out[i] == '/' && out[i + 1] == '*') {
      out[i] = out[i + 1] = ' ';
      for (i += 2; i < out.size() && !(out[i] == '*' && i + 1 < out.size() && out[i + 1] == '/'); ++i)
        if (out[i] != '\n') out[i] = ' ';
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
      ++i;
    }
  }
  return out;
}

std::optional<ParsedEntry> parse_c_entry(std::string_view source, std::string_view entry) {
  const std::string text = strip_comments(source);
  for (std::size_t pos = text.find(entry); pos != std::string::npos; pos = text.find(entry, pos + 1)) {
    const std::size_t end = pos + entry.size();
    if ((pos > 0 && ident_char(text[pos - 1])) || (end < text.size() && ident_char(text[end]))) continue;
    std::size_t open = end;
    while (open < text.size() && std::isspace(static_cast<unsigned char>(text[open]))) ++open;
    if (open >= text.size() || text[open] != '(') continue;
    // The declaration starts after the previous ';', '{', '}' or preprocessor line.
    std::size_t start = pos;
    while (start > 0 && text[start - 1] != ';' && text[start - 1] != '{' && text[start - 1] != '}' &&
           text[start - 1] != '#')
      --start;
    bool is_kernel = false;
    for (const auto& t : tokens(std::string_view(text).substr(start, pos - start)))
      if (kernel_keyword(t)) is_kernel = true;
    if (!is_kernel) continue;
    int depth = 0;
    std::size_t close = open;
    for (; close < text.size(); ++close) {
      if (text[close] == '(')
        ++depth;
      else if (text[close] == ')' && --depth == 0)
        break;
    }
    if (close >= text.size()) return std::nullopt;
    ParsedEntry out;
    std::vector<std::string> cur;
    int nest = 0;
    const auto flush = [&] {
      if (cur.empty() || (cur.size() == 1 && cur[0] == "void")) return;
      bool local = false;
      out.params.push_back(classify(cur, local));
      if (local && out.local_param.empty()) out.local_param = out.params.back().to_string();
      cur.clear();
    };
    for (const auto& t : tokens(std::string_view(text).substr(open + 1, close - open - 1))) {
      if (t == "(" || t == "<") ++nest;
      if (t == ")" || t == ">") --nest;
      if (t == "," && nest == 0) {
        flush();
        cur.clear();
        continue;
      }
      cur.push_back(t);
    }
    flush();
    return out;
  }
  return std::nullopt;
}

}  // namespace torsh::detail
