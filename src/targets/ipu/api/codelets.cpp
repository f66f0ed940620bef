// Codelets compiled when the host program runs (spec 001 §2.8): the source is scanned for
// classes derived from Vertex/MultiVertex (and explicit instantiations of templated ones), a
// registration table is generated for them (field names from the source, offsets and types from
// the compiler), and source plus table are compiled with the host C++ compiler into a shared
// object that is loaded with dlopen. A popc .gp file is such a shared object, compiled ahead.
#include "codelets.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include <poplar/exceptions.hpp>

#include "state.h"

namespace fs = std::filesystem;

// Forwarded to by every codelet library's tessera_ipu_vector_index_fault.
static void index_fault_handler(const tessera::ipu::abi::EdgeSpan* span, std::size_t index) {
  const char* field = span->field != nullptr ? span->field : "?";
  throw poplar::runtime_error(
      fmt::format("vertex {}", span->vertex),
      fmt::format("field '{}' is read or written at index {}, past its end ({} elements); keep "
                  "indices below size() or connect a larger tensor",
                  field, index, span->size));
}

namespace poplar::detail {

CodeletLibrary::~CodeletLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw file_load_error(
        fmt::format("cannot read codelet file '{}'; check the path (relative "
                    "paths are taken from the working directory {})",
                    path, fs::current_path().string()));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Comments become spaces (newlines kept, so line numbers stay); string literals are kept.
std::string strip_comments(const std::string& src) {
  std::string out = src;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"' || out[i] == '\'') {
      char q = out[i];
      for (++i; i < out.size() && out[i] != q; ++i)
        if (out[i] == '\\') ++i;
    } else if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      std::size_t e = out.find("*/", i + 2);
      e = e == std::string::npos ? out.size() : e + 2;
      for (; i < e; ++i)
        if (out[i] != '\n') out[i] = ' ';
      --i;
    }
  }
  return out;
}

std::size_t match_brace(const std::string& s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"' || c == '\'') {
      for (++i; i < s.size() && s[i] != c; ++i)
        if (s[i] == '\\') ++i;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Names of the data members declared in a class body.
std::vector<std::string> member_names(const std::string& body) {
  std::vector<std::string> names;
  std::string stmt;
  int paren = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '(') ++paren;
    if (c == ')') --paren;
    if (c == '{' && paren == 0) {
      std::size_t close = match_brace(body, i);
      if (close == std::string::npos) break;
      std::string t = trim(stmt);
      bool initializer = t.find('(') == std::string::npos && !t.empty() &&
                         t.rfind("struct", 0) != 0 && t.rfind("class", 0) != 0 &&
                         t.rfind("enum", 0) != 0 && t.rfind("union", 0) != 0;
      i = close;
      if (!initializer) {
        // A function body or a nested type: drop it (and a nested type's trailing ';').
        stmt.clear();
        std::size_t j = i + 1;
        while (j < body.size() && std::isspace(static_cast<unsigned char>(body[j]))) ++j;
        if (j < body.size() && body[j] == ';') i = j;
      } else {
        stmt += "{}";
      }
      continue;
    }
    if (c != ';' || paren != 0) {
      stmt += c;
      continue;
    }
    std::string t = trim(stmt);
    stmt.clear();
    // Access specifiers may lead the statement.
    for (bool again = true; again;) {
      again = false;
      for (const char* a : {"public", "private", "protected"}) {
        std::size_t n = std::strlen(a);
        if (t.compare(0, n, a) == 0) {
          std::size_t k = n;
          while (k < t.size() && std::isspace(static_cast<unsigned char>(t[k]))) ++k;
          if (k < t.size() && t[k] == ':' && (k + 1 >= t.size() || t[k + 1] != ':')) {
            t = trim(t.substr(k + 1));
            again = true;
          }
        }
      }
    }
    while (t.rfind("[[", 0) == 0) {
      auto e = t.find("]]");
      if (e == std::string::npos) break;
      t = trim(t.substr(e + 2));
    }
    if (t.empty()) continue;
    std::smatch m;
    static const std::regex skip(
        R"(^(static|using|typedef|friend|template|enum|struct|class|union|constexpr|inline|virtual|operator)\b)");
    if (std::regex_search(t, m, skip) || t.find('(') != std::string::npos) continue;
    // Cut initialisers and bit-field widths.
    int angle = 0;
    std::string decl;
    for (std::size_t k = 0; k < t.size(); ++k) {
      char d = t[k];
      if (d == '<') ++angle;
      if (d == '>') --angle;
      if (angle == 0 && (d == '=' || d == '{')) {
        // skip to the next ',' at depth 0
        int depth = 0;
        for (; k < t.size(); ++k) {
          if (t[k] == '{' || t[k] == '(' || t[k] == '<') ++depth;
          if (t[k] == '}' || t[k] == ')' || t[k] == '>') --depth;
          if (t[k] == ',' && depth <= 0) break;
        }
        if (k < t.size()) decl += ',';
        continue;
      }
      if (angle == 0 && d == ':' && (k + 1 >= t.size() || t[k + 1] != ':') &&
          (k == 0 || t[k - 1] != ':')) {
        while (k + 1 < t.size() && t[k + 1] != ',') ++k;
        continue;
      }
      decl += d;
    }
    // Split declarators at top-level commas; the name is each one's last identifier.
    angle = 0;
    std::vector<std::string> parts(1);
    for (char d : decl) {
      if (d == '<') ++angle;
      if (d == '>') --angle;
      if (d == ',' && angle == 0)
        parts.emplace_back();
      else
        parts.back() += d;
    }
    for (auto p : parts) {
      p = trim(p);
      auto br = p.find('[');
      if (br != std::string::npos) p = trim(p.substr(0, br));
      std::size_t e = p.size();
      while (e > 0 && !is_ident(p[e - 1])) --e;
      std::size_t b = e;
      while (b > 0 && is_ident(p[b - 1])) --b;
      if (b < e && b > 0) names.push_back(p.substr(b, e - b));
    }
  }
  return names;
}

struct ParsedVertex {
  std::string name;      // as addVertex names it
  std::string cpp_type;  // as C++ spells it, fully qualified
  std::vector<std::string> fields;
  std::vector<std::string> constraints;
};

struct ParsedClass {
  std::string qualified;  // ns::Foo
  bool templated = false;
  std::vector<std::string> fields;
  std::vector<std::string> constraints;
};

std::vector<ParsedVertex> find_vertices(const std::string& source) {
  std::string s = strip_comments(source);
  std::vector<ParsedClass> classes;
  std::vector<std::pair<std::size_t, std::string>> ns_stack;        // closing brace, namespace
  std::vector<std::pair<std::string, std::string>> instantiations;  // qualified, args
  static const std::regex ns_re(R"(namespace\s+([A-Za-z_][\w:]*)?\s*\{)");
  static const std::regex class_re(R"(\b(class|struct)\b)");
  static const std::regex inst_re(R"(template\s+(class|struct)\s+([A-Za-z_][\w:]*)\s*<)");
  auto prefix = [&](std::size_t pos) {
    std::string p;
    for (const auto& [end, name] : ns_stack)
      if (pos < end && !name.empty()) p += name + "::";
    return p;
  };
  // Namespaces first, so every class knows its enclosing namespaces.
  for (auto it = std::sregex_iterator(s.begin(), s.end(), ns_re); it != std::sregex_iterator();
       ++it) {
    std::size_t open = it->position() + it->length() - 1;
    std::size_t close = match_brace(s, open);
    ns_stack.emplace_back(close == std::string::npos ? s.size() : close, (*it)[1].str());
  }
  // Explicit instantiations: template class Foo<float>;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), inst_re); it != std::sregex_iterator();
       ++it) {
    std::size_t open = it->position() + it->length() - 1;
    int depth = 0;
    std::size_t k = open;
    for (; k < s.size(); ++k) {
      if (s[k] == '<') ++depth;
      if (s[k] == '>' && --depth == 0) break;
    }
    if (k >= s.size()) continue;
    std::string name = (*it)[2].str();
    std::string qualified =
        name.rfind("::", 0) == 0 ? name.substr(2) : prefix(it->position()) + name;
    instantiations.emplace_back(qualified, s.substr(open + 1, k - open - 1));
  }
  for (auto it = std::sregex_iterator(s.begin(), s.end(), class_re); it != std::sregex_iterator();
       ++it) {
    std::size_t pos = it->position();
    // A template parameter ("template <class T>") is not a class definition.
    std::size_t pb = pos;
    while (pb > 0 && std::isspace(static_cast<unsigned char>(s[pb - 1]))) --pb;
    if (pb > 0 && (s[pb - 1] == '<' || s[pb - 1] == ',')) continue;
    // Skip "template class X<...>;" (an instantiation) and "enum class".
    std::size_t brace = s.find_first_of("{;", pos);
    if (brace == std::string::npos || s[brace] != '{') continue;
    std::string head = s.substr(pos, brace - pos);
    auto colon = head.find(':');
    while (colon != std::string::npos && colon + 1 < head.size() && head[colon + 1] == ':')
      colon = head.find(':', colon + 2);
    if (colon == std::string::npos) continue;
    std::string bases = head.substr(colon + 1);
    static const std::regex base_re(R"(\b(Multi|Supervisor)?Vertex\b)");
    if (!std::regex_search(bases, base_re)) continue;
    std::string before = head.substr(0, colon);
    std::vector<std::string> constraints;
    static const std::regex cons_re(R"re(constraint\s*\(((?:\s*"(?:[^"\\]|\\.)*"\s*,?)+)\))re");
    for (auto c = std::sregex_iterator(before.begin(), before.end(), cons_re);
         c != std::sregex_iterator(); ++c) {
      static const std::regex str_re(R"re("((?:[^"\\]|\\.)*)")re");
      std::string args = (*c)[1].str();
      for (auto q = std::sregex_iterator(args.begin(), args.end(), str_re);
           q != std::sregex_iterator(); ++q)
        constraints.push_back((*q)[1].str());
    }
    // Remove attributes, then the class name is the last identifier before the bases.
    before = std::regex_replace(before, std::regex(R"(\[\[.*?\]\])"), " ");
    before = std::regex_replace(before, std::regex(R"(\bfinal\b)"), " ");
    std::string t = trim(before);
    std::size_t e = t.size();
    std::size_t b = e;
    while (b > 0 && is_ident(t[b - 1])) --b;
    if (b == e) continue;
    std::string name = t.substr(b, e - b);
    // Templated when "template <...>" ends just before the class keyword.
    std::string lead = trim(s.substr(pos >= 200 ? pos - 200 : 0, pos >= 200 ? 200 : pos));
    bool templated =
        !lead.empty() && lead.back() == '>' && lead.find("template") != std::string::npos &&
        lead.rfind(';') < lead.rfind("template") &&
        (lead.rfind('}') == std::string::npos || lead.rfind('}') < lead.rfind("template"));
    std::size_t close = match_brace(s, brace);
    if (close == std::string::npos) continue;
    classes.push_back({prefix(pos) + name, templated,
                       member_names(s.substr(brace + 1, close - brace - 1)), constraints});
  }
  std::vector<ParsedVertex> out;
  for (const auto& c : classes) {
    if (!c.templated) {
      out.push_back({c.qualified, "::" + c.qualified, c.fields, c.constraints});
      continue;
    }
    for (const auto& [q, args] : instantiations) {
      if (q != c.qualified) continue;
      std::string n = normalise_type_name(c.qualified + "<" + args + ">");
      out.push_back({n, "::" + c.qualified + "<" + args + ">", c.fields, c.constraints});
    }
  }
  return out;
}

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string registration(const std::vector<ParsedVertex>& vertices) {
  std::string g =
      "\n// ---- generated by Tessera's addCodelets ----\n#include <cstddef>\n"
      "namespace {\nnamespace tessera_reg {\n"
      "::tessera::ipu::abi::IndexFaultFn handler = nullptr;\n"
      "// Hands out a member pointer named in an explicit instantiation, where access is not\n"
      "// checked: private fields register too.\n"
      "template <typename Tag, auto M> struct Expose {\n"
      "  friend constexpr auto exposed(Tag) { return M; }\n};\n";
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const auto& v = vertices[i];
    g += fmt::format("using V{} = {};\n", i, v.cpp_type);
    if (!v.fields.empty()) {
      // Each field through a member pointer, so private fields register too.
      for (std::size_t k = 0; k < v.fields.size(); ++k)
        g += fmt::format(
            "struct T{0}_{1} {{ friend constexpr auto exposed(T{0}_{1}); }};\n"
            "template struct Expose<T{0}_{1}, &V{0}::{2}>;\n",
            i, k, v.fields[k]);
      g += fmt::format("const ::tessera::ipu::abi::FieldDesc F{}[] = {{", i);
      for (std::size_t k = 0; k < v.fields.size(); ++k)
        g += fmt::format("::poplar::detail::describe_member<V{0}>({2}, exposed(T{0}_{1}{{}})), ",
                         i, k, c_string(v.fields[k]));
      g += "};\n";
    }
    g += fmt::format("const char* const C{}[] = {{", i);
    for (const auto& c : v.constraints) g += c_string(c) + ", ";
    g += "nullptr};\n";
  }
  g += "}  // namespace tessera_reg\n}  // namespace\n";
  g += "extern \"C\" [[noreturn]] __attribute__((visibility(\"hidden\"))) void "
       "tessera_ipu_vector_index_fault(const ::tessera::ipu::abi::EdgeSpan* s, std::size_t i) {\n"
       "  tessera_reg::handler(s, i);\n  __builtin_trap();\n}\n";
  g += "extern \"C\" __attribute__((visibility(\"default\"))) const "
       "::tessera::ipu::abi::LibraryDesc* "
       "tessera_ipu_codelets() {\n  static const ::tessera::ipu::abi::VertexTypeDesc types[] = {\n";
  for (std::size_t i = 0; i < vertices.size(); ++i)
    g += fmt::format(
        "    ::poplar::detail::describe_vertex<tessera_reg::V{0}>({1}, {2}, {3}, "
        "tessera_reg::C{0}),\n",
        i, c_string(vertices[i].name),
        vertices[i].fields.empty() ? "nullptr" : fmt::format("tessera_reg::F{}", i),
        vertices[i].fields.size());
  if (vertices.empty()) g += "    {},\n";
  g += fmt::format(
      "  }};\n  static const ::tessera::ipu::abi::LibraryDesc lib{{::tessera::ipu::abi::kVersion, "
      "types, {}, [](::tessera::ipu::abi::IndexFaultFn f) {{ tessera_reg::handler = f; }}}};\n"
      "  return &lib;\n}}\n",
      vertices.size());
  return g;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string cache_dir() {
  const char* d = std::getenv("TESSERA_CODELET_CACHE");
  fs::path p = d != nullptr && *d != '\0'
                   ? fs::path(d)
                   : fs::temp_directory_path() / fmt::format("tessera-codelets-{}", getuid());
  fs::create_directories(p);
  return p.string();
}

// Splits compile flags at spaces (no shell: options are passed through, never interpreted).
std::vector<std::string> split_flags(const std::string& flags) {
  std::vector<std::string> out;
  std::istringstream in(flags);
  std::string f;
  while (in >> f) out.push_back(f);
  return out;
}

}  // namespace

std::string codelet_include_dir() {
  // Installed: <prefix>/lib/libtessera_poplar.so next to <prefix>/include. Build tree: the
  // source include directory.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&codelet_include_dir), &info) != 0 && info.dli_fname) {
    fs::path lib = fs::path(info.dli_fname).parent_path();
    for (fs::path cand : {lib / ".." / "include", lib / ".." / ".." / "include"})
      if (fs::exists(cand / "poplar" / "Vertex.hpp") &&
          fs::exists(cand / "tessera" / "targets" / "ipu" / "api" / "codelet_abi.h"))
        return fs::weakly_canonical(cand).string();
  }
  if (fs::exists(fs::path(TESSERA_POPLAR_SOURCE_INCLUDE_DIR) / "poplar" / "Vertex.hpp"))
    return TESSERA_POPLAR_SOURCE_INCLUDE_DIR;
  return TESSERA_POPLAR_INSTALL_INCLUDE_DIR;
}

std::string compile_codelets(const std::string& source_path, const std::string& flags,
                             unsigned workers, const std::string& output) {
  std::string source = read_file(source_path);
  auto vertices = find_vertices(source);
  std::string abs = fs::absolute(source_path).string();
  // Poplar marks supervisor code __attribute__((target("supervisor"))), which no host compiler
  // knows: such a source is compiled from a copy without the mark (same lines, same file name
  // in messages, its folder searched for its own includes).
  static const std::regex supervisor_mark(
      R"re(__attribute__\s*\(\(\s*target\s*\(\s*"supervisor"\s*\)\s*\)\))re");
  std::string body = "#include " + c_string(abs) + "\n";
  bool unmarked = std::regex_search(source, supervisor_mark);
  if (unmarked)
    body = "#line 1 " + c_string(abs) + "\n" + std::regex_replace(source, supervisor_mark, "") +
           "\n";
  std::string tu = body + registration(vertices);
  const char* cxx_env = std::getenv("CXX");
  std::string cxx = cxx_env != nullptr && *cxx_env != '\0' ? cxx_env : TESSERA_POPLAR_CXX;
  std::string include = codelet_include_dir();
  std::vector<std::string> args = {cxx,
                                   "-std=c++20",
                                   "-shared",
                                   "-fPIC",
                                   "-O2",
                                   "-D__POPC__",
                                   fmt::format("-DTESSERA_IPU_WORKER_CONTEXTS={}", workers),
                                   "-I" + include,
                                   "-Wno-attributes",
                                   "-Wno-invalid-offsetof"};
  if (unmarked) args.push_back("-iquote" + fs::path(abs).parent_path().string());
  for (const auto& f : split_flags(flags)) args.push_back(f);
  // Key the cache on everything that decides the output, the codelet ABI included.
  std::size_t key = std::hash<std::string>()(
      tu + source + fmt::format("{} abi{}", fmt::join(args, " "), tessera::ipu::abi::kVersion));
  std::string dir = cache_dir();
  std::string base = fmt::format("{}/{:016x}", dir, key);
  std::string so = base + ".so";
  if (output.empty() && fs::exists(so)) return so;
  std::string tu_path = base + ".reg.cpp", log = base + ".log";
  {
    std::ofstream t(tu_path);
    t << tu;
  }
  static std::atomic<unsigned> counter{0};
  std::string tmp = fmt::format("{}.{}.{}.tmp", base, getpid(), counter++);
  std::string cmd;
  for (const auto& a : args) cmd += shell_quote(a) + " ";
  cmd += shell_quote(tu_path) + " -o " + shell_quote(tmp) + " > " + shell_quote(log) + " 2>&1";
  int rc = std::system(cmd.c_str());
  if (rc != 0 || !fs::exists(tmp)) {
    std::string message = read_file(log);
    fs::remove(tmp);
    throw graph_program_compilation_error(fmt::format("codelet '{}' does not compile ({} {}):\n{}",
                                                      source_path, cxx,
                                                      fmt::join(split_flags(flags), " "), message));
  }
  std::string dest = output.empty() ? so : output;
  fs::rename(tmp, dest);
  return dest;
}

std::shared_ptr<CodeletLibrary> CodeletLibrary::load(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr)
    throw file_load_error(fmt::format("cannot load codelet object '{}': {}", path, dlerror()));
  auto lib = std::shared_ptr<CodeletLibrary>(new CodeletLibrary());
  lib->handle_ = h;
  auto entry = reinterpret_cast<tessera::ipu::abi::LibraryEntryFn>(
      dlsym(h, tessera::ipu::abi::kLibraryEntry));
  if (entry == nullptr)
    throw file_load_error(fmt::format("'{}' is not a codelet object (no {}); make it with popc",
                                      path, tessera::ipu::abi::kLibraryEntry));
  lib->desc_ = entry();
  {
    std::ifstream in(path, std::ios::binary);
    lib->bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (lib->desc_->abi_version != tessera::ipu::abi::kVersion)
    throw file_load_error(
        fmt::format("codelet object '{}' was built for codelet ABI {}, this "
                    "Tessera uses {}; rebuild it with this popc",
                    path, lib->desc_->abi_version, tessera::ipu::abi::kVersion));
  if (lib->desc_->set_index_fault_handler)
    lib->desc_->set_index_fault_handler(&index_fault_handler);
  return lib;
}

void add_codelets(GraphState& graph, const std::string& path, CodeletFileType type,
                  const std::string& flags) {
  bool object = type == CodeletFileType::Object ||
                (type == CodeletFileType::Auto && fs::path(path).extension() == ".gp");
  if (type == CodeletFileType::AsmSource || type == CodeletFileType::PreprocessedAsmSource ||
      type == CodeletFileType::IrSource)
    throw graph_program_compilation_error(fmt::format(
        "codelet '{}': IPU assembly and IR cannot run on the simulator's host; write the "
        "vertex in C++ (an isExternalCodelet vertex runs its compute() here)",
        path));
  unsigned workers = graph.target.getNumWorkerContexts();
  std::string so = object ? path : compile_codelets(path, flags, workers, "");
  if (object && !fs::exists(so)) read_file(so);  // file_load_error naming the path
  auto lib = CodeletLibrary::load(so);
  const auto* desc = lib->desc();
  for (std::size_t i = 0; i < desc->type_count; ++i)
    if (add_builtin_vertex_type(graph, desc->types[i].name, desc->types[i]))
      graph.types.back().library = lib;  // Poplar keeps the first definition
  graph.libraries.push_back(lib);
}

namespace {
std::atomic<BuiltinDescLookup> g_builtin_lookup{nullptr};
}  // namespace

void set_builtin_desc_lookup(BuiltinDescLookup lookup) {
  g_builtin_lookup = lookup;
}

const abi::VertexTypeDesc* builtin_desc(std::string_view base) {
  BuiltinDescLookup lookup = g_builtin_lookup;
  return lookup ? lookup(base) : nullptr;
}

const char* intern_name(const std::string& name) {
  static std::mutex m;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(m);
  return names.insert(name).first->c_str();
}

bool add_builtin_vertex_type(GraphState& graph, const std::string& name,
                             const abi::VertexTypeDesc& desc, const char* base) {
  std::string n = normalise_type_name(name);
  if (graph.type_index.count(n)) return false;
  VertexType vt;
  vt.name = n;
  vt.desc = desc;
  if (base) vt.builtin_base = base;
  vt.fields.assign(desc.fields, desc.fields + desc.field_count);
  for (auto c = desc.constraints; c != nullptr && *c != nullptr; ++c)
    vt.constraints.emplace_back(*c);
  graph.type_index[n] = static_cast<unsigned>(graph.types.size());
  graph.types.push_back(std::move(vt));
  return true;
}

}  // namespace poplar::detail
