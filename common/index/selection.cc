#include "common/index/selection.h"

#include <charconv>
#include <limits>

#include "common/util/checked.h"

namespace zarrd {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Result<std::optional<int64_t>> ParseBound(std::string_view s, std::string_view item) {
  s = Trim(s);
  if (s.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  const char* begin = s.data();
  if (*begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return InvalidArgument("selection: \"" + std::string(item) + "\" overflows 64 bits");
  }
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return InvalidArgument("selection: \"" + std::string(item) +
                           "\" is not an integer, a slice start:stop:step or ...");
  }
  return std::optional<int64_t>(v);
}

int64_t SliceCount(int64_t start, int64_t stop, int64_t step) {
  if (step > 0) return stop > start ? (stop - start - 1) / step + 1 : 0;
  // -step overflows for INT64_MIN; the magnitude fits in uint64_t.
  const uint64_t magnitude = uint64_t{0} - static_cast<uint64_t>(step);
  return start > stop
             ? static_cast<int64_t>(static_cast<uint64_t>(start - stop - 1) / magnitude) + 1
             : 0;
}

}  // namespace

int64_t ResolvedSelection::num_elements() const {
  auto n = CheckedProduct(result_shape, 1, "selection");
  return n.ok() ? static_cast<int64_t>(*n) : std::numeric_limits<int64_t>::max();
}

uint64_t ResolvedSelection::num_bytes(size_t item_size) const {
  return SaturatingMul(static_cast<uint64_t>(num_elements()), item_size);
}

Result<Selection> ParseSelection(std::string_view text) {
  Selection out;
  if (Trim(text).empty()) return out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = Trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) {
      if (comma == text.size() && !out.empty()) break;  // trailing comma, as in Python
      return InvalidArgument("selection: empty item in \"" + std::string(text) + "\"");
    }
    if (item == "...") {
      out.push_back(SelectionItem::Ellipsis());
      continue;
    }
    size_t c1 = item.find(':');
    if (c1 == std::string_view::npos) {
      ZARRD_ASSIGN_OR_RETURN(auto index, ParseBound(item, item));
      out.push_back(SelectionItem::Index(*index));
      continue;
    }
    size_t c2 = item.find(':', c1 + 1);
    if (c2 != std::string_view::npos && item.find(':', c2 + 1) != std::string_view::npos) {
      return InvalidArgument("selection: \"" + std::string(item) + "\" has too many ':'");
    }
    ZARRD_ASSIGN_OR_RETURN(auto start, ParseBound(item.substr(0, c1), item));
    ZARRD_ASSIGN_OR_RETURN(auto stop, ParseBound(item.substr(c1 + 1, c2 == std::string_view::npos
                                                                         ? std::string_view::npos
                                                                         : c2 - c1 - 1),
                                                 item));
    std::optional<int64_t> step;
    if (c2 != std::string_view::npos) {
      ZARRD_ASSIGN_OR_RETURN(step, ParseBound(item.substr(c2 + 1), item));
    }
    out.push_back(SelectionItem::Slice(start, stop, step));
  }
  return out;
}

std::string SelectionToString(const Selection& selection) {
  std::string s;
  for (const auto& item : selection) {
    if (!s.empty()) s += ", ";
    switch (item.kind) {
      case SelectionItem::Kind::kEllipsis:
        s += "...";
        break;
      case SelectionItem::Kind::kIndex:
        s += std::to_string(item.index);
        break;
      case SelectionItem::Kind::kSlice:
        if (item.start) s += std::to_string(*item.start);
        s += ":";
        if (item.stop) s += std::to_string(*item.stop);
        if (item.step) s += ":" + std::to_string(*item.step);
    }
  }
  return s;
}

Result<ResolvedSelection> ResolveSelection(const Selection& selection,
                                           const std::vector<int64_t>& shape) {
  const size_t rank = shape.size();
  size_t explicit_dims = 0;
  int ellipses = 0;
  for (const auto& item : selection) {
    if (item.kind == SelectionItem::Kind::kEllipsis) {
      ++ellipses;
    } else {
      ++explicit_dims;
    }
  }
  if (ellipses > 1) return InvalidArgument("selection: an index can only have a single ellipsis");
  if (explicit_dims > rank) {
    return InvalidArgument("selection: too many indices for array: array is " +
                           std::to_string(rank) + "-dimensional, but " +
                           std::to_string(explicit_dims) + " were indexed");
  }
  Selection full;
  for (const auto& item : selection) {
    if (item.kind == SelectionItem::Kind::kEllipsis) {
      full.insert(full.end(), rank - explicit_dims, SelectionItem::Slice());
    } else {
      full.push_back(item);
    }
  }
  full.resize(rank, SelectionItem::Slice());

  ResolvedSelection out;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t n = shape[d];
    const SelectionItem& item = full[d];
    DimSelection dim;
    if (item.kind == SelectionItem::Kind::kIndex) {
      int64_t i = item.index;
      if (i < -n || i >= n) {
        return OutOfRange("selection: index " + std::to_string(i) + " is out of bounds for axis " +
                          std::to_string(d) + " with size " + std::to_string(n));
      }
      if (i < 0) i += n;
      dim = {i, 1, 1, true};
    } else {
      const int64_t step = item.step.value_or(1);
      if (step == 0)
        return InvalidArgument("selection: slice step cannot be zero (axis " + std::to_string(d) +
                               ")");
      int64_t start, stop;
      auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
        if (v < 0) {
          v = v < -n ? lo : v + n;  // written to avoid overflow of v + n
          return v < lo ? lo : v;
        }
        return v > hi ? hi : v;
      };
      if (step > 0) {
        start = item.start ? clamp(*item.start, 0, n) : 0;
        stop = item.stop ? clamp(*item.stop, 0, n) : n;
      } else {
        start = item.start ? clamp(*item.start, -1, n - 1) : n - 1;
        stop = item.stop ? clamp(*item.stop, -1, n - 1) : -1;
      }
      dim = {start, step, SliceCount(start, stop, step), false};
      if (dim.count <= 1) dim.step = 1;  // keeps later start + k * step arithmetic in range
      out.result_shape.push_back(dim.count);
    }
    out.dims.push_back(dim);
  }
  return out;
}

}  // namespace zarrd
