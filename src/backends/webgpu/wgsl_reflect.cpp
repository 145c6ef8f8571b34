#include "wgsl_reflect.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "torsh/core/error.hpp"

namespace torsh::webgpu {

namespace {

struct Token {
  enum Kind : std::uint8_t { Ident, Number, Punct } kind;
  std::string text;
  std::uint32_t line;
  std::size_t at = 0;  // byte offset in the text
};
using Tokens = std::vector<Token>;

// Tokens of the text without its comments (line comments, nested block comments).
Tokens tokenize(const std::string& s) {
  Tokens out;
  std::uint32_t line = 1;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      int depth = 0;
      do {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
          ++depth;
          i += 2;
        } else if (s[i] == '*' && i + 1 < n && s[i + 1] == '/') {
          --depth;
          i += 2;
        } else {
          if (s[i] == '\n') ++line;
          ++i;
        }
      } while (i < n && depth > 0);
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80) {
      const std::size_t b = i;
      while (i < n && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' ||
                       static_cast<unsigned char>(s[i]) >= 0x80))
        ++i;
      out.push_back({Token::Ident, s.substr(b, i - b), line, b});
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      // Decimal exponents are e+N / e-N, hexadecimal ones p+N / p-N ('e' is a hex digit there).
      const std::size_t b = i;
      const bool hex = c == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X');
      const auto exponent = [&](char e) { return hex ? (e == 'p' || e == 'P') : (e == 'e' || e == 'E'); };
      while (i < n && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                       ((s[i] == '+' || s[i] == '-') && exponent(s[i - 1]))))
        ++i;
      out.push_back({Token::Number, s.substr(b, i - b), line, b});
    } else {
      out.push_back({Token::Punct, std::string(1, c), line, i});
      ++i;
    }
  }
  return out;
}

struct Attribute {
  std::string name;
  std::vector<Tokens> args;  // split at top-level commas
};

struct Member {
  std::vector<Attribute> attrs;
  Tokens type;
};

class Parser {
 public:
  explicit Parser(const std::string& text) : t_(tokenize(text)) {}
  WgslModuleInfo run();

 private:
  bool at(const char* s) const { return p_ < t_.size() && t_[p_].text == s; }
  bool at_punct(char c) const { return p_ < t_.size() && t_[p_].kind == Token::Punct && t_[p_].text[0] == c; }
  // Tokens up to (not including) the first of `stops` outside (), [], {} and template <>; p_ is left on the stop.
  Tokens until(const std::string& stops, bool angles);
  std::vector<Attribute> attributes();
  void skip_balanced(char open, char close);

  const Tokens t_;
  std::size_t p_ = 0;

 public:
  std::map<std::string, Tokens> consts;  // const and override initializers, aliases' types
  std::map<std::string, Tokens> aliases;
  std::map<std::string, std::vector<Member>> structs;
};

Tokens Parser::until(const std::string& stops, bool angles) {
  Tokens out;
  int depth = 0;
  while (p_ < t_.size()) {
    const Token& k = t_[p_];
    if (k.kind == Token::Punct) {
      const char c = k.text[0];
      if (depth == 0 && stops.find(c) != std::string::npos) break;
      if (c == '(' || c == '[' || c == '{' || (angles && c == '<')) ++depth;
      if (c == ')' || c == ']' || c == '}' || (angles && c == '>')) {
        if (depth == 0) break;  // an unbalanced closer ends the range
        --depth;
      }
    }
    out.push_back(k);
    ++p_;
  }
  return out;
}

void Parser::skip_balanced(char open, char close) {
  int depth = 0;
  while (p_ < t_.size()) {
    const Token& k = t_[p_++];
    if (k.kind != Token::Punct) continue;
    if (k.text[0] == open) ++depth;
    if (k.text[0] == close && --depth <= 0) return;
  }
}

std::vector<Attribute> Parser::attributes() {
  std::vector<Attribute> out;
  while (at_punct('@') && p_ + 1 < t_.size()) {
    ++p_;
    Attribute a{t_[p_++].text, {}};
    if (at_punct('(')) {
      ++p_;
      while (p_ < t_.size() && !at_punct(')')) {
        const std::size_t from = p_;
        Tokens arg = until(",)", false);
        if (!arg.empty()) a.args.push_back(std::move(arg));
        if (at_punct(',') || p_ == from) ++p_;  // a stray closer: step over it
      }
      if (at_punct(')')) ++p_;
    }
    out.push_back(std::move(a));
  }
  return out;
}

// ---------------------------------------------------------------- constant expressions

class Eval {
 public:
  Eval(const Tokens& t, const std::map<std::string, Tokens>& consts, std::set<std::string>& busy)
      : t_(t), consts_(consts), busy_(busy) {}
  std::optional<std::int64_t> run() {
    auto v = expr(0);
    return v && p_ == t_.size() ? v : std::nullopt;
  }

 private:
  bool punct(char c, std::size_t ahead = 0) const {
    return p_ + ahead < t_.size() && t_[p_ + ahead].kind == Token::Punct && t_[p_ + ahead].text[0] == c;
  }
  // Binary operators by precedence: 0 (+ -) < 1 (* / %) ; shifts (<< >>) bind loosest, as level -1 here.
  std::optional<std::int64_t> expr(int) {
    auto l = additive();
    while (l && ((punct('<') && punct('<', 1)) || (punct('>') && punct('>', 1)))) {
      const bool left = punct('<');
      p_ += 2;
      auto r = additive();
      if (!r || *r < 0 || *r > 62) return std::nullopt;
      l = left ? *l << *r : *l >> *r;
    }
    return l;
  }
  std::optional<std::int64_t> additive() {
    auto l = term();
    while (l && (punct('+') || punct('-'))) {
      const bool plus = punct('+');
      ++p_;
      auto r = term();
      if (!r) return std::nullopt;
      l = plus ? *l + *r : *l - *r;
    }
    return l;
  }
  std::optional<std::int64_t> term() {
    auto l = unary();
    while (l && (punct('*') || punct('/') || punct('%'))) {
      const char op = t_[p_++].text[0];
      auto r = unary();
      if (!r || ((op == '/' || op == '%') && *r == 0)) return std::nullopt;
      l = op == '*' ? *l * *r : op == '/' ? *l / *r : *l % *r;
    }
    return l;
  }
  std::optional<std::int64_t> unary() {
    if (++depth_ > 64) return std::nullopt;  // deeper than any real constant: not evaluated
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    if (punct('-')) {
      ++p_;
      auto v = unary();
      return v ? std::optional(-*v) : std::nullopt;
    }
    if (punct('(')) {
      ++p_;
      auto v = expr(0);
      if (!punct(')')) return std::nullopt;
      ++p_;
      return v;
    }
    if (p_ >= t_.size()) return std::nullopt;
    const Token& k = t_[p_++];
    if (k.kind == Token::Number) return literal(k.text);
    if (k.kind != Token::Ident) return std::nullopt;
    if ((k.text == "u32" || k.text == "i32") && punct('(')) {  // a conversion of an integer: the integer
      ++p_;
      auto v = expr(0);
      if (!punct(')')) return std::nullopt;
      ++p_;
      return v;
    }
    const auto it = consts_.find(k.text);
    if (it == consts_.end() || busy_.size() > 64 || !busy_.insert(k.text).second) return std::nullopt;
    auto v = Eval(it->second, consts_, busy_).run();
    busy_.erase(k.text);
    return v;
  }
  static std::optional<std::int64_t> literal(std::string s) {
    if (!s.empty() && (s.back() == 'u' || s.back() == 'i')) s.pop_back();
    const bool hex = s.size() > 1 && (s[1] == 'x' || s[1] == 'X');
    if (s.empty() || (!hex && s.find_first_of(".eEfh") != std::string::npos)) return std::nullopt;
    try {
      std::size_t used = 0;
      const long long v = std::stoll(s, &used, 0);
      if (used != s.size()) return std::nullopt;
      return v;
    } catch (...) {
      return std::nullopt;
    }
  }

  const Tokens& t_;
  const std::map<std::string, Tokens>& consts_;
  std::set<std::string>& busy_;
  std::size_t p_ = 0;
  int depth_ = 0;
};

// ---------------------------------------------------------------- types

struct TypeRef {
  std::string name;
  std::vector<Tokens> args;  // template arguments, as tokens
};

// `name` or `name<args>` from a type's tokens; empty name when it is not of that shape.
TypeRef split_type(const Tokens& t) {
  TypeRef r;
  if (t.empty() || t[0].kind != Token::Ident) return r;
  r.name = t[0].text;
  if (t.size() == 1) return r;
  if (t[1].text != "<" || t.back().text != ">") return {};
  int depth = 0;
  Tokens cur;
  for (std::size_t i = 2; i + 1 < t.size(); ++i) {
    const std::string& s = t[i].text;
    if (t[i].kind == Token::Punct) {
      if (s == "<" || s == "(" || s == "[") ++depth;
      if (s == ">" || s == ")" || s == "]") --depth;
      if (s == "," && depth == 0) {
        r.args.push_back(std::move(cur));
        cur.clear();
        continue;
      }
    }
    cur.push_back(t[i]);
  }
  if (!cur.empty()) r.args.push_back(std::move(cur));
  return r;
}

struct Layout {
  std::size_t align = 0, size = 0;        // 0: unknown
  ParamType scalar = ParamType::Unknown;  // the scalar the type is made of (Unknown for structs)
  bool is_scalar = false;
  bool is_array = false;  // array<...>: scalar is its elements'
};

// Vectors and matrices spelled vec3f, mat4x4h, vec2<f32>, mat2x3<f32>; the scalar's code in `s`.
bool vector_shape(const std::string& name, int& cols, int& rows, std::string& suffix) {
  if (name.size() >= 4 && name.compare(0, 3, "vec") == 0 && std::isdigit(static_cast<unsigned char>(name[3]))) {
    cols = 1;
    rows = name[3] - '0';
    suffix = name.substr(4);
    return rows >= 2 && rows <= 4 && suffix.size() <= 1;
  }
  if (name.size() >= 6 && name.compare(0, 3, "mat") == 0 && name[4] == 'x') {
    cols = name[3] - '0';
    rows = name[5] - '0';
    suffix = name.substr(6);
    return cols >= 2 && cols <= 4 && rows >= 2 && rows <= 4 && suffix.size() <= 1;
  }
  return false;
}

ParamType scalar_of(const std::string& n) {
  if (n == "f32" || n == "f") return ParamType::F32;
  if (n == "i32" || n == "i") return ParamType::I32;
  if (n == "u32" || n == "u") return ParamType::U32;
  if (n == "f16" || n == "h") return ParamType::F16;
  return ParamType::Unknown;
}

constexpr std::size_t round_up(std::size_t v, std::size_t a) { return a ? (v + a - 1) / a * a : v; }

class Layouts {
 public:
  explicit Layouts(const Parser& p) : p_(p) {}

  Layout of(const Tokens& t, int depth = 0) {
    if (depth > 32 || ++steps_ > 100000) return {};  // nesting or sizes no real uniform has
    const TypeRef r = split_type(t);
    if (r.name.empty()) return {};
    if (const ParamType s = scalar_of(r.name); s != ParamType::Unknown && r.args.empty() && r.name.size() == 3) {
      const std::size_t n = param_type_size(s);
      return {n, n, s, true, false};
    }
    if (r.name == "bool" && r.args.empty()) return {4, 4, ParamType::Unknown, true, false};
    if (r.name == "atomic" && r.args.size() == 1) {
      Layout l = of(r.args[0], depth + 1);
      return {l.align, l.size, l.scalar, l.is_scalar, false};
    }
    int cols = 0, rows = 0;
    std::string suffix;
    if (vector_shape(r.name, cols, rows, suffix)) {
      ParamType s = ParamType::Unknown;
      if (!suffix.empty() && r.args.empty())
        s = scalar_of(suffix);
      else if (suffix.empty() && r.args.size() == 1)
        s = of(r.args[0], depth + 1).scalar;
      if (s == ParamType::Unknown) return {};
      const std::size_t e = param_type_size(s);
      const std::size_t va = (rows == 3 ? 4 : rows) * e, vs = rows * e;
      return {va, cols == 1 ? vs : cols * round_up(vs, va), s, false, false};
    }
    if (r.name == "array" && (r.args.size() == 1 || r.args.size() == 2)) {
      Layout e = of(r.args[0], depth + 1);
      Layout a{e.align, 0, e.scalar, false, true};
      if (r.args.size() == 2 && e.align) {
        std::set<std::string> busy;
        const auto n = Eval(r.args[1], p_.consts, busy).run();
        if (n && *n > 0) a.size = static_cast<std::size_t>(*n) * round_up(e.size, e.align);
      }
      return a;
    }
    if (!r.args.empty()) return {};
    if (auto al = p_.aliases.find(r.name); al != p_.aliases.end()) return of(al->second, depth + 1);
    if (auto st = p_.structs.find(r.name); st != p_.structs.end()) return of_struct(st->second, depth);
    return {};
  }

 private:
  Layout of_struct(const std::vector<Member>& members, int depth) {
    std::size_t offset = 0, align = 1;
    for (const Member& m : members) {
      Layout l = of(m.type, depth + 1);
      std::size_t a = l.align, s = l.size;
      for (const Attribute& at : m.attrs) {
        if ((at.name != "align" && at.name != "size") || at.args.size() != 1) continue;
        std::set<std::string> busy;
        const auto v = Eval(at.args[0], p_.consts, busy).run();
        if (!v || *v <= 0) return {};
        (at.name == "align" ? a : s) = static_cast<std::size_t>(*v);
      }
      if (!a || !s) return {};
      offset = round_up(offset, a) + s;
      align = std::max(align, a);
    }
    return {align, round_up(offset, align), ParamType::Unknown, false, false};
  }
  const Parser& p_;
  std::size_t steps_ = 0;
};

std::string spelled(const Tokens& t) {
  std::string s;
  for (const Token& k : t) s += k.text == "," ? ", " : k.text;
  return s;
}

WgslModuleInfo Parser::run() {
  WgslModuleInfo info;
  struct RawBinding {
    WgslBinding b;
    Tokens type;
  };
  std::vector<RawBinding> raw;
  std::vector<Tokens> workgroup_types;
  while (p_ < t_.size()) {
    std::vector<Attribute> attrs = attributes();
    if (p_ >= t_.size()) break;
    const Token& k = t_[p_];
    if (k.kind != Token::Ident) {
      if (at_punct('{'))
        skip_balanced('{', '}');
      else
        ++p_;
      continue;
    }
    const std::string kw = k.text;
    const std::uint32_t line = k.line;
    ++p_;
    if (kw == "var") {
      std::string space, access;
      std::size_t from = 0, to = 0;
      if (at_punct('<')) {
        from = t_[p_].at;
        ++p_;
        const Tokens sp = until(">", false);
        if (at_punct('>')) to = t_[p_++].at + 1;
        if (!sp.empty()) space = sp[0].text;
        if (sp.size() >= 3) access = sp[2].text;
      }
      if (p_ >= t_.size() || t_[p_].kind != Token::Ident) continue;
      RawBinding rb;
      rb.b.name = t_[p_++].text;
      rb.b.line = line;
      if (at_punct(':')) {
        ++p_;
        rb.type = until(";=", true);
      }
      until(";", true);
      std::optional<std::int64_t> group, binding;
      for (const Attribute& a : attrs) {
        if ((a.name != "group" && a.name != "binding") || a.args.size() != 1) continue;
        std::set<std::string> busy;
        (a.name == "group" ? group : binding) = Eval(a.args[0], consts, busy).run();
      }
      if (!group && !binding) {  // private / workgroup variables
        if (space == "workgroup") workgroup_types.push_back(std::move(rb.type));
        continue;
      }
      rb.b.group = group && *group >= 0 ? static_cast<std::uint32_t>(*group) : ~0u;
      rb.b.binding = binding && *binding >= 0 ? static_cast<std::uint32_t>(*binding) : ~0u;
      rb.b.space = space == "storage"   ? WgslBinding::Space::Storage
                   : space == "uniform" ? WgslBinding::Space::Uniform
                                        : WgslBinding::Space::Other;
      rb.b.writable = rb.b.space == WgslBinding::Space::Storage && access == "read_write";
      rb.b.space_begin = from;
      rb.b.space_end = to;
      rb.b.type = rb.type.empty() ? std::string() : spelled(rb.type);
      raw.push_back(std::move(rb));
    } else if (kw == "const" || kw == "override" || kw == "alias") {
      if (p_ >= t_.size() || t_[p_].kind != Token::Ident) continue;
      const std::string name = t_[p_++].text;
      if (at_punct(':')) {
        ++p_;
        until(";=", true);
      }
      if (at_punct('=')) {
        ++p_;
        Tokens value = until(";", kw == "alias");
        (kw == "alias" ? aliases : consts)[name] = std::move(value);
      }
      until(";", true);
    } else if (kw == "struct") {
      if (p_ >= t_.size()) continue;
      const std::string name = t_[p_++].text;
      if (!at_punct('{')) continue;
      ++p_;
      std::vector<Member> members;
      while (p_ < t_.size() && !at_punct('}')) {
        const std::size_t from = p_;
        Member m;
        m.attrs = attributes();
        if (p_ < t_.size() && t_[p_].kind == Token::Ident) ++p_;  // the member's name
        if (at_punct(':')) {
          ++p_;
          m.type = until(",}", true);
        } else {
          until(",}", true);
        }
        members.push_back(std::move(m));
        if (at_punct(',') || p_ == from) ++p_;
      }
      if (at_punct('}')) ++p_;
      structs[name] = std::move(members);
    } else if (kw == "fn") {
      const std::string name = p_ < t_.size() ? t_[p_++].text : std::string();
      until("{;", false);
      if (at_punct('{')) skip_balanced('{', '}');
      bool compute = false;
      const Attribute* wg = nullptr;
      for (const Attribute& a : attrs) {
        if (a.name == "compute") compute = true;
        if (a.name == "workgroup_size") wg = &a;
      }
      if (!compute) continue;
      WgslEntry e;
      e.name = name;
      for (int d = 0; d < 3; ++d) {
        if (!wg || d >= static_cast<int>(wg->args.size())) {
          if (wg && d > 0) e.size[d] = 1;  // omitted y and z are 1
          continue;
        }
        std::set<std::string> busy;
        const auto v = Eval(wg->args[d], consts, busy).run();
        if (v && *v > 0 && *v <= 0xffffffffll) e.size[d] = static_cast<std::uint32_t>(*v);
      }
      info.entries.push_back(std::move(e));
    } else {
      // enable / requires / diagnostic / const_assert and anything unknown: to the end of the statement.
      until(";{", true);
      if (at_punct('{'))
        skip_balanced('{', '}');
      else if (at_punct(';'))
        ++p_;
    }
  }
  // Types last: structs and constants may be declared after the bindings that use them.
  Layouts layouts(*this);
  for (RawBinding& rb : raw) {
    const Layout l = layouts.of(rb.type);
    if (rb.b.space == WgslBinding::Space::Storage) {
      rb.b.elem = l.scalar;
    } else if (rb.b.space == WgslBinding::Space::Uniform) {
      rb.b.elem = l.is_scalar ? l.scalar : ParamType::Struct;
      rb.b.size = l.size;
    }
    info.bindings.push_back(std::move(rb.b));
  }
  // WebGPU counts each workgroup variable as its size rounded up to 16 bytes.
  for (const Tokens& t : workgroup_types) {
    const Layout l = layouts.of(t);
    if (!l.size) {
      info.workgroup_bytes.reset();
      break;
    }
    *info.workgroup_bytes += round_up(l.size, 16);
  }
  return info;
}

}  // namespace

const WgslEntry* WgslModuleInfo::entry(const std::string& name) const {
  for (const WgslEntry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

WgslModuleInfo reflect_wgsl(const std::string& text) { return Parser(text).run(); }

std::string storage_read_write(const std::string& text, const WgslModuleInfo& m) {
  std::string out = text;
  // Back to front, so earlier offsets stay valid.
  for (auto it = m.bindings.rbegin(); it != m.bindings.rend(); ++it)
    if (it->space == WgslBinding::Space::Storage && !it->writable && it->space_end > it->space_begin)
      out.replace(it->space_begin, it->space_end - it->space_begin, "<storage, read_write>");
  return out;
}

std::vector<KernelParam> wgsl_params(const WgslModuleInfo& m, const std::string& what) {
  const auto refuse = [&](const WgslBinding& b, const std::string& why) -> std::vector<KernelParam> {
    throw Error(ErrorCode::InvalidArgument,
                what + ": line " + std::to_string(b.line) + " declares '" + b.name + "' at @group(" +
                    (b.group == ~0u ? std::string("?") : std::to_string(b.group)) + ") @binding(" +
                    (b.binding == ~0u ? std::string("?") : std::to_string(b.binding)) + "): " + why,
                {.op = "compile_kernel"},
                {"Declare argument i as @group(0) @binding(i): tensors as var<storage, read> or "
                 "var<storage, read_write> arrays, scalars and structs as var<uniform>"});
  };
  std::vector<const WgslBinding*> slot;
  for (const WgslBinding& b : m.bindings) {
    if (b.group != 0) return refuse(b, "user kernels take their arguments in group 0 only");
    if (b.space == WgslBinding::Space::Other)
      return refuse(b, "only storage and uniform buffers can be arguments (no textures, samplers or other resources)");
    if (b.binding == ~0u || b.binding > 4096) return refuse(b, "the binding number is not a constant in 0..4096");
    if (slot.size() <= b.binding) slot.resize(b.binding + 1, nullptr);
    if (slot[b.binding]) return refuse(b, "binding " + std::to_string(b.binding) + " is declared twice");
    slot[b.binding] = &b;
  }
  std::vector<KernelParam> out;
  for (std::size_t i = 0; i < slot.size(); ++i) {
    if (!slot[i]) {
      std::size_t j = i + 1;
      while (!slot[j]) ++j;  // the last slot is always declared
      return refuse(*slot[j],
                    "binding " + std::to_string(i) + " is missing; arguments are bindings 0, 1, 2, ... without gaps");
    }
    const WgslBinding& b = *slot[i];
    KernelParam p;
    p.name = b.name;
    if (b.space == WgslBinding::Space::Storage) {
      p.kind = KernelParam::Kind::Buffer;
      p.type = b.elem;
      p.size = param_type_size(b.elem);
      p.writable = b.writable;
      p.spelling = std::string(b.writable ? "var<storage, read_write> " : "var<storage, read> ") + b.type;
    } else {
      p.kind = KernelParam::Kind::Value;
      p.type = b.elem;
      p.size = b.size;
      p.writable = false;
      p.spelling = "var<uniform> " + b.type;
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace torsh::webgpu
