#include "roofline/basis/op_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/model/sweep.hpp"

namespace roofline {
namespace {

struct KindKeys {
  std::string_view kind;
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional;
};

const std::vector<KindKeys>& kinds() {
  static const std::vector<KindKeys> all{
      {"gemm", {"m", "n", "k"}, {"batch", "dtype", "weights", "act", "out"}},
      {"gemv", {"m", "k"}, {"batch", "dtype", "weights", "act"}},
      {"elementwise", {"elements"}, {"fn", "inputs", "outputs", "flops", "dtype"}},
      {"norm", {"rows", "hidden"}, {"kind", "residual", "dtype"}},
      {"softmax", {"rows", "cols"}, {"dtype"}},
      {"attention",
       {"heads", "head_dim", "seq"},
       {"batch", "kv_heads", "kv_seq", "causal", "impl", "dtype", "act", "kv"}},
  };
  return all;
}

// The parsed keys of one spec, read with messages that name the flag and the spec.
class Keys {
 public:
  Keys(std::string flag, std::map<std::string, std::string> values)
      : flag_(std::move(flag)), values_(std::move(values)) {}

  [[nodiscard]] bool has(const std::string& key) const { return values_.contains(key); }
  [[nodiscard]] std::string where(const std::string& key) const { return fmt::format("{} {}", flag_, key); }

  [[nodiscard]] std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t minimum = 1) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::vector<std::int64_t> v = parse_int_sweep(where(key), it->second, minimum);
    if (v.size() != 1) throw InputError(fmt::format("{}: '{}' is not one value", where(key), it->second));
    return v.front();
  }
  [[nodiscard]] double real(const std::string& key, double fallback) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::vector<double> v = parse_real_sweep(where(key), it->second, 0);
    if (v.size() != 1) throw InputError(fmt::format("{}: '{}' is not one value", where(key), it->second));
    return v.front();
  }
  [[nodiscard]] DType dtype(const std::string& key, DType fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : parse_dtype(it->second, where(key));
  }
  [[nodiscard]] std::string text(const std::string& key, std::string fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  [[nodiscard]] bool flag(const std::string& key) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return false;
    const std::string v = to_lower(it->second);
    if (v.empty() || v == "1" || v == "true" || v == "yes") return true;
    if (v == "0" || v == "false" || v == "no") return false;
    throw InputError(fmt::format("{}: '{}' is not true or false", where(key), it->second));
  }

 private:
  std::string flag_;
  std::map<std::string, std::string> values_;
};

std::string batch_suffix(std::int64_t batch) {
  return batch > 1 ? fmt::format(" x{}", batch) : std::string();
}

}  // namespace

OpSpec parse_op_spec(std::string_view text, std::string_view flag) {
  const std::string context = fmt::format("{} '{}'", flag, text);
  const std::size_t colon = text.find(':');
  OpSpec spec;
  spec.kind = to_lower(text.substr(0, colon));
  const auto kind_it =
      std::find_if(kinds().begin(), kinds().end(), [&](const KindKeys& k) { return k.kind == spec.kind; });
  if (kind_it == kinds().end()) {
    std::vector<std::string> names;
    for (const KindKeys& k : kinds()) names.emplace_back(k.kind);
    const auto guess = closest_match(spec.kind, names);
    throw InputError(fmt::format("{}: '{}' is not an operation{} (known: {}); write KIND:key=value,...", context,
                                 spec.kind, guess ? fmt::format(" (did you mean '{}'?)", *guess) : "",
                                 fmt::join(names, ", ")));
  }
  const KindKeys& keys_of_kind = *kind_it;
  std::vector<std::string> known;
  for (std::string_view k : keys_of_kind.required) known.emplace_back(k);
  for (std::string_view k : keys_of_kind.optional) known.emplace_back(k);
  known.emplace_back("label");

  std::map<std::string, std::string> values;
  std::string body = colon == std::string_view::npos ? std::string() : std::string(text.substr(colon + 1));
  // label= takes the rest of the spec, commas included.
  if (const std::size_t at = body.find("label="); at != std::string::npos && (at == 0 || body[at - 1] == ',')) {
    spec.label = body.substr(at + 6);
    if (spec.label.empty()) throw InputError(fmt::format("{}: label= is empty", context));
    body = body.substr(0, at == 0 ? 0 : at - 1);
  }
  if (!body.empty()) {
    for (const std::string& piece : split(body, ',')) {
      const std::size_t eq = piece.find('=');
      std::string key = to_lower(piece.substr(0, eq));
      std::replace(key.begin(), key.end(), '-', '_');
      if (key == "flops_per_element") key = "flops";
      if (key.empty()) throw InputError(fmt::format("{}: an empty key", context));
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        const auto guess = closest_match(key, known);
        throw InputError(fmt::format("{}: '{}' is not a key of {}{} (keys: {})", context, key, spec.kind,
                                     guess ? fmt::format(" (did you mean '{}'?)", *guess) : "",
                                     fmt::join(known, ", ")));
      }
      if (values.contains(key)) throw InputError(fmt::format("{}: '{}' is given twice", context, key));
      values[key] = eq == std::string::npos ? std::string() : piece.substr(eq + 1);
    }
  }
  for (std::string_view required : keys_of_kind.required) {
    if (!values.contains(std::string(required))) {
      throw InputError(fmt::format("{}: {} needs {}=N", context, spec.kind, required));
    }
  }
  const Keys keys(context, std::move(values));
  const DType dtype = keys.dtype("dtype", DType::bf16);
  std::string label;
  if (spec.kind == "gemm") {
    GemmShape s;
    s.m = keys.integer("m", 0);
    s.n = keys.integer("n", 0);
    s.k = keys.integer("k", 0);
    s.batch = keys.integer("batch", 1);
    s.a = keys.dtype("act", dtype);
    s.b = keys.dtype("weights", dtype);
    s.c = keys.dtype("out", s.a);
    spec.basis = gemm_basis(s);
    label = fmt::format("GEMM {}x{}x{}{} {}", s.m, s.n, s.k, batch_suffix(s.batch), name_of(s.a));
  } else if (spec.kind == "gemv") {
    GemvShape s;
    s.m = keys.integer("m", 0);
    s.k = keys.integer("k", 0);
    s.batch = keys.integer("batch", 1);
    s.activation = keys.dtype("act", dtype);
    s.weight = keys.dtype("weights", dtype);
    spec.basis = gemv_basis(s);
    label = fmt::format("GEMV {}x{} batch {} {}", s.m, s.k, s.batch, name_of(s.weight));
  } else if (spec.kind == "elementwise") {
    ElementwiseShape s;
    s.elements = keys.integer("elements", 0);
    s.dtype = dtype;
    std::string name = "elementwise";
    if (keys.has("fn")) {
      const ElementwiseFnInfo& fn = info(parse_elementwise_fn(keys.text("fn", ""), keys.where("fn")));
      s.inputs = fn.inputs;
      s.outputs = fn.outputs;
      s.flops_per_element = fn.flops_per_element;
      name = std::string(fn.name);
    } else {
      s.flops_per_element = 1;
    }
    s.inputs = static_cast<int>(keys.integer("inputs", s.inputs, 0));
    s.outputs = static_cast<int>(keys.integer("outputs", s.outputs, 0));
    s.flops_per_element = keys.real("flops", s.flops_per_element);
    if (s.inputs + s.outputs == 0) throw InputError(fmt::format("{}: inputs=0 with outputs=0 moves nothing", context));
    spec.basis = elementwise_basis(s);
    label = fmt::format("{} {} {}", name, s.elements, name_of(s.dtype));
  } else if (spec.kind == "norm") {
    NormShape s;
    s.rows = keys.integer("rows", 0);
    s.hidden = keys.integer("hidden", 0);
    s.kind = parse_norm_kind(keys.text("kind", "rmsnorm"), keys.where("kind"));
    s.residual = keys.flag("residual");
    s.dtype = dtype;
    spec.basis = norm_basis(s);
    label = fmt::format("{} {}x{}{}", name_of(s.kind), s.rows, s.hidden, s.residual ? " + residual" : "");
  } else if (spec.kind == "softmax") {
    SoftmaxShape s{keys.integer("rows", 0), keys.integer("cols", 0), dtype};
    spec.basis = softmax_basis(s);
    label = fmt::format("softmax {}x{}", s.rows, s.cols);
  } else {
    AttentionShape s;
    s.batch = keys.integer("batch", 1);
    s.heads = keys.integer("heads", 0);
    s.kv_heads = keys.integer("kv_heads", s.heads);
    s.head_dim = keys.integer("head_dim", 0);
    s.seq = keys.integer("seq", 0);
    s.kv_seq = keys.integer("kv_seq", s.seq);
    s.causal = keys.flag("causal");
    s.act = keys.dtype("act", dtype);
    s.kv = keys.dtype("kv", s.act);
    const std::string impl = to_lower(keys.text("impl", "flash"));
    if (impl != "flash" && impl != "standard") {
      throw InputError(fmt::format("{}: '{}' is not flash or standard", keys.where("impl"), impl));
    }
    const AttentionImpl which = impl == "flash" ? AttentionImpl::flash : AttentionImpl::standard;
    if (s.heads % s.kv_heads != 0) {
      throw InputError(fmt::format("{}: kv_heads {} does not divide heads {}", context, s.kv_heads, s.heads));
    }
    spec.basis = attention_basis(s, which);
    label = fmt::format("{} attention B{} H{}/{} N{}{} d{}{}", impl, s.batch, s.heads, s.kv_heads, s.seq,
                        s.kv_seq != s.seq ? fmt::format("/{}", s.kv_seq) : "", s.head_dim, s.causal ? " causal" : "");
  }
  if (spec.label.empty()) spec.label = label;
  return spec;
}

}  // namespace roofline
