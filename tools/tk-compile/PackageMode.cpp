//===- PackageMode.cpp - tk-compile --package and --package-info ----------===//
//
//   tk-compile --package OUT.tkpkg --target B[:ARCH]... [--num-warps N]
//              [--num-stages S] [--constexpr NAME=VALUE]... FILE[:ENTRY]...
//   tk-compile --package-info FILE.tkpkg
//   tk-compile --package-check FILE.tkpkg
//
// The first compiles every kernel (FILE:ENTRY, or FILE's only kernel) for
// every target through the plugins, as tk_kernel_create would on a device
// of that target, and writes one package (tk/package/Package.h); `.ttir`
// files are Triton's IR, with the num_warps and num_stages of the JSON
// Triton wrote beside them unless the command line gives its own. The
// second lists what a package holds.
//
//===----------------------------------------------------------------------===//

#include "PackageMode.h"

#include "Files.h"

#include "tk/package/Package.h"
#include "tk/runtime/PackageBuilder.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/tk_plugin.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

constexpr const char *kUsage =
    "usage: tk-compile --package OUT.tkpkg --target BACKEND[:ARCH]...\n"
    "                  [--num-warps N] [--num-stages S] "
    "[--constexpr NAME=VALUE]...\n"
    "                  [--header OUT.h [--name NAME]] FILE[:ENTRY]...\n"
    "       tk-compile --package-info FILE.tkpkg\n"
    "       tk-compile --package-check FILE.tkpkg\n"
    "A target is a plugin, compiling for its device 0 (or its default "
    "without one),\nor a plugin and an arch: cuda:sm_80, rocm:gfx942, "
    "xe:pvc, vulkan:sg16.\n"
    "--package-check holds every binary against its backend's validate.\n"
    "--header also writes a C header that embeds the package, with a typed\n"
    "<entry>_create(device, &kernel) and <entry>_launch(kernel, stream, "
    "grid, args...)\nfor each kernel; NAME (default: OUT's stem) names the "
    "package's array.\n";

int usageError(const std::string &message) {
  std::cerr << "tk-compile: " << message << "\n" << kUsage;
  return 2;
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parseCount(const std::string &text, int32_t &out) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > 1024)
    return false;
  out = static_cast<int32_t>(value);
  return true;
}

/// `text` as a C identifier: other characters become '_', and one that
/// would start with a digit or be a keyword gets a '_' appended.
std::string toIdentifier(const std::string &text) {
  static const char *const kKeywords[] = {
      "auto",     "break",    "case",     "char",   "const",     "continue",
      "default",  "do",       "double",   "else",   "enum",      "extern",
      "float",    "for",      "goto",     "if",     "inline",    "int",
      "long",     "register", "restrict", "return", "short",     "signed",
      "sizeof",   "static",   "struct",   "switch", "typedef",   "union",
      "unsigned", "void",     "volatile", "while",  "bool",      "class",
      "delete",   "new",      "this",     "kernel", "stream",    "grid",
      "args",     "list",     "source",   "device", "out_kernel"};
  std::string out;
  for (char c : text)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  for (const char *keyword : kKeywords)
    if (out == keyword)
      return out + "_";
  return out;
}

/// The C type a typed launcher takes argument `argument` as.
const char *getCType(const tk::package::Argument &argument) {
  switch (argument.kind) {
  case TK_PLUGIN_ARG_PTR:
    return "tk_buffer";
  case TK_PLUGIN_ARG_I32:
    return "int32_t";
  case TK_PLUGIN_ARG_I64:
    return "int64_t";
  case TK_PLUGIN_ARG_F32:
    return "float";
  case TK_PLUGIN_ARG_F64:
    return "double";
  }
  return nullptr;
}

const char *getArgMaker(const tk::package::Argument &argument) {
  switch (argument.kind) {
  case TK_PLUGIN_ARG_PTR:
    return "tk_arg_buffer";
  case TK_PLUGIN_ARG_I32:
    return "tk_arg_i32";
  case TK_PLUGIN_ARG_I64:
    return "tk_arg_i64";
  case TK_PLUGIN_ARG_F32:
    return "tk_arg_f32";
  case TK_PLUGIN_ARG_F64:
    return "tk_arg_f64";
  }
  return nullptr;
}

/// A C header embedding `bytes` (the package) as `name`_package, with a
/// typed create and launch function for each kernel. They go through
/// tk_kernel_create and tk_launch_async, so every check of those applies,
/// and they return its status: nothing exits.
std::string makeHeader(const tk::package::Package &package,
                       const std::string &bytes, const std::string &name) {
  std::string guard = "TK_PACKAGE_" + name + "_H_";
  for (char &c : guard)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::ostringstream out;
  out << "/* Generated by tk-compile --package --header: do not edit.\n"
      << " * The package " << name << "_package holds";
  for (const tk::package::Kernel &kernel : package.kernels)
    out << " " << kernel.entry;
  out << ",\n * built for";
  if (!package.kernels.empty())
    for (const tk::package::Binary &binary : package.kernels.front().binaries)
      out << " " << binary.backend << " '" << binary.target << "'";
  out << ". */\n#ifndef " << guard << "\n#define " << guard << "\n\n"
      << "#include <stddef.h>\n#include <stdint.h>\n#include <tk/tk.h>\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << "static const unsigned char " << name << "_package[" << bytes.size()
      << "] = {";
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i % 16 == 0)
      out << "\n   ";
    char hex[8];
    std::snprintf(hex, sizeof(hex), " 0x%02x,",
                  static_cast<unsigned char>(bytes[i]));
    out << hex;
  }
  out << "\n};\n";
  for (const tk::package::Kernel &kernel : package.kernels) {
    std::string function = toIdentifier(kernel.entry);
    out << "\n/** " << kernel.entry << "(";
    for (size_t i = 0; i < kernel.arguments.size(); ++i)
      out << (i ? ", " : "") << kernel.arguments[i].name << ": "
          << kernel.arguments[i].typeName;
    out << "): loads the package's binary for `device`. */\n"
        << "static inline tk_status " << function
        << "_create(tk_device device, tk_kernel *out_kernel) {\n"
        << "  tk_kernel_source source;\n"
        << "  source.kind = TK_SOURCE_PACKAGE;\n"
        << "  source.data = " << name << "_package;\n"
        << "  source.size = sizeof(" << name << "_package);\n"
        << "  source.entry = \"" << kernel.entry << "\";\n"
        << "  return tk_kernel_create(device, &source, NULL, out_kernel);\n"
        << "}\n\n"
        << "/** Enqueues " << kernel.entry
        << " on `stream` (NULL: the device's default stream), checked as "
           "tk_launch checks. */\n"
        << "static inline tk_status " << function
        << "_launch(tk_kernel kernel, tk_stream stream, tk_grid grid";
    for (const tk::package::Argument &argument : kernel.arguments)
      out << ", " << getCType(argument) << " " << toIdentifier(argument.name);
    size_t count = kernel.arguments.size();
    out << ") {\n  tk_arg args[" << (count ? count : 1) << "];\n"
        << "  tk_args list;\n";
    for (size_t i = 0; i < count; ++i)
      out << "  args[" << i << "] = " << getArgMaker(kernel.arguments[i]) << "("
          << toIdentifier(kernel.arguments[i].name) << ");\n";
    out << "  list.args = args;\n  list.count = " << count << ";\n"
        << "  return tk_launch_async(kernel, grid, &list, stream);\n}\n";
  }
  out << "\n#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* "
      << guard << " */\n";
  return out.str();
}

/// Reads the package at `path` into `package`, or says why not on stderr.
bool readPackage(const std::string &path, tk::package::Package &package) {
  std::string bytes, error;
  if (!tk::tool::readFile(path, bytes)) {
    std::cerr << "tk-compile: cannot read '" << path << "'\n";
    return false;
  }
  if (!tk::package::read(bytes.data(), bytes.size(), package, error)) {
    std::cerr << "tk-compile: " << path << ": " << error << "\n";
    return false;
  }
  return true;
}

int showPackage(const std::string &path) {
  tk::package::Package package;
  if (!readPackage(path, package))
    return 1;
  for (const tk::package::Kernel &kernel : package.kernels) {
    std::cout << kernel.entry << "(";
    for (size_t i = 0; i < kernel.arguments.size(); ++i)
      std::cout << (i ? ", " : "") << kernel.arguments[i].name << ": "
                << kernel.arguments[i].typeName;
    std::cout << ") num_warps " << kernel.numWarps << ", num_stages "
              << kernel.numStages << "\n";
    for (const tk::package::Binary &binary : kernel.binaries)
      std::cout << "  " << binary.backend << " '" << binary.target
                << "': " << binary.bytes.size() << " bytes, " << binary.numWarps
                << " warps, " << binary.sharedMemoryBytes << " B shared, "
                << binary.registersPerThread << " registers ("
                << binary.compiler << ")\n";
  }
  return 0;
}

/// Every binary of the package held against its backend's own checks
/// (the plugin's validate: ptxas-made cubins parse, spirv-val, llvm-objdump,
/// ocloc and iga64 where the backends' validation variables ask for them).
int checkPackage(const std::string &path) {
  tk::package::Package package;
  if (!readPackage(path, package))
    return 1;
  tk::runtime::PluginLoader loader;
  int failures = 0;
  for (const tk::package::Kernel &kernel : package.kernels)
    for (const tk::package::Binary &binary : kernel.binaries) {
      std::cout << kernel.entry << " for " << binary.backend << " '"
                << binary.target << "': ";
      tk::runtime::Plugin *plugin = nullptr;
      tk::runtime::Status opened = loader.open(binary.backend, &plugin);
      if (!opened.isOk()) {
        std::cout << "FAILED: " << opened.message() << "\n";
        ++failures;
        continue;
      }
      const tk_backend_interface &api = plugin->getApi();
      if (!api.validate) {
        std::cout << "FAILED: the " << binary.backend
                  << " plugin has no validate\n";
        ++failures;
        continue;
      }
      tk_status status = api.validate(binary.bytes.data(), binary.bytes.size());
      if (status != TK_SUCCESS) {
        std::cout << "FAILED: " << api.last_error() << "\n";
        ++failures;
        continue;
      }
      std::cout << "valid\n";
    }
  if (failures)
    std::cerr << "tk-compile: " << path << ": " << failures
              << " binaries failed their backend's checks\n";
  return failures ? 1 : 0;
}

} // namespace

int tk::tool::runPackageMode(const std::vector<std::string> &args) {
  std::string output, info, check, header, name;
  std::vector<tk::runtime::PackageTarget> targets;
  std::vector<std::string> kernels;
  std::vector<std::string> constexprNames;
  std::vector<tk_constexpr_value> constexprs;
  int32_t numWarps = 0, numStages = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= args.size())
        return false;
      out = args[++i];
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--package") {
      if (!value(output))
        return usageError("--package needs the file to write");
    } else if (arg == "--header") {
      if (!value(header))
        return usageError("--header needs the file to write");
    } else if (arg == "--name") {
      if (!value(name))
        return usageError("--name needs a C identifier");
    } else if (arg == "--package-info") {
      if (!value(info))
        return usageError("--package-info needs a package");
    } else if (arg == "--package-check") {
      if (!value(check))
        return usageError("--package-check needs a package");
    } else if (arg == "--target") {
      tk::runtime::PackageTarget target;
      if (!value(text))
        return usageError("--target needs BACKEND or BACKEND:ARCH");
      tk::runtime::Status status =
          tk::runtime::PackageTarget::parse(text, target);
      if (!status.isOk())
        return usageError(status.message());
      targets.push_back(target);
    } else if (arg == "--num-warps") {
      if (!value(text) || !parseCount(text, numWarps))
        return usageError("--num-warps needs a number from 1 to 1024");
    } else if (arg == "--num-stages") {
      if (!value(text) || !parseCount(text, numStages))
        return usageError("--num-stages needs a number from 1 to 1024");
    } else if (arg == "--constexpr") {
      size_t equals = 0;
      if (!value(text) || (equals = text.find('=')) == std::string::npos ||
          equals == 0)
        return usageError("--constexpr needs NAME=VALUE");
      char *end = nullptr;
      long long number = std::strtoll(text.c_str() + equals + 1, &end, 10);
      if (*end != '\0' || equals + 1 == text.size())
        return usageError("--constexpr " + text +
                          ": VALUE must be a whole number");
      constexprNames.push_back(text.substr(0, equals));
      constexprs.push_back({nullptr, number});
    } else if (!arg.empty() && arg[0] == '-') {
      return usageError("unknown option '" + arg + "' with --package");
    } else {
      kernels.push_back(arg);
    }
  }
  if (!info.empty() || !check.empty()) {
    if (!output.empty() || !kernels.empty() || !targets.empty() ||
        !header.empty() || (!info.empty() && !check.empty()))
      return usageError(
          std::string(info.empty() ? "--package-check" : "--package-info") +
          " takes a package and nothing else");
    return info.empty() ? checkPackage(check) : showPackage(info);
  }
  if (targets.empty())
    return usageError("--package needs at least one --target");
  if (!name.empty() && (header.empty() || toIdentifier(name) != name))
    return usageError("--name needs --header and a C identifier");
  if (name.empty()) {
    size_t slash = output.rfind('/');
    std::string stem =
        output.substr(slash == std::string::npos ? 0 : slash + 1);
    name = toIdentifier(stem.substr(0, stem.find('.')));
  }
  if (kernels.empty())
    return usageError("--package needs at least one FILE[:ENTRY]");
  for (size_t i = 0; i < constexprs.size(); ++i)
    constexprs[i].name = constexprNames[i].c_str();

  tk::runtime::PackageBuilder builder;
  size_t step = 0, steps = kernels.size() * targets.size();
  for (const std::string &kernel : kernels) {
    // FILE:ENTRY, the colon after the last slash (paths may hold colons).
    size_t slash = kernel.rfind('/');
    size_t colon = kernel.find(':', slash == std::string::npos ? 0 : slash);
    std::string path = kernel.substr(0, colon);
    std::string entry =
        colon == std::string::npos ? "" : kernel.substr(colon + 1);
    std::string text;
    if (!tk::tool::readFile(path, text)) {
      std::cerr << "tk-compile: cannot read '" << path << "'\n";
      return 1;
    }
    bool ttir = endsWith(path, ".ttir");
    tk_compile_options options = {};
    options.struct_size = sizeof(options);
    if (ttir) {
      // Triton's own choices, where it wrote them beside the TTIR.
      std::string json;
      if (tk::tool::readFile(path.substr(0, path.size() - 5) + ".json", json) &&
          tk_ttir_read_metadata(json.data(), json.size(), &options) !=
              TK_SUCCESS) {
        std::cerr << "tk-compile: " << path << ": " << tk_last_error() << "\n";
        return 1;
      }
    }
    if (numWarps)
      options.num_warps = numWarps;
    if (numStages)
      options.num_stages = numStages;
    options.constexprs = constexprs.data();
    options.num_constexprs = constexprs.size();
    options.source_name = path.c_str();
    tk_kernel_source source = {};
    source.kind = ttir ? TK_SOURCE_TTIR : TK_SOURCE_TEXT;
    source.data = text.data();
    source.size = text.size();
    source.entry = entry.empty() ? nullptr : entry.c_str();
    tk::runtime::Status status =
        builder.add(targets, source, &options,
                    [&](const tk::runtime::PackageTarget &target,
                        const std::string &compiledFor) {
                      std::cerr << "tk-compile: [" << ++step << "/" << steps
                                << "] " << kernel << " for " << target.backend
                                << " '" << compiledFor << "'\n";
                    });
    if (!status.isOk()) {
      std::cerr << "tk-compile: " << kernel << ": " << status.message() << "\n";
      return status.code() == TK_ERROR_UNSUPPORTED ? 3 : 1;
    }
  }
  std::string bytes, error;
  if (!tk::package::write(builder.getPackage(), bytes, error)) {
    std::cerr << "tk-compile: " << error << "\n";
    return 1;
  }
  for (const tk::package::Kernel &kernel : builder.getPackage().kernels)
    for (const tk::package::Argument &argument : kernel.arguments)
      if (!header.empty() && !getCType(argument)) {
        std::cerr << "tk-compile: " << kernel.entry << ": argument '"
                  << argument.name << "' has no C type\n";
        return 1;
      }
  if (!tk::tool::writeFileAtomically(output, bytes)) {
    std::cerr << "tk-compile: cannot write '" << output << "'\n";
    return 1;
  }
  if (!header.empty() &&
      !tk::tool::writeFileAtomically(
          header, makeHeader(builder.getPackage(), bytes, name))) {
    std::remove(output.c_str());
    std::cerr << "tk-compile: cannot write '" << header << "'\n";
    return 1;
  }
  std::cerr << "tk-compile: wrote " << output << " (" << bytes.size()
            << " bytes, " << builder.getPackage().kernels.size()
            << " kernels)\n";
  return 0;
}
